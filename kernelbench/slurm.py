"""The SLURM cluster that ``hydra/launcher=slurm`` submits to: its partitions' limits
(``sinfo``), checked against the launcher's request before anything is submitted.

A request no node of the partition can hold (CPUs, memory, time) would sit pending
forever; one the user set is refused in one line naming what to set, and a default of
``configs/hydra/launcher/slurm.yaml`` that does not fit is lowered to the partition's
limit (said in one line).
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kernelbench.errors import KernelbenchError, choices_error

#: The launcher's settings checked against a partition's limits.
CHECKED = ("cpus_per_task", "mem_gb", "timeout_min")


@dataclass(frozen=True)
class Partition:
    """A partition's limits: the most CPUs and memory (MB) of one of its nodes, and
    its time limit in minutes (None: unlimited)."""

    name: str
    default: bool
    cpus: int
    memory_mb: int
    max_minutes: int | None


def parse_minutes(text: str) -> int | None:
    """SLURM's time format (``60``, ``1:00:00``, ``30:00``, ``2-12:00:00``) in whole
    minutes; None for ``infinite``/``UNLIMITED``."""
    text = text.strip()
    if text.lower() in ("infinite", "unlimited", "n/a", "none"):
        return None
    days, _, rest = text.rpartition("-")
    parts = [int(p) for p in rest.split(":")]
    if days and len(parts) < 3:  # days-hours[:minutes]
        parts += [0] * (3 - len(parts))
    if len(parts) == 1:
        h, m, s = 0, parts[0], 0
    elif len(parts) == 2:
        h, m, s = (0, *parts) if not days else (*parts, 0)
    else:
        h, m, s = parts
    return (int(days or 0) * 24 + h) * 60 + m + (1 if s else 0)


def partitions(run: Any = subprocess.run) -> dict[str, Partition]:
    """The cluster's partitions, from ``sinfo`` (one line per node); one line if
    ``sinfo`` fails (no controller answering)."""
    try:
        proc = run(
            ["sinfo", "--noheader", "--Node", "--format", "%P|%c|%m|%l"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired) as err:
        raise KernelbenchError(f"hydra/launcher=slurm: sinfo failed ({err})") from None
    if proc.returncode != 0:
        why = (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[0]
        raise KernelbenchError(
            f"hydra/launcher=slurm: sinfo failed ({why}); is the cluster's slurmctld up?"
        )
    found: dict[str, Partition] = {}
    for line in proc.stdout.splitlines():
        if line.count("|") != 3:
            continue
        name, cpus, mem, limit = line.split("|")
        default = name.endswith("*")
        name = name.rstrip("*")
        cpu_n, mem_n = int(re.sub(r"\D", "", cpus) or 0), int(re.sub(r"\D", "", mem) or 0)
        old = found.get(name)
        if old is not None:
            cpu_n, mem_n = max(cpu_n, old.cpus), max(mem_n, old.memory_mb)
        found[name] = Partition(name, default, cpu_n, mem_n, parse_minutes(limit))
    if not found:
        raise KernelbenchError("hydra/launcher=slurm: sinfo shows no partition")
    return found


def accounting(run: Any = subprocess.run) -> str | None:
    """The cluster's accounting storage (``scontrol show config``); None when it has
    none (``accounting_storage/none``: ``sacct`` fails)."""
    try:
        proc = run(["scontrol", "show", "config"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    m = re.search(r"^AccountingStorageType\s*=\s*(\S+)", proc.stdout, re.MULTILINE)
    if m is None:
        return "unknown"
    return None if m[1].endswith("/none") else m[1]


def fit(
    request: dict[str, Any], given: Iterable[str], found: dict[str, Partition]
) -> tuple[dict[str, Any], str | None]:
    """Check the launcher's ``request`` (its settings: partition, cpus_per_task,
    tasks_per_node, mem_gb, timeout_min) against the partition it names (else the
    default one). A setting the user ``given`` beyond the partition's limit: one line
    naming what to set. A default beyond it: lowered. Returns the lowered settings and
    a line saying so (None if none)."""
    given = set(given)
    name = request.get("partition")
    if name is None:
        defaults = [p for p in found.values() if p.default]
        if not defaults:
            raise KernelbenchError(
                "this SLURM cluster has no default partition: set "
                f"hydra.launcher.partition (one of {', '.join(sorted(found))})"
            )
        part = defaults[0]
    elif name not in found:
        raise choices_error("partition", name, found)
    else:
        part = found[name]
    tasks = int(request.get("tasks_per_node") or 1)
    cpus = f"its nodes have {part.cpus} CPUs" + (f" for {tasks} tasks" if tasks > 1 else "")
    limits = {
        "cpus_per_task": (part.cpus // tasks, cpus),
        "mem_gb": (part.memory_mb // 1024, f"its nodes have {part.memory_mb} MB"),
        "timeout_min": (part.max_minutes, f"its time limit is {part.max_minutes} min"),
    }
    lowered: dict[str, Any] = {}
    for key in CHECKED:
        value, (limit, why) = request.get(key), limits[key]
        if value is None or limit is None or float(value) <= limit:
            continue
        if key in given or limit < 1:
            raise KernelbenchError(
                f"hydra.launcher.{key}={value} does not fit partition {part.name} ({why}): "
                f"set hydra.launcher.{key}={max(limit, 1)} or less, or another partition"
            )
        lowered[key] = limit
    if not lowered:
        return {}, None
    said = ", ".join(f"{k}={v} (default {request[k]})" for k, v in lowered.items())
    return lowered, (
        f"slurm: partition {part.name} takes at most {part.cpus} CPUs, {part.memory_mb} MB "
        f"and {part.max_minutes or 'unlimited'} min per job: asking for {said}; "
        "set hydra.launcher.<setting> to choose"
    )
