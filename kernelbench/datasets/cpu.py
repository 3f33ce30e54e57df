"""Delve Computer Activity (cpu_act), from OpenML 197: the ``cpu`` of Yang et al. 2014."""

from __future__ import annotations

from kernelbench.datasets.convert import openml_source
from kernelbench.datasets.spec import DatasetSpec, register

SPEC = register(
    DatasetSpec(
        name="cpu",
        task="regression",
        n_train=8192,
        d=21,
        title="Computer Activity (Delve comp-activ, cpu_act)",
        source="OpenML 197 (cpu_act)",
        **openml_source(
            197,  # cpu_act: target ``usr``, the % of time the CPUs run in user mode
            "https://www.cs.toronto.edu/~delve/data/comp-activ/desc.html",
            task="regression",
            x_dtype="float64",
            target="usr",
        ),
        citation=(
            "Rasmussen, C. E., Neal, R. M., Hinton, G. E. et al. (1996). DELVE: Data for "
            "Evaluating Learning in Valid Experiments, the comp-activ dataset. University of "
            "Toronto."
        ),
        licence="no licence stated by Delve (research use); redistributed by OpenML",
        mirror_deviation="not in the mirror (download only)",
        download_deviation=(
            "Yang et al. 2014 used 6500 examples with the same 21 features (their copy and "
            "split are not published); this is the whole OpenML 197 table, 8192 rows"
        ),
        optional=True,
        in_mirror=False,
    )
)
