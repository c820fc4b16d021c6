"""Reverse mode of a loop under binomial checkpointing (``checkpoint=gradc.binomial(snapshots=s)``).

The loop stays one ``scan`` equation; its reverse rule (this module) builds the reverse
sweep as a loop over the Revolve schedule (``gradc.transforms.revolve``), a constant table of
rows ``(action, a, b)`` with one iteration per row, whose body is an ``if``/``elif`` chain on
the action:

* advance: the loop's body from step ``a`` to step ``b`` (an inner loop of run-time length);
* takeshot: the state written into row ``b`` of the snapshot arrays ``(s, *state)``;
* restore: the state read back from row ``b``;
* youturn: step ``a``'s adjoint (the body's VJP graph, run at the current state: it
  recomputes that one step's intermediates, the only tape there is).

Memory: the ``s`` snapshots, the current state and one step's intermediates; the forward
steps run are the fewest possible with ``s`` stored states (``revolve.forward_steps``). The
module is as long for 10 steps as for 10,000: the schedule is one constant, which the
NumPy emitter writes as a call of the schedule's generator rather than a literal.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.trace.checkpoint import binomial
>>> from gradc.trace.control import fori_loop
>>> from gradc.transforms.reverse import grad_graph
>>> from gradc.ir.interpret import evaluate
>>> f = lambda x: fori_loop(0, 5, lambda i, v: v * x, 1.0, checkpoint=binomial(2))
>>> float(evaluate(grad_graph(trace(f, 2.0), ["x"]), 2.0)[0])  # d/dx x**5 = 5 x**4
80.0
"""
from __future__ import annotations

import contextlib

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.ir.graph import Var
from gradc.ir.types import TensorType
from gradc.ops import elementwise as ew
from gradc.ops.control import scan_parts
from gradc.ops.shape import gather
from gradc.ops.shape_extra import index_update
from gradc.trace import control_trace as ctl
from gradc.trace.checkpoint import Binomial
from gradc.transforms.inlining import body_vjp, inline, zeros_of
from gradc.transforms.revolve import ADVANCE, RESTORE, TAKESHOT, forward_steps, schedule_table

_ROW = (("array", 0),)  # x[k] with a traced scalar k: one row of the leading axis


def uses_binomial(params) -> bool:
    """Whether a scan equation's reverse sweep follows a binomial schedule (a static trip count of 2 or more).

    >>> uses_binomial({"checkpoint": Binomial(3), "length": 10}), uses_binomial({"length": 10})
    (True, False)
    """
    length, policy = params.get("length"), params.get("checkpoint")
    if not isinstance(policy, Binomial) or length is None:
        return False
    if not isinstance(length, (int, np.integer)):  # a named size: the schedule needs the number itself
        raise TraceError(f"{policy!r} checkpointing needs a trip count known at trace time, not the size {length}",
                         hint='use checkpoint="sqrt" or an int k for this loop, or trace it with a fixed size')
    return length >= 2


@contextlib.contextmanager
def _fresh_tracing():
    """The loop primitives as a transform uses them: no enclosing body, no default policy, loops kept as loops."""
    saved = list(ctl._ACTIVE)
    ctl._ACTIVE.clear()
    tokens = [(ctl.DEFAULT_CHECKPOINT, ctl.DEFAULT_CHECKPOINT.set(None)),
              (ctl.UNROLL_STATIC, ctl.UNROLL_STATIC.set(False))]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)
        ctl._ACTIVE[:] = saved


def binomial_scan_vjp(ct, out, inputs, needs, params):
    """The VJP of a ``scan`` of static length under ``checkpoint=binomial(s)``: see the module docstring."""
    with _fresh_tracing():
        return _reverse_sweep(ct, out, inputs, needs, params)


