"""kernelbench's own plug-ins: the one entry point ``kernelbench = "kernelbench.builtin"``.

Importing this module imports every module of the packages below
(:func:`kernelbench.plugins.import_package`, by ``pkgutil``), and each registers what
it defines: a feature map, kernel, dataset, learner, protocol or a protocol's reporting
side. Adding a built-in one is a module in its package plus its YAML file in
``configs/``; this list names packages, not modules, and does not change.
"""

from __future__ import annotations

from kernelbench.plugins import import_package

#: The packages (and the one module, ``kernels``) whose modules register plug-ins.
PACKAGES = (
    "kernelbench.datasets",
    "kernelbench.features",
    "kernelbench.kernels",
    "kernelbench.learners",
    "kernelbench.protocols",
    "kernelbench.reporting",
)

for _name in PACKAGES:
    import_package(_name)
