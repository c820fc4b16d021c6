"""A name the Tensor facade lacks: an error that says so and names what exists instead.

``install(module, "torch.linalg")`` gives a facade module a module-level ``__getattr__`` and
``install_tensor(Tensor)`` gives the Tensor class one; both raise ``FacadeMissingName``, an
``AttributeError`` (so ``hasattr`` and ``getattr(x, name, default)`` behave as with torch),
whose message names the closest existing names (``difflib``). The message is built only
when shown, so probing for an attribute stays cheap.

>>> import gradc.torch as torch
>>> try:
...     torch.linalg.eigvalz
... except AttributeError as e:
...     print(e)
gradc's Tensor facade lacks torch.linalg.eigvalz; close names it has: eigvals, eigvalsh, eig
"""
from __future__ import annotations

import difflib
import inspect


class FacadeMissingName(AttributeError):
    """``owner.name`` does not exist in gradc's Tensor facade (torch may have it)."""

    def __init__(self, owner: str, name: str, candidates):
        super().__init__(owner, name)
        self.owner, self.missing, self._candidates = owner, name, candidates

    def __str__(self) -> str:
        names = sorted({n for n in self._candidates() if not n.startswith("_")})
        close = difflib.get_close_matches(self.missing, names, n=5, cutoff=0.6)
        text = f"gradc's Tensor facade lacks {self.owner}.{self.missing}"
        if close:
            return f"{text}; close names it has: {', '.join(close)}"
        return f"{text} (no close name; dir({self.owner.split('.')[-1] if '.' in self.owner else self.owner}) " \
               "lists what it has)"


def _public(module) -> list:
    """The module's public names: its ``__all__``, else what it defines that is not a module or an import."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [n for n, v in vars(module).items()
            if not inspect.ismodule(v) and n != "annotations"
            and (getattr(v, "__module__", None) or "gradc.facade").startswith("gradc.facade")]


def install(module, owner: str) -> None:
    """Give ``module`` a ``__getattr__`` raising ``FacadeMissingName`` (keeping one it already has)."""
    previous = module.__dict__.get("__getattr__")
    if getattr(previous, "_facade_missing", False):
        return

    def __getattr__(name):
        if previous is not None:
            return previous(name)
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}")
        raise FacadeMissingName(owner, name, lambda: _public(module))
    __getattr__._facade_missing = True
    module.__getattr__ = __getattr__


def install_tensor(T) -> None:
    """Give the Tensor class a ``__getattr__`` (it runs only when normal lookup fails)."""
    def __getattr__(self, name):
        if name.startswith("_"):  # private and dunder probes (copy, pickle, NumPy) stay plain and fast
            raise AttributeError(f"'Tensor' object has no attribute {name!r}")
        raise FacadeMissingName("torch.Tensor", name, lambda: dir(T))
    T.__getattr__ = __getattr__
