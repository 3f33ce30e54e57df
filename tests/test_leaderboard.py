"""The leaderboard (kernelbench.outputs.leaderboard): its statistic, its grids and its command."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kernelbench.errors import KernelbenchError
from kernelbench.outputs.leaderboard import (
    MIN_BLOCKS,
    REFERENCE,
    Grid,
    _log_ratios,
    block_values,
    data_dependent,
    default_baseline_dir,
    grids,
    map_times,
    part_args,
    rank_grid,
    standings,
)
from kernelbench.stats import nemenyi_cd, rank_test

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
    assert out.index[0] == "half"  # ordered by the average rank
    # ranks per block (each dataset one block here): half 1, 1.5, 1, 1.5
    assert out.loc["half", "mean_rank"] == 1.25 and out.loc[REFERENCE, "ratio"] == 1.0
    # rank sums 5, 10, 9: chi2 = 12 / (N k (k + 1)) sum R^2 - 3 N (k + 1) = 3.5, over
    # the tie correction 1 - 2 (2^3 - 2) / (N k (k^2 - 1)) = 0.875: 4.0, p = exp(-2)
    assert out["statistic"].iloc[0] == pytest.approx(4.0)
    assert out["p_value"].iloc[0] == pytest.approx(math.exp(-2.0))
    # four blocks cannot separate three methods: one shared rank
    assert list(out["rank"]) == [1, 1, 1] and (out["test"] == "Friedman").all()


def test_scores_become_errors():
    g = Grid(grid="g", title="t", baseline="b", metric="score", top=1.0)
    assert list(g.error(pd.Series([0.9, 0.75]))) == pytest.approx([0.1, 0.25])


def test_no_reference_is_one_line():
    with pytest.raises(KernelbenchError, match="no rff cells"):
        rank_grid(_table({"sr33": [0.1, 0.2]}), GRID)


def test_committed_baselines_rank_every_grid():
    """Every grid of configs/experiment/leaderboard.yaml ranks from the committed
    tables alone: rff at exactly 1 on all of the grid's cells, every published method
    on the same cells, ranks from 1 on each track."""
    table = standings(default_baseline_dir())
    assert list(table["grid"].unique()) == [g.grid for g in grids()]
    for (grid, _), g in table.groupby(["grid", "track"]):
        ref = g.set_index("method_label").loc[REFERENCE]
        assert ref["ratio"] == 1.0 and ref["cells"] > 0
        assert (g["cells"] == ref["cells"]).all(), grid
        ranks = g["rank"].dropna()
        assert ranks.min() == 1 if len(ranks) else True
        assert np.isfinite(g["ratio"]).all()


def test_part_args_name_each_grid_with_the_method():
    parts = part_args(["experiment=leaderboard", "method=sr33", "runs=2"])
    assert parts[:-1] == [[f"experiment={g.grid}", "method=sr33", "runs=2"] for g in grids()]
    # the map time: the method beside rff, in one run
    assert parts[-1] == ["experiment=leaderboard_map_time", "method=rff,sr33", "runs=2"]
    assert part_args(["experiment=fig1_reduced"]) is None


def test_estimate_prices_every_grid_together():
    """`kernelbench estimate experiment=leaderboard method=X` prices the three grids'
    cells and the map time in one plan line (27 + 27 + 15 + 2 cells) and runs nothing."""
    from kernelbench.cli import cli

    res = CliRunner().invoke(cli, ["estimate", "experiment=leaderboard", "method=sr33"])
    assert res.exit_code == 0, res.output
    assert res.output.startswith("plan: 71 cells, ")


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
    assert "Fig. 1 (relative Frobenius error) [fig1_reduced], data-independent" in res.output
    assert "Friedman chi2 = " in res.output and "Nemenyi CD = " in res.output
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


# ------------------------------------------------------------------ the rank test


def test_nemenyi_critical_difference_is_demsars():
    """Demšar (2006), Table 5(a): q_0.05 for k = 2..10; Sec. 3.2.4's example: k = 4
    methods over N = 14 data sets, CD = 2.569 sqrt(4 * 5 / (6 * 14)) = 1.25."""
    table = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, q in enumerate(table, start=2):
        assert nemenyi_cd(k, 6) == pytest.approx(q * math.sqrt(k * (k + 1) / 36), abs=2e-3)
    assert nemenyi_cd(4, 14) == pytest.approx(1.25, abs=5e-3)


def test_friedman_statistic_by_hand():
    """Friedman's chi2_F = 12 N / (k (k + 1)) [sum_j R_j^2 - k (k + 1)^2 / 4] over the
    average ranks R_j (Demšar 2006, Eq. in Sec. 3.2.2), on blocks without ties."""
    rng = np.random.default_rng(3)
    values = rng.normal(size=(14, 4)) + np.array([0.8, 0.0, 0.5, 0.0])
    ranks = values.argsort(axis=1).argsort(axis=1) + 1.0
    R = ranks.mean(axis=0)
    chi2 = 12 * 14 / (4 * 5) * (np.sum(R**2) - 4 * 25 / 4)
    res = rank_test(values)
    assert res.test == "Friedman" and res.blocks == 14
    assert res.mean_ranks == pytest.approx(R)
    assert res.statistic == pytest.approx(chi2)
    from scipy.stats import chi2 as chi2_dist

    assert res.p_value == pytest.approx(chi2_dist.sf(chi2, 3))


def test_ranks_are_shared_where_the_test_cannot_separate():
    """Method 0 best in every one of 12 blocks, 1 and 2 alternate, 3 worst: 0 and 3 are
    separated from the others (mean ranks 1, 2.5, 2.5, 4; CD = 1.35), 1 and 2 tie."""
    block = [[0.0, 1.0, 2.0, 3.0], [0.0, 2.0, 1.0, 3.0]]
    res = rank_test(np.array(block * 6))
    assert res.p_value < 0.05 and res.cd == pytest.approx(nemenyi_cd(4, 12))
    assert list(res.shared_ranks()) == [1, 2, 2, 4]
    # without a significant Friedman test nothing is separated, however far apart
    res = rank_test(np.array([[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]))
    assert res.p_value > 0.05 and list(res.shared_ranks()) == [1, 1, 1]


def test_two_methods_use_wilcoxons_signed_rank_test():
    """k = 2: six blocks all in favour of one method give the exact two-sided p of
    2 / 2^6 = 0.03125; five give 0.0625, not significant."""
    a = np.arange(1.0, 7.0)
    res = rank_test(np.column_stack([a, a + np.arange(1, 7)]))
    assert res.test == "Wilcoxon" and res.p_value == pytest.approx(2 / 64)
    assert list(res.shared_ranks()) == [1, 2]
    res = rank_test(np.column_stack([a[:5], a[:5] + 1]))
    assert res.p_value == pytest.approx(2 / 32) and list(res.shared_ranks()) == [1, 1]


# ------------------------------------------------------------------ tracks


def test_data_dependent_maps_are_declared_on_their_class():
    from kernelbench.features import FEATURE_MAPS

    dependent = {m for m in FEATURE_MAPS.names() if FEATURE_MAPS.get(m).data_dependent}
    assert dependent == {"nystrom", "lev_rff", "slw_rff"}
    assert data_dependent("qmc_fixed") is False  # a label of qmc
    assert data_dependent("nystrom") and not data_dependent("a_label_of_no_map")


def test_tracks_rank_apart_and_an_exact_map_is_marked_not_ranked():
    """nystrom (data-dependent) at rounding level in one cell sits on its own track,
    marked exact and unranked; lev_rff, data-dependent too, is ranked there against
    rff; the data-independent track does not see either."""
    rff = [0.1, 0.2, 0.4, 0.8, 0.3, 0.5]
    t = _table(
        {
            REFERENCE: rff,
            "sr33": [e / 2 for e in rff],
            "nystrom": [1e-15] + [e / 100 for e in rff[1:]],
            "lev_rff": [e / 3 for e in rff],
        }
    )
    out = rank_grid(t, Grid(grid="g", title="t", baseline="b", metric="m", exact_below=1e-10))
    indep = out[out["track"] == "data-independent"].set_index("method_label")
    dep = out[out["track"] == "data-dependent"].set_index("method_label")
    assert set(indep.index) == {REFERENCE, "sr33"} and set(dep.index) == {
        REFERENCE,
        "nystrom",
        "lev_rff",
    }
    assert dep.loc["nystrom", "status"] == "exact" and dep.loc["nystrom", "exact_cells"] == 1
    assert pd.isna(dep.loc["nystrom", "rank"]) and math.isnan(dep.loc["nystrom", "mean_rank"])
    # six blocks, two ranked methods: Wilcoxon, lev_rff better in all six
    assert dep.loc["lev_rff", "test"] == "Wilcoxon" and dep.loc["lev_rff", "rank"] == 1
    assert dep.loc[REFERENCE, "rank"] == 2 and indep.loc["sr33", "rank"] == 1


def test_blocks_average_their_cells():
    """Two kernels x two n on one dataset: blocks (dataset, kernel) hold the mean of
    their two cells' log ratios."""
    rows = []
    for kernel, n, e in [("rbf", 1.0, 0.5), ("rbf", 3.0, 0.125), ("arccos0", 1.0, 2.0),
                         ("arccos0", 3.0, 2.0)]:  # fmt: skip
        rows += [{"dataset": "a", "kernel": kernel, "n": n, "method_label": REFERENCE,
                  "error": 1.0},
                 {"dataset": "a", "kernel": kernel, "n": n, "method_label": "x",
                  "error": e}]  # fmt: skip
    logs = _log_ratios(pd.DataFrame(rows), GRID)
    blocks = block_values(logs, GRID)
    assert blocks.loc[("a", "rbf"), "x"] == pytest.approx(math.log(0.25))
    assert blocks.loc[("a", "arccos0"), "x"] == pytest.approx(math.log(2.0))
    assert len(blocks) == 2