def _reverse_sweep(ct, out, inputs, needs, params):
    builder = out.builder
    body, n_consts, n_carry, trips = params["body"], params["n_consts"], params["n_carry"], params["length"]
    snapshots = params["checkpoint"].snapshots
    _, consts, carry, xs = scan_parts(inputs, params)
    b_consts = body.inputs[1:1 + n_consts]
    b_carry = body.inputs[1 + n_consts:1 + n_consts + n_carry]
    b_xs = body.inputs[1 + n_consts + n_carry:]
    need_consts = [k for k, v in enumerate(b_consts) if needs[k] and v.type.is_inexact]
    need_xs = [k for k, v in enumerate(b_xs) if needs[n_consts + n_carry + k] and v.type.is_inexact]
    float_carry = [k for k, v in enumerate(b_carry) if v.type.is_inexact]
    wrt = [b_consts[k] for k in need_consts] + [b_carry[k] for k in float_carry] + [b_xs[k] for k in need_xs]
    if not wrt:
        return (None,) * len(inputs)
    adj, _ = body_vjp(body, wrt)
    y_types = [o.type for o in body.outputs[n_carry:]]
    ct_ys = list(ct[n_carry:])
    start, step, backwards = params.get("start", 0), params.get("step", 1), params.get("reverse", False)

    def position(q):
        """Forward step ``q`` of the loop: its row ``j`` of the xs and ys, and its counter."""
        j = ew.sub(np.int64(trips - 1), q) if backwards else q
        i = j if (start, step) == (0, 1) else ew.add(ew.mul(j, np.int64(step)), np.int64(start))
        return j, i

    def advance(state, a, b):
        def one_step(q, st):
            j, i = position(q)
            return list(inline(body, i, *consts, *st, *[gather(x, [j], _ROW) for x in xs])[:n_carry])
        return ctl.fori_loop(a, b, one_step, list(state), names=[v.name for v in b_carry])

    def youturn(state, cts, accs, x_bars, a):
        j, i = position(a)
        sub = a.builder  # the branch's: zeros for the cotangents nobody gives (int carries, unread ys)
        ct_in = [cts[float_carry.index(k)] if k in float_carry else zeros_of(sub, v.type)
                 for k, v in enumerate(b_carry)]
        y_in = [gather(c, [j], _ROW) if c is not None else zeros_of(sub, t) for c, t in zip(ct_ys, y_types)]
        grads = inline(adj, i, *consts, *state, *[gather(x, [j], _ROW) for x in xs], *ct_in, *y_in)
        n_c, n_f = len(need_consts), len(float_carry)
        accs = [ew.add(acc, g) for acc, g in zip(accs, grads[:n_c])]
        x_bars = [index_update(xb, g, [j], _ROW) for xb, g in zip(x_bars, grads[n_c + n_f:])]
        return list(grads[n_c:n_c + n_f]), accs, x_bars

    n_s, n_f, n_a = n_carry, len(float_carry), len(need_consts)

    def split(c):
        state, snaps = c[:n_s], c[n_s:2 * n_s]
        cts, accs, x_bars = c[2 * n_s:2 * n_s + n_f], c[2 * n_s + n_f:2 * n_s + n_f + n_a], c[2 * n_s + n_f + n_a:]
        return list(state), list(snaps), list(cts), list(accs), list(x_bars)

    def row_step(c, row):
        action, a, b = row
        is_advance, is_takeshot, is_restore = (ew.equal(action, np.int64(k)) for k in (ADVANCE, TAKESHOT, RESTORE))
        for value, name in ((is_advance, "is_advance"), (is_takeshot, "is_takeshot"), (is_restore, "is_restore")):
            value.builder.rename(value.atom, name)

        def on_advance(c, a, b):
            return advance(c[:n_s], a, b) + c[n_s:]

        def on_takeshot(c, a, b):
            state, snaps = c[:n_s], c[n_s:2 * n_s]
            return state + [index_update(sn, v, [b], _ROW) for sn, v in zip(snaps, state)] + c[2 * n_s:]

        def on_restore(c, a, b):
            return [gather(sn, [b], _ROW) for sn in c[n_s:2 * n_s]] + c[n_s:]

        def on_youturn(c, a, b):
            state, snaps, cts, accs, x_bars = split(c)
            return state + snaps + [v for part in youturn(state, cts, accs, x_bars, a) for v in part]

        def restore_or_youturn(c, a, b):
            return ctl.cond(is_restore, on_restore, on_youturn, c, a, b, names=names)

        def takeshot_or_later(c, a, b):
            return ctl.cond(is_takeshot, on_takeshot, restore_or_youturn, c, a, b, names=names)
        return ctl.cond(is_advance, on_advance, takeshot_or_later, c, a, b, names=names), ()

    # the carry of the schedule loop: the state, its snapshots (every carried value, ints too: recomputing needs
    # the whole state), the cotangents of the float ones, the sums for loop invariants, the per-step inputs' rows
    snap_init = [zeros_of(builder, TensorType((snapshots,) + tuple(v.type.shape), v.type.dtype)) for v in b_carry]
    ct_init = [ct[k] if ct[k] is not None else ew.zeros_like(carry[k]) for k in float_carry]
    names = ([v.name for v in b_carry] + [f"{v.name}_snapshots" for v in b_carry]
             + [f"{b_carry[k].name}_bar" for k in float_carry]
             + [f"{_outer_name(consts[k], b_consts[k])}_bar_acc" for k in need_consts]
             + [f"{b_xs[k].name}_bar" for k in need_xs] + [None, None])
    init = (list(carry) + snap_init + ct_init + [ew.zeros_like(consts[k]) for k in need_consts]
            + [ew.zeros_like(xs[k]) for k in need_xs])
    table = schedule_table(trips, snapshots)
    results, _ = ctl.scan(row_step, init, tuple(table[:, k].copy() for k in range(3)), names=names)
    _mark_schedule(builder, results[0], trips, snapshots)
    state, snaps, cts, accs, x_bars = split([Traced(builder, r.atom) for r in results])
    const_bars = dict(zip(need_consts, accs))
    carry_bars = dict(zip(float_carry, cts))
    xs_bars = dict(zip(need_xs, x_bars))
    return tuple([const_bars.get(k) for k in range(n_consts)]
                 + [carry_bars.get(k) if needs[n_consts + k] else None for k in range(n_carry)]
                 + [xs_bars.get(k) for k in range(len(xs))])


