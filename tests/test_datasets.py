"""Datasets: registry, mirror, cache, download path (up to the network) and protocols."""

from __future__ import annotations

import bz2
import io
import json
import os
import shutil
import urllib.error
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from kernelbench.datasets import (
    DATASETS,
    clear_cache,
    dataset_config,
    fetch_dataset,
    kernel_approx_pair,
    load_dataset,
    net,
    protocol_split,
    sources,
    train_part,
    where,
)
from kernelbench.datasets.cli import datasets as datasets_cli
from kernelbench.datasets.convert import label_codes, read_xlsx
from kernelbench.errors import DataUnavailableError, KernelbenchError
from kernelbench.seeding import derive_rng
from tests.conftest import need_mirror

PAPER_DATASETS = [
    "powerplant",
    "letter",
    "usps",
    "mnist",
    "cifar100",
    "leukemia",
    "eeg",
    "codrna",
    "magic04",
]

# Munkhoeva et al. 2018, Fig. 1 (see PROTOCOL.md): train rows, concat, scaling, samples, runs.
FIG1 = {
    "powerplant": (8500, False, "standardize_max", 550, 500),
    "letter": (10000, False, "max", 550, 500),
    "usps": (4500, True, "max", 550, 500),
    "mnist": (None, False, "max", 550, 100),
    "cifar100": (None, False, "max", 50, 50),
    "leukemia": (38, False, "max", 10, 10),
}


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never touch the user's cache; forget train parts between tests."""
    monkeypatch.setenv("KERNELBENCH_CACHE", str(tmp_path / "default-cache"))
    clear_cache()


@pytest.fixture(scope="module")
def mirror_dir() -> Path:
    return need_mirror("MANIFEST.json")


@pytest.fixture(scope="module")
def manifest(mirror_dir: Path) -> dict[str, dict]:
    return {e["name"]: e for e in json.loads((mirror_dir / "MANIFEST.json").read_text())}


@pytest.fixture(scope="module")
def mirror_data(mirror_dir: Path, manifest: dict, tmp_path_factory: pytest.TempPathFactory):
    """Every mirrored dataset, loaded once per module (mnist and cifar100 are large)."""
    cache = tmp_path_factory.mktemp("cache")
    return {
        name: load_dataset(name, mirror=str(mirror_dir), cache=str(cache))
        for name, entry in manifest.items()
        if entry["status"] != "missing"
    }


@pytest.fixture
def data_cfg(mirror_dir: Path, tmp_path: Path) -> dict:
    return {"mirror": str(mirror_dir), "cache": str(tmp_path / "cache"), "download": False}


# --------------------------------------------------------------------------- registry


def test_registry_holds_every_dataset() -> None:
    assert set(DATASETS.names()) == {*PAPER_DATASETS, "covtype", "digits", "cpu", "census"}
    with pytest.raises(KernelbenchError, match="unknown dataset 'nope'; valid choices: "):
        DATASETS.get("nope")


@pytest.mark.parametrize("name", DATASETS.names())
def test_every_dataset_has_a_config(name: str) -> None:
    cfg = dataset_config(name)
    assert cfg["name"] == name
    proto = cfg["splits"]["kernel_approx"]
    assert proto["samples"] > 0 and proto["runs"] > 0
    spec = DATASETS.get(name)
    assert spec.task in ("classification", "regression")
    assert (spec.n_classes is None) == (spec.task == "regression")
    assert spec.citation and spec.licence and spec.source
    assert spec.bundled is not None or spec.downloader is not None


@pytest.mark.parametrize("name", sorted(FIG1))
def test_fig1_protocol_values_are_the_papers(name: str) -> None:
    proto = dataset_config(name)["splits"]["kernel_approx"]
    rows, concat, scaling, samples, runs = FIG1[name]
    assert proto["part"] == "train"
    assert proto["train_rows"] == rows
    assert proto["concat_test"] is concat
    assert proto["scaling"] == scaling
    assert (proto["samples"], proto["runs"]) == (samples, runs)


