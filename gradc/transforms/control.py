"""Derivative rules of the control-flow ops (``gradc.ops.control``): they transform the ops' sub-graphs.

Reverse mode of a loop (``scan`` or ``while_loop``), the adjoint-only tape:

1. The body's VJP graph is built and pruned to what computes the cotangents. The
   carried values it still reads are exactly what the loop overwrites and the adjoint
   needs; values computed from loop-invariant inputs are recomputed, never taped.
2. The forward loop is re-issued with those carried values as per-iteration outputs
   (the tape: ``(trips, *shape)`` per value; a ``while`` loop's tape is a stack of
   as many entries as trips, and its trip count is recorded). ``gradc.passes``
   merges it with the primal loop, so the forward sweep runs once.
3. The adjoint is a ``scan`` running the other way: it reads the tape at each
   iteration, carries the carried values' cotangents and sums the loop-invariant
   inputs' cotangents, and writes the per-iteration inputs' cotangents.

A branch's adjoint is a ``cond`` on the same predicate whose branches are the
branches' VJP graphs (each recomputes its own forward values: no tape).

Forward mode carries tangents beside the values through the same loop or branch.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.trace.control import fori_loop
>>> from gradc.transforms.reverse import grad_graph
>>> from gradc.ir.interpret import evaluate
>>> g = grad_graph(trace(lambda x: fori_loop(0, 3, lambda i, v: v * x, 1.0), 2.0), ["x"])
>>> float(evaluate(g, 2.0)[0])  # d/dx x**3 = 3 x**2
12.0
"""
from __future__ import annotations

import numpy as np

from gradc.ir.builder import Builder, Traced
from gradc.ir.graph import Graph, Var, without_dead_code
from gradc.ir.registry import OPS
from gradc.ir.types import StackType, TensorType, TupleType
from gradc.ops import elementwise as ew
from gradc.ops.checks import has_effects, masked
from gradc.ops.control import SUBGRAPH_RULES, scan_parts, while_parts
from gradc.transforms.batching import batched_outputs, vmap_graph
from gradc.transforms.binomial import binomial_scan_vjp, uses_binomial
from gradc.transforms.inlining import body_vjp, inline, zeros_of  # noqa: F401 (shared with transforms.binomial)

I64 = TensorType((), "i64")


# ---------------------------------------------------------------- helpers
def call(builder: Builder, op: str, inputs, params) -> list:
    """Record ``op`` (a tuple-valued op) in ``builder``; its results as Traced values, one per item."""
    atoms = [a.atom if isinstance(a, Traced) else a for a in inputs]
    for a in inputs:
        if isinstance(a, Traced) and a.builder is not builder:
            raise AssertionError("internal: a control rule mixed builders")
    out_type = OPS[op].infer([a.type for a in atoms], params)
    assert isinstance(out_type, TupleType)
    var = builder.add(op, atoms, params, out_type)
    return [Traced(builder, builder.add("element", (var,), {"index": k}, t)) for k, t in enumerate(out_type.items)]


prune = without_dead_code  # the transforms sit below the passes: the IR's own dead-code sweep


def zeros(t) -> np.ndarray:
    return np.zeros(t.shape, t.np_dtype)


def _arg(sub: Builder, var, t):
    """An input of an inlined graph: ``var`` of ``sub``, or zeros where the graph does not read it."""
    return Traced(sub, var) if var is not None else zeros_of(sub, t)


def _atom(sub: Builder, value, t):
    """A result of an inlined graph as an atom of ``sub`` (captured if it came from outside)."""
    if isinstance(value, Traced):
        if value.builder is not sub:
            return sub.capture(value.builder, value.atom)
        return value.atom
    from gradc.ir.atoms import Const
    return Const(np.asarray(value, dtype=t.np_dtype).reshape(t.shape))


class _Adjoint:
    """The adjoint loop body, built in a builder nested in ``builder``: named inputs, then the VJP graph inlined."""

    def __init__(self, builder: Builder, name: str):
        self.sub = Builder(parent=builder)
        self.name = name
        self.inputs: list = []

    def input(self, name: str, t) -> Var:
        var = self.sub.input(self.sub.fresh_name(name), t)
        self.inputs.append(var)
        return var


