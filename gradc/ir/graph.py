"""The IR: variables, constants, equations and graphs (plain data).

A :class:`Graph` is a straight-line program: typed inputs, equations in
dependency order, and outputs. Each equation applies one registered op to
atoms (a :class:`Var` or a :class:`Const`) and defines one new ``Var``.

>>> from gradc.ir.types import TensorType
>>> x = Var("x", TensorType((3,), "f64")); y = Var("t0", TensorType((3,), "f64"))
>>> g = Graph("f", [x], [Eqn("exp", (x,), {}, y)], [y])
>>> print(g)
def f(x: f64[3]) -> f64[3]:
  t0: f64[3] = exp x
  return t0
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gradc.ir.atoms import Atom, Const, Var  # noqa: F401  (re-exported: the IR's nouns in one place)
from gradc.ir.dot import render_svg
from gradc.ir.printer import format_eqn, format_graph, shortened


@dataclass(repr=False)
class Eqn:
    """``out = op(*inputs, **params)``. ``params`` hold static values only.

    >>> from gradc.ir.types import TensorType
    >>> Eqn("neg", (), {}, Var("t0", TensorType((), "f64"))).op
    'neg'
    """

    op: str
    inputs: tuple
    params: dict
    out: Var

    def __repr__(self) -> str:
        return format_eqn(self)  # its line of IR text (and the sub-graphs it holds)


@dataclass(repr=False)
class Graph:
    """A traced function: ``name``, typed ``inputs``, ``eqns`` and ``outputs``.

    ``params`` lists every parameter of the user's function in order, with
    the static (Python int) ones in ``static``: they are not graph inputs.
    ``origin`` is ``file:function`` of the traced function, for headers.

    ``str(graph)`` is its IR text; ``repr`` is the same text, shortened for a long graph (a console
    or a notebook without Graphviz shows it); ``_repr_svg_`` draws it when Graphviz is installed.

    >>> import numpy as np, gradc
    >>> g = gradc.trace(lambda x, n: np.sum(x ** n), np.ones(2), 3)
    >>> g.name, g.params, g.static, [str(v.type) for v in g.inputs]
    ('lambda_', ['x', 'n'], {'n': 3}, ['f64[2]'])
    """

    name: str
    inputs: list
    eqns: list
    outputs: list
    params: list = field(default_factory=list)
    static: dict = field(default_factory=dict)
    origin: str = ""
    adjoint: frozenset = frozenset()  # names of the values reverse mode added (for "# backward")

    def __post_init__(self) -> None:
        if not self.params:
            self.params = [v.name for v in self.inputs]

    def replace(self, **changes: Any) -> "Graph":
        """A copy with some fields changed (the graph itself is never mutated by passes)."""
        fields: dict[str, Any] = dict(name=self.name, inputs=self.inputs, eqns=self.eqns, outputs=self.outputs,
                                      params=self.params, static=self.static, origin=self.origin,
                                      adjoint=self.adjoint)
        fields.update(changes)
        return Graph(**fields)

    def __str__(self) -> str:
        return format_graph(self)

    def __repr__(self) -> str:
        return shortened(format_graph(self))

    def _repr_svg_(self) -> str | None:  # Jupyter: draw the graph when Graphviz is installed (else None: repr)
        return render_svg(self)

    def _repr_html_(self) -> str | None:
        """Jupyter: the function and its gradient as a formula above the drawing (or the IR text), when small
        enough (``gradc.symbolic.display``); None otherwise, and the drawing or the text shows alone."""
        formula = NOTEBOOK_FORMULAS[0](self) if NOTEBOOK_FORMULAS else ""
        if not formula:
            return None
        import html
        drawing = render_svg(self) or f"<pre>{html.escape(repr(self))}</pre>"
        return f'<div class="gradc-graph">{formula}{drawing}</div>'


# ``provider(graph) -> HTML or ""``: a traced function's formula for a notebook, installed by gradc.symbolic
NOTEBOOK_FORMULAS: list = []


def subgraphs(eqn: Eqn) -> list[Graph]:
    """The graphs an equation holds in its params (a loop's body, a branch), in param order; empty for most ops.

    >>> subgraphs(Eqn("neg", (), {}, None))
    []
    """
    found = []
    for key in sorted(eqn.params):
        value = eqn.params[key]
        if isinstance(value, Graph):
            found.append(value)
        elif isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
            found.extend(value)
    return found


def without_dead_code(graph: Graph) -> Graph:
    """``graph`` without the equations no output depends on (dead-code elimination, one backward sweep).

    >>> without_dead_code(Graph("f", [], [], [])).eqns
    []
    """
    live = {id(o) for o in graph.outputs if isinstance(o, Var)}
    kept = []
    for eqn in reversed(graph.eqns):
        if id(eqn.out) in live:
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    kept.reverse()
    return graph.replace(eqns=kept)