@pytest.mark.parametrize("name", ["eeg", "codrna", "magic04", "covtype"])
def test_liu_protocol_values(name: str) -> None:
    proto = dataset_config(name)["splits"]["liu2020"]
    assert proto["scaling"] == "minmax"
    assert proto["test"] == ("given" if name == "codrna" else "half")
    assert proto["runs"] == 10


def test_specs_agree_with_the_manifest(manifest: dict) -> None:
    for name, entry in manifest.items():
        spec = DATASETS.get(name)
        assert spec.task == entry["task"]
        assert spec.d == entry["d"]
        assert spec.n_classes == entry["n_classes"]
        assert spec.in_mirror == (entry["status"] != "missing")
        if entry["openml_id"] is not None:
            assert spec.openml_id == entry["openml_id"]
        if entry["npz_sha256"] is not None:
            assert spec.sha256 == entry["npz_sha256"]
    assert DATASETS.get("powerplant").openml_id is None
    assert "archive.ics.uci.edu" in DATASETS.get("powerplant").urls[0]


# --------------------------------------------------------------------------- mirror


@pytest.mark.parametrize("name", PAPER_DATASETS)
def test_mirror_loads_with_manifest_shapes(name: str, mirror_data: dict, manifest: dict) -> None:
    ds, entry = mirror_data[name], manifest[name]
    assert ds.source == "mirror" and ds.path.endswith(f"{name}.npz")
    assert ds.sha256 == entry["npz_sha256"]
    for key, meta in entry["arrays"].items():
        array = getattr(ds, key)
        assert array is not None, key
        assert list(array.shape) == meta["shape"], key
        assert array.dtype == np.dtype(meta["dtype"]), key
    for key in ("X_test", "y_test"):
        if key not in entry["arrays"]:
            assert getattr(ds, key) is None
    assert ds.X.shape == (entry["n_train"], entry["d"])
    if entry["task"] == "classification":
        classes = np.unique(ds.y)
        assert len(classes) == entry["n_classes"]
        assert classes.min() == 0 and classes.max() == entry["n_classes"] - 1


def test_mirror_checksum_mismatch_is_refused(mirror_dir: Path, tmp_path: Path) -> None:
    fake = tmp_path / "mirror"
    fake.mkdir()
    shutil.copy(mirror_dir / "MANIFEST.json", fake)
    shutil.copy(mirror_dir / "powerplant.npz", fake)
    with open(fake / "powerplant.npz", "r+b") as f:
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last[0] ^ 0xFF]))
    with pytest.raises(DataUnavailableError, match="fails its checksum"):
        load_dataset("powerplant", mirror=str(fake), cache=str(tmp_path / "c"))


def test_digits_is_bundled() -> None:
    ds = load_dataset("digits")
    assert ds.source == "bundled" and ds.path is None
    assert ds.X.shape == (1797, 64) and ds.X.dtype == np.float64
    assert set(np.unique(ds.y)) == set(range(10))
    assert where("digits") == ("bundled", None)


# --------------------------------------------------------------------------- protocols


def test_letter_train_part_scaled_by_global_max(data_cfg: dict, mirror_data: dict) -> None:
    part = train_part("letter", dataset_config("letter")["splits"]["kernel_approx"], data_cfg)
    assert part.n_rows == 10000
    scaled = part.scaled()
    assert scaled.dtype == np.float64
    assert scaled.max() == 1.0
    raw = mirror_data["letter"].X[:10000].astype(np.float64)
    np.testing.assert_array_equal(scaled, raw / raw.max())