# ---------------------------------------------------------------- loops (scan and while_loop share the adjoint)
def _loop_adjoint(builder, body, lead, b_consts, b_carry, b_xs, const_need, x_need, ct_carry, ct_ys,
                  carry_init, consts, xs):
    """The reverse sweep of a loop body: ``(tape body, backward scan inputs builder)``; see the module docstring.

    ``lead`` is the body's counter input (a scan's ``i``) or None (a while loop's body has none).
    Returns ``(taped carry positions, make_backward(tapes) -> (scan inputs, params, unpack))``.
    """
    carry_float = [v.type.is_inexact for v in b_carry]
    wrt = ([v for v, n in zip(b_consts, const_need) if n] + [v for v, f in zip(b_carry, carry_float) if f]
           + [v for v, n in zip(b_xs, x_need) if n])
    adj, _ = body_vjp(body, wrt)
    residuals = _costly_residuals(body, adj, [lead] if lead is not None else [], b_carry, b_xs)
    residuals += _slot_reads(body, adj, residuals, b_carry)
    used = _reads_given(adj, residuals)
    taped = [k for k, v in enumerate(b_carry) if id(v) in used]
    read_consts = [k for k, v in enumerate(b_consts) if id(v) in used]
    read_xs = [k for k, v in enumerate(b_xs) if id(v) in used]
    float_carry = [k for k, f in enumerate(carry_float) if f]
    need_consts = [k for k, n in enumerate(const_need) if n]
    need_xs = [k for k, n in enumerate(x_need) if n]
    n_carry = len(b_carry)
    y_types = [o.type for o in body.outputs[n_carry:]]
    y_cts = [k for k, c in enumerate(ct_ys) if c is not None]

    def backward(tapes):
        a = _Adjoint(builder, f"{body.name}_adjoint")
        i_var = a.input("i", I64)
        const_vars = [a.input(_outer_name(consts[k], b_consts[k]), b_consts[k].type) for k in read_consts]
        ct_vars = [a.input(f"{b_carry[k].name}_bar", b_carry[k].type) for k in float_carry]
        acc_vars = [a.input(f"{_outer_name(consts[k], b_consts[k])}_bar_acc", b_consts[k].type)
                    for k in need_consts]
        tape_vars = [a.input(b_carry[k].name, b_carry[k].type) for k in taped]
        tape_vars += [a.input(r.name, r.type) for r in residuals]
        x_vars = [a.input(b_xs[k].name, b_xs[k].type) for k in read_xs]
        yct_vars = [a.input("y_bar", y_types[k]) for k in y_cts]
        sub = a.sub

        def pick(positions, variables, k, t):
            return _arg(sub, variables[positions.index(k)] if k in positions else None, t)
        args = [Traced(sub, i_var)] if lead is not None else []
        args += [pick(read_consts, const_vars, k, v.type) for k, v in enumerate(b_consts)]
        args += [pick(taped, tape_vars, k, v.type) for k, v in enumerate(b_carry)]
        args += [pick(read_xs, x_vars, k, v.type) for k, v in enumerate(b_xs)]
        args += [pick(float_carry, ct_vars, k, v.type) for k, v in enumerate(b_carry)]
        args += [pick(y_cts, yct_vars, k, t) for k, t in enumerate(y_types)]
        given = {id(r): Traced(sub, v) for r, v in zip(residuals, tape_vars[len(taped):])}
        grads = inline(_needed(adj, residuals), *args, given=given)
        n_c, n_f = len(need_consts), len(float_carry)
        g_consts, g_carry, g_xs = grads[:n_c], grads[n_c:n_c + n_f], grads[n_c + n_f:]
        outs = [_atom(sub, g, v.type) for g, v in zip(g_carry, ct_vars)]
        outs += [_atom(sub, ew.add(Traced(sub, acc), g), acc.type) for acc, g in zip(acc_vars, g_consts)]
        outs += [_atom(sub, g, b_xs[k].type) for g, k in zip(g_xs, need_xs)]
        graph = Graph(a.name, [i_var] + const_vars + ct_vars + acc_vars + tape_vars + x_vars + yct_vars,
                      list(sub.eqns), outs)
        carry_in = [ct_carry[k] if ct_carry[k] is not None else ew.zeros_like(carry_init[k]) for k in float_carry]
        carry_in += [ew.zeros_like(consts[k]) for k in need_consts]
        xs_in = list(tapes) + [xs[k] for k in read_xs] + [ct_ys[k] for k in y_cts]
        inputs = [consts[k] for k in read_consts] + carry_in + xs_in
        params = dict(body=graph, n_consts=len(const_vars), n_carry=len(ct_vars) + len(acc_vars), adjoint=True)

        def unpack(results):
            """(cotangents of the carried inputs, of the loop-invariant inputs, of the per-iteration inputs)."""
            carry_bars = dict(zip(float_carry, results[:n_f]))
            const_bars = dict(zip(need_consts, results[n_f:n_f + n_c]))
            x_bars = dict(zip(need_xs, results[n_f + n_c:]))
            return ([carry_bars.get(k) for k in range(n_carry)], [const_bars.get(k) for k in range(len(b_consts))],
                    [x_bars.get(k) for k in range(len(b_xs))])
        return inputs, params, unpack
    return [b_carry[k] for k in taped] + residuals, backward


# ops whose results the adjoint reads from the tape rather than recomputing them: a product, a solve, a
# factorisation, a helper's call (its split forward's residuals) costs more than its result's size (recomputing
# it would cost about another forward sweep).
# An elementwise function (``x ** 3``, ``sin``, ``tanh`` of the state) is recomputed from the taped state:
# the tape stays T x the carried state, as a hand-written adjoint keeps it
_COSTLY = frozenset({"call", "matmul", "outer", "tri_matmul", "solve", "triangular_solve", "cholesky", "cholesky_grad",
                     "conv2d", "convolve", "eigh", "eigvalsh", "svd", "svdvals", "qr", "expm", "logabsdet",
                     "det_sign"})


