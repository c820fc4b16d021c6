"""Sub-graph helpers the control-flow rules share: a body's VJP graph, a graph inlined into a builder, zeros.

(``gradc.transforms.control`` and ``gradc.transforms.binomial`` both build loop bodies from
them; they live here so neither module imports the other.)

>>> import numpy as np
>>> from gradc.ir.builder import Builder, Traced
>>> from gradc.ir.types import TensorType
>>> b = Builder(); x = Traced(b, b.input("x", TensorType((2,), "f64")))
>>> zeros_of(b, TensorType((2,), "f64")).aval
f64[2]
"""
from __future__ import annotations

import numpy as np

from gradc.ir.builder import Builder, Traced
from gradc.ir.graph import Graph, Var, without_dead_code
from gradc.transforms.reverse import vjp_graph


def body_vjp(body: Graph, wrt_vars: list):
    """The body's VJP graph, cut to the cotangents of ``wrt_vars`` and pruned: ``(graph, n cotangent inputs)``."""
    names = [v.name for v in wrt_vars]
    if not names:
        return None
    g = vjp_graph(body, names, name=f"{body.name}_adjoint")
    n_out = len(body.outputs)
    return without_dead_code(g.replace(outputs=g.outputs[n_out:])), n_out


def inline(graph: Graph, *args, given=None, builder=None) -> list:
    """``graph``'s outputs for ``args`` (Traced values), every equation recorded in the args' builder.

    Unlike the interpreter, equations on constants are recorded too, not computed: a broadcast
    scalar stays a broadcast (a literal in the emitted code), not an array constant. ``given``
    maps ids of the graph's values to values to use instead of computing them (a tape's rows).
    ``builder``: where to record when no argument is traced (a branch of constants only).
    """
    from gradc.ir.registry import bind
    builder = next((a.builder for a in args if isinstance(a, Traced)), builder)
    if builder is None:
        raise AssertionError("internal: inline without a traced argument or a builder")
    env = {id(v): a for v, a in zip(graph.inputs, args)}
    env.update(given or {})

    def read(atom):
        return env[id(atom)] if isinstance(atom, Var) else Traced(builder, atom)
    for eqn in graph.eqns:
        if id(eqn.out) not in env:
            env[id(eqn.out)] = bind(eqn.op, *(read(a) for a in eqn.inputs), **eqn.params)
    return [read(o) for o in graph.outputs]


def zeros_of(builder: Builder, t):
    """Zeros of type ``t`` in ``builder``: a broadcast scalar (never an array constant)."""
    from gradc.ir.atoms import Const
    from gradc.ops import shape as sh
    zero = Traced(builder, Const(np.zeros((), t.np_dtype)))
    return sh.broadcast_to(zero, t.shape) if t.shape else zero
