"""CSE's identity of a sub-graph (a loop's body, a branch, a helper): its printed text, which shows an array
constant only as ``const(f64[3])``, plus a digest of the constants' bytes, so that two bodies differing in an
array constant are never merged (the rule keys of ODE right-hand sides once met the same abbreviation)."""
from __future__ import annotations

import importlib

import numpy as np

from gradc.ir.atoms import Const
from gradc.ir.graph import Eqn, Graph, Var
from gradc.ir.types import TensorType

cse_module = importlib.import_module("gradc.passes.cse")  # (gradc.passes.cse is also the function's name)
F64_3 = TensorType((3,), "f64")


def body(values) -> Graph:
    x, out = Var("x", F64_3), Var("t0", F64_3)
    return Graph("body", [x], [Eqn("mul", (x, Const(np.array(values))), {}, out)], [out])


def test_bodies_differing_only_in_an_array_constant_have_different_keys():
    a, b, a_again = body([1.0, 2.0, 3.0]), body([3.0, 5.0, 7.0]), body([1.0, 2.0, 3.0])
    assert str(a) == str(b)  # the printed text alone cannot tell them apart
    assert cse_module._param_text(a) != cse_module._param_text(b)
    assert cse_module._param_text(a) == cse_module._param_text(a_again)  # equal bodies still merge


def test_two_branches_differing_in_a_constant_are_not_merged():
    x, pred = Var("x", F64_3), Var("p", TensorType((), "bool"))
    outs = [Var("c0", F64_3), Var("c1", F64_3)]
    eqns = [Eqn("cond", (pred, x), {"branches": (body([1.0, 1.0, 1.0]), body(values))}, out)
            for values, out in zip(([2.0, 2.0, 2.0], [4.0, 4.0, 4.0]), outs)]
    graph = Graph("f", [pred, x], eqns, outs)
    assert len(cse_module.cse(graph).eqns) == 2
