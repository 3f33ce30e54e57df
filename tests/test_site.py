"""The results site without a browser: the report's claims as data, the figures' data,
the ratios to rff, pages from results DataFrames and folders, the command's errors.
(tests/test_site_browser.py drives the built site in Chromium.)"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from kernelbench.errors import KernelbenchError
from kernelbench.outputs import site as site_build
from kernelbench.outputs.generic import ratio_table
from kernelbench.outputs.papers import PAGES
from kernelbench.outputs.plotly_render import plotly_figure
from kernelbench.outputs.report import report
from kernelbench.outputs.sections import Claim, Section, Summary
from kernelbench.outputs.site import build_site, results_page
from kernelbench.outputs.spec import FigureSpec, build
from tests.test_plot import make_results, write_shards

ROOT = Path(__file__).resolve().parents[1]  # the source tree
FIG1 = ROOT / "results" / "baseline" / "fig1_baseline.csv"


def test_a_claim_renders_as_its_markdown_line_and_keeps_its_verdict():
    c = Claim("B beats G:", True, "in 3 of 3 cells.")
    assert str(c) == "- **holds**: B beats G: in 3 of 3 cells."
    assert Claim("x", False, template="- {text}: **{verdict}**").__str__() == (
        "- x: **does not hold**"
    )
    assert Claim("x", None).verdict == "not measured"
    s = Section("k", "t", Summary(), ["intro", c, ""])
    assert s.claims == [c]
    assert s.markdown() == ["intro", str(c), ""]


def test_ratio_to_rff_and_its_interval_by_hand():
    df = pd.DataFrame(
        {
            "dataset": ["a", "a", "a"],
            "kernel": ["rbf"] * 3,
            "n": [1, 1, 1],
            "method_label": ["rff", "sr33", "toy_rff"],
            "mean": [0.2, 0.1, 0.4],
            "sem": [0.01, 0.004, 0.0],
        }
    )
    r = ratio_table(df, FigureSpec("t")).set_index("method_label")
    assert r.loc["sr33", "ratio"] == pytest.approx(0.5)
    half = 1.959963984540054 * math.hypot(0.004 / 0.1, 0.01 / 0.2)
    assert r.loc["sr33", "ratio_low"] == pytest.approx(0.5 * math.exp(-half))
    assert r.loc["sr33", "ratio_high"] == pytest.approx(0.5 * math.exp(half))
    # symmetric on the log scale: the product of the ends is the ratio squared
    lo, hi = r.loc["toy_rff", ["ratio_low", "ratio_high"]]
    assert lo * hi == pytest.approx(r.loc["toy_rff", "ratio"] ** 2)
    assert "rff" not in r.index
    assert ratio_table(df[df.method_label != "rff"], FigureSpec("t")).empty


def _with_toy(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` plus a method no paper has (a plug-in's), half of rff's error."""
    toy = df[df["method_label"] == "rff"].assign(
        method_label="toy_rff", method="toy_rff", paper_label="", mean=lambda t: t["mean"] / 2
    )
    return pd.concat([df, toy], ignore_index=True)


