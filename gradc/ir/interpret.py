"""The reference evaluator: run a graph equation by equation through ``bind``.

On arrays it computes with each op's NumPy ``impl``; on traced values it
records, which is how a compiled graph is inlined into an outer trace.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = trace(lambda x: (x * x).sum(), np.ones(3))
>>> float(evaluate(g, np.arange(3.0))[0])
5.0
"""
from __future__ import annotations

from gradc.ir.builder import Traced
from gradc.ir.dims import is_symbolic
from gradc.ir.graph import Const, Graph
from gradc.ir.registry import bind


def evaluate(graph: Graph, *args) -> list:
    """Outputs of ``graph`` for ``args`` (one per graph input, in order)."""
    if len(args) != len(graph.inputs):
        raise TypeError(f"{graph.name} takes {len(graph.inputs)} inputs, got {len(args)}")
    env = {id(v): a for v, a in zip(graph.inputs, args)}

    def read(atom):
        return atom.value if isinstance(atom, Const) else env[id(atom)]

    like = next((a for a in args if isinstance(a, Traced)), None)
    for eqn in graph.eqns:
        ins = [read(a) for a in eqn.inputs]
        if like is not None and ins and not any(isinstance(a, Traced) for a in ins) and _recorded(eqn):
            # a value of constants with a named size (broadcast_to 0.0 to (n,)) exists only when the code runs:
            # record it, as NumPy cannot compute it now; a large one (ones broadcast to a tangent's shape) is
            # recorded too, so that the trace holds the broadcast, not a dense constant the size of the data
            ins[0] = like.wrap(Const(ins[0]))
        env[id(eqn.out)] = bind(eqn.op, *ins, **eqn.params)
    return [read(o) for o in graph.outputs]


_LARGEST_COMPUTED = 64  # entries: as the fold pass, which keeps larger constants as the ops that make them


def _recorded(eqn) -> bool:
    shape = getattr(eqn.out.type, "shape", None)
    if shape is None:
        return False
    return is_symbolic(shape) or eqn.out.type.size > _LARGEST_COMPUTED
