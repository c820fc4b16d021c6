"""Building graphs: fresh names, constants, and the Traced protocol.

A :class:`Builder` accumulates equations. A :class:`Traced` value is an atom of
a graph under construction; ops applied to it add equations to its builder
(see ``gradc.ir.registry.bind``).

>>> from gradc.ir.types import TensorType
>>> b = Builder(); x = b.input("x", TensorType((2,), "f64"))
>>> b.fresh_name()
't0'
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ir.graph import Const, Eqn, Graph, Var
from gradc.ir.symbolic_infer import infer_type


class Builder:
    """Collects equations with names that are unique and deterministic.

    Intermediates are ``t0, t1, ...``, skipping names already taken (the user's
    parameter names among them).
    """

    def __init__(self, taken=(), first_index: int = 0, parent: "Builder | None" = None):
        self.eqns: list[Eqn] = []
        self.inputs: list[Var] = []
        self.taken: set[str] = set(taken)
        self.counter = first_index
        # a sub-graph's builder (a loop body, a branch): names come from the outermost builder, so a name
        # means one value in the whole nested graph; values of enclosing builders it reads become inputs
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1
        self.closed = False  # a finished sub-graph: a value of it used later escaped its loop or branch
        self.captured: list = []  # the enclosing builder's atoms read here, in order
        self.carry_origins: dict = {}  # id(carried input) -> the enclosing atom the loop starts it from
        self.capture_inputs: list = []  # this builder's input standing for each of them
        self._captures: dict = {}
        self.size_sources: dict = {}  # a named size (SymPy symbol) -> (input Var, axis) whose length it is

    @property
    def root(self) -> "Builder":
        b = self
        while b.parent is not None:
            b = b.parent
        return b

    def encloses(self, other: "Builder") -> bool:
        """Whether ``other`` is this builder or one of its enclosing builders."""
        b = self
        while b is not None:
            if b is other:
                return True
            b = b.parent
        return False

    def capture(self, owner: "Builder", atom):
        """``atom`` of the enclosing builder ``owner`` as a value of this one (an input of the sub-graph)."""
        if owner is self or not isinstance(atom, Var):  # a constant needs no capturing
            return atom
        outer = self.parent.capture(owner, atom)
        var = self._captures.get(id(outer))
        if var is None:
            var = self._captures[id(outer)] = Var(self.fresh_name(outer.name), outer.type)
            self.captured.append(outer)
            self.capture_inputs.append(var)
        return var

    def fresh_name(self, preferred: str | None = None) -> str:
        if self.parent is not None:
            return self.root.fresh_name(preferred)
        if preferred is not None:
            name, k = preferred, 1
            while name in self.taken:
                name = f"{preferred}_{k}"
                k += 1
        else:
            name = f"t{self.counter}"
            while name in self.taken:
                self.counter += 1
                name = f"t{self.counter}"
            self.counter += 1
        self.taken.add(name)
        return name

    def input(self, name: str, type) -> Var:
        """An input keeps the user's parameter name exactly (reserve it with ``taken``)."""
        root = self.root
        root.taken.add(name)
        var = Var(name, type)
        self.inputs.append(var)
        self._reserve_sizes(var)
        return var

    def adopt(self, inputs) -> None:
        """Take an existing graph's ``inputs`` as this builder's (a transform extending the graph), reserving
        their named sizes: no name made later (a loop counter ``i`` of an adjoint loop) may take one."""
        for var in inputs:
            self.inputs.append(var)
            self._reserve_sizes(var)

    def _reserve_sizes(self, var) -> None:
        root, name, type = self.root, var.name, var.type
        for axis, d in enumerate(getattr(type, "shape", None) or ()):
            if not isinstance(d, int) and getattr(d, "is_Symbol", False) and d not in root.size_sources:
                if d.name in root.taken:
                    raise TraceError(f"the size name {d.name!r} of {name}'s type {type} is also the name of a "
                                     "parameter or another value", hint="rename the size (e.g. f64[n_rows,...])")
                root.taken.add(d.name)  # no intermediate ever takes a size's name
                root.size_sources[d] = (var, axis)

    def add(self, op: str, inputs, params: dict, out_type) -> Var:
        out = Var(self.fresh_name(), out_type)
        self.eqns.append(Eqn(op, tuple(inputs), dict(params), out))
        return out

    def rename(self, var: Var, name: str) -> None:
        """Give an intermediate a meaningful name (``x_bar``) once it is known."""
        self.root.taken.discard(var.name)
        var.name = self.fresh_name(name)

    def graph(self, name: str, outputs, **fields) -> Graph:
        return Graph(name, list(self.inputs), list(self.eqns), list(outputs), **fields)


def next_index(graph: Graph) -> int:
    """The first ``tN`` index not used by a graph's intermediates."""
    best = -1
    for eqn in graph.eqns:
        name = eqn.out.name
        if name.startswith("t") and name[1:].isdigit():
            best = max(best, int(name[1:]))
    return best + 1


class Traced:
    """Base of values that record ops into a Builder instead of computing.

    Subclasses (the NumPy tracer, ...) add the user-facing operators; this base
    gives the protocol ``bind`` uses: ``builder``, ``atom`` and ``wrap``.
    """

    __slots__ = ("builder", "atom")

    def __init__(self, builder: Builder, atom):
        self.builder = builder
        self.atom = atom

    @property
    def aval(self):
        return self.atom.type

    def wrap(self, atom, builder=None) -> "Traced":
        return type(self)(builder or self.builder, atom)

    @classmethod
    def __gradc_bind__(cls, op, args, params):
        first = None
        for a in args:  # the innermost builder records: a loop body reading a value from outside the loop
            if isinstance(a, Traced) and (first is None or a.builder.depth > first.builder.depth):
                first = a
        builder = first.builder
        branch = BRANCHES[-1] if BRANCHES else None
        if branch is not None and branch.depth > builder.depth and branch.encloses(builder):
            builder = branch  # a branch runs only when taken: its ops on outside values stay in it
        if builder.closed:
            raise_escaped()
        atoms = []
        for a in args:
            if isinstance(a, Traced):
                if a.builder is not builder:
                    if not builder.encloses(a.builder):
                        raise_escaped()
                    atoms.append(builder.capture(a.builder, a.atom))
                else:
                    atoms.append(a.atom)
            else:
                atoms.append(Const(np.asarray(a)))
        out_type = infer_type(op.infer, [a.type for a in atoms], params)
        return first.wrap(builder.add(op.name, atoms, params, out_type), builder)


# the builders of the branches being traced, innermost last: an op in a branch records there even when it
# reads only values from outside (``sqrt(x)`` under ``if x > 0``), where a loop body's would record outside
# the loop (computed once, not every iteration)
BRANCHES: list = []


def raise_escaped():
    """A value computed inside a loop body or branch was used outside it (kept in a list, an attribute, ...)."""
    raise TraceError("a value computed inside a traced loop or branch is used outside it (was it stored in a "
                     "list, a dict or an attribute inside the loop, or read by a function a helper returned?)",
                     hint="carry it as a loop variable: assign it before the loop and update it inside")


def contains_traced(*values) -> bool:
    """Whether a traced value is anywhere in ``values`` (through tuples, lists and dicts).

    >>> contains_traced(1.0, (np.ones(2), {"k": 3}))
    False
    """
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, Traced):
            return True
        if isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return False