def _costly_residuals(body: Graph, adj: Graph, lead, b_carry, b_xs) -> list:
    """The body's values the adjoint reads that change per iteration and cost a costly op to recompute."""
    primal = {id(e) for e in body.eqns}
    variant = {id(v) for v in list(lead) + list(b_carry) + list(b_xs)}
    costly: set = set()
    for e in body.eqns:
        if any(id(a) in variant for a in e.inputs):
            variant.add(id(e.out))
            if e.op in _COSTLY or any(id(a) in costly for a in e.inputs):
                costly.add(id(e.out))
    read_by_adjoint = {id(a) for e in adj.eqns if id(e) not in primal for a in e.inputs}
    read_by_adjoint |= {id(o) for o in adj.outputs}
    return [e.out for e in adj.eqns if id(e) in primal and id(e.out) in read_by_adjoint and id(e.out) in costly
            and e.out.type.shape is not None]


_SLOT_READS = frozenset({"index", "gather"})


def _slot_reads(body: Graph, adj: Graph, given: list, b_carry) -> list:
    """The body's reads of parts of a carried array (``out[i - 1]``, ``X[:, j]``) that the adjoint needs, for each
    carried array the adjoint reads only so: those parts are taped (a number or a row per iteration), not the
    whole array (which would make the tape trips x the array: quadratic for a loop filling it). The array as
    the body updated it (``out[j] = a`` then ``out[i] *= b``) counts too: the reads of its slots are taped."""
    primal = {id(e) for e in body.eqns}
    live = _reads_given(adj, given)
    cut = {id(g) for g in given}
    readers: dict = {}  # id(value) -> the live adjoint equations reading it
    for e in adj.eqns:
        if id(e.out) in live and id(e.out) not in cut:
            for a in _read_inputs(e):
                readers.setdefault(id(a), []).append(e)
    outputs = {id(o) for o in adj.outputs}

    def parts(value, seen) -> list | None:
        """The slot reads to tape instead of ``value`` (and of the arrays updated from it), or None."""
        if id(value) in outputs or id(value) in seen:
            return None
        seen.add(id(value))
        found = []
        for e in readers.get(id(value), []):
            if id(e) not in primal or any(a is value for a in e.inputs[1:]) or e.inputs[0] is not value:
                return None
            if e.op in _SLOT_READS and _smaller(e.out.type.shape, value.type.shape):
                deeper = parts(e.out, seen)  # a row read only at its entries: the entries
                found += deeper if deeper else [e.out]
            elif e.op in ("index_update", "index_add"):
                more = parts(e.out, seen)
                if more is None:
                    return None
                found += more
            else:
                return None
        return found

    taped = []
    for v in b_carry:
        if id(v) not in live or v.type.shape in ((), None):
            continue
        found = parts(v, set())
        if found:
            taped += [o for o in found if all(o is not t for t in taped)]
    return taped


def _smaller(part, whole) -> bool:
    """Whether a part of shape ``part`` has fewer entries than ``whole`` (fewer axes, or known smaller sizes)."""
    if part is None or whole is None:
        return False
    if len(part) < len(whole):
        return True
    if all(isinstance(d, int) for d in (*part, *whole)):
        return int(np.prod(part, dtype=np.int64)) < int(np.prod(whole, dtype=np.int64))
    return False


def _needed(graph: Graph, given: list) -> Graph:
    """``graph`` without the equations whose results only the ``given`` values read (a helper's forward whose
    residuals the tape supplies)."""
    cut = {id(v) for v in given}
    live = {id(o) for o in graph.outputs}
    kept = []
    for e in reversed(graph.eqns):
        if id(e.out) in live and id(e.out) not in cut:
            live.update(id(a) for a in e.inputs)  # every operand: the inlined equation binds them all
            kept.append(e)
    kept.reverse()
    return graph.replace(eqns=kept)


def _reads_given(graph: Graph, given: list) -> set:
    """Ids of the values ``graph`` reads to compute its outputs when the values in ``given`` are supplied."""
    cut = {id(v) for v in given}
    live = {id(o) for o in graph.outputs}
    for e in reversed(graph.eqns):
        if id(e.out) in live and id(e.out) not in cut:
            live.update(id(a) for a in _read_inputs(e))
    return live


def _read_inputs(e) -> list:
    """The operands ``e`` reads: a branch's operands that no branch reads (a VJP branch is given every forward
    operand) are not read."""
    if e.op != "cond":
        return list(e.inputs)
    branches = e.params["branches"]
    reads = [{id(a) for q in b.eqns for a in q.inputs} | {id(o) for o in b.outputs} for b in branches]
    return [e.inputs[0]] + [a for j, a in enumerate(e.inputs[1:])
                            if any(id(b.inputs[j]) in r for b, r in zip(branches, reads))]


def _outer_name(value, inner: Var) -> str:
    """The name a loop-invariant input has outside the loop (``a``, not the body's ``a_1``)."""
    atom = getattr(value, "atom", None)
    return atom.name if isinstance(atom, Var) else inner.name