def test_powerplant_standardised_then_scaled(data_cfg: dict, mirror_data: dict) -> None:
    proto = dataset_config("powerplant")["splits"]["kernel_approx"]
    scaled = train_part("powerplant", proto, data_cfg).scaled()
    raw = mirror_data["powerplant"].X[:8500].astype(np.float64)
    z = (raw - raw.mean(axis=0)) / raw.std(axis=0)
    np.testing.assert_allclose(scaled, z / z.max(), rtol=1e-12, atol=1e-12)
    assert scaled.shape == (8500, 4)
    assert np.isclose(scaled.max(), 1.0)
    np.testing.assert_allclose(scaled.mean(axis=0), 0.0, atol=1e-12)
    std = scaled.std(axis=0)  # every column standardised: the same std 1 / max(z)
    np.testing.assert_allclose(std, std[0], rtol=1e-12)
    assert std[0] < 1


def test_usps_train_part_is_first_4500_of_train_and_test(data_cfg: dict, mirror_data: dict) -> None:
    part = train_part("usps", dataset_config("usps")["splits"]["kernel_approx"], data_cfg)
    assert part.n_rows == 4500
    np.testing.assert_array_equal(part.raw, mirror_data["usps"].X[:4500])
    assert part.scaled().max() == 1.0


@pytest.mark.parametrize(
    ("name", "rows", "scale"),
    [("mnist", 60000, 255.0), ("cifar100", 10000, 255.0), ("leukemia", 38, None)],
)
def test_image_train_parts(name: str, rows: int, scale: float | None, data_cfg: dict) -> None:
    part = train_part(name, dataset_config(name)["splits"]["kernel_approx"], data_cfg)
    assert part.n_rows == rows
    assert part.scaler.kind == "max"
    if scale is not None:
        assert part.scaler.scale == scale
    assert part.rows(np.arange(5)).max() <= 1.0


@pytest.mark.parametrize("name", [*FIG1, "eeg", "codrna", "magic04"])
def test_kernel_approx_pair(name: str, data_cfg: dict) -> None:
    cfg = dataset_config(name)
    proto = cfg["splits"]["kernel_approx"]
    X, Y, prov = kernel_approx_pair(cfg, seed=3, data_cfg=data_cfg)
    spec = DATASETS.get(name)
    assert X.shape == Y.shape == (proto["samples"], spec.d)
    assert X.dtype == Y.dtype == np.float64
    assert not np.array_equal(X, Y)
    assert prov["data_source"] == "mirror"
    assert prov["data_path"].endswith(f"{name}.npz")
    assert prov["d"] == spec.d and prov["samples"] == proto["samples"]
    assert prov["train_rows"] == train_part(name, proto, data_cfg).n_rows
    assert prov["data_deviation"] == spec.mirror_deviation and "\n" not in prov["data_deviation"]
    # the documented stream: two independent draws without replacement, seeded by (seed, name)
    part = train_part(name, proto, data_cfg)
    rng = derive_rng(3, "data", name)
    ix = rng.choice(part.n_rows, size=proto["samples"], replace=False)
    iy = rng.choice(part.n_rows, size=proto["samples"], replace=False)
    np.testing.assert_array_equal(X, part.scaled()[ix] if part.n_rows < 20000 else part.rows(ix))
    np.testing.assert_array_equal(Y, part.rows(iy))
    assert len(np.unique(ix)) == len(ix)


def test_sampling_depends_only_on_dataset_and_seed() -> None:
    cfg = dataset_config("digits")
    X1, Y1, _ = kernel_approx_pair(cfg, seed=7)
    clear_cache()
    X2, Y2, _ = kernel_approx_pair({**cfg, "method": "anything"}, seed=7)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(Y1, Y2)
    X3, Y3, _ = kernel_approx_pair(cfg, seed=8)
    assert not np.array_equal(X1, X3) and not np.array_equal(Y1, Y3)
    assert X1.shape == (300, 64) and X1.max() <= 1.0


def test_samples_larger_than_train_part_is_one_line() -> None:
    cfg = dataset_config("digits")
    cfg["splits"]["kernel_approx"]["samples"] = 5000
    with pytest.raises(KernelbenchError, match="samples=5000 but the train part has 1797 rows"):
        kernel_approx_pair(cfg, seed=0)


