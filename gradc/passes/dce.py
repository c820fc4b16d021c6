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

from gradc.ir.graph import Graph, without_dead_code


def dce(graph: Graph) -> Graph:
    """Drop the equations no output depends on (sub-graphs keep all their outputs: ``optimize`` recurses)."""
    return without_dead_code(graph)