def test_fig1_is_kernels_by_datasets_one_kernel_per_panel_with_the_papers_values():
    df = _with_toy(pd.read_csv(FIG1))
    (f,) = build(df, PAGES["fig1"][0], "f")
    assert f.rows == ["rbf", "arccos0", "arccos1"]
    assert f.cols == ["powerplant", "letter", "usps", "mnist", "cifar100", "leukemia"]
    assert "toy_rff" in f.methods and f.methods[0] == "rff"
    legend = f.legend()
    assert legend["sr33"] == "sr33 (B)" and legend["toy_rff"] == "toy_rff"
    assert legend["orf_tallqr"] == "orf_tallqr (Gort, QR, published)"  # orf shares Gort
    fig = plotly_figure(f)
    json.dumps(fig, allow_nan=False)  # NaN would not be JSON
    traces = fig["data"]
    assert {t["meta"]["method"] for t in traces} == set(f.methods)
    for panel in f.panels.values():
        axis = {t["xaxis"] for t in traces if t["meta"]["panel"] == [panel.row, panel.col]}
        assert len(axis) == 1  # a panel is one kernel and one dataset
        shown = [t for t in traces if t["meta"]["panel"] == [panel.row, panel.col]]
        assert len(shown) <= 20
    papers = [t for t in traces if t["meta"]["kind"] == "paper"]
    assert papers and all(t["line"]["dash"] == "dash" for t in papers)
    assert {t["meta"]["method"] for t in papers} == {
        "rff",
        "orf_tallqr",
        "sorf",
        "qmc",
        "gq",
        "sr33",
    }
    # the paper's value of a point is the reference table's
    s = next(s for s in f.panels[("rbf", "letter")].series if s.label == "rff")
    ref = pd.read_csv(ROOT / "results" / "reference" / "munkhoeva2018_fig1_kernel_error.csv")
    want = ref[(ref.dataset == "letter") & (ref.kernel == "rbf") & (ref.method == "rff")]
    assert s.paper == pytest.approx(want.sort_values("n")["mean"].tolist())
    # log axes: ticks at powers of ten; the x axis says how n sets D
    assert all(
        fig["layout"][k]["exponentformat"] == "power" for k in fig["layout"] if k[:5] == "yaxis"
    )
    assert fig["layout"]["xaxis13"]["title"]["text"] == "n (D = 2n(d + 1))"


def test_means_far_below_a_panel_are_edge_markers_and_noted():
    """Nystroem at rounding level (1e-15) does not set the axis: the panel's range is
    set by the informative values, its means below drawn as triangles on the edge."""
    (f,) = build(pd.read_csv(FIG1), PAGES["fig1"][0], "f")
    panel = f.panels[("rbf", "usps")]
    assert panel.bottom > 1e-6
    below = {(lab, x) for lab, x, _ in panel.clipped}
    assert below == {("nystrom", float(n)) for n in range(1, 6)}
    fig = plotly_figure(f)
    k = f.rows.index("rbf") * len(f.cols) + f.cols.index("usps") + 1
    assert fig["layout"][f"yaxis{k}"]["range"][0] == pytest.approx(math.log10(panel.bottom))
    edge = [t for t in fig["data"] if t["meta"]["kind"] == "below"]
    ours = [
        t for t in fig["data"] if t["meta"]["kind"] == "ours" and t["meta"]["method"] == "nystrom"
    ]
    assert edge and all(t["marker"]["symbol"] == "triangle-down" for t in edge)
    assert all(v is None or v >= 1e-7 for t in ours for v in t["y"])  # none drawn below
    assert any("nystrom at x = 1 is" in n for n in f.clip_notes())


def test_a_series_with_two_values_at_one_x_is_refused_naming_it():
    """Yu et al. Fig. 4's table holds two metrics (fro, mse): a spec that does not
    select one is refused at build time, naming the series; the page's spec selects."""
    table = pd.read_csv(ROOT / "results" / "baseline" / "yu2016_fig4.csv")
    assert set(table["metric"]) == {"fro", "mse"}
    (spec,) = [s for s in PAGES["yu2016"] if s.table == "yu2016_fig4.csv"]
    unselected = FigureSpec(spec.table, title="Fig. 4", logy=True)
    with pytest.raises(
        KernelbenchError, match=r"series 'rff' of panel LETTER has two values at n = 1"
    ):
        build(table, unselected, "f")
    figs = build(table, spec, "f")
    assert {v for f in figs for s in f.series for v in s.y} <= set(
        table.loc[table.metric == "mse", "mean"]
    )


def test_every_spec_of_the_site_builds_from_its_committed_table():
    """Each page's figures: each series' x values distinct (the check passes), the
    Yang Fig. 2 spec on its spectral error only."""
    for specs in PAGES.values():
        for spec in specs:
            df = pd.read_csv(ROOT / "results" / "baseline" / spec.table)
            figs = build(df, spec, "f")
            assert figs, spec.table
            for f in figs:
                for s in f.series:
                    assert len(set(s.x)) == len(s.x)
    yang = next(s for s in PAGES["yang2014"] if "fig2" in s.table)
    assert dict(yang.where) == {"metric": "spec"} and "‖₂" in yang.ylabel