def scan_vjp(ct, out, *inputs, needs, body, n_consts, n_carry, length, **params):
    builder = out.builder
    params = dict(params, body=body, n_consts=n_consts, n_carry=n_carry, length=length)
    if uses_binomial(params):  # checkpoint=binomial(s): the reverse sweep follows the Revolve schedule
        return binomial_scan_vjp(ct, out, inputs, needs, params)
    length_in, consts, carry, xs = scan_parts(inputs, params)
    off = 1 if length is None else 0
    b_consts = body.inputs[1:1 + n_consts]
    b_carry = body.inputs[1 + n_consts:1 + n_consts + n_carry]
    b_xs = body.inputs[1 + n_consts + n_carry:]
    const_need = [needs[off + k] and v.type.is_inexact for k, v in enumerate(b_consts)]
    x_need = [needs[off + n_consts + n_carry + k] and v.type.is_inexact for k, v in enumerate(b_xs)]
    taped, backward = _loop_adjoint(builder, body, body.inputs[0], b_consts, b_carry, b_xs, const_need, x_need,
                                    list(ct[:n_carry]), list(ct[n_carry:]), carry, consts, xs)
    tape_body = body.replace(outputs=list(body.outputs) + taped)
    fwd = call(builder, "scan", list(inputs), dict(params, body=tape_body))
    tapes = fwd[len(body.outputs):]
    _name_tapes(builder, tapes, taped)
    bwd_inputs, bwd_params, unpack = backward(tapes)
    bwd_params.update(length=length, reverse=not params.get("reverse", False), start=params.get("start", 0),
                      step=params.get("step", 1))
    results = call(builder, "scan", ([length_in] if length is None else []) + bwd_inputs, bwd_params)
    carry_bars, const_bars, x_bars = unpack(results)
    return tuple(([None] if length is None else []) + const_bars
                 + [c if needs[off + n_consts + k] else None for k, c in enumerate(carry_bars)] + x_bars)


def while_vjp(ct, out, *inputs, needs, cond, body, n_cond_consts, n_body_consts, **params):
    builder = out.builder
    params = dict(params, cond=cond, body=body, n_cond_consts=n_cond_consts, n_body_consts=n_body_consts)
    cond_consts, body_consts, carry = while_parts(inputs, params)
    n_carry = len(carry)
    b_consts, b_carry = body.inputs[:n_body_consts], body.inputs[n_body_consts:]
    const_need = [needs[n_cond_consts + k] and v.type.is_inexact for k, v in enumerate(b_consts)]
    ct_ys = list(ct[n_carry + 1:])
    taped, backward = _loop_adjoint(builder, body, None, b_consts, b_carry, [], const_need, [],
                                    list(ct[:n_carry]), ct_ys, carry, body_consts, [])
    tape_body = body.replace(outputs=list(body.outputs) + taped)
    fwd = call(builder, "while_loop", list(inputs), dict(params, body=tape_body))
    trips, tapes = fwd[n_carry], fwd[n_carry + 1 + len(ct_ys):]
    _name_tapes(builder, tapes, taped)
    builder.rename(trips.atom, "trips")
    bwd_inputs, bwd_params, unpack = backward(tapes)
    bwd_params.update(length=None, reverse=True, start=0, step=1)
    results = call(builder, "scan", [trips] + bwd_inputs, bwd_params)
    carry_bars, const_bars, _ = unpack(results)
    return tuple([None] * n_cond_consts + const_bars
                 + [c if needs[n_cond_consts + n_body_consts + k] else None for k, c in enumerate(carry_bars)])


def _name_tapes(builder, tapes, carried):
    """``x_tape``: the stack of the values ``x`` took, one row per iteration."""
    for tape, var in zip(tapes, carried):
        builder.rename(tape.atom, f"{var.name}_tape")


# ---------------------------------------------------------------- cond
def cond_vjp(ct, out, pred, *operands, needs, branches, **params):
    builder = out.builder
    g0 = branches[0]
    need = [n and v.type.is_inexact for n, v in zip(needs[1:], g0.inputs)]
    if not any(need):
        return (None,) * (1 + len(operands))
    cts = [c if c is not None else zeros_of(builder, t) for c, t in zip(ct, out.atom.type.items)]
    adjoint = []
    for g in branches:
        wrt = [v for v, n in zip(g.inputs, need) if n]
        adj, _ = body_vjp(g, wrt)
        adjoint.append(adj.replace(name=f"{g.name}_adjoint"))
    results = call(builder, "cond", [pred] + list(operands) + cts, dict(branches=tuple(adjoint), adjoint=True))
    bars = iter(results)
    return (None,) + tuple(next(bars) if n else None for n in need)


def element_vjp(*args, **kwargs):
    raise AssertionError("internal: reverse mode handles element equations itself")


SUBGRAPH_RULES.update({("scan", "vjp"): scan_vjp, ("while_loop", "vjp"): while_vjp, ("cond", "vjp"): cond_vjp,
                       ("element", "vjp"): element_vjp})


# ---------------------------------------------------------------- forward mode: tangents carried beside the values
def _inline(builder: Builder, graph: Graph, name: str, input_vars_types, wire, out_pick):
    """A new sub-graph whose inputs are ``input_vars_types`` (name, type) and whose body is ``graph`` inlined,
    called as ``graph(*wire(inputs))``, returning ``out_pick(graph outputs)``."""
    sub = Builder(parent=builder)
    inputs = [sub.input(sub.fresh_name(n), t) for n, t in input_vars_types]
    args = wire([Traced(sub, v) for v in inputs])
    results = inline(graph, *args)
    outs = out_pick(results)
    return Graph(name, inputs, list(sub.eqns), [_atom(sub, r, t) for r, t in outs])


