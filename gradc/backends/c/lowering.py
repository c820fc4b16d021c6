"""The C lowering of each op, read from its ``c=`` facet (``gradc.ops.c_spell``).

``C_LOWERING[name]`` is the facet of op ``name``: ``("scalar", fn)`` for an
elementwise op (``fn`` builds a SymPy expression), ``(kind,)`` for one the
emitter writes as loops, ``None`` when the op has no C lowering. The emitter
lists all ops of a graph without one at once (``unsupported_ops``).

>>> C_LOWERING["matmul"], C_LOWERING["exp"][0]
(('matmul',), 'scalar')
>>> all(v is None or isinstance(v[0], str) for v in C_LOWERING.values())  # None: no C (reported at once)
True
"""
from __future__ import annotations

from collections.abc import Mapping

from gradc.ir.graph import subgraphs
from gradc.ir.registry import OPS
from gradc.ops import c_spell


class _Lowerings(Mapping):
    """A live view of the registry's ``c`` facets (an op missing its facet counts as having none)."""

    def __getitem__(self, name):
        spelling = OPS[name].c
        return None if spelling == c_spell.MISSING else spelling

    def __iter__(self):
        return iter(OPS)

    def __len__(self):
        return len(OPS)


C_LOWERING = _Lowerings()


def unsupported_ops(graph) -> list:
    """Sorted names of the ops of ``graph`` that have no C lowering.

    >>> from gradc.trace import trace
    >>> import numpy as np
    >>> unsupported_ops(trace(lambda x: np.sin(x) @ x, np.ones(3)))
    []
    """
    bad, pending, seen = set(), [graph], {id(graph)}
    while pending:  # loop bodies, branches and helpers' bodies too: every op without C is named at once
        g = pending.pop()
        bad.update(e.op for e in g.eqns if C_LOWERING.get(e.op) is None)
        for sub in (sub for e in g.eqns for sub in subgraphs(e)):
            if id(sub) not in seen:  # a helper's body is held by each of its calls: look at it once
                seen.add(id(sub))
                pending.append(sub)
    return sorted(bad)