def test_numbers_for_people_and_z_at_the_floor():
    from kernelbench.outputs.site import _cell, header
    from kernelbench.stats import BLAS_SPREAD, z_score, z_text

    z = z_score(89.82 - 87.20, 0.0, 87.20)  # two constant samples: z at the floor
    assert z_text(z) == "+∞ (std 0)" and z_text(-z) == "−∞ (std 0)"
    assert z_text(math.inf) == "+∞ (std 0)" and z_text(1.234) == "+1.23"
    assert abs(z) == pytest.approx((89.82 / 87.20 - 1) / BLAS_SPREAD)
    assert _cell(z, "z")[0] == "+∞ (std 0)"
    assert _cell(271617.0)[0] == "271,617" and _cell(0.012345678)[0] == "0.01235"
    assert _cell(1.5e-15)[0] == "1.5e-15" and _cell(math.inf)[0] == "∞"
    assert header("method_label") == "method" and header("ratio_low") == "ratio, 95% low"
    assert header("some_column") == "some column"


def test_results_page_from_a_dataframe_shows_a_new_method(tmp_path):
    df = _with_toy(pd.read_csv(FIG1))
    page = results_page("board", "A leaderboard", [(PAGES["fig1"][0], df)], tmp_path)
    text = page.read_text()
    assert 'data-kind="method" value="toy_rff"' in text
    assert text.count('class="kb-plot"') == 2  # Fig. 1's small multiples and the box plot
    assert "ratio-table" in text and "toy_rff" in text
    pngs = sorted((tmp_path / "figures" / "board").glob("*.png"))
    pdfs = sorted((tmp_path / "figures" / "board").glob("*.pdf"))
    assert len(pngs) == len(pdfs) == 1
    assert pdfs[0].read_bytes().startswith(b"%PDF")
    assert b"kernelbench" in pdfs[0].read_bytes()  # the settings are its Subject


def test_a_runs_folder_and_a_table_folder_feed_the_site(tmp_path):
    methods = (("rff", "rff", "G"), ("toy_rff", "toy_rff", ""))
    runs = write_shards(make_results(methods=methods, experiment="board"), tmp_path / "runs")
    tables = tmp_path / "tables"
    tables.mkdir()
    walltime = pd.read_csv(ROOT / "results" / "baseline" / "fig3_walltime.csv")
    extra = walltime[walltime.method_label == "rff"].assign(method_label="nystrom")
    pd.concat([walltime, extra]).to_csv(tables / "fig3_walltime.csv", index=False)
    out = tmp_path / "site"
    rep = build_site(out, [runs, tables], only=["fig3"])
    names = {p.name for p in rep.pages}
    assert names == {"index.html", "fig3.html", "runs-0-board.html", "leaderboard.html"}
    board = (out / "runs-0-board.html").read_text()
    assert 'value="toy_rff"' in board and "rel_fro_error" in board
    assert 'value="nystrom"' in (out / "fig3.html").read_text()
    index = (out / "index.html").read_text()
    assert 'href="runs-0-board.html"' in index and "BLAS" in index
    assert (out / "assets" / "plotly.min.js").stat().st_size > 1_000_000
    # offline: no page loads anything from the network
    for page in out.glob("*.html"):
        assert "http://" not in page.read_text().split("<main>")[0]
        assert "https://" not in page.read_text().split("<main>")[0]


def test_the_site_renders_the_same_claims_as_reproduction_md(tmp_path):
    from kernelbench.outputs.report import load_sections

    (section,) = load_sections(["fig3"])
    page = results_page("fig3", section.title, [], tmp_path, section=section)
    text = page.read_text()
    assert section.claims
    for c in section.claims:  # as markdown-it writes the text: & < > " escaped
        escaped = c.text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        assert f"{escaped.replace(chr(34), '&quot;')}: <strong>{c.verdict}</strong>" in text
    md = (ROOT / "REPRODUCTION.md").read_text()
    assert all(str(c) in md for c in section.claims)


def test_command_errors(tmp_path, monkeypatch):
    res = CliRunner().invoke(report, ["--results", str(tmp_path)])
    assert res.exit_code == 2 and "--results needs --html" in res.output
    monkeypatch.setattr("kernelbench.outputs.site.SITE_MODULES", ("plotly", "no_such_module_kb"))
    from kernelbench.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["report", "--html", str(tmp_path / "s")])
    assert exc.value.code == 2
    assert not (tmp_path / "s").exists()


