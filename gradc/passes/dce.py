"""Dead-code elimination: drop equations no output depends on.

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


def dce(graph: Graph) -> Graph:
    live = {id(o) for o in graph.outputs if isinstance(o, Var)}
    kept = []
    for eqn in reversed(graph.eqns):
        if id(eqn.out) in live:
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    kept.reverse()
    return graph.replace(eqns=kept)
