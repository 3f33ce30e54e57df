"""``kernelbench verify``: the tolerance statistics, the known-deviation data, the CLI table."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from kernelbench.cli import main
from kernelbench.config import config_dir, group_options
from kernelbench.errors import KernelbenchError
from kernelbench.protocols import get_protocol
from kernelbench.reference import load_reference
from kernelbench.results import shard_path, write_shard
from kernelbench.verify import (
    AGREES,
    CELL,
    DEVIATES,
    DRIFTS,
    KNOWN,
    NO_REFERENCE,
    REPRODUCED,
    VerifyConfig,
    aggregate,
    compare_baseline,
    compare_reference,
    config_path,
    counts,
    failed,
    grid_cells,
    judge,
    load_config,
    parse_known,
    sidak_rate,
    sidak_z,
    tau_cv,
    welch_df,
)

EXPERIMENT = "munkhoeva2018_fig1_reduced"
SCHEMA = get_protocol("kernel_approx").schema()
COLUMNS = SCHEMA.names


def ours_row(
    dataset="letter",
    kernel="rbf",
    label="rff",
    n=1,
    mean=0.1,
    std=0.01,
    runs=30,
    seed=0,
    data_source="mirror",
):
    return {
        "dataset": dataset,
        "kernel": kernel,
        "method_label": label,
        "n": float(n),
        "seed": seed,
        "runs": runs,
        "mean": mean,
        "std": std,
        "sem": std / math.sqrt(runs),
        "data_source": data_source,
    }


def ref_row(dataset="letter", kernel="rbf", method="rff", n=1, mean=0.1, std=0.01, runs=500):
    return {
        "dataset": dataset,
        "kernel": kernel,
        "method": method,
        "n": n,
        "mean": mean,
        "std": std,
        "runs": runs,
    }


def cfg_with(known=(), compare=None, alpha=0.01) -> VerifyConfig:
    return VerifyConfig(
        name="test",
        reference="unused",
        alpha=alpha,
        compare=compare or {"orf_tallqr": "orf"},
        known_deviations=parse_known(known),
    )


def judged(ours, ref, cfg, tau=None, base=None):
    t = compare_reference(pd.DataFrame(ours), pd.DataFrame(ref), cfg, tau)
    if base is not None:
        t = t.merge(
            compare_baseline(pd.DataFrame(ours), pd.DataFrame(base)),
            on=["dataset", "kernel", "method_label", "n"],
            how="left",
        )
    return judge(t, cfg.alpha, base is not None)


# -- statistics ------------------------------------------------------------------------


def test_sidak_threshold_grows_with_the_number_of_cells():
    assert sidak_z(1, 0.05) == pytest.approx(1.959964, abs=1e-5)
    assert sidak_z(1, 0.01) == pytest.approx(2.575829, abs=1e-5)
    zs = [sidak_z(m, 0.01) for m in (1, 2, 10, 100, 1000)]
    assert all(a < b for a, b in zip(zs, zs[1:], strict=False))
    # Sidak's per-test rate: 1 - (1 - alpha)^(1/m)
    per_test = 1 - (1 - 0.01) ** (1 / 100)
    from scipy import stats

    assert sidak_z(100, 0.01) == pytest.approx(stats.norm.isf(per_test / 2))
    assert sidak_z(100, 0.05) < sidak_z(100, 0.01)
    # t quantiles: wider with fewer degrees of freedom, normal in the limit
    assert sidak_z(100, 0.01, 29) > sidak_z(100, 0.01, 200) > sidak_z(100, 0.01)
    assert sidak_z(100, 0.01, 1e9) == pytest.approx(sidak_z(100, 0.01), rel=1e-6)


def test_welch_df():
    assert welch_df([(1.0, 10)]) == pytest.approx(10)
    assert welch_df([(1.0, 10), (1.0, 10)]) == pytest.approx(20)
    assert welch_df([(1.0, 10), (1.0, math.inf)]) == pytest.approx(40)
    assert welch_df([(0.0, 10)]) == math.inf


def test_cell_at_the_reference_reproduces_and_far_off_deviates():
    ours = [ours_row(mean=0.1), ours_row(label="sorf", mean=0.3)]
    ref = [ref_row(mean=0.1), ref_row(method="sorf", mean=0.1)]
    t, rate, m = judged(ours, ref, cfg_with())
    assert m == 2 and rate == pytest.approx(sidak_rate(2, 0.01))
    # Student t at the Welch-Satterthwaite df of the two standard errors
    a, b = 0.01**2 / 30, 0.01**2 / 500
    df = (a + b) ** 2 / (a**2 / 29 + b**2 / 499)
    assert t["df"].iloc[0] == pytest.approx(df)
    assert t["z_crit"].iloc[0] == pytest.approx(sidak_z(2, 0.01, df))
    assert t["z_crit"].iloc[0] > sidak_z(2, 0.01)
    assert list(t["verdict"]) == [REPRODUCED, DEVIATES]
    assert t["z"].iloc[0] == 0.0 and t["ratio"].iloc[0] == pytest.approx(1.0)
    assert t["ratio"].iloc[1] == pytest.approx(3.0)
    # z = diff / sqrt(s_o^2/R + s_p^2/500), here without tau
    se = math.sqrt(0.01**2 / 30 + 0.01**2 / 500)
    assert t["z"].iloc[1] == pytest.approx(0.2 / se)
    assert failed(t)
    assert counts(t) == {"reproduced": 1, "known": 0, "deviate": 1, "no_reference": 0}


def test_z_just_inside_and_outside_the_threshold():
    cfg = cfg_with()
    a, b = 0.01**2 / 30, 0.01**2 / 500
    se = math.sqrt(a + b)
    zc = sidak_z(2, 0.01, welch_df([(a, 29), (b, 499)]))
    ours = [ours_row(mean=0.1 + 0.99 * zc * se), ours_row(label="gq", mean=0.1 - 1.01 * zc * se)]
    ref = [ref_row(mean=0.1), ref_row(method="gq", mean=0.1)]
    t, _, _ = judged(ours, ref, cfg)
    assert list(t["verdict"]) == [REPRODUCED, DEVIATES]


def test_sample_variation_widens_the_tolerance():
    ours = [ours_row(mean=0.12)]
    ref = [ref_row(mean=0.1)]
    t, _, _ = judged(ours, ref, cfg_with())
    assert t["verdict"].iloc[0] == DEVIATES
    tau = pd.DataFrame({"dataset": ["letter"], "kernel": ["rbf"], "cv": [0.1], "df": [56]})
    t, _, _ = judged(ours, ref, cfg_with(), tau=tau)
    assert t["tau"].iloc[0] == pytest.approx(0.01)  # cv x paper mean
    se = math.sqrt(0.01**2 / 30 + 0.01**2 / 500 + 2 * 0.01**2)
    assert t["z"].iloc[0] == pytest.approx(0.02 / se)
    assert t["verdict"].iloc[0] == REPRODUCED
    # an unmeasured pair falls back to the largest measured cv
    assert tau_cv(tau, "mnist", "rbf") == (0.1, "fallback")
    assert tau_cv(None, "letter", "rbf") == (0.0, "none")


def test_known_deviation_from_the_data_does_not_fail():
    known = [
        {"methods": ["orf"], "reason": "true ORF"},
        {"datasets": ["usps"], "data_sources": ["mirror"], "reason": "data version"},
    ]
    cfg = cfg_with(known=known)
    ours = [
        ours_row(label="orf", mean=0.5),  # far off, but known
        ours_row(label="orf_tallqr", mean=0.1),  # compared with the paper's orf (Gort)
        ours_row(dataset="usps", mean=0.5),  # data version from the mirror: known
        ours_row(dataset="usps", label="gq", mean=0.5, data_source="download"),  # not known
        ours_row(label="sr11", mean=0.1),  # no paper number
    ]
    ref = [ref_row(method="orf"), ref_row(dataset="usps"), ref_row(dataset="usps", method="gq")]
    t, _, m = judged(ours, ref, cfg)
    v = dict(zip(zip(t["dataset"], t["method_label"], strict=True), t["verdict"], strict=True))
    assert v[("letter", "orf")] == f"{KNOWN}: true ORF"
    assert v[("letter", "orf_tallqr")] == REPRODUCED
    assert v[("usps", "rff")] == f"{KNOWN}: data version"
    assert v[("usps", "gq")] == DEVIATES
    assert v[("letter", "sr11")] == NO_REFERENCE
    assert m == 2  # the family: orf_tallqr and usps gq
    assert failed(t)
    assert not failed(t[t["method_label"] != "gq"])
    c = counts(t)
    assert (c["reproduced"], c["known"], c["deviate"], c["no_reference"]) == (1, 2, 1, 1)
    # the numbers of a known deviation are still there
    row = t[t["method_label"] == "orf"].iloc[0]
    assert row["ratio"] == pytest.approx(5.0) and not row["within_tolerance"]


def test_known_rule_patterns_and_errors():
    (rule,) = parse_known([{"kernels": ["arccos*"], "ns": [1, 2], "reason": "r"}])
    assert rule.matches({"kernel": "arccos1", "n": 1.0})
    assert not rule.matches({"kernel": "rbf", "n": 1.0})
    assert not rule.matches({"kernel": "arccos0", "n": 3.0})
    from kernelbench.errors import KernelbenchError

    with pytest.raises(KernelbenchError, match="reason"):
        parse_known([{"methods": ["orf"]}])
    with pytest.raises(KernelbenchError, match="unknown keys"):
        parse_known([{"method": ["orf"], "reason": "r"}])


def test_baseline_same_seed_shares_runs():
    # same seed, same runs: identical numbers, no noise left -> agree only if equal
    ours = [ours_row(mean=0.1), ours_row(label="gq", mean=0.1)]
    base = [ours_row(mean=0.1), ours_row(label="gq", mean=0.1 * (1 + 1e-6))]
    t = compare_baseline(pd.DataFrame(ours), pd.DataFrame(base))
    assert t["base_z"].iloc[0] == 0.0 and math.isinf(t["base_z"].iloc[1])
    # 30 runs nested in 500: Var = s^2 (1/30 - 1/500)
    base = [ours_row(mean=0.101, runs=500)]
    t = compare_baseline(pd.DataFrame(ours[:1]), pd.DataFrame(base))
    assert t["base_se"].iloc[0] == pytest.approx(0.01 * math.sqrt(1 / 30 - 1 / 500))
    # another seed: independent
    base = [ours_row(mean=0.101, runs=500, seed=1)]
    t = compare_baseline(pd.DataFrame(ours[:1]), pd.DataFrame(base))
    assert t["base_se"].iloc[0] == pytest.approx(math.sqrt(0.01**2 / 30 + 0.01**2 / 500))
    assert 29 < t["base_df"].iloc[0] < 30 + 500


def test_baseline_drift_fails():
    ours = [ours_row(mean=0.1), ours_row(label="gq", mean=0.2)]
    ref = [ref_row(mean=0.1), ref_row(method="gq", mean=0.2)]
    base = [ours_row(mean=0.1, runs=500), ours_row(label="gq", mean=0.1, runs=500)]
    t, _, m = judged(ours, ref, cfg_with(), base=base)
    assert m == 4
    assert list(t["verdict"]) == [REPRODUCED, REPRODUCED]
    assert list(t["base_verdict"]) == [AGREES, DRIFTS]
    assert failed(t)


def test_aggregate():
    df = pd.DataFrame(
        {
            "dataset": "letter",
            "kernel": "rbf",
            "method_label": "rff",
            "n": 1.0,
            "seed": 0,
            "rel_fro_error": [1.0, 2.0, 3.0],
            "data_source": "mirror",
        }
    )
    a = aggregate(df, CELL, "rel_fro_error")
    assert a.loc[0, "runs"] == 3 and a.loc[0, "mean"] == 2.0 and a.loc[0, "std"] == 1.0
    assert a.loc[0, "sem"] == pytest.approx(1 / math.sqrt(3))
    pct = aggregate(df, CELL, "rel_fro_error", scale=100.0)
    assert pct.loc[0, "mean"] == 200.0 and pct.loc[0, "std"] == 100.0
    with pytest.raises(KernelbenchError, match="no column"):
        aggregate(df, [*CELL, "learner"], "rel_fro_error")


# -- the data files -------------------------------------------------------------------


def test_verify_config_parses():
    cfg = load_config()
    assert cfg.reference == "munkhoeva2018_fig1_kernel_error"
    assert 0 < cfg.alpha < 1
    assert cfg.compare["orf_tallqr"] == "orf"
    methods = set(group_options("method"))
    datasets = set(group_options("dataset"))
    reasons = {}
    for rule in cfg.known_deviations:
        assert rule.reason
        assert set(rule.methods or ()) <= methods
        assert set(rule.datasets or ()) <= datasets
        for m in rule.methods or ():
            reasons[m] = rule.reason
    assert "orf" in reasons and "qmc" in reasons and "orf_tallqr" not in reasons
    assert any(r.datasets == ("usps",) for r in cfg.known_deviations)
    ref = load_reference(cfg.reference)
    assert set(cfg.compare.values()) <= set(ref["method"])


def test_reduced_grid_has_tallqr_and_a_slice_of_mnist_and_leukemia():
    cfg = load_config()
    cells = grid_cells(cfg, "reduced")
    main = [c for c in cells if c["dataset"]["name"] in ("powerplant", "letter", "usps")]
    labels = {c["method"]["label"] for c in main}
    assert {"rff", "orf", "orf_tallqr", "sorf", "qmc", "gq", "sr33"} <= labels
    assert len(main) == 3 * 3 * 7 * 3
    assert {c["runs"] for c in main} == {30}
    by_ds = {}
    for c in cells:
        if c not in main:
            by_ds.setdefault(c["dataset"]["name"], []).append(c)
    assert set(by_ds) == {"mnist", "leukemia"}
    for ds, runs, ns in (("mnist", 20, {1, 5}), ("leukemia", 10, {1, 2})):
        assert len(by_ds[ds]) == 3 * 3 * 2
        assert {c["method"]["label"] for c in by_ds[ds]} == {"rff", "sorf", "sr33"}
        assert {c["runs"] for c in by_ds[ds]} == {runs}
        assert {c["n"] for c in by_ds[ds]} == ns
    assert {c["experiment"] for c in cells} == {EXPERIMENT}
    # the same cells (and config hashes) as make_cell and `kernelbench run` build
    from kernelbench.experiment import build_cell, config_hash, make_cell

    for c in (cells[0], cells[-1]):
        same = make_cell(
            c["method"]["label"],
            c["kernel"]["name"],
            c["dataset"]["name"],
            c["n"],
            c["runs"],
            0,
            EXPERIMENT,
        )
        assert c == same
        assert config_hash(build_cell(c)) == config_hash(build_cell(same))


def test_sample_variation_and_baseline_tables_if_committed():
    cfg = load_config()
    if cfg.sample_variation is not None and cfg.sample_variation.is_file():
        tab = pd.read_csv(cfg.sample_variation)
        assert {"dataset", "kernel", "cv"} <= set(tab.columns)
        assert (tab["cv"] >= 0).all() and (tab["cv"] >= tab.get("cv_point", 0)).all()
    if cfg.baseline is not None and cfg.baseline.is_file():
        base = pd.read_csv(cfg.baseline)
        assert {"dataset", "kernel", "method_label", "n", "runs", "mean", "std"} <= set(base)
        assert not base.duplicated(["dataset", "kernel", "method_label", "n"]).any()


# -- the command, end to end, on synthetic shards -------------------------------------------


def write_cell(root: Path, dataset, kernel, label, method, n, errors, d=16):
    rows = []
    for r, e in enumerate(errors):
        row = {c: None for c in COLUMNS}
        row.update(
            experiment=EXPERIMENT,
            protocol="kernel_approx",
            protocol_params="{}",
            dataset=dataset,
            kernel=kernel,
            kernel_params="{}",
            method=method,
            method_label=label,
            paper_label="",
            method_params="{}",
            n=float(n),
            D=2 * n * (d + 1),
            n_features=2 * n * (d + 1),
            d=d,
            samples=550,
            runs=len(errors),
            run=r,
            seed=0,
            rel_fro_error=float(e),
            rel_spec_error=float(e),
            fit_seconds=0.0,
            transform_seconds=0.0,
            config_hash=f"h-{dataset}-{kernel}-{label}-{n}",
            started_at=pd.Timestamp("2024-01-01", tz="UTC"),
            blas_threads=1,
            data_source="mirror",
        )
        rows.append(row)
    write_shard(pd.DataFrame(rows), shard_path(root, EXPERIMENT, dataset, kernel, label, n), SCHEMA)


def errors_with_mean(mean, runs=30, rel_sd=0.1, seed=0):
    e = np.random.default_rng(seed).normal(0, 1, runs)
    e = (e - e.mean()) / e.std(ddof=1)
    return mean * (1 + rel_sd * e)


@pytest.fixture
def synthetic(tmp_path):
    ref = load_reference("munkhoeva2018_fig1_kernel_error").set_index(
        ["dataset", "kernel", "method", "n"]
    )
    root = tmp_path / "res"
    for label, method in (("rff", "rff"), ("orf_tallqr", "orf"), ("orf", "orf"), ("qmc", "qmc")):
        paper = ref.loc[("letter", "rbf", method, 1), "mean"]
        factor = 1.0 if label != "orf" else 3.0  # true ORF far off: a known deviation
        write_cell(
            root,
            "letter",
            "rbf",
            label,
            "orf" if "orf" in label else label,
            1,
            errors_with_mean(paper * factor),
        )
    raw = yaml.safe_load(config_path().read_text())
    raw.update(sample_variation=None, baseline=None)
    cfg = tmp_path / "verify.yaml"
    cfg.write_text(yaml.safe_dump(raw))
    return root, cfg, ref


def run_verify(args, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["verify", *args])
        raise SystemExit(0)
    out = capsys.readouterr()
    return exc.value.code, out.out


def test_cli_no_run_reproduces(synthetic, capsys, tmp_path):
    root, cfg, _ = synthetic
    out_md = tmp_path / "table.md"
    out_csv = tmp_path / "table.csv"
    code, out = run_verify(
        ["--no-run", "--results", str(root), "--config", str(cfg), "--out", str(out_md)], capsys
    )
    assert code in (0, None)
    lines = out.splitlines()
    header = lines[0]
    for col in (
        "dataset",
        "kernel",
        "method",
        "n",
        "ours (mean ± std)",
        "paper (mean ± std)",
        "ratio",
        "verdict",
    ):
        assert col in header
    body = "\n".join(lines)
    assert "orf_tallqr" in body and "reproduced" in body
    assert "known deviation: true ORF" in body
    assert "known deviation: scrambled Halton" in body
    assert lines[-1] == "2 reproduced, 2 known deviations, 0 deviate"
    assert "| letter | rbf | orf_tallqr |" in out_md.read_text()
    run_verify(
        ["--no-run", "--results", str(root), "--config", str(cfg), "--out", str(out_csv)], capsys
    )
    t = pd.read_csv(out_csv)
    assert len(t) == 4 and {"z", "ratio", "verdict", "tau"} <= set(t.columns)


def test_cli_deviation_exits_1(synthetic, capsys):
    root, cfg, ref = synthetic
    paper = ref.loc[("letter", "rbf", "sorf", 1), "mean"]
    write_cell(root, "letter", "rbf", "sorf", "sorf", 1, errors_with_mean(2 * paper))
    code, out = run_verify(["--no-run", "--results", str(root), "--config", str(cfg)], capsys)
    assert code == 1
    assert out.splitlines()[-1] == "2 reproduced, 2 known deviations, 1 deviate"
    assert "deviates" in out


def test_cli_baseline_drift_exits_1(synthetic, capsys, tmp_path):
    root, cfg, ref = synthetic
    rows = pd.concat(pd.read_parquet(p) for p in sorted(root.rglob("*.parquet")))
    base = aggregate(rows, CELL, "rel_fro_error")
    base.loc[base["method_label"] == "rff", "mean"] *= 1.5
    base_path = tmp_path / "baseline.csv"
    base.to_csv(base_path, index=False)
    raw = yaml.safe_load(cfg.read_text())
    raw["baseline"] = str(base_path)
    cfg.write_text(yaml.safe_dump(raw))
    code, out = run_verify(["--no-run", "--results", str(root), "--config", str(cfg)], capsys)
    assert code == 1
    assert "3 agree, 1 drift" in out and "drifts" in out
    code, out = run_verify(
        ["--no-run", "--results", str(root), "--config", str(cfg), "--no-baseline"], capsys
    )
    assert code in (0, None)


def test_cli_errors_are_one_line(tmp_path, capsys):
    code, _ = run_verify(["--no-run", "--results", str(tmp_path / "nothing")], capsys)
    assert code == 2
    code, _ = run_verify(["--config", "nope", "--no-run"], capsys)
    assert code == 2
    assert (config_dir() / "verify" / "munkhoeva2018_fig1.yaml").is_file()