def test_every_committed_grid_has_enough_independent_blocks():
    """Each track of each grid with two ranked methods or more is tested over at least
    MIN_BLOCKS blocks, and its Nemenyi CD is below the widest possible gap k - 1, so a
    method that wins every block would be separated from one that loses every block."""
    table = standings(default_baseline_dir())
    tested = 0
    for (grid, track), g in table.groupby(["grid", "track"]):
        ranked = g[g["status"] == "ranked"]
        if len(ranked) < 2:
            continue
        tested += 1
        assert ranked["blocks"].iloc[0] >= MIN_BLOCKS, (grid, track)
        if ranked["test"].iloc[0] == "Friedman":
            assert ranked["cd"].iloc[0] < len(ranked) - 1, (grid, track)
    assert tested == 4  # fig1, fig2, Liu's two tracks (fig1's data-dependent: nystrom, exact)


def test_nystrom_is_marked_exact_on_fig1_not_ranked_first():
    table = standings(default_baseline_dir())
    fig1 = table[table["grid"] == "fig1_reduced"].set_index(["track", "method_label"])
    ny = fig1.loc[("data-dependent", "nystrom")]
    assert ny["status"] == "exact" and ny["exact_cells"] > 0 and pd.isna(ny["rank"])
    assert "nystrom" not in fig1.loc["data-independent"].index


