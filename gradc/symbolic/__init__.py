"""The derivative as mathematics: traced code and its gradient as SymPy, LaTeX, and other languages' source.

``gradc.symbolic(f, *example_args, wrt=None)`` (this package, callable) returns a :class:`Symbolic`; see
:func:`gradc.symbolic.view.symbolic`. SymPy is imported on first use, not with gradc.

>>> import numpy as np, gradc
>>> print(gradc.symbolic(lambda x: np.sum(np.exp(x)), np.zeros(2)).grad.T)
Matrix([[exp(x_0), exp(x_1)]])
"""
from __future__ import annotations

import sys
import types
from typing import Any

__all__ = ["Symbolic", "SymbolicError", "evaluate_symbolic", "symbolic"]

_LAZY = {"Symbolic": "gradc.symbolic.view", "symbolic": "gradc.symbolic.view",
         "SymbolicError": "gradc.symbolic.graph_to_sympy", "evaluate_symbolic": "gradc.symbolic.graph_to_sympy"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gradc.symbolic' has no attribute {name!r}")


class _CallablePackage(types.ModuleType):
    """``gradc.symbolic`` is both this package and the function ``gradc.symbolic(f, *args, wrt=None)``."""

    def __call__(self, f: Any, *example_args: Any, wrt: Any = None, **example_kwargs: Any) -> Any:
        from gradc.symbolic.view import symbolic

        return symbolic(f, *example_args, wrt=wrt, **example_kwargs)


sys.modules[__name__].__class__ = _CallablePackage


def _formula(graph: Any, wrt: tuple) -> Any:
    """The formula a notebook shows above compiled code (``gradc.symbolic.display``; SymPy imported then)."""
    from gradc.symbolic.display import formula_latex

    return formula_latex(graph, wrt)


def _graph_formula(graph: Any) -> str:
    """A traced function's value and gradient with respect to its float inputs, as a notebook's HTML block."""
    wrt = tuple(v.name for v in graph.inputs if getattr(v.type, "is_float", False))
    return _display.formula_html(graph, wrt) if wrt else ""


from gradc.backends import display as _display  # noqa: E402  (below: the package is set up first)
from gradc.ir import graph as _graph  # noqa: E402

_display.FORMULAS.append(_formula)
_graph.NOTEBOOK_FORMULAS.append(_graph_formula)