def test_static_drawing_in_worker_processes_matches_serial(tmp_path):
    figs = [
        f
        for spec in (*PAGES["yang2014"], *PAGES["yu2016"])
        for f in build(pd.read_csv(ROOT / "results" / "baseline" / spec.table), spec, "f")
    ]
    figs = [f.__class__(**{**f.__dict__, "key": f"f{i}"}) for i, f in enumerate(figs[:4])]
    site_build.draw_static([(f, tmp_path / "a") for f in figs], workers=1)
    site_build.draw_static([(f, tmp_path / "b") for f in figs], workers=2)
    a = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert a == sorted(p.name for p in (tmp_path / "b").iterdir()) and len(a) == 2 * len(figs)
    for name in a:
        if name.endswith(".png"):
            assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_the_leaderboard_page_ranks_a_new_method(tmp_path):
    """A run of experiment=leaderboard's Fig. 1 grid (munkhoeva2018_fig1_reduced) for a
    method at half of rff's committed error in every cell: the page ranks it with ratio
    0.5 beside the published methods, which come from the committed baselines."""
    from kernelbench.outputs.leaderboard import grids

    base = pd.read_csv(FIG1)
    grid = grids()[0]
    rff = base[(base.method_label == "rff") & base.dataset.isin(["powerplant", "letter", "usps"])
               & base.n.isin([1, 3, 5])]  # fmt: skip
    df = make_results(datasets={"powerplant": 4}, kernels=("rbf",), ns=(1,),
                      methods=(("half_rff", "half_rff", ""),), runs=2,
                      experiment="munkhoeva2018_fig1_reduced")  # fmt: skip
    rows = []
    for r in rff.itertuples():
        rows.append(df.assign(dataset=r.dataset, d=int(r.d), kernel=r.kernel, n=float(r.n),
                              rel_fro_error=r.mean / 2))  # fmt: skip
    runs = write_shards(pd.concat(rows, ignore_index=True), tmp_path / "runs")
    out = tmp_path / "site"
    rep = build_site(out, [runs], only=["fig3"])
    assert out / "leaderboard.html" in rep.pages
    text = (out / "leaderboard.html").read_text()
    assert f"{grid.title} [{grid.grid}]" in text and 'value="half_rff"' in text
    from kernelbench.outputs.leaderboard import grid_table, rank_grid
    from kernelbench.outputs.site import BASELINE_DIR

    ranked = rank_grid(grid_table(grid, BASELINE_DIR, runs), grid)
    ranked = ranked[ranked["track"] == "data-independent"].set_index("method_label")
    assert ranked.loc["half_rff", "ratio"] == pytest.approx(0.5)
    assert ranked.loc["half_rff", "cells"] == ranked.loc["rff", "cells"] == 27
    # the run's method is highlighted (learnt from the results), in its own colour,
    # and the page names its statistic and says how to add a method
    from kernelbench.outputs.style import method_style

    assert text.count('<tr class="kb-mine" data-method="half_rff">') == 1
    assert text.count('class="kb-mine"') == 1  # one grid run, one row
    assert f'style="color: {method_style("half_rff")[0]}"' in text
    assert "Primary statistic: the average rank over independent blocks" in text
    assert 'id="add-your-method"' in text and 'href="#plugin-guide"' in text
    assert "kernelbench run experiment=leaderboard method=half_rff" in text
    assert '<details id="plugin-guide">' in text and "entry point" in text


def test_the_leaderboard_highlights_the_method_option(tmp_path):
    """`report --html --method NAME` highlights NAME, a published method, with no run;
    without it and without a run nothing is highlighted."""
    from kernelbench.outputs.site import BASELINE_DIR
    from kernelbench.outputs.site_board import board

    none = tmp_path / "none"
    _, content, found = board([none], BASELINE_DIR, "sr33")
    assert found is None and content.highlight == ["sr33"]
    mine = [r["method"] for _, tracks in content.grids for t in tracks for r in t.rows if r["mine"]]
    assert set(mine) == {"sr33"} and len(mine) == 3  # Fig. 1, Fig. 2, Liu
    assert board([none], BASELINE_DIR)[1].highlight == []
