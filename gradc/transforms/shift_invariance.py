"""Shifts whose derivative is exactly zero: the maximum subtracted in log-sum-exp, softmax and log-softmax.

A careful person writes ``m = x.max(1, keepdims=True); lse = log(sum(exp(x - m), 1)) + m[:, 0]`` and
differentiates it by hand as ``softmax(x) * ct``: the result does not change when ``m`` moves by any
``c`` (constant along the reduced axes), so the derivative through ``m`` is zero and the max's adjoint
(ties found by ``==``, counted, shared, added) is never written. Reverse mode following the ops does
write it, and adds up to zero. :func:`zero_derivative_shifts` proves the invariance on the graph,
and reverse mode then treats those shifts as constants (as ``stop_gradient``), which leaves the
closed-form adjoints: log-sum-exp's ``exp(x - m) * (ct / s)``, softmax's and log-softmax's.

The proof follows ``m``'s uses forward, tracking how each value depends on the shift ``c``:
``('add', k)`` for ``v = base + k c`` and ``('mul', k)`` for ``v = base * exp(k c)``, with ``c``
constant along the max's axes. ``exp`` turns ``add`` into ``mul``, ``log`` back; sums, means
and extrema over the max's axes keep the dependence; reshapes between the kept and dropped
reduced shapes and the broadcast back over the axes keep its alignment. A value with ``k = 0``
does not depend on ``c``. Any other use, a transpose, a loop, or a graph output that depends on
``c`` ends the proof with no claim (the derivative is then computed through the ops as before).

>>> import numpy as np
>>> from gradc.trace import trace
>>> def lse(x):
...     m = np.max(x, axis=1, keepdims=True)
...     return np.sum(np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0])
>>> g = trace(lse, np.ones((2, 3)))
>>> [v.name for v in zero_derivative_shifts(g)]
['t0']
>>> zero_derivative_shifts(trace(lambda x: np.sum(np.exp(x - np.max(x))) , np.ones(3)))
[]
"""
from __future__ import annotations

import heapq
import math

import numpy as np

from gradc.ir.graph import Graph, Var
from gradc.ops.shape import spec_to_numpy

EXTREMA = ("max", "min")  # the shifts looked for: what people subtract for stability
_MAX_PROBE = 1 << 16  # elements of the index probe (a size past it, or a symbolic one, ends the proof)
_IDENTITY = ("stop_gradient", "recompute")


def zero_derivative_shifts(graph: Graph) -> list[Var]:
    """The extrema of ``graph`` (top level) every output is invariant to: their derivative is zero."""
    users: dict = {}
    for k, eqn in enumerate(graph.eqns):
        for a in eqn.inputs:
            if isinstance(a, Var):
                users.setdefault(id(a), []).append(k)
    outputs = {id(o) for o in graph.outputs if isinstance(o, Var)}
    found = []
    for k, eqn in enumerate(graph.eqns):
        if eqn.op in EXTREMA and _invariant(graph, k, users, outputs):
            found.append(eqn.out)
    return found


def _invariant(graph, start, users, outputs) -> bool:
    eqn = graph.eqns[start]
    full = tuple(eqn.inputs[0].type.shape)
    axes = tuple(sorted(eqn.params["axes"]))
    if any(not isinstance(d, int) for d in full):
        return False
    kept = tuple(1 if i in axes else d for i, d in enumerate(full))
    dropped = tuple(d for i, d in enumerate(full) if i not in axes)
    layout = _Layout(full, kept, dropped, axes)
    state = {id(eqn.out): ("add", 1)}
    pending = list(users.get(id(eqn.out), ()))
    heapq.heapify(pending)
    seen = set()
    while pending:
        k = heapq.heappop(pending)
        if k in seen:
            continue
        seen.add(k)
        e = graph.eqns[k]
        result = _rule(e, [state.get(id(a)) if isinstance(a, Var) else None for a in e.inputs], layout)
        if result is False:
            return False
        if result is None or result[1] == 0:
            continue  # does not depend on the shift
        if id(e.out) in outputs:
            return False
        state[id(e.out)] = result
        for u in users.get(id(e.out), ()):
            heapq.heappush(pending, u)
    return not any(id(o) in state for o in graph.outputs if isinstance(o, Var))


