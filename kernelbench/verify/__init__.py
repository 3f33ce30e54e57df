"""``kernelbench verify``: does kernelbench reproduce a paper's numbers, cell by cell?

* :mod:`~kernelbench.verify.config` - what "reproduced" means, as data
  (``configs/verify/<name>.yaml``): reference, protocol, metric, grids, known deviations;
* :mod:`~kernelbench.verify.grid` - the cells of a grid, and running them;
* :mod:`~kernelbench.verify.compare` - the statistics (z against the reference and the
  baseline, the pooled bias test per family, the Sidak threshold, verdicts);
* :mod:`~kernelbench.verify.report` - the printed table and its files;
* :mod:`~kernelbench.verify.command` - the click command.
"""

from __future__ import annotations

from kernelbench.stats import (
    BLAS_SPREAD,
    SAME_DRAWS_ATOL,
    SAME_DRAWS_RTOL,
    aggregate,
    same_draws_tolerance,
    sidak_rate,
    sidak_z,
    welch_df,
)
from kernelbench.verify.command import load_baseline, verify
from kernelbench.verify.compare import (
    AGREES,
    CELL,
    DEVIATES,
    DRIFTS,
    KNOWN,
    NO_BASELINE,
    NO_REFERENCE,
    REPRODUCED,
    Verification,
    compare_baseline,
    compare_reference,
    counts,
    failed,
    judge,
    load_sample_variation,
    pooled_bias,
    sort_cells,
    tau_cv,
    tau_df,
    verify_table,
)
from kernelbench.verify.config import (
    DEFAULT_CONFIG,
    KnownDeviation,
    VerifyConfig,
    config_path,
    load_config,
    parse_known,
)
from kernelbench.verify.grid import grid_cells, grid_experiments, run_cells
from kernelbench.verify.report import (
    WIDTH,
    display_frame,
    format_text,
    pooled_frame,
    summary_line,
    verdict_line,
    write_table,
)

__all__ = [
    "AGREES",
    "BLAS_SPREAD",
    "CELL",
    "DEFAULT_CONFIG",
    "DEVIATES",
    "DRIFTS",
    "KNOWN",
    "NO_BASELINE",
    "NO_REFERENCE",
    "REPRODUCED",
    "SAME_DRAWS_ATOL",
    "SAME_DRAWS_RTOL",
    "same_draws_tolerance",
    "WIDTH",
    "KnownDeviation",
    "Verification",
    "VerifyConfig",
    "aggregate",
    "compare_baseline",
    "compare_reference",
    "config_path",
    "counts",
    "display_frame",
    "failed",
    "format_text",
    "grid_cells",
    "grid_experiments",
    "judge",
    "load_baseline",
    "load_config",
    "load_sample_variation",
    "parse_known",
    "pooled_bias",
    "pooled_frame",
    "run_cells",
    "sidak_rate",
    "sidak_z",
    "sort_cells",
    "summary_line",
    "tau_cv",
    "tau_df",
    "verdict_line",
    "verify",
    "verify_table",
    "welch_df",
    "write_table",
]