def _loop_outputs_with_tangents(body: Graph, b_carry, kf, ky):
    """How a loop's JVP body orders its results: carried values, their tangents (float ones, ``kf``),
    per-iteration outputs, their tangents (``ky``); ``pick(JVP graph results)`` as (value, type) pairs."""
    nc, n_y = len(b_carry), len(body.outputs) - len(b_carry)

    def pick(r):
        outs, dots = r[:len(body.outputs)], r[len(body.outputs):]
        return ([(outs[k], b_carry[k].type) for k in range(nc)] + [(dots[k], b_carry[k].type) for k in kf]
                + [(outs[nc + k], body.outputs[nc + k].type) for k in range(n_y)]
                + [(dots[nc + k], body.outputs[nc + k].type) for k in ky])
    return pick


def _jvp_of(graph: Graph, wrt_vars):
    from gradc.transforms.forward import jvp_graph
    return jvp_graph(graph, [v.name for v in wrt_vars], name=f"{graph.name}_jvp")


def _tangent_in(builder, t, tangent):
    return tangent if tangent is not None else zeros_of(builder, t)


def scan_jvp(tangents, out, *inputs, body, n_consts, n_carry, length, **params):
    builder = out.builder
    params = dict(params, body=body, n_consts=n_consts, n_carry=n_carry, length=length)
    length_in, consts, carry, xs = scan_parts(inputs, params)
    off = 1 if length is None else 0
    t_consts = tangents[off:off + n_consts]
    t_carry = tangents[off + n_consts:off + n_consts + n_carry]
    t_xs = tangents[off + n_consts + n_carry:]
    b_i, b_consts = body.inputs[0], body.inputs[1:1 + n_consts]
    b_carry, b_xs = body.inputs[1 + n_consts:1 + n_consts + n_carry], body.inputs[1 + n_consts + n_carry:]
    kc = [k for k, (v, t) in enumerate(zip(b_consts, t_consts)) if t is not None and v.type.is_inexact]
    kf = [k for k, v in enumerate(b_carry) if v.type.is_inexact]
    kx = [k for k, (v, t) in enumerate(zip(b_xs, t_xs)) if t is not None and v.type.is_inexact]
    jb = _jvp_of(body, [b_consts[k] for k in kc] + [b_carry[k] for k in kf] + [b_xs[k] for k in kx])
    n_y = len(body.outputs) - n_carry
    ky = [k for k in range(n_y) if body.outputs[n_carry + k].type.is_inexact]
    spec = ([(b_i.name, b_i.type)] + [(v.name, v.type) for v in b_consts]
            + [(f"{b_consts[k].name}_dot", b_consts[k].type) for k in kc]
            + [(v.name, v.type) for v in b_carry] + [(f"{b_carry[k].name}_dot", b_carry[k].type) for k in kf]
            + [(v.name, v.type) for v in b_xs] + [(f"{b_xs[k].name}_dot", b_xs[k].type) for k in kx])
    nk, nc = len(b_consts), len(b_carry)

    def wire(v):
        i, rest = v[0], v[1:]
        cs, rest = rest[:nk], rest[nk:]
        cds, rest = rest[:len(kc)], rest[len(kc):]
        cr, rest = rest[:nc], rest[nc:]
        crd, rest = rest[:len(kf)], rest[len(kf):]
        x, xd = rest[:len(b_xs)], rest[len(b_xs):]
        return [i] + cs + cr + x + cds + crd + xd

    pick = _loop_outputs_with_tangents(body, b_carry, kf, ky)
    new_body = _inline(builder, jb, f"{body.name}_jvp", spec, wire, pick)
    new_inputs = ([length_in] if length is None else []) + consts + [t_consts[k] for k in kc] + carry
    new_inputs += [_tangent_in(builder, b_carry[k].type, t_carry[k]) for k in kf] + xs + [t_xs[k] for k in kx]
    results = call(builder, "scan", new_inputs, dict(params, body=new_body, n_consts=nk + len(kc),
                                                       n_carry=nc + len(kf)))
    carry_dots = dict(zip(kf, results[nc:nc + len(kf)]))
    y_dots = dict(zip(ky, results[nc + len(kf) + n_y:]))
    return [carry_dots.get(k) for k in range(nc)] + [y_dots.get(k) for k in range(n_y)]


