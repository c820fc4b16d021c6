"""Derivatives inside a trace in progress: a transform called while gradc traces an enclosing function is inlined.

``grad(lambda x: x * grad(lambda y: x + y)(x))`` traces the inner function while the outer one is
being traced. The inner trace is a child of the enclosing one (``gradc.trace.ENCLOSING``): an
enclosing value the inner function reads (``x``, through its closure) becomes an extra input of the
inner graph, *not* differentiated by the inner transform (a constant of its derivative, as the
inner derivative means), and the derivative graph is evaluated on the enclosing trace's values, so
its equations join the enclosing trace. The enclosing transform then differentiates through them:
each derivative owns its inputs, so one derivative's perturbation is never mistaken for another's
("perturbation confusion", Siskind & Pearlmutter): ``d/dx [x * d/dy (x + y)]`` is 1.

>>> import gradc
>>> gradc.grad(lambda x: x * gradc.grad(lambda y: x + y)(x))(3.0)
1.0
>>> gradc.grad(lambda x: gradc.grad(lambda y: x * y ** 2)(x))(3.0)
12.0
"""
from __future__ import annotations

from contextlib import contextmanager

from gradc.ir import builder as builders
from gradc.ir.builder import Traced
from gradc.trace import ENCLOSING, Enclosing, control_trace
from gradc.trace.tracer import TRACING


def tracing() -> bool:
    """Whether gradc is tracing a function now (a transform called now is inlined into that trace)."""
    return TRACING.get() is not None


def enclosing_builder(leaves):
    """The innermost builder a function traced now may read values of: the trace in progress, a traced
    argument's (a loop body's), the branch being traced."""
    current = TRACING.get()
    candidates = [current] + [a.builder for a in leaves if isinstance(a, Traced)]
    for stack in (builders.BRANCHES, control_trace._ACTIVE):  # the branch or loop body being traced, if any
        if stack and current is not None and stack[-1].encloses(current):
            candidates.append(stack[-1])
    candidates = [b for b in candidates if b is not None]
    traced = [a.builder for a in leaves if isinstance(a, Traced)]
    if traced:  # only builders on the arguments' chain: the trace in progress may be another tree (a derivative
        # rule running inside a graph transform, itself inside a helper's body) at the same depth
        deepest = max(traced, key=lambda b: b.depth)
        candidates = [b for b in candidates if deepest.encloses(b) or b.encloses(deepest)]
    return max(candidates, key=lambda b: b.depth) if candidates else None


@contextmanager
def inlined(leaves, inline: bool = True):
    """Around the trace of a function whose derivative is inlined into the trace in progress: yields the
    :class:`gradc.trace.Enclosing` whose ``captured`` lists, after the trace, the enclosing values read (the
    graph's trailing inputs); yields None when nothing is being traced (or ``inline`` is False)."""
    parent = enclosing_builder(leaves) if inline else None
    if parent is None:
        yield None
        return
    nest = Enclosing(parent)
    token = ENCLOSING.set(nest)
    try:
        yield nest
    finally:
        ENCLOSING.reset(token)


def own_inputs(graph, n_params: int) -> list:
    """The names of the float inputs of ``graph`` that are the function's own (not enclosing values read):
    what a transform differentiates by default."""
    own = set(graph.params[:n_params])
    return [v.name for v in graph.inputs if v.type.is_inexact and v.name in own]
