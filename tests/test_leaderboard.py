"""The leaderboard (kernelbench.leaderboard): its statistic, its grids and its command."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kernelbench.errors import KernelbenchError
from kernelbench.leaderboard import (
    REFERENCE,
    Grid,
    default_baseline_dir,
    grids,
    part_args,
    rank_grid,
    standings,
)

GRID = Grid(grid="g", title="t", baseline="b.csv", metric="m")


def _table(errors: dict[str, list[float]]) -> pd.DataFrame:
    rows = []
    for method, values in errors.items():
        for i, e in enumerate(values):
            rows.append(
                {"dataset": f"d{i}", "kernel": "rbf", "n": 1.0, "method_label": method, "error": e}
            )
    return pd.DataFrame(rows)


def test_ratio_is_the_geometric_mean_with_a_t_interval():
    """A method at exactly half of rff's error in every cell: ratio 0.5, zero width;
    one at 2x and 0.5x alternately: ratio 1, an interval around it."""
    rff = [0.1, 0.2, 0.4, 0.8]
    out = rank_grid(
        _table(
            {
                REFERENCE: rff,
                "half": [e / 2 for e in rff],
                "mixed": [rff[0] * 2, rff[1] / 2, rff[2] * 2, rff[3] / 2],
            }
        ),
        GRID,
    ).set_index("method_label")
    assert out.loc["half", "ratio"] == pytest.approx(0.5)
    assert out.loc["half", "ratio_low"] == pytest.approx(0.5)
    assert out.loc["mixed", "ratio"] == pytest.approx(1.0)
    # log ratios +-log 2: sd = log 2 * sqrt(4/3), t_{0.975,3} = 3.182
    half = 3.182446 * math.log(2) * math.sqrt(4 / 3) / 2
    assert out.loc["mixed", "ratio_high"] == pytest.approx(math.exp(half), rel=1e-5)
    assert list(out["rank"]) == [1, 2, 3] and out.index[0] == "half"
    # ranks per cell: half 1, 1.5, 1, 1.5 (tied with mixed in d1 and d3)
    assert out.loc["half", "mean_rank"] == 1.25 and out.loc[REFERENCE, "ratio"] == 1.0


def test_scores_become_errors():
    g = Grid(grid="g", title="t", baseline="b", metric="score", top=1.0)
    assert list(g.error(pd.Series([0.9, 0.75]))) == pytest.approx([0.1, 0.25])


def test_no_reference_is_one_line():
    with pytest.raises(KernelbenchError, match="no rff cells"):
        rank_grid(_table({"sr33": [0.1, 0.2]}), GRID)


def test_committed_baselines_rank_every_grid():
    """Every grid of configs/experiment/leaderboard.yaml ranks from the committed
    tables alone: rff at exactly 1 on all of the grid's cells, every published method
    on the same cells."""
    table = standings(default_baseline_dir())
    assert list(table["grid"].unique()) == [g.grid for g in grids()]
    for grid, g in table.groupby("grid"):
        ref = g.set_index("method_label").loc[REFERENCE]
        assert ref["ratio"] == 1.0 and ref["cells"] > 0
        assert (g["cells"] == ref["cells"]).all(), grid
        assert sorted(g["rank"]) == list(range(1, len(g) + 1))
        assert np.isfinite(g["ratio"]).all()


def test_part_args_name_each_grid_with_the_method():
    parts = part_args(["experiment=leaderboard", "method=sr33", "runs=2"])
    assert parts == [[f"experiment={g.grid}", "method=sr33", "runs=2"] for g in grids()]
    assert part_args(["experiment=fig1_reduced"]) is None


def test_estimate_prices_every_grid_together():
    """`kernelbench estimate experiment=leaderboard method=X` prices the three grids'
    cells in one plan line (27 + 27 + 3 cells) and runs nothing."""
    from kernelbench.cli import cli

    res = CliRunner().invoke(cli, ["estimate", "experiment=leaderboard", "method=sr33"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("plan: 57 cells, ")


@pytest.mark.parametrize(
    "args", [["experiment=leaderboard"], ["experiment=leaderboard", "method=rff,orf"]]
)
def test_needs_one_method(args):
    from kernelbench.cli import cli

    res = CliRunner().invoke(cli, ["run", *args])
    assert res.exit_code == 2
    assert "ranks one method: add method=NAME" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_command_prints_the_standings(tmp_path):
    from kernelbench.cli import cli

    res = CliRunner().invoke(
        cli,
        [
            "leaderboard",
            "--results",
            str(tmp_path / "none"),
            "--method",
            "sr33",
            "--csv",
            str(tmp_path / "s.csv"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "Fig. 1 (relative Frobenius error) [fig1_reduced]" in res.output
    assert any(line.startswith("*") and "sr33" in line for line in res.output.splitlines())
    assert len(pd.read_csv(tmp_path / "s.csv")) > 0


def test_part_args_leave_unknown_names_to_the_run_and_let_other_errors_through(monkeypatch):
    """An unknown experiment (or a sweep of names) is not a leaderboard: the run's own
    check names the valid ones. Any other failure reading a known experiment surfaces."""
    import kernelbench.config as config

    assert part_args(["experiment=no_such_experiment", "method=sr33"]) is None
    assert part_args(["experiment=leaderboard,fig1", "method=sr33"]) is None

    def broken(name):
        raise RuntimeError(f"cannot read {name}")

    monkeypatch.setattr(config, "experiment_sweep", broken)
    with pytest.raises(RuntimeError, match="cannot read leaderboard"):
        part_args(["experiment=leaderboard", "method=sr33"])
