"""torch's module paths that ``import gradc as torch`` code imports, mapped to the facade modules.

``gradc/__init__.py`` registers each alias in ``sys.modules`` (and as an attribute of its
parent), so ``import gradc.nn.functional as F``, ``from gradc.nn import Linear`` and
``from gradc import autograd`` work without a shim package per torch path. Every submodule of
an aliased package gets its own entry (found in the package's folder), parents first.
"""
import importlib.abc
import importlib.util
import os
import sys

_ROOTS = {
    "gradc.autograd": "gradc.facade.autograd",
    "gradc.autograd.functional": "gradc.facade.autograd_functional",
    "gradc.func": "gradc.facade.func",
    "gradc.nn": "gradc.facade.nn",
    "gradc.optim": "gradc.facade.optim",
    "gradc.utils": "gradc.facade.utils",
    "gradc.cuda": "gradc.facade.cuda",
    "gradc.accelerator": "gradc.facade.accelerator",
    # torch.backends.mps / .cudnn (device checks in tutorials) join gradc.backends, the compiler's targets
    "gradc.backends.mps": "gradc.facade.backends_mps",
    "gradc.backends.cudnn": "gradc.facade.backends_cudnn",
}
_FACADE = os.path.dirname(os.path.abspath(__file__))


def _with_submodules(roots):
    """``roots`` plus an entry for every module of every aliased package, parents first, sorted.

    Listing them all is what keeps ``gradc.nn.x`` one module: unlisted, importing it would load a
    second copy of ``gradc/facade/nn/x.py`` (``gradc.nn``'s ``__path__`` finds the file).
    """
    out = {}
    work = list(roots.items())
    while work:
        alias, target = work.pop(0)
        out[alias] = target
        folder = os.path.join(_FACADE, *target.split(".")[2:])
        if not os.path.isfile(os.path.join(folder, "__init__.py")):
            continue
        for entry in sorted(os.listdir(folder)):
            stem, ext = os.path.splitext(entry)
            package = os.path.isfile(os.path.join(folder, entry, "__init__.py"))
            if (ext == ".py" and stem != "__init__") or package:
                name = stem if ext == ".py" else entry
                work.append((f"{alias}.{name}", f"{target}.{name}"))
    return out


ALIASES = _with_submodules(_ROOTS)


class AliasFinder(importlib.abc.MetaPathFinder):
    """Lets ``import torch.nn as nn`` work where a harness has set ``sys.modules["torch"] = gradc``.

    Python looks submodules up under the parent's name ("torch.nn") and then on the parent's
    path, where gradc has no ``nn`` directory; this finder answers for any ``<name>.<sub>``
    whose ``<name>`` is the gradc package itself, with the module already registered as
    ``gradc.<sub>``. It finds nothing otherwise, so it changes no other import.
    """

    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if not rest or head == "gradc" or getattr(sys.modules.get(head), "__name__", None) != "gradc":
            return None
        module = sys.modules.get("gradc." + rest)
        if module is None:
            return None
        return importlib.util.spec_from_loader(fullname, _Existing(module), is_package=hasattr(module, "__path__"))


class _Existing(importlib.abc.Loader):
    """Loads an already imported module under a second name (keeping its own ``__spec__``)."""

    def __init__(self, module):
        self.module, self.spec = module, module.__spec__

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        module.__spec__ = self.spec  # the import system set the alias's spec; the module keeps its own
