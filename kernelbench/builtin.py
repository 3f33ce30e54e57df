"""kernelbench's own plug-ins: the one entry point ``kernelbench = "kernelbench.builtin"``.

Importing it imports every module of the packages below
(:func:`kernelbench.plugins.import_package`), each registering what it defines.
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
)

for _name in PACKAGES:
    import_package(_name)