def test_downstream_split_powerplant(data_cfg: dict, mirror_data: dict) -> None:
    split = protocol_split(dataset_config("powerplant"), "downstream", 0, data_cfg)
    assert split.X_train.shape == (8500, 4) and split.X_test.shape == (1068, 4)
    assert split.X_train.dtype == np.float64 and np.isclose(split.X_train.max(), 1.0)
    np.testing.assert_array_equal(split.y_test, mirror_data["powerplant"].y[8500:])


def test_liu_random_halves_minmax(data_cfg: dict) -> None:
    cfg = dataset_config("eeg")
    a = protocol_split(cfg, "liu2020", 0, data_cfg)
    b = protocol_split(cfg, "liu2020", 0, data_cfg)
    c = protocol_split(cfg, "liu2020", 1, data_cfg)
    assert a.X_train.shape == a.X_test.shape == (7490, 14)
    both = np.concatenate([a.X_train, a.X_test])
    np.testing.assert_allclose(both.min(axis=0), 0.0)
    np.testing.assert_allclose(both.max(axis=0), 1.0)
    np.testing.assert_array_equal(a.X_train, b.X_train)
    assert not np.array_equal(a.X_train, c.X_train)
    assert a.provenance["split"] == "half"


def test_liu_given_split_codrna(data_cfg: dict) -> None:
    split = protocol_split(dataset_config("codrna"), "liu2020", 0, data_cfg)
    assert len(split.X_train) == 59535 and len(split.X_test) == 271617
    assert "cod-rna.r" in split.provenance["data_deviation"]


def test_unknown_protocol_is_one_line() -> None:
    msg = "unknown protocol for dataset 'cifar100' 'downstream'"
    with pytest.raises(KernelbenchError, match=msg):
        protocol_split(dataset_config("cifar100"), "downstream")


# --------------------------------------------------------------------------- cache


def _letter_arrays(n: int = 30) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        "X": rng.integers(0, 16, size=(n, 16)).astype(np.float32),
        "y": rng.integers(0, 26, size=n).astype(np.int64),
    }


def test_cache_write_read_roundtrip(tmp_path: Path) -> None:
    path = tmp_path / "letter.npz"
    digest = sources.write_cache(path, _letter_arrays())
    assert sources.sidecar(path).read_text() == f"{digest}  letter.npz\n"
    assert sources.cache_state(path) == "ok"
    ds = load_dataset("letter", mirror=str(tmp_path / "empty"), cache=str(tmp_path))
    assert ds.source == "cache" and ds.sha256 == digest
    np.testing.assert_array_equal(ds.X, _letter_arrays()["X"])


def test_cache_write_is_atomic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "letter.npz"
    sources.write_cache(path, _letter_arrays())
    before = path.read_bytes()

    def broken(f, **arrays):
        f.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    monkeypatch.setattr(sources.np, "savez_compressed", broken)
    with pytest.raises(OSError, match="disk full"):
        sources.write_cache(path, _letter_arrays(50))
    assert path.read_bytes() == before  # the old file is untouched
    assert sources.cache_state(path) == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["letter.npz", "letter.sha256"]
    with pytest.raises(OSError):
        sources.write_cache(tmp_path / "new.npz", _letter_arrays())
    assert not (tmp_path / "new.npz").exists()


def test_corrupt_cache_is_detected_not_used(tmp_path: Path) -> None:
    path = tmp_path / "letter.npz"
    sources.write_cache(path, _letter_arrays())
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    assert sources.cache_state(path) == "corrupt"
    with pytest.raises(DataUnavailableError) as err:
        load_dataset("letter", mirror=str(tmp_path / "empty"), cache=str(tmp_path))
    assert str(err.value) == (
        f"cached file {path} for dataset 'letter' fails its checksum (corrupt or incomplete); "
        "fetch it again with `kernelbench datasets fetch letter`"
    )
    assert where("letter", str(tmp_path / "empty"), str(tmp_path))[0] == "corrupt"
    sources.sidecar(path).unlink()  # no checksum at all is not trusted either
    assert sources.cache_state(path) == "corrupt"


