"""Delve Computer Activity (cpu_act), from OpenML 197: the ``cpu`` of Yang et al. 2014."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_downloader
from kernelbench.datasets.spec import DatasetSpec, register

#: OpenML 197 (cpu_act): 8192 rows, 21 numeric features, target ``usr`` (the
#: percentage of time the CPUs run in user mode).
OPENML_ID = 197
TARGET = "usr"

SPEC = register(
    DatasetSpec(
        name="cpu",
        task="regression",
        n_train=8192,
        n_test=0,
        d=21,
        n_classes=None,
        title="Computer Activity (Delve comp-activ, cpu_act)",
        source="OpenML 197 (cpu_act)",
        openml_id=OPENML_ID,
        urls=(
            "https://www.openml.org/d/197",
            "https://www.cs.toronto.edu/~delve/data/comp-activ/desc.html",
        ),
        citation=(
            "Rasmussen, C. E., Neal, R. M., Hinton, G. E. et al. (1996). DELVE: Data for "
            "Evaluating Learning in Valid Experiments, the comp-activ dataset. University of "
            "Toronto."
        ),
        licence="no licence stated by Delve (research use); redistributed by OpenML",
        sha256=None,
        mirror_deviation="not in the mirror (download only)",
        download_deviation=(
            "Yang et al. 2014 used 6500 examples with the same 21 features (their copy and "
            "split are not published); this is the whole OpenML 197 table, 8192 rows"
        ),
        downloader=openml_downloader(
            OPENML_ID, task="regression", x_dtype="float64", target=TARGET
        ),
        optional=True,
        in_mirror=False,
    )
)