def while_jvp(tangents, out, *inputs, cond, body, n_cond_consts, n_body_consts, **params):
    builder = out.builder
    params = dict(params, cond=cond, body=body, n_cond_consts=n_cond_consts, n_body_consts=n_body_consts)
    cond_consts, body_consts, carry = while_parts(inputs, params)
    t_consts = tangents[n_cond_consts:n_cond_consts + n_body_consts]
    t_carry = tangents[n_cond_consts + n_body_consts:]
    b_consts, b_carry = body.inputs[:n_body_consts], body.inputs[n_body_consts:]
    kc = [k for k, (v, t) in enumerate(zip(b_consts, t_consts)) if t is not None and v.type.is_inexact]
    kf = [k for k, v in enumerate(b_carry) if v.type.is_inexact]
    nk, nc = len(b_consts), len(b_carry)
    n_y = len(body.outputs) - nc
    ky = [k for k in range(n_y) if body.outputs[nc + k].type.is_inexact]
    jb = _jvp_of(body, [b_consts[k] for k in kc] + [b_carry[k] for k in kf])
    spec = ([(v.name, v.type) for v in b_consts] + [(f"{b_consts[k].name}_dot", b_consts[k].type) for k in kc]
            + [(v.name, v.type) for v in b_carry] + [(f"{b_carry[k].name}_dot", b_carry[k].type) for k in kf])

    def wire(v):
        cs, cds, cr, crd = v[:nk], v[nk:nk + len(kc)], v[nk + len(kc):nk + len(kc) + nc], v[nk + len(kc) + nc:]
        return cs + cr + cds + crd

    pick = _loop_outputs_with_tangents(body, b_carry, kf, ky)
    new_body = _inline(builder, jb, f"{body.name}_jvp", spec, wire, pick)
    extra = [Var(f"{b_carry[k].name}_dot", b_carry[k].type) for k in kf]  # the condition ignores the tangents
    new_cond = cond.replace(inputs=list(cond.inputs) + extra, params=[v.name for v in cond.inputs] +
                            [v.name for v in extra])
    new_inputs = cond_consts + body_consts + [t_consts[k] for k in kc] + carry
    new_inputs += [_tangent_in(builder, b_carry[k].type, t_carry[k]) for k in kf]
    results = call(builder, "while_loop", new_inputs, dict(params, cond=new_cond, body=new_body,
                                                             n_body_consts=nk + len(kc)))
    carry_dots = dict(zip(kf, results[nc:nc + len(kf)]))
    y_dots = dict(zip(ky, results[nc + len(kf) + 1 + n_y:]))
    return [carry_dots.get(k) for k in range(nc)] + [None] + [y_dots.get(k) for k in range(n_y)]


def cond_jvp(tangents, out, pred, *operands, branches, **params):
    builder = out.builder
    t_ops = tangents[1:]
    g0 = branches[0]
    ko = [k for k, (v, t) in enumerate(zip(g0.inputs, t_ops)) if t is not None and v.type.is_inexact]
    if not ko:
        return None
    n_out = len(g0.outputs)
    kd = [k for k in range(n_out) if g0.outputs[k].type.is_inexact]
    new = []
    for g in branches:
        jb = _jvp_of(g, [g.inputs[k] for k in ko])
        spec = [(v.name, v.type) for v in g.inputs] + [(f"{g.inputs[k].name}_dot", g.inputs[k].type) for k in ko]
        new.append(_inline(builder, jb, f"{g.name}_jvp", spec, lambda v: v,
                           lambda r, g=g: [(r[k], g.outputs[k].type) for k in range(n_out)]
                           + [(r[n_out + k], g.outputs[k].type) for k in kd]))
    results = call(builder, "cond", [pred] + list(operands) + [t_ops[k] for k in ko],
                   dict(params, branches=tuple(new)))
    dots = dict(zip(kd, results[n_out:]))
    return [dots.get(k) for k in range(n_out)]


def element_jvp(tangents, out, tup, index):
    items = tangents[0]
    return None if items is None else items[index]


SUBGRAPH_RULES.update({("scan", "jvp"): scan_jvp, ("while_loop", "jvp"): while_jvp, ("cond", "jvp"): cond_jvp,
                       ("element", "jvp"): element_jvp})


# ---------------------------------------------------------------- batching: the loop runs once for the whole batch
def _batch_n(values, batched) -> int:
    """The batch size: the leading axis of a batched array, or of a batched stack's entries."""
    for v, b in zip(values, batched):
        if b:
            t = v.aval
            return (t.item if isinstance(t, StackType) else t).shape[0]
    raise AssertionError("internal: no batched input")


def _batch_body(graph: Graph, flags, n, out_flags=None):
    """``graph`` batched over the inputs in ``flags``; its outputs batched where they depend on them (or as
    ``out_flags`` says). Returns ``(batched graph, output flags)``."""
    if out_flags is None:
        out_flags = batched_outputs(graph, flags)
    return vmap_graph(graph, [0 if f else None for f in flags], n, name=graph.name, out_batched=out_flags), out_flags


def _carry_flags(body: Graph, lead_flags, const_flags, carry_flags, x_flags, n_carry):
    """Which carried values get the batch axis: the batched ones and all that come to depend on the batch."""
    flags = list(carry_flags)
    while True:
        outs = batched_outputs(body, list(lead_flags) + list(const_flags) + flags + list(x_flags))
        new = [a or b for a, b in zip(flags, outs[:n_carry])]
        if new == flags:
            return flags, outs[n_carry:]
        flags = new


def _batched(x, flag, n):
    from gradc.ops.values import with_batch
    return with_batch(x, flag, n)


def _move_batch(x, source: int, dest: int):
    from gradc.ops import shape as sh
    axes = list(range(x.aval.ndim))
    axes.insert(dest, axes.pop(source))
    return sh.transpose(x, tuple(axes))


