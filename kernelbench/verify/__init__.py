"""``kernelbench verify``: does kernelbench reproduce a paper's numbers, cell by cell?
:mod:`.config` (loads what each paper declares, or a YAML file), :mod:`.grid`,
:mod:`.compare` (statistics), :mod:`.report`, :mod:`.command`."""

from __future__ import annotations

from kernelbench.verify.compare import (
    AGREES,
    CELL,
    DEFAULT_TAU,
    DEVIATES,
    DRIFTS,
    KNOWN,
    NO_REFERENCE,
    REPRODUCED,
    compare_baseline,
    compare_reference,
    counts,
    default_sensitivity,
    failed,
    judge,
    load_sample_variation,
    pooled_bias,
    sort_cells,
    tau_cv,
    verify_table,
)
from kernelbench.verify.config import (
    VerifyConfig,
    config_names,
    config_path,
    load_config,
    parse_known,
    to_mapping,
)
from kernelbench.verify.grid import grid_cells, grid_experiments, run_cells
from kernelbench.verify.report import WIDTH, verdict_line

__all__ = ["AGREES", "CELL", "DEVIATES", "DRIFTS", "KNOWN", "NO_REFERENCE", "REPRODUCED"]
__all__ += ["WIDTH", "VerifyConfig", "compare_baseline", "compare_reference", "config_path"]
__all__ += ["counts", "failed", "grid_cells", "grid_experiments", "judge", "load_config"]
__all__ += ["load_sample_variation", "parse_known", "pooled_bias", "run_cells", "sort_cells"]
__all__ += ["tau_cv", "verdict_line", "verify_table", "DEFAULT_TAU", "default_sensitivity"]
__all__ += ["config_names", "to_mapping"]