def _outer_name(value, inner) -> str:
    """The name a loop-invariant input has outside the loop (``a``, not the body's ``a_1``)."""
    atom = getattr(value, "atom", None)
    return atom.name if isinstance(atom, Var) else inner.name


def _mark_schedule(builder, first_result, trips: int, snapshots: int) -> None:
    """Mark the schedule loop (``revolve=(T, s)``) and name its row inputs: the emitter writes the schedule's
    generator instead of the table, and ``gradc show`` reports its memory."""
    element = next(e for e in reversed(builder.eqns) if e.out is first_result.atom)
    loop = next(e for e in reversed(builder.eqns) if e.out is element.inputs[0])
    loop.params["revolve"] = (trips, snapshots)
    body = loop.params["body"]
    for var, name in zip(body.inputs[-3:], ("action", "step", "target")):
        builder.rename(var, name)
    body.params = [v.name for v in body.inputs]


def binomial_report(graph) -> list:
    """One line per binomial schedule loop of ``graph`` (at any depth): its snapshots' memory and recomputation.

    >>> from gradc.ir.graph import Graph
    >>> binomial_report(Graph("f", [], [], []))
    []
    """
    from gradc.ir.graph import subgraphs
    lines: list = []
    stack, seen = [graph], set()
    while stack:
        g = stack.pop()
        if id(g) in seen:  # a helper's body, called from many places
            continue
        seen.add(id(g))
        for eqn in g.eqns:
            stack.extend(subgraphs(eqn))
            if eqn.op != "scan" or "revolve" not in eqn.params:
                continue
            trips, s = eqn.params["revolve"]
            p = eqn.params
            carried = p["body"].inputs[1 + p["n_consts"]:1 + p["n_consts"] + p["n_carry"]]
            snaps = [v for v in carried if v.name.endswith("_snapshots")]
            state = sum(_bytes(v.type) for v in snaps) // max(s, 1)
            lines.append(f"{eqn.out.name}: binomial checkpointing (Revolve) of {trips} steps with {s} snapshots: "
                         f"{s} x {state} = {s * state} bytes of stored states (plus the current state and one "
                         f"step's intermediates); {forward_steps(trips, s)} forward steps recomputed "
                         f"(taping every step: {trips} x {state} = {trips * state} bytes)")
    return lines


def _bytes(t) -> int:
    return int(np.prod(t.shape, dtype=np.int64)) * t.np_dtype.itemsize