def scan_batch(*inputs, batched, body, n_consts, n_carry, length, **params):
    params = dict(params, body=body, n_consts=n_consts, n_carry=n_carry, length=length)
    n = _batch_n(inputs, batched)
    off = 1 if length is None else 0
    if off and batched[0]:
        return _masked_scan(inputs, batched, n, params)
    fk, fc, fx = batched[off:off + n_consts], batched[off + n_consts:off + n_consts + n_carry], \
        batched[off + n_consts + n_carry:]
    length_in, consts, carry, xs = scan_parts(inputs, params)
    carry_flags, y_flags = _carry_flags(body, [False], fk, fc, fx, n_carry)
    new_body, _ = _batch_body(body, [False] + list(fk) + carry_flags + list(fx), n)
    carry = [_batched(c, False, n) if f and not b else c for c, f, b in zip(carry, carry_flags, fc)]
    # iterate over the loop axis, not the batch (a stack holds the batch inside each entry already)
    xs = [_move_batch(x, 0, 1) if f and not isinstance(x.aval, StackType) else x for x, f in zip(xs, fx)]
    results = call(consts[0].builder if consts else (carry + xs)[0].builder, "scan",
                   ([length_in] if length is None else []) + consts + carry + xs, dict(params, body=new_body))
    out = [(r, f) for r, f in zip(results[:n_carry], carry_flags)]
    for r, f in zip(results[n_carry:], y_flags):
        out.append((_move_batch(r, 1, 0) if f and not isinstance(r.aval, StackType) else r, f))
    return out


def while_batch(*inputs, batched, cond, body, n_cond_consts, n_body_consts, **params):
    params = dict(params, cond=cond, body=body, n_cond_consts=n_cond_consts, n_body_consts=n_body_consts)
    n = _batch_n(inputs, batched)
    cond_consts, body_consts, carry = while_parts(inputs, params)
    a, b = n_cond_consts, n_body_consts
    fa, fb, fc = batched[:a], batched[a:a + b], batched[a + b:]
    carry_flags, y_flags = _carry_flags(body, [], fb, fc, [], len(carry))
    if batched_outputs(cond, list(fa) + carry_flags)[0]:
        return _masked_while(inputs, batched, n, params)
    new_body, _ = _batch_body(body, list(fb) + carry_flags, n)
    new_cond, _ = _batch_body(cond, list(fa) + carry_flags, n)
    carry = [_batched(c, False, n) if f and not g else c for c, f, g in zip(carry, carry_flags, fc)]
    builder = next(x.builder for x in inputs if isinstance(x, Traced))
    results = call(builder, "while_loop", cond_consts + body_consts + carry,
                   dict(params, cond=new_cond, body=new_body))
    nc = len(carry)
    return ([(r, f) for r, f in zip(results[:nc], carry_flags)] + [(results[nc], False)]
            + [(r, f) for r, f in zip(results[nc + 1:], y_flags)])  # a batched stack: the batch inside each entry


def _masked_while(inputs, batched, n, params):
    """A while loop whose condition differs across the batch: it runs while any element's condition holds, and
    an element whose condition fails keeps its values (``np.where``). Every carried value gets the batch axis."""
    from gradc.ops import reduce as red
    cond, body = params["cond"], params["body"]
    cond_consts, body_consts, carry = while_parts(inputs, params)
    a, b = len(cond_consts), len(body_consts)
    builder = next(x.builder for x in inputs if isinstance(x, Traced))
    flags = [True] * len(carry)
    vcond, _ = _batch_body(cond, list(batched[:a]) + flags, n)
    checked = has_effects(body)  # a check raises only for the elements still running
    vbody, _ = _batch_body(masked(body) if checked else body, list(batched[a:a + b]) + flags + [True] * checked, n)
    carry = [_batched(c, f, n) for c, f in zip(carry, batched[a + b:])]
    cond_in = [x.aval for x in cond_consts] + [c.aval for c in carry]

    def any_true(v):
        return [(ew.greater(red.sum_(ew.astype(v[0], "i64")), np.int64(0)), TensorType((), "bool"))]
    new_cond = _inline(builder, vcond, cond.name, [(f"a{k}", t) for k, t in enumerate(cond_in)], lambda v: v,
                       any_true)
    body_in = ([x.aval for x in cond_consts] + [x.aval for x in body_consts] + [c.aval for c in carry])
    sub = Builder(parent=builder)
    vars_ = [sub.input(sub.fresh_name(f"a{k}"), t) for k, t in enumerate(body_in)]
    vals = [Traced(sub, v) for v in vars_]
    cc, bc, cr = vals[:a], vals[a:a + b], vals[a + b:]
    keep_going = inline(vcond, *cc, *cr)[0]
    count = Traced(sub, sub.input(sub.fresh_name("trips"), TensorType((n,), "i64")))
    new = inline(vbody, *bc, *cr, *[keep_going] * checked)
    nc = len(carry)
    outs = [_atom(sub, _select(keep_going, value, old), old.aval) for old, value in zip(cr, new[:nc])]
    outs.append(_atom(sub, ew.add(count, ew.astype(keep_going, "i64")), count.aval))
    outs += [_atom(sub, y, y.aval) for y in new[nc:]]  # tape rows past an element's own trips are never read
    new_body = Graph(body.name, vars_ + [count.atom], list(sub.eqns), outs)
    extra = Var("trips", TensorType((n,), "i64"))  # the condition ignores the per-element trip counts
    new_cond = new_cond.replace(inputs=list(new_cond.inputs) + [extra], params=[v.name for v in new_cond.inputs]
                                + [extra.name])
    zero_counts = zeros_of(builder, TensorType((n,), "i64"))
    results = call(builder, "while_loop", cond_consts + cond_consts + body_consts + carry + [zero_counts],
                   dict(params, cond=new_cond, body=new_body, n_body_consts=a + b))
    # each element's own trip count replaces the loop's (the adjoint loop runs each element for its own trips)
    return ([(r, True) for r in results[:nc]] + [(results[nc], True)]
            + [(r, True) for r in results[nc + 2:]])


