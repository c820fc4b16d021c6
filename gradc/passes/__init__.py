"""Graph-to-graph optimisation passes and the pipeline that runs them.

``fold`` (constants and algebraic identities), ``cse`` and ``dce``.

May import: ``gradc.ir``, ``gradc.ops``, ``gradc.trace``, ``gradc.transforms``, ``gradc.errors``.

>>> import numpy as np
>>> from gradc.trace import trace
>>> print(optimize(trace(lambda x: np.sin(x) * 1.0 + np.sin(x), np.ones(2))))
def lambda_(x: f64[2]) -> f64[2]:
  t0: f64[2] = sin x
  t4: f64[2] = add t0 t0
  return t4
"""
from __future__ import annotations

import weakref

from gradc.ir.graph import Graph
from gradc.ir.verify import verify
from gradc.passes.cse import cse
from gradc.passes.dce import dce
from gradc.passes.fold import fold
from gradc.passes.loops import merge_loops, optimize_subgraphs, prune_loop_inputs
from gradc.transforms.stabilise import stabilise

PIPELINE = (stabilise, fold, cse, dce, prune_loop_inputs)


def optimize(graph: Graph, *, check: bool = False, rounds: int = 4) -> Graph:
    """Run fold, CSE and DCE until nothing changes (at most ``rounds`` times).

    With ``check=True`` the IR is verified after every pass (the tests do this).
    """
    graph = optimize_subgraphs(merge_loops(graph), lambda g: _optimized_once(g, check, rounds))
    for _ in range(rounds):
        before = _signature(graph)
        for run in PIPELINE:
            graph = run(graph)
            if check:
                verify(graph)
        if _signature(graph) == before:
            break
    return graph


_OPTIMIZED: dict = {}  # (id(sub-graph), check, rounds) -> its optimised form, while the sub-graph lives


def _optimized_once(graph: Graph, check: bool, rounds: int) -> Graph:
    """A sub-graph optimised once however many equations hold it (a helper's body called from many places, in
    the value and the gradient graphs alike): the same optimised object each time, so emitters see one body."""
    key = (id(graph), check, rounds)
    found = _OPTIMIZED.get(key)
    if found is None:
        found = _OPTIMIZED[key] = optimize(graph, check=check, rounds=rounds)
        weakref.finalize(graph, _OPTIMIZED.pop, key, None)
    return found


def _signature(graph: Graph):
    return ([(e.op, tuple(id(a) for a in e.inputs), id(e.out)) for e in graph.eqns],
            [id(o) for o in graph.outputs])


__all__ = ["optimize", "fold", "cse", "dce"]