class _Layout:
    """The shapes a shift-dependent value may have: the max's input (``full``) and its result kept or dropped."""

    def __init__(self, full, kept, dropped, axes):
        self.full, self.kept, self.dropped, self.axes = full, kept, dropped, axes

    def reduced(self, shape) -> bool:
        return shape in (self.kept, self.dropped)


def _rule(eqn, deps, layout):
    """How ``eqn.out`` depends on the shift: ``(kind, k)``, None (it does not) or False (no claim)."""
    op = eqn.op
    tracked = [d for d in deps if d is not None]
    shapes = [tuple(getattr(a.type, "shape", ())) for a in eqn.inputs]
    out_shape = tuple(getattr(eqn.out.type, "shape", ()))
    if op in _IDENTITY:
        return deps[0]
    if op == "exp":
        kind, k = deps[0]
        return ("mul", k) if kind == "add" else False
    if op == "log":
        kind, k = deps[0]
        return ("add", k) if kind == "mul" else False
    if op == "neg":
        kind, k = deps[0]
        return ("add", -k) if kind == "add" else deps[0]
    if op in ("add", "sub", "mul", "div"):
        if any(s != out_shape and (s != () or d is not None) for s, d in zip(shapes, deps)):
            return False  # a shift-dependent value broadcast by the op itself: alignment unknown
        return _binary(op, deps)
    if op in ("sum", "mean", "max", "min"):
        kind, k = deps[0]
        if shapes[0] != layout.full or tuple(sorted(eqn.params["axes"])) != layout.axes:
            return False
        if (op in ("max", "min") and kind != "add") or (op == "sum" and kind == "add"):
            return False  # an extremum of base * exp(kc) is not one; sum(base + kc) moves by n k c
        return (kind, k)
    if op == "broadcast_to":
        leading = layout.axes == tuple(range(len(layout.axes)))  # NumPy's broadcast prepends them: aligned
        aligned = shapes[0] == layout.kept or (shapes[0] == layout.dropped and leading)
        return deps[0] if aligned and out_shape == layout.full else False
    if op in ("reshape", "squeeze", "expand_dims"):
        return deps[0] if layout.reduced(shapes[0]) and layout.reduced(out_shape) else False
    if op == "index" and len(eqn.inputs) == 1 and len(tracked) == 1:
        return deps[0] if _order_kept(eqn, shapes[0], out_shape, layout) else False
    return False


def _binary(op, deps):
    a, b = deps
    if op in ("add", "sub"):
        sign = 1 if op == "add" else -1
        if a is None or b is None:
            one = a if a is not None else b
            if one[0] != "add":
                return False  # base * exp(kc) + y: no longer a pure factor
            return one if a is not None else ("add", sign * one[1])
        if a[0] != b[0] or (a[0] == "mul" and a[1] != b[1]):
            return False
        return ("add", a[1] + sign * b[1]) if a[0] == "add" else a
    # mul, div: factors exp(kc) multiply
    if (a is not None and a[0] != "mul") or (b is not None and b[0] != "mul"):
        return False
    ka = a[1] if a is not None else 0
    kb = b[1] if b is not None else 0
    return ("mul", ka + kb if op == "mul" else ka - kb)


def _order_kept(eqn, shape, out_shape, layout) -> bool:
    """Whether an index of a kept (dropped) reduced value is only a reshape to the dropped (kept) one."""
    if not (layout.reduced(shape) and layout.reduced(out_shape)):
        return False
    size = math.prod(shape)
    if size > _MAX_PROBE:
        return False
    try:
        probe = np.arange(size).reshape(shape)[spec_to_numpy(eqn.params["spec"])]
    except (IndexError, TypeError, ValueError):
        return False
    return probe.shape == out_shape and bool(np.array_equal(probe.ravel(), np.arange(size)))


__all__ = ["zero_derivative_shifts"]
