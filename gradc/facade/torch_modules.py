"""torch's module paths under ``gradc.torch``, each the facade module that implements it.

``register()`` (run by ``gradc/torch/__init__.py``) enters every path in ``sys.modules`` and
as an attribute of its parent, so ``import gradc.torch.nn.functional as F``,
``from gradc.torch.autograd.functional import vjp`` and ``import gradc.torch.utils.data`` give
the facade's modules themselves: one module object per file whatever name imported it, no
shim package per torch path. ``AliasFinder`` answers the same paths under any name bound to
``gradc.torch`` in ``sys.modules`` (a harness's ``sys.modules["torch"] = gradc.torch``).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import os
import sys

PACKAGE = "gradc.torch"
_ROOTS = {
    "autograd": "gradc.facade.autograd",
    "autograd.functional": "gradc.facade.autograd_functional",
    "backends": "gradc.facade.backends",
    "backends.cudnn": "gradc.facade.backends_cudnn",
    "backends.mps": "gradc.facade.backends_mps",
    "func": "gradc.facade.func",
    "nn": "gradc.facade.nn",
    "optim": "gradc.facade.optim",
    "utils": "gradc.facade.utils",
    "cuda": "gradc.facade.cuda",
    "accelerator": "gradc.facade.accelerator",
    "linalg": "gradc.facade.linalg",
    "fft": "gradc.facade.fft",
    "special": "gradc.facade.special",
    "functional": "gradc.facade.torch_functional",
}
_FACADE = os.path.dirname(os.path.abspath(__file__))


def _with_submodules(roots: dict) -> dict:
    """``{"gradc.torch.<path>": facade module}`` for ``roots`` and every module of every aliased package,
    parents first.

    Listing them all is what keeps ``gradc.torch.nn.x`` one module: unlisted, importing it would
    load a second copy of ``gradc/facade/nn/x.py`` (``gradc.torch.nn``'s ``__path__`` finds the file).

    >>> _with_submodules({"utils": "gradc.facade.utils"})["gradc.torch.utils.data.dataloader"]
    'gradc.facade.utils.data.dataloader'
    """
    out = {}
    work = [(f"{PACKAGE}.{path}", target) for path, target in roots.items()]
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
# torch.nn.utils is a module here (gradc/facade/nn/utils.py); its ``rnn`` is a sibling file, entered after its parent
ALIASES["gradc.torch.nn.utils.rnn"] = "gradc.facade.nn.rnn_utils"


def register() -> None:
    """Enter every ``ALIASES`` path in ``sys.modules`` and on its parent; install ``AliasFinder`` once.

    >>> import gradc.torch, sys
    >>> sys.modules["gradc.torch.nn"] is sys.modules["gradc.facade.nn"]
    True
    """
    parents = {alias.rpartition(".")[0] for alias in ALIASES}
    for alias, target in ALIASES.items():
        module = importlib.import_module(target)
        sys.modules[alias] = module
        parent, _, child = alias.rpartition(".")
        setattr(sys.modules[parent], child, module)
        if alias in parents and not hasattr(module, "__path__"):
            # torch.autograd is a package in torch, a module here: an empty search path makes
            # ``import torch.autograd.functional`` ask the finders, and AliasFinder answers
            module.__path__ = []
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        # first: after it, the path finder would load ``torch.nn.containers`` from ``torch.nn``'s folder, a copy
        sys.meta_path.insert(0, AliasFinder())


class AliasFinder(importlib.abc.MetaPathFinder):
    """Lets ``import torch.nn as nn`` work where a harness has set ``sys.modules["torch"] = gradc.torch``.

    Python looks submodules up under the parent's name ("torch.nn") and then on the parent's
    path, where ``gradc/torch/`` has no ``nn``; this finder answers for any ``<name>.<path>``
    whose ``<name>`` is bound to ``gradc.torch``, with the module registered as
    ``gradc.torch.<path>``. It finds nothing otherwise, so it changes no other import (real
    torch's included).
    """

    def find_spec(self, fullname, path=None, target=None):
        head, _, rest = fullname.partition(".")
        if not rest or getattr(sys.modules.get(head), "__name__", None) != PACKAGE:
            return None
        module = sys.modules.get(f"{PACKAGE}.{rest}")
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
