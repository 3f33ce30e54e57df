"""``kernelbench verify``: does kernelbench reproduce a paper's numbers, cell by cell?
:mod:`.config`, :mod:`.grid`, :mod:`.compare` (statistics), :mod:`.report`, :mod:`.command`."""

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
from kernelbench.verify.compare import (
    AGREES,
    CELL,
    DEVIATES,
    DRIFTS,
    KNOWN,
    NO_REFERENCE,
    REPRODUCED,
    compare_baseline,
    compare_reference,
    counts,
    failed,
    judge,
    load_sample_variation,
    pooled_bias,
    sort_cells,
    tau_cv,
    verify_table,
)
from kernelbench.verify.config import VerifyConfig, config_path, load_config, parse_known
from kernelbench.verify.grid import grid_cells, grid_experiments, run_cells
from kernelbench.verify.report import WIDTH, verdict_line

__all__ = ["AGREES", "BLAS_SPREAD", "CELL", "DEVIATES", "DRIFTS", "KNOWN", "NO_REFERENCE"]
__all__ += ["REPRODUCED", "SAME_DRAWS_ATOL", "SAME_DRAWS_RTOL", "WIDTH", "VerifyConfig"]
__all__ += ["aggregate", "compare_baseline", "compare_reference", "config_path", "counts", "failed"]
__all__ += ["grid_cells", "grid_experiments", "judge", "load_config", "load_sample_variation"]
__all__ += ["parse_known", "pooled_bias", "run_cells", "same_draws_tolerance", "sidak_rate"]
__all__ += ["sidak_z", "sort_cells", "tau_cv", "verdict_line", "verify_table", "welch_df"]