def test_corrupt_cache_is_fetched_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "letter.npz"
    sources.write_cache(path, _letter_arrays())
    path.write_bytes(path.read_bytes()[:-10])
    frame = _letter_frame(tmp_path)
    monkeypatch.setattr(net, "openml_frame", lambda openml_id: (frame, "class"))
    ds = load_dataset("letter", mirror=str(tmp_path / "empty"), cache=str(tmp_path), download=True)
    assert ds.source == "download" and sources.cache_state(path) == "ok"
    assert ds.X.shape == (len(frame), 16)


def test_offline_message(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "mirror"
    empty.mkdir()
    with pytest.raises(DataUnavailableError) as err:
        load_dataset("letter", mirror=str(empty), cache=str(tmp_path / "c"))
    assert str(err.value) == (
        f"dataset 'letter' is not available offline; searched mirror {empty}/letter.npz, "
        f"cache {tmp_path}/c/letter.npz; download it with `kernelbench datasets fetch letter`"
    )
    monkeypatch.delenv("KERNELBENCH_DATA", raising=False)
    monkeypatch.setenv("KERNELBENCH_CACHE", str(tmp_path / "c"))
    with pytest.raises(DataUnavailableError) as err:
        load_dataset("covtype")
    message = str(err.value)
    assert "\n" not in message
    assert message == (
        "dataset 'covtype' is not available offline; searched mirror (none: set "
        f"KERNELBENCH_DATA or data.mirror), cache {tmp_path}/c/covtype.npz; "
        "download it with `kernelbench datasets fetch covtype`"
    )


# --------------------------------------------------------------------------- download path


def _letter_frame(tmp_path: Path) -> pd.DataFrame:
    """A local CSV standing in for OpenML 6's table."""
    csv = tmp_path / "letter.csv"
    header = ",".join([*(f"x{i}" for i in range(16)), "class"])
    lines = [header] + [
        ",".join([*(str((r + i) % 16) for i in range(16)), "ABCZ"[r % 4]]) for r in range(12)
    ]
    csv.write_text("\n".join(lines) + "\n")
    return pd.read_csv(csv)


def test_openml_download_to_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _letter_frame(tmp_path)
    calls = []

    def fake(openml_id: int):
        calls.append(openml_id)
        return frame, "class"

    monkeypatch.setattr(net, "openml_frame", fake)
    path = fetch_dataset("letter", cache=str(tmp_path / "cache"), progress=False)
    assert calls == [6]
    assert sources.cache_state(path) == "ok"
    ds = load_dataset("letter", mirror=str(tmp_path / "none"), cache=str(tmp_path / "cache"))
    assert ds.source == "cache" and ds.X.dtype == np.float32
    np.testing.assert_array_equal(ds.y, [[0, 1, 2, 25][r % 4] for r in range(12)])
    np.testing.assert_array_equal(ds.X[1], [(1 + i) % 16 for i in range(16)])
    fetch_dataset("letter", cache=str(tmp_path / "cache"), progress=False)
    assert calls == [6]  # a valid cache is not fetched again


def test_openml_split_and_uint8(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from kernelbench.datasets.convert import frame_to_arrays

    frame = pd.DataFrame(np.arange(12 * 3).reshape(12, 3) % 256, columns=["a", "b", "c"])
    frame["class"] = [str(v) for v in [1, 2, 10] * 4]
    arrays = frame_to_arrays(frame, "class", task="classification", n_train=9, x_dtype="uint8")
    assert arrays["X"].dtype == np.uint8 and arrays["X"].shape == (9, 3)
    assert arrays["X_test"].shape == (3, 3)
    np.testing.assert_array_equal(arrays["y"][:3], [0, 1, 2])  # numeric label order


def test_label_codes() -> None:
    np.testing.assert_array_equal(label_codes(["h", "g", "g"]), [1, 0, 0])
    np.testing.assert_array_equal(label_codes(["10", "9", "1"]), [2, 1, 0])
    with pytest.raises(KernelbenchError, match="unexpected class labels"):
        label_codes(["x"], order=["-1", "1"])


def _libsvm_lines(n: int, d: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    lines = []
    for _ in range(n):
        label = rng.choice(["-1", "1"])
        feats = " ".join(f"{j + 1}:{rng.normal():.4f}" for j in range(d))
        lines.append(f"{label} {feats}")
    return "\n".join(lines) + "\n"


def _serve(files: dict[str, Path], calls: list[str]):
    """A stand-in for ``net.http_get``: copies the local file named after the URL."""

    def fake(url: str, dest: Path, progress: bool = True) -> Path:
        calls.append(url)
        shutil.copyfile(files[url.rsplit("/", 1)[-1]], dest)
        return dest

    return fake


def test_libsvm_download_to_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "cod-rna").write_text(_libsvm_lines(20, 8, 0))
    (src / "cod-rna.t").write_text(_libsvm_lines(7, 8, 1))
    calls: list[str] = []
    monkeypatch.setattr(net, "http_get", _serve({p.name: p for p in src.iterdir()}, calls))
    ds = load_dataset("codrna", mirror=str(src), cache=str(tmp_path / "c"), download=True)
    assert [u.rsplit("/", 1)[-1] for u in calls] == ["cod-rna", "cod-rna.t"]
    assert all(u.startswith("https://www.csie.ntu.edu.tw/") for u in calls)
    assert ds.source == "download"
    assert ds.X.shape == (20, 8) and ds.X_test.shape == (7, 8) and ds.X.dtype == np.float32
    assert set(np.unique(ds.y)) <= {0, 1}
    first = _libsvm_lines(20, 8, 0).splitlines()[0].split()
    assert ds.y[0] == (1 if first[0] == "1" else 0)
    assert ds.X[0, 0] == np.float32(first[1].split(":")[1])
    assert not list((tmp_path / "c").glob(".codrna.*"))  # scratch directory removed


def test_bz2_libsvm_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name, n in (("usps.bz2", 9), ("usps.t.bz2", 4)):
        lines = "".join(
            f"{(i % 10) + 1} " + " ".join(f"{j + 1}:{(i + j) % 3 - 1}" for j in range(256)) + "\n"
            for i in range(n)
        )
        (src / name).write_bytes(bz2.compress(lines.encode()))
    monkeypatch.setattr(net, "http_get", _serve({p.name: p for p in src.iterdir()}, []))
    path = fetch_dataset("usps", cache=str(tmp_path / "c"), progress=False)
    arrays = sources.read_npz(path)
    np.testing.assert_array_equal(arrays["y"], np.arange(9) % 10)  # labels 1..10 -> 0..9
    assert arrays["X"].shape == (9, 256) and arrays["X_test"].shape == (4, 256)
    assert arrays["X"].min() == -1 and arrays["X"].max() == 1


def _xlsx(rows: list[list[object]]) -> bytes:
    """A minimal xlsx workbook with one sheet (shared strings for text)."""
    ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    strings: list[str] = []
    xml_rows = []
    for r, row in enumerate(rows, start=1):
        cells = []
        for c, value in enumerate(row):
            ref = f"{chr(ord('A') + c)}{r}"
            if isinstance(value, str):
                strings.append(value)
                cells.append(f'<c r="{ref}" t="s"><v>{len(strings) - 1}</v></c>')
            else:
                cells.append(f'<c r="{ref}"><v>{value!r}</v></c>')
        xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
    sst = "".join(f"<si><t>{s}</t></si>" for s in strings)
    rel_ns = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(
            "xl/workbook.xml",
            f'<workbook xmlns="{ns}" xmlns:r="{rel_ns}"><sheets>'
            '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        )
        zf.writestr(
            "xl/_rels/workbook.xml.rels",
            '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
            f'<Relationship Id="rId1" Type="{rel_ns}/worksheet" Target="worksheets/sheet1.xml"/>'
            "</Relationships>",
        )
        zf.writestr("xl/sharedStrings.xml", f'<sst xmlns="{ns}">{sst}</sst>')
        zf.writestr(
            "xl/worksheets/sheet1.xml",
            f'<worksheet xmlns="{ns}"><sheetData>{"".join(xml_rows)}</sheetData></worksheet>',
        )
    return buf.getvalue()


def test_powerplant_download_from_uci_zip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [["AT", "V", "AP", "RH", "PE"]] + [
        [14.96 + i, 41.76, 1024.07, 73.17, 463.26 - i] for i in range(6)
    ]
    src = tmp_path / "combined_cycle_power_plant.zip"
    with zipfile.ZipFile(src, "w") as zf:
        zf.writestr("CCPP/Readme.txt", "readme")
        zf.writestr("CCPP/Folds5x2_pp.xlsx", _xlsx(rows))
    assert read_xlsx(io.BytesIO(_xlsx(rows)))[1] == [14.96, 41.76, 1024.07, 73.17, 463.26]
    calls: list[str] = []
    monkeypatch.setattr(net, "http_get", _serve({"combined+cycle+power+plant.zip": src}, calls))
    monkeypatch.delenv("KERNELBENCH_DATA", raising=False)
    ds = load_dataset("powerplant", mirror=None, cache=str(tmp_path / "c"), download=True)
    assert calls == [DATASETS.get("powerplant").urls[0]]
    assert ds.X.dtype == np.float32 and ds.y.dtype == np.float64
    assert ds.X.shape == (6, 4) and ds.X_test is None
    np.testing.assert_allclose(ds.y, [463.26 - i for i in range(6)])
    np.testing.assert_allclose(ds.X[:, 0], np.float32([14.96 + i for i in range(6)]))


def test_http_get_reads_a_url(tmp_path: Path) -> None:
    src = tmp_path / "file.bin"
    src.write_bytes(b"x" * 100_000)
    dest = net.http_get(src.as_uri(), tmp_path / "out.bin", progress=False)
    assert dest.read_bytes() == src.read_bytes()


def test_download_failure_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(url: str, dest: Path, progress: bool = True) -> Path:
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(net, "http_get", offline)
    monkeypatch.delenv("KERNELBENCH_DATA", raising=False)
    with pytest.raises(DataUnavailableError) as err:
        load_dataset("leukemia", mirror=None, cache=str(tmp_path), download=True)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "could not download dataset 'leukemia' from LIBSVM archive (leu, leu.t): "
        "<urlopen error [Errno -3] Temporary failure in name resolution>; searched mirror"
    )
    assert not list(tmp_path.glob("leukemia*"))


# --------------------------------------------------------------------------- CLI


def test_cli_list(mirror_dir: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        datasets_cli, ["list", "--mirror", str(mirror_dir), "--cache", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].split() == ["name", "task", "N", "d", "classes", "where"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert set(rows) == set(DATASETS.names())
    for name in PAPER_DATASETS:
        assert f"mirror ({mirror_dir / name}.npz)" in rows[name]
    assert rows["cifar100"].endswith("[subset]")
    assert "missing [optional]" in rows["covtype"] and "bundled" in rows["digits"]
    assert rows["letter"].split()[1:5] == ["classification", "20000", "16", "26"]


def test_cli_list_flags_a_mirror_file_that_fails_its_checksum(
    mirror_dir: Path, tmp_path: Path
) -> None:
    fake = tmp_path / "mirror"
    fake.mkdir()
    shutil.copy(mirror_dir / "MANIFEST.json", fake)
    for name in ("powerplant", "eeg"):
        shutil.copy(mirror_dir / f"{name}.npz", fake)
    with open(fake / "powerplant.npz", "r+b") as f:
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last[0] ^ 0xFF]))
    result = CliRunner().invoke(
        datasets_cli, ["list", "--mirror", str(fake), "--cache", str(tmp_path / "c")]
    )
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line for line in result.output.splitlines()[1:]}
    assert rows["powerplant"].endswith("[CORRUPT: fails its checksum; replace the file]")
    assert "CORRUPT" not in rows["eeg"] and "mirror" in rows["eeg"]


