"""Loops with per-step outputs over a static range: what a captured ``for`` that appends to a list runs
(``gradc.trace.collecting_loop``), as JAX's ``scan`` returns its ``ys``.

>>> val, ys = fori_scan(0, 3, 1, lambda i, c: (c + i, c * 2), 1)
>>> val, ys
(4, array([2, 2, 4]))
"""
from __future__ import annotations

import numpy as np

from gradc.errors import StaticValueNeeded
from gradc.ir.builder import Traced
from gradc.trace.control_trace import (
    _ACTIVE,
    I64,
    UNROLL_MAX_TRIPS,
    UNROLL_STATIC,
    UNROLLED,
    _atom_in,
    _current,
    _kept_in_place,
    _leaf_type,
    _record,
    _trace_loop_body,
    flatten,
)


def fori_scan(lower: int, upper: int, step: int, body, init_val, *, names=None, where=None):
    """``for i in range(lower, upper, step): val, y = body(i, val)`` over a static range, with each iteration's
    ``y`` (a pytree of arrays, the same types every time) stacked along a new first axis: one ``scan`` equation,
    as JAX's ``scan`` returns its ``ys``. Returns ``(val, ys)``; ``ys`` is None after no iteration.
    (A list a captured loop appends to, ``gradc.trace.capture_lists``.)"""
    trips = len(range(int(lower), int(upper), int(step)))
    leaves, rebuild = flatten(init_val)
    hint = None
    if not _ACTIVE and not any(isinstance(leaf, Traced) for leaf in leaves) and trips:
        hint = body(int(lower), init_val)  # which values are traced (the body reads them from outside)
        if not any(isinstance(leaf, Traced) for leaf in flatten(hint)[0]):
            hint = None
    if hint is None and not _ACTIVE and not any(isinstance(leaf, Traced) for leaf in leaves):
        val, ys = init_val, []
        for i in range(int(lower), int(upper), int(step)):
            val, y = body(i, val)
            ys.append(y)
        return val, stack_trees(ys)
    builder = _current(init_val, hint=hint)

    def in_python():
        val, ys = init_val, []
        for i in range(int(lower), int(upper), int(step)):
            val, y = body(i, val)
            ys.append(y)
        if len({_shapes(y) for y in ys}) > 1:  # x[i:] appended: the unrolled items differ (as no loop's could)
            from gradc.trace.capture_lists import Heterogeneous
            raise Heterogeneous("<the loop's items>")  # the collecting loop then runs in Python (collecting_loop)
        return val, stack_trees(ys)
    if trips <= UNROLL_MAX_TRIPS or UNROLL_STATIC.get():
        return in_python()
    try:
        sub, types, out = _trace_loop_body(builder, "body", body, [("i", I64)], leaves, rebuild, names, where,
                                           extra_out=1, counter=True)
    except StaticValueNeeded as err:
        UNROLLED.append((where, str(err.args[0]) if err.args else ""))
        return in_python()
    carry_leaves, _ = flatten(out[0])
    y_leaves, y_rebuild = flatten(out[1])
    outputs = [_atom_in(sub.builder, leaf, t) for leaf, t in zip(carry_leaves, types)]
    outputs += [_atom_in(sub.builder, y, _leaf_type(y, None, 0, where)[0]) for y in y_leaves]
    graph = sub.graph(outputs)
    consts = list(sub.builder.captured)
    init = [_atom_in(builder, leaf, t) for leaf, t in zip(leaves, types)]
    params = dict(body=graph, n_consts=len(consts), n_carry=len(init), length=trips, reverse=False,
                  start=int(lower), step=int(step))
    results = _record(builder, "scan", consts + init, params, None)
    carry = rebuild(_kept_in_place(builder, sub, leaves, carry_leaves, results[:len(init)], names, where))
    return carry, y_rebuild(results[len(init):])


def _shapes(tree) -> tuple:
    leaves, _ = flatten(tree)
    return tuple(tuple(np.shape(leaf)) for leaf in leaves)


def stack_trees(trees):
    """Pytrees of the same structure stacked leaf by leaf along a new first axis (None for no trees)."""
    if not trees:
        return None
    from gradc.trace.numpy_dispatch import _stack
    leaves = [flatten(t)[0] for t in trees]
    _, rebuild = flatten(trees[0])
    columns = [[row[j] for row in leaves] for j in range(len(leaves[0]))]
    return rebuild([_stack(c) if any(isinstance(v, Traced) for v in c) else np.stack(c) for c in columns])