def _select(mask, new, old):
    """``np.where(mask, new, old)`` with a per-batch-element ``mask`` (shape ``(n,)``) broadcast to the values."""
    from gradc.ops import shape as sh
    while mask.aval.ndim < old.aval.ndim:
        mask = sh.reshape(mask, mask.aval.shape + (1,))
    if mask.aval.shape != old.aval.shape:
        mask = sh.broadcast_to(mask, old.aval.shape)
    return ew.where(mask, new, old)


def _masked_scan(inputs, batched, n, params):
    """A counted loop whose trip count differs across the batch: it runs the largest count, and element ``e``
    changes its values only in its own first ``length[e]`` iterations (the adjoint of a batched while loop)."""
    from gradc.ops import reduce as red
    body, n_consts, n_carry = params["body"], params["n_consts"], params["n_carry"]
    length_in, consts, carry, xs = scan_parts(inputs, params)
    fk, fx = batched[1:1 + n_consts], batched[1 + n_consts + n_carry:]
    builder = length_in.builder
    longest = red.max_(length_in, None, False)
    checked = has_effects(body)  # a check raises only in an element's own iterations
    vbody, _ = _batch_body(masked(body) if checked else body, [False] + list(fk) + [True] * n_carry + list(fx)
                           + [True] * checked, n)
    carry = [_batched(c, f, n) for c, f in zip(carry, batched[1 + n_consts:1 + n_consts + n_carry])]
    xs = [_move_batch(x, 0, 1) if f and not isinstance(x.aval, StackType) else x for x, f in zip(xs, fx)]
    in_types = [I64, length_in.aval] + [x.aval for x in consts] + [c.aval for c in carry]
    in_types += [x.aval.item if isinstance(x.aval, StackType) else x.aval.with_shape(x.aval.shape[1:]) for x in xs]
    sub = Builder(parent=builder)
    vars_ = [sub.input(sub.fresh_name(f"a{k}"), t) for k, t in enumerate(in_types)]
    vals = [Traced(sub, v) for v in vars_]
    i, lengths, rest = vals[0], vals[1], vals[2:]
    cs, cr, xv = rest[:n_consts], rest[n_consts:n_consts + n_carry], rest[n_consts + n_carry:]
    active = ew.less(i, lengths)
    new = inline(vbody, i, *cs, *cr, *xv, *[active] * checked)
    outs = [_atom(sub, _select(active, value, old), old.aval) for old, value in zip(cr, new[:n_carry])]
    outs += [_atom(sub, y, y.aval) for y in new[n_carry:]]
    new_body = Graph(body.name, vars_, list(sub.eqns), outs)
    results = call(builder, "scan", [longest, length_in] + consts + carry + xs,
                   dict(params, body=new_body, n_consts=n_consts + 1))
    out = [(r, True) for r in results[:n_carry]]
    out += [(_move_batch(r, 1, 0) if not isinstance(r.aval, StackType) else r, True) for r in results[n_carry:]]
    return out


def cond_batch(pred, *operands, batched, branches, **params):
    n = _batch_n((pred,) + operands, batched)
    flags = list(batched[1:])
    out_flags = [any(t) for t in zip(*[_batch_body(g, flags, n)[1] for g in branches])]
    new = [_batch_body(g, flags, n, out_flags)[0] for g in branches]
    builder = next(x.builder for x in (pred,) + operands if isinstance(x, Traced))
    if not batched[0]:
        results = call(builder, "cond", [pred] + list(operands), dict(params, branches=tuple(new)))
        return [(r, f) for r, f in zip(results, out_flags)]
    # a predicate per batch element: both branches run, and each element takes its own (np.where)
    if any(has_effects(g) for g in branches):  # a check raises only for the elements whose branch it is in
        taken = pred if pred.aval.dtype == "bool" else ew.astype(pred, "bool")
        masks = [ew.logical_not(taken), taken]
        new = [_batch_body(masked(g), flags + [True], n, out_flags)[0] for g in branches]
        outs = [inline(g, *operands, m, builder=taken.builder) for g, m in zip(new, masks)]
    else:
        outs = [inline(g, *operands, builder=pred.builder) for g in new]
    return [(_select(pred, _batched(t_val, flag, n), _batched(f_val, flag, n)), True)
            for f_val, t_val, flag in zip(outs[0], outs[1], out_flags)]


def element_batch(*args, **kwargs):
    raise AssertionError("internal: the batching transform reads element equations itself")


def _no_batch(what):
    from gradc.errors import MissingRuleError
    return MissingRuleError(f"cannot batch {what}", hint="compute the Jacobian with a Python loop of vjp/jvp calls "
                                                         "(or make the loop's trip count the same for every row)")


SUBGRAPH_RULES.update({("scan", "batch"): scan_batch, ("while_loop", "batch"): while_batch,
                       ("cond", "batch"): cond_batch, ("element", "batch"): element_batch})
