"""Liu et al. 2020 Table 3 baseline (protocol ``krr``): ``<experiment>_baseline.csv``,
the accuracy per cell (:func:`kernelbench.baseline.format.cell_table`) plus ``s``, the
mean feature time and its ratio to rff's in the same results (absolute seconds depend on
the machine), peak memory and spectral error. liu2020_table3 is the code's reading,
liu2020_table3_paper the paper's text.
"""

from __future__ import annotations

import pandas as pd

from kernelbench.baseline.format import cell_table, int_n


def table3_baseline(df: pd.DataFrame) -> pd.DataFrame:
    """Accuracy statistics per cell plus s, feature time (ratio to rff) and peak memory."""
    df = df[df["protocol"] == "krr"]
    out = cell_table(df, "accuracy_pct")
    keys = ["dataset", "kernel", "method_label", "n"]
    per = df.groupby(keys).agg(
        s=("s", "first"),
        feature_seconds=("feature_seconds", "mean"),
        peak_memory_mb=("peak_memory_mb", "mean"),
        rel_spec_error=("rel_spec_error", "mean"),
    )
    per = per.reset_index().astype({"n": float})
    out = out.astype({"n": float}).merge(per, on=keys, how="left")
    out["n"] = int_n(out["n"])
    return with_rff_ratio(out)


def with_rff_ratio(table: pd.DataFrame) -> pd.DataFrame:
    """``feature_time_vs_rff``: each cell's mean feature time over rff's at the same
    (dataset, kernel, n) of the table."""
    on = ["dataset", "kernel", "n"]
    rff = table[table["method_label"] == "rff"][[*on, "feature_seconds"]]
    out = table.drop(columns=["feature_time_vs_rff"], errors="ignore")
    out = out.merge(rff, on=on, how="left", suffixes=("", "_rff"))
    out["feature_time_vs_rff"] = out["feature_seconds"] / out.pop("feature_seconds_rff")
    return out
