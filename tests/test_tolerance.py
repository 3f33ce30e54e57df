"""The cross-machine tolerance of stored rows and the columns compared
(:mod:`tests.rows_tolerance`, beside the golden rows), and the schema check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.rows_tolerance import DEFAULT, compared, disagreements, tolerance

GOLDEN = Path(__file__).parent / "data" / "rows_golden.json"


def test_non_floats_compare_exactly_types_included():
    assert disagreements("kernel_approx", "D", [130, 260], [130, 260]) == []
    assert disagreements("kernel_approx", "D", [130, 261], [130, 260]) == [1]
    assert disagreements("kernel_approx", "D", [130.0], [130]) == [0]  # a dtype change
    assert disagreements("kernel_approx", "draws", ["weights"], ["sample_space"]) == [0]
    assert disagreements("kernel_approx", "x", [None, "nan"], [None, "nan"]) == []


def test_floats_within_the_relative_tolerance_and_the_floor():
    tol = tolerance("kernel_approx", "rel_fro_error")
    assert tol == DEFAULT
    ref = [0.25, 0.5, 1.0]
    assert (
        disagreements("kernel_approx", "rel_fro_error", [0.25 * (1 + 1e-13), 0.5, 1.0], ref) == []
    )
    assert disagreements("kernel_approx", "rel_fro_error", [0.25 * (1 + 1e-11), 0.5, 1.0], ref) == [
        0
    ]
    # a value near zero is held to the column's median (0.5), not to itself
    ref = [1e-20, 0.5, 1.0]
    assert disagreements("kernel_approx", "rel_fro_error", [2e-14, 0.5, 1.0], ref) == []
    assert disagreements("kernel_approx", "rel_fro_error", [2e-12, 0.5, 1.0], ref) == [0]
    assert disagreements("kernel_approx", "x", [float("nan")], [float("nan")]) == []
    assert disagreements("kernel_approx", "x", [float("nan")], [0.5]) == [0]


def test_protocols_with_a_measured_wider_spread():
    assert tolerance("qmc_discrepancy", "discrepancy").floor > DEFAULT.floor
    assert tolerance("qmc_discrepancy", "rel_fro_error") == DEFAULT
    assert tolerance("qmc_adaptive", "mean_sq_error").rtol == tolerance("qmc_adaptive", "x").rtol
    assert tolerance("qmc_adaptive", "discrepancy").rtol <= 1e-8


@pytest.mark.parametrize("rel", [1e-10, -1e-9])
def test_the_golden_rows_see_a_change_far_below_any_paper_effect(rel):
    """Every float column of every golden shard flags its first value moved by 1e-10 or
    1e-9 relative (1000 times that for qmc_adaptive, whose tolerance is 1e-8), and
    not the unmoved rows."""
    cells = json.loads(GOLDEN.read_text())["cells"]
    checked = 0
    for shards in cells.values():
        for shard, rows in shards.items():
            protocol = shard.split("/", 1)[0]
            for column, values in rows["columns"].items():
                if not isinstance(values[0], float) or values[0] == 0.0:
                    continue
                step = rel * (1000 if protocol == "qmc_adaptive" else 1)
                moved = [values[0] * (1 + step), *values[1:]]
                assert disagreements(protocol, column, moved, values) == [0], (shard, column)
                # a move the size of another BLAS kernel's (1e-13) is not flagged
                noise = [values[0] * (1 + 1e-13), *values[1:]]
                assert disagreements(protocol, column, noise, values) == [], (shard, column)
                checked += 1
    assert checked > 100


def test_every_stored_column_is_compared_and_provenance_is_not():
    """The golden rows hold exactly the compared columns: a column the table stopped
    comparing (or a result column named like a timing) fails here."""
    cells = json.loads(GOLDEN.read_text())["cells"]
    stored = {c for shards in cells.values() for rows in shards.values() for c in rows["columns"]}
    assert {"rel_fro_error", "score", "discrepancy", "ratio", "D", "run"} <= stored
    assert all(compared(c) for c in stored), sorted(c for c in stored if not compared(c))
    for volatile in ("config_hash", "started_at", "hostname", "fit_seconds", "peak_memory_mb"):
        assert not compared(volatile)


def test_a_schema_change_fails_until_the_goldens_are_regenerated_and_shows_the_hashes():
    from tests.test_rows_unchanged import check_schema, hash_diff

    golden = json.loads(GOLDEN.read_text())
    check_schema(golden, golden["schema_version"])
    with pytest.raises(AssertionError, match="regenerate them in the same commit"):
        check_schema(golden, golden["schema_version"] + 1)
    new = json.loads(GOLDEN.read_text())
    new["schema_version"] += 1
    name, shards = next(iter(new["cells"].items()))
    shard = next(iter(shards))
    old_hash = shards[shard]["config_hash"][0]
    shards[shard]["config_hash"] = ["f" * len(old_hash)]
    lines = hash_diff(golden, new)
    assert lines == [
        f"schema_version {golden['schema_version']} -> {new['schema_version']}",
        f"{shard}: {old_hash} -> {'f' * len(old_hash)}",
    ]
