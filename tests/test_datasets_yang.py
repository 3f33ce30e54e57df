"""Yang et al. 2014's regression datasets (cpu, census): specs, configs and the download path.

The network is replaced at its boundary (``net.openml_frame``), as in test_datasets.py.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from omegaconf import OmegaConf

from kernelbench.datasets import (
    DATASETS,
    clear_cache,
    dataset_config,
    fetch_dataset,
    load_dataset,
    net,
    protocol_split,
    sources,
)
from kernelbench.datasets.cli import datasets as datasets_cli
from kernelbench.errors import DataUnavailableError, KernelbenchError

# name: (OpenML id, d, rows, target column), checked against OpenML's listings
YANG = {"cpu": (197, 21, 8192, "usr"), "census": (574, 16, 22784, "price")}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KERNELBENCH_CACHE", str(tmp_path / "default-cache"))
    monkeypatch.delenv("KERNELBENCH_DATA", raising=False)
    clear_cache()


def fake_table(name: str, n_rows: int = 40, seed: int = 0, drop: int = 0) -> pd.DataFrame:
    """A stand-in for the OpenML table: d numeric columns and the target, target first."""
    _, d, _, target = YANG[name]
    rng = np.random.default_rng(seed)
    features = {f"x{j}": rng.uniform(-3.0, 5.0, n_rows) * (j + 1) for j in range(d - drop)}
    return pd.DataFrame({target: rng.uniform(0.0, 100.0, n_rows), **features})


@pytest.mark.parametrize("name", sorted(YANG))
def test_specs(name):
    openml_id, d, rows, _ = YANG[name]
    spec = DATASETS.get(name)
    # one catalogue entry, registered by the module the built-in entry point's pkgutil
    # walk of kernelbench.datasets imports
    assert "kernelbench.datasets.catalogue" in sys.modules
    assert name in OmegaConf.load(sys.modules["kernelbench.datasets.catalogue"].CATALOGUE)
    assert spec.task == "regression" and spec.n_classes is None
    assert (spec.d, spec.n_total, spec.openml_id) == (d, rows, openml_id)
    assert spec.source.startswith(f"OpenML {openml_id} ")
    assert f"https://www.openml.org/d/{openml_id}" in spec.urls
    assert spec.sha256 is None and not spec.in_mirror and spec.optional
    assert spec.citation and spec.licence and spec.downloader is not None
    for line in (spec.mirror_deviation, spec.download_deviation):
        assert line and "\n" not in line
    if name == "census":  # a stand-in: the deviation says so
        assert "stand-in" in spec.download_deviation and "119" in spec.download_deviation


@pytest.mark.parametrize("name", sorted(YANG))
def test_configs(name):
    cfg = dataset_config(name)
    assert cfg["name"] == name
    proto = cfg["splits"]["yang2014"]
    assert proto["test"] == "half" and proto["scaling"] == "minmax"
    assert proto["scale_on"] == "train" and proto["runs"] == 10  # "10 independent trials"
    approx = cfg["splits"]["kernel_approx"]
    assert approx["samples"] > 0 and approx["runs"] > 0


@pytest.mark.parametrize("name", sorted(YANG))
def test_openml_download_to_cache(name, tmp_path, monkeypatch):
    openml_id, d, _, target = YANG[name]
    frame = fake_table(name)
    calls = []

    def fake(requested: int):
        calls.append(requested)
        return frame, "not-the-target"  # the module names its target column itself

    monkeypatch.setattr(net, "openml_frame", fake)
    cache = tmp_path / "cache"
    path = fetch_dataset(name, cache=str(cache), progress=False)
    assert calls == [openml_id] and sources.cache_state(path) == "ok"
    ds = load_dataset(name, mirror=str(tmp_path / "none"), cache=str(cache))
    assert ds.source == "cache" and ds.X_test is None
    assert ds.X.dtype == np.float64 and ds.X.shape == (40, d)
    np.testing.assert_array_equal(ds.y, frame[target].to_numpy())
    np.testing.assert_array_equal(ds.X, frame.drop(columns=[target]).to_numpy())
    assert ds.deviation == DATASETS.get(name).download_deviation
    fetch_dataset(name, cache=str(cache), progress=False)
    assert calls == [openml_id]  # a valid cache is not fetched again


def test_bad_tables_are_one_line(tmp_path, monkeypatch):
    narrow = fake_table("cpu", drop=1)
    monkeypatch.setattr(net, "openml_frame", lambda i: (narrow, "usr"))
    with pytest.raises(DataUnavailableError, match=r"expected d=21 for cpu"):
        fetch_dataset("cpu", cache=str(tmp_path), progress=False)
    no_target = fake_table("census").drop(columns=["price"])
    monkeypatch.setattr(net, "openml_frame", lambda i: (no_target, "price"))
    with pytest.raises(KernelbenchError, match="target column 'price' not in the downloaded table"):
        fetch_dataset("census", cache=str(tmp_path), progress=False)

    def offline(openml_id: int):
        raise ConnectionError("Failed to resolve 'www.openml.org'")

    monkeypatch.setattr(net, "openml_frame", offline)
    with pytest.raises(DataUnavailableError) as err:
        load_dataset("cpu", cache=str(tmp_path / "c"), download=True)
    assert str(err.value).startswith(
        "could not download dataset 'cpu' from OpenML 197 (cpu_act): "
        "Failed to resolve 'www.openml.org'; searched mirror"
    )
    with pytest.raises(DataUnavailableError, match="download it with `kernelbench datasets fetch"):
        load_dataset("census", cache=str(tmp_path / "c"))


@pytest.mark.parametrize("name", sorted(YANG))
def test_yang_protocol_split(name, tmp_path, monkeypatch):
    frame = fake_table(name, n_rows=41, seed=2)
    monkeypatch.setattr(net, "openml_frame", lambda i: (frame, "x"))
    data_cfg = {"mirror": None, "cache": str(tmp_path), "download": True}
    cfg = dataset_config(name)
    a = protocol_split(cfg, "yang2014", seed=0, data_cfg=data_cfg)
    assert len(a.X_train) == 20 and len(a.X_test) == 21  # a random half for training
    np.testing.assert_allclose(a.X_train.min(axis=0), 0.0)  # min-max scaled on the train half
    np.testing.assert_allclose(a.X_train.max(axis=0), 1.0)
    b = protocol_split(cfg, "yang2014", seed=0, data_cfg=data_cfg)
    c = protocol_split(cfg, "yang2014", seed=1, data_cfg=data_cfg)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(a.X_train, c.X_train)
    target = YANG[name][3]
    assert sorted(np.concatenate([a.y_train, a.y_test])) == sorted(frame[target])
    assert a.provenance["data_source"] in ("download", "cache")
    assert a.provenance["split"] == "half"


def test_cli_lists_them_as_optional_downloads(tmp_path):
    empty = tmp_path / "mirror"
    empty.mkdir()
    result = CliRunner().invoke(
        datasets_cli, ["list", "--mirror", str(empty), "--cache", str(tmp_path / "c")]
    )
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()[1:]}
    assert rows["cpu"].split()[1:5] == ["regression", "8192", "21", "-"]
    assert rows["census"].split()[1:5] == ["regression", "22784", "16", "-"]
    assert rows["cpu"].endswith("missing [optional]")