def test_cli_info(mirror_dir: Path) -> None:
    result = CliRunner().invoke(datasets_cli, ["info", "usps", "--mirror", str(mirror_dir)])
    assert result.exit_code == 0, result.output
    assert "Hull, J. J. (1994)" in result.output
    assert "ESL version" in result.output
    assert "status ok" in result.output
    assert "train_rows=4500, concat_test=True" in result.output
    result = CliRunner().invoke(datasets_cli, ["info", "cifar100", "--mirror", str(mirror_dir)])
    assert "class-balanced subset" in result.output and "41983" in result.output


def test_cli_fetch_with_progress(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = _letter_frame(tmp_path)
    monkeypatch.setattr(net, "openml_frame", lambda openml_id: (frame, "class"))
    monkeypatch.delenv("KERNELBENCH_DATA", raising=False)
    cache = str(tmp_path / "c")
    result = CliRunner().invoke(datasets_cli, ["fetch", "letter", "digits", "--cache", cache])
    assert result.exit_code == 0, result.output
    assert f"letter: cached at {tmp_path / 'c' / 'letter.npz'}" in result.output
    assert "digits: bundled" in result.output
    result = CliRunner().invoke(datasets_cli, ["fetch", "letter", "--cache", cache])
    assert "letter: already in the cache" in result.output


def test_cli_fetch_offline_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def offline(openml_id: int):
        raise ConnectionError("Failed to resolve 'www.openml.org'")

    monkeypatch.setattr(net, "openml_frame", offline)
    monkeypatch.delenv("KERNELBENCH_DATA", raising=False)
    result = CliRunner().invoke(datasets_cli, ["fetch", "eeg", "--cache", str(tmp_path)])
    assert isinstance(result.exception, DataUnavailableError)
    assert str(result.exception).startswith(
        "could not download dataset 'eeg' from OpenML 1471 (eeg-eye-state): "
        "Failed to resolve 'www.openml.org'; searched mirror"
    )
    args = ["fetch", "eeg", "magic04", "--cache", str(tmp_path)]
    result = CliRunner().invoke(datasets_cli, args)
    assert str(result.exception) == "could not fetch eeg, magic04 (see the lines above)"
    assert "eeg: could not download dataset 'eeg'" in result.output
    assert "Traceback" not in result.output


def test_unreadable_main_config_is_one_line_and_no_config_falls_back(monkeypatch, tmp_path):
    """``datasets`` reads data.mirror/data.cache from the main config: a config it cannot
    parse is one line naming the file (exit 2); no config directory at all leaves the
    environment to decide."""
    import kernelbench.config as config
    from kernelbench.datasets import cli as dcli

    (tmp_path / "config.yaml").write_text("data: {mirror: [unclosed\n")
    monkeypatch.setattr(config, "config_dir", lambda: tmp_path)
    dcli._config_data.cache_clear()
    try:
        with pytest.raises(KernelbenchError, match=r"cannot read the data settings of .*config"):
            dcli._config_data()
        dcli._config_data.cache_clear()
        (tmp_path / "config.yaml").write_text("data:\n  mirror: /m\n  cache: null\n")
        assert dcli._config_data() == {"mirror": "/m", "cache": None}
        dcli._config_data.cache_clear()

        def missing():
            raise FileNotFoundError("kernelbench configs not found")

        monkeypatch.setattr(config, "config_dir", missing)
        assert dcli._config_data() == {}
    finally:
        dcli._config_data.cache_clear()
