"""``verify(graph)``: the IR's invariants, checked between passes in tests.

Defined before use, one definition and one name per variable, and every
equation's type equal to what its op's type rule says.

>>> from gradc.ir.graph import Graph
>>> verify(Graph("f", [], [], []))
"""
from __future__ import annotations

from gradc.ir.atoms import Const, Var
from gradc.ir.graph import subgraphs
from gradc.ir.registry import OPS


class VerifyError(AssertionError):
    """A graph breaks an IR invariant (a bug in gradc, not in user code)."""


def verify(graph, _seen: set | None = None) -> None:
    """Check the IR invariants: defined before use, unique names, types agree with op rules.

    >>> from gradc.ir.graph import Graph
    >>> verify(Graph("f", [], [], []))
    """
    defined: set = set()
    names: set = set()
    seen = set() if _seen is None else _seen  # a helper's body, called from many places, is checked once

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
        for sub in subgraphs(eqn):  # closed: a sub-graph reads only its own inputs
            if id(sub) not in seen:
                seen.add(id(sub))
                verify(sub, seen)
        expected = OPS[eqn.op].infer([a.type for a in eqn.inputs], eqn.params)
        if expected != eqn.out.type:
            raise VerifyError(f"{eqn.out.name} = {eqn.op}: type {eqn.out.type}, rule says {expected}")
        define(eqn.out)
    for out in graph.outputs:
        check_use(out, "outputs")