def test_map_time_stands_beside_each_published_method():
    """Every published method but slw_rff (its fit needs labels; walltime fits
    without) has a map time from the committed table, rff's ratio exactly 1."""
    table = standings(default_baseline_dir())
    timed = table.dropna(subset=["map_seconds"])
    assert set(table["method_label"]) - set(timed["method_label"]) == {"slw_rff"}
    assert (timed["map_seconds"] > 0).all()
    assert (timed.loc[timed["method_label"] == REFERENCE, "vs_rff"] == 1.0).all()
    times = map_times(default_baseline_dir())
    assert set(times["points"]) == {1000} and set(times["d"]) == {784}


# ------------------------------------------------------------------ colours


def _linear(c: float) -> float:
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def _rgb(colour: str) -> tuple[float, float, float]:
    from matplotlib.colors import to_rgb

    return to_rgb(colour)


def contrast_on_white(colour: str) -> float:
    """WCAG 2.1 contrast ratio (L_white + 0.05) / (L + 0.05), L the relative luminance."""
    r, g, b = (_linear(c) for c in _rgb(colour))
    return 1.05 / (0.2126 * r + 0.7152 * g + 0.0722 * b + 0.05)


def cielab(colour: str) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour."""
    r, g, b = (_linear(c) for c in _rgb(colour))
    xyz = np.array(
        [
            (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047,
            0.2126 * r + 0.7152 * g + 0.0722 * b,
            (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883,
        ]
    )
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def _every_label() -> list[str]:
    """Every registered method and every method config's label, and a plug-in's."""
    import yaml

    from kernelbench.config import config_dir
    from kernelbench.features import FEATURE_MAPS

    labels = set(FEATURE_MAPS.names())
    for path in (config_dir() / "method").glob("*.yaml"):
        labels.add(str((yaml.safe_load(path.read_text()) or {}).get("label", path.stem)))
    return sorted(labels | {"toy_rff"})


def test_contrast_by_hand():
    assert contrast_on_white("#000000") == pytest.approx(21.0)
    assert contrast_on_white("#767676") == pytest.approx(4.54, abs=0.01)
    assert contrast_on_white("#bcbd22") < 3  # the old olive: too light


def test_every_method_has_its_own_colour_and_marker_with_3_to_1_contrast():
    """Every label a figure can show (built-ins, method configs' labels, the toy_rff
    plug-in, and the reserve plug-in colours) has a colour no other label has, at
    least 3:1 against white, at a CIELAB distance of 20 or more from every other."""
    from kernelbench.outputs.style import _FALLBACK_COLOURS, method_style

    labels = _every_label()
    styles = {m: method_style(m) for m in labels}
    colours = [c for c, _ in styles.values()]
    assert len(set(colours)) == len(colours), "two methods share a colour"
    for m, (colour, marker) in styles.items():
        assert contrast_on_white(colour) >= 3.0, (m, colour)
        assert marker, m
    palette = sorted(set(colours) | set(_FALLBACK_COLOURS))
    lab = np.array([cielab(c) for c in palette])
    dist = np.linalg.norm(lab[:, None] - lab[None], axis=-1) + np.eye(len(palette)) * 1e9
    i, j = np.unravel_index(dist.argmin(), dist.shape)
    assert dist[i, j] >= 20, (palette[i], palette[j])
    # the pairs that were near-identical hues before
    for a, b in [("gq", "nystrom"), ("qmc_sobol", "qmc_digital_net"), ("toy_rff", "orf_tallqr")]:
        assert np.linalg.norm(cielab(styles[a][0]) - cielab(styles[b][0])) >= 20, (a, b)


def test_a_plugin_colour_is_none_of_the_built_in_ones():
    from kernelbench.outputs.style import METHOD_STYLES, method_style

    fixed = {c for c, _ in METHOD_STYLES.values()}
    for name in ["toy_rff", "my_map", "brand_new", "x"]:
        assert method_style(name)[0] not in fixed
        assert method_style(name) == method_style(name)


def test_report_method_needs_html():
    from kernelbench.outputs.report import report

    res = CliRunner().invoke(report, ["--method", "toy_rff"])
    assert res.exit_code == 2 and "--method needs --html" in res.output
