"""Dead-code elimination: drop equations no output depends on, keeping run-time checks.

A check (``gradc.ops.checks``: the user's ``raise``/``assert`` on traced values) has an
effect and no value: it stays, with what computes its condition, and so does a loop or
branch holding one. A check whose condition is the constant False can never raise: it goes.

>>> import numpy as np
>>> from gradc.trace import trace
>>> def f(x):
...     unused = np.exp(x)
...     return np.sin(x)
>>> print(dce(trace(f, np.ones(2))))
def f(x: f64[2]) -> f64[2]:
  t1: f64[2] = sin x
  return t1
"""
from __future__ import annotations

from gradc.ir.graph import Graph, Var
from gradc.ops.checks import has_effects, is_never


def dce(graph: Graph) -> Graph:
    """Drop the equations no output or check depends on (sub-graphs keep all their outputs: ``optimize`` recurses)."""
    live = {id(o) for o in graph.outputs if isinstance(o, Var)}
    kept = []
    for eqn in reversed(graph.eqns):
        if id(eqn.out) in live or (has_effects(eqn) and not is_never(eqn)):
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    kept.reverse()
    return graph.replace(eqns=kept)
