"""The formula a notebook shows above a compiled function's code: its value and gradient, when small.

``gradc.compile(...)`` objects show their emitted source in Jupyter (``_repr_html_``); for a function small
enough to read as a formula, the value and gradient (as ``gradc.symbolic`` prints them, unsimplified, so
that showing an object never waits on SymPy's ``simplify``) come above it: at most ``MAX_EQUATIONS``
equations in the traced function, no loop or helper call, at most ``MAX_ENTRIES`` entries over its inputs,
and at most ``MAX_CHARACTERS`` of LaTeX. Anything else, and any function the symbolic view refuses, shows
the code alone.

>>> import numpy as np, gradc
>>> def energy(x):
...     return np.sum(x ** 2)
>>> compiled = gradc.compile(energy, np.ones(2))
>>> print(formula_latex(compiled.graph, compiled.wrt))
energy(x) &= x_{0}^{2} + x_{1}^{2} \\\\
\\frac{\\partial energy}{\\partial x} &= \\left[\\begin{matrix}2 x_{0}\\\\2 x_{1}\\end{matrix}\\right]
"""
from __future__ import annotations

import numpy as np

from gradc.ir.graph import Graph, subgraphs

MAX_EQUATIONS = 40
MAX_ENTRIES = 16
MAX_CHARACTERS = 4000


def formula_latex(graph: Graph, wrt: tuple) -> str | None:
    """The value and gradient of ``graph`` as LaTeX (an ``aligned`` body), or None (see the module docstring)."""
    if len(graph.eqns) > MAX_EQUATIONS or any(subgraphs(e) for e in graph.eqns) or len(graph.outputs) != 1:
        return None
    shapes = [tuple(v.type.shape) for v in graph.inputs]
    if not all(isinstance(n, int) for shape in shapes for n in shape):
        return None
    if sum(int(np.prod(shape, dtype=np.int64)) for shape in shapes) > MAX_ENTRIES:
        return None
    from gradc.symbolic.view import Symbolic
    try:
        text = Symbolic(graph, tuple(wrt), len(wrt) > 1, simplify=False).latex()
    except Exception:  # noqa: BLE001  (a notebook's display never raises: the code alone is shown)
        return None
    return text if len(text) <= MAX_CHARACTERS else None
