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

from gradc.ir.graph import Const, Eqn, Graph, Var


class Builder:
    """Collects equations with names that are unique and deterministic.

    Intermediates are ``t0, t1, ...``, skipping names already taken (the user's
    parameter names among them).
    """

    def __init__(self, taken=(), first_index: int = 0):
        self.eqns: list[Eqn] = []
        self.inputs: list[Var] = []
        self.taken: set[str] = set(taken)
        self.counter = first_index

    def fresh_name(self, preferred: str | None = None) -> str:
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
        self.taken.add(name)
        var = Var(name, type)
        self.inputs.append(var)
        return var

    def add(self, op: str, inputs, params: dict, out_type) -> Var:
        out = Var(self.fresh_name(), out_type)
        self.eqns.append(Eqn(op, tuple(inputs), dict(params), out))
        return out

    def rename(self, var: Var, name: str) -> None:
        """Give an intermediate a meaningful name (``x_bar``) once it is known."""
        self.taken.discard(var.name)
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

    def wrap(self, atom) -> "Traced":
        return type(self)(self.builder, atom)

    @classmethod
    def __gradc_bind__(cls, op, args, params):
        first = next(a for a in args if isinstance(a, Traced))
        builder = first.builder
        atoms = []
        for a in args:
            if isinstance(a, Traced):
                if a.builder is not builder:
                    raise RuntimeError("values of two different traces were mixed")
                atoms.append(a.atom)
            else:
                atoms.append(Const(np.asarray(a)))
        out_type = op.infer([a.type for a in atoms], params)
        return first.wrap(builder.add(op.name, atoms, params, out_type))
