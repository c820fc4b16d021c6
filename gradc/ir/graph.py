"""The IR: variables, constants, equations and graphs (plain data).

A :class:`Graph` is a straight-line program: typed inputs, equations in
dependency order, and outputs. Each equation applies one registered op to
atoms (a :class:`Var` or a :class:`Const`) and defines one new ``Var``.

>>> from gradc.ir.types import TensorType
>>> x = Var("x", TensorType((3,), "f64")); y = Var("t0", TensorType((3,), "f64"))
>>> g = Graph("f", [x], [Eqn("exp", (x,), {}, y)], [y])
>>> verify(g)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from gradc.ir.types import TensorType, type_of_array


class Var:
    """A named value of a graph. Compared by identity; the name is for people.

    >>> Var("x", TensorType((), "f64"))
    x: f64[]
    """

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: TensorType):
        self.name = name
        self.type = type

    def __repr__(self) -> str:
        return f"{self.name}: {self.type}"


class Const:
    """A constant operand: a NumPy array (0-d for scalars), never mutated.

    >>> Const(np.float64(2.0)).type
    f64[]
    """

    __slots__ = ("value", "type")

    def __init__(self, value):
        arr = np.array(value)  # a private copy, so later changes by the caller cannot leak in
        arr.setflags(write=False)
        self.value = arr
        self.type = type_of_array(arr)

    @property
    def is_scalar(self) -> bool:
        return self.value.ndim == 0

    def key(self):
        """A hashable identity of the value (for CSE and folding)."""
        return (self.type, self.value.tobytes())

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


Atom = Var | Const


@dataclass
class Eqn:
    """``out = op(*inputs, **params)``. ``params`` hold static values only.

    >>> Eqn("neg", (), {}, Var("t0", TensorType((), "f64"))).op
    'neg'
    """

    op: str
    inputs: tuple
    params: dict
    out: Var


@dataclass
class Graph:
    """A traced function: ``name``, typed ``inputs``, ``eqns`` and ``outputs``.

    ``params`` lists every parameter of the user's function in order, with
    the static (Python int) ones in ``static``: they are not graph inputs.
    ``origin`` is ``file:function`` of the traced function, for headers.
    """

    name: str
    inputs: list
    eqns: list
    outputs: list
    params: list = field(default_factory=list)
    static: dict = field(default_factory=dict)
    origin: str = ""
    adjoint: frozenset = frozenset()  # names of the values reverse mode added (for "# backward")

    def __post_init__(self):
        if not self.params:
            self.params = [v.name for v in self.inputs]

    def replace(self, **changes) -> "Graph":
        """A copy with some fields changed (the graph itself is never mutated by passes)."""
        fields = dict(name=self.name, inputs=self.inputs, eqns=self.eqns, outputs=self.outputs,
                      params=self.params, static=self.static, origin=self.origin, adjoint=self.adjoint)
        fields.update(changes)
        return Graph(**fields)

    def __str__(self) -> str:
        from gradc.ir.printer import format_graph

        return format_graph(self)

    def _repr_svg_(self):  # Jupyter: draw the graph when Graphviz is installed
        try:
            from gradc.ir.dot import render_svg
        except ImportError:
            return None
        return render_svg(self)


class VerifyError(AssertionError):
    """A graph breaks an IR invariant (a bug in gradc, not in user code)."""


def verify(graph: Graph) -> None:
    """Check the IR invariants: defined before use, unique names, types agree with op rules.

    >>> verify(Graph("f", [], [], []))
    """
    from gradc.ops.registry import OPS

    defined: set = set()
    names: set = set()

    def define(var):
        if not isinstance(var, Var):
            raise VerifyError(f"{var!r} defined but not a Var")
        if id(var) in defined:
            raise VerifyError(f"{var.name} defined twice")
        if var.name in names:
            raise VerifyError(f"name {var.name} used by two variables")
        defined.add(id(var))
        names.add(var.name)

    def check_use(atom, where):
        if isinstance(atom, Var) and id(atom) not in defined:
            raise VerifyError(f"{atom.name} used before definition in {where}")
        if not isinstance(atom, (Var, Const)):
            raise VerifyError(f"{atom!r} in {where} is not an atom")

    for v in graph.inputs:
        define(v)
    for eqn in graph.eqns:
        if eqn.op not in OPS:
            raise VerifyError(f"unknown op {eqn.op}")
        for a in eqn.inputs:
            check_use(a, f"{eqn.out.name} = {eqn.op}")
        expected = OPS[eqn.op].infer([a.type for a in eqn.inputs], eqn.params)
        if expected != eqn.out.type:
            raise VerifyError(f"{eqn.out.name} = {eqn.op}: type {eqn.out.type}, rule says {expected}")
        define(eqn.out)
    for out in graph.outputs:
        check_use(out, "outputs")
