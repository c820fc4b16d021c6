"""Split mode for a helper's adjoint: a forward that also returns the values its adjoint reads (residuals).

The adjoint of ``outs = call(*args, body=f)`` is, in split mode, two calls:

* ``outs, res = call(*args, body=f_forward)``: the body with the residuals as extra outputs (the
  values the reverse sweep reads that do not depend on the cotangents: a sigmoid's ``exp``, a
  loop's tape, an inner helper's own residuals);
* ``args_bar = call(*args, *res, *outs_bar, body=f_adjoint)``: only the reverse sweep, reading them.

Reverse mode calls ``f_forward`` where the program called ``f`` (``split_calls``, before the
sweep; in loop bodies too, where the loop then tapes the residuals when recomputing them would
cost more: ``worth_taping``), so the helper's forward runs once, where joint mode ran it again
inside its adjoint (and, at recursion depth ``d``, ``d + 1`` times). A rule meeting a plain call
(a derivative of a derivative) issues the extension beside it, and the passes keep one of the two
(``gradc.passes.loops.merge_loops``; ``extended_body`` tells them which body extends which).
Values depending on constants alone (a broadcast 2.0) and views of the inputs (an entry, a row, a
reshape) are recomputed by the adjoint rather than passed.

>>> import numpy as np
>>> from gradc.ir.graph import Eqn, Graph, Var
>>> from gradc.ir.types import TensorType
>>> f64 = TensorType((), "f64")
>>> x, e, y = Var("x", f64), Var("t0", f64), Var("t1", f64)
>>> body = Graph("g", [x], [Eqn("exp", (x,), {}, e), Eqn("mul", (e, x), {}, y)], [y])
>>> from gradc.transforms.reverse import vjp_graph
>>> forward, adjoint, positions = split_body(body, (True,), vjp_graph)
>>> [v.name for v in forward.outputs], [v.name for v in adjoint.inputs], positions
(['t1', 't0'], ['x', 't0', 't1_bar'], [1])
>>> extended_body(forward) is body
True
"""
from __future__ import annotations

import weakref

from gradc.ir.graph import Eqn, Graph, Var, without_dead_code
from gradc.ir.types import TensorType, TupleType
from gradc.ops.checks import has_effects

# split mode on (False: joint mode everywhere, as the tests do to compare the two)
SPLIT = True
_SPLITS: dict = {}  # id(body) -> {need: split_body's result}, dropped when the body is collected


def split_bodies(body: Graph, need: tuple, vjp_graph):
    """``split_body`` memoised per (body, need): a helper called from many places is split once."""
    memo = _SPLITS.get(id(body))
    if memo is None:
        memo = _SPLITS[id(body)] = {}
        weakref.finalize(body, _SPLITS.pop, id(body), None)
    if need not in memo:
        memo[need] = split_body(body, need, vjp_graph)
    return memo[need]


_VIEWS = frozenset({"index", "reshape", "transpose", "broadcast_to"})
_EXTENDS: dict = {}  # id(forward body) -> weakref to the body it extends (dropped with the forward body)


def extended_body(forward: Graph) -> Graph | None:
    """The body that ``forward`` (a split forward) extends with residual outputs, or None."""
    ref = _EXTENDS.get(id(forward))
    return ref() if ref is not None else None


def split_body(body: Graph, need: tuple, vjp_graph):
    """``(forward, adjoint, positions)``: split mode's bodies for ``body`` and the inputs flagged in ``need``, or
    None when a residual is not an array (joint mode then: the adjoint recomputes the forward).

    ``forward``: ``(*inputs) -> (*outputs, *residuals)``; ``adjoint``: ``(*inputs, *residuals, *output
    cotangents) -> cotangents of the flagged inputs``; ``positions``: each residual's place among the forward's
    outputs (a residual that is an output is an output once).
    """
    wrt = [v.name for v, n in zip(body.inputs, need) if n]
    g = vjp_graph(body, wrt, name=f"{body.name}_adjoint")
    n_in, n_out = len(body.inputs), len(body.outputs)
    cts = g.inputs[n_in:]
    grads = g.outputs[n_out:]
    g = _without_dead_code(g.replace(outputs=list(body.outputs) + list(grads)))
    inputs = {id(v) for v in body.inputs}
    reverse = {id(v) for v in cts}  # values depending on a cotangent: the reverse sweep
    variable = set(inputs)  # values depending on an input (the rest depend on constants alone)
    for e in g.eqns:
        reads = [id(a) for a in e.inputs if isinstance(a, Var)]
        if any(r in reverse for r in reads):
            reverse.add(id(e.out))
        elif any(r in variable for r in reads):
            variable.add(id(e.out))
    forward_eqns = [e for e in g.eqns if id(e.out) not in reverse]
    made = {id(e.out) for e in forward_eqns}
    # what the adjoint recomputes rather than reads: values of constants alone, and views of the inputs (a row, an
    # entry, a reshape: no work, where passing them would cost a buffer and an argument each)
    recomputed = {id(e.out) for e in forward_eqns if id(e.out) not in variable}
    for e in forward_eqns:
        if e.op in _VIEWS and all(id(a) in inputs or id(a) in recomputed for a in e.inputs if isinstance(a, Var)):
            recomputed.add(id(e.out))
    read = [a for e in g.eqns if id(e.out) in reverse for a in e.inputs] + list(grads)
    residuals, seen = [], set()
    for a in read:
        if isinstance(a, Var) and id(a) in made and id(a) not in recomputed and id(a) not in seen:
            seen.add(id(a))
            residuals.append(a)
    if any(not isinstance(r.type, TensorType) for r in residuals):
        return None
    adjoint_eqns = [e for e in g.eqns if id(e.out) in reverse or id(e.out) in recomputed]
    pack, unpack, residuals = _packed(residuals, body.outputs)
    extra = [r for r in residuals if all(r is not o for o in body.outputs)]
    forward = _without_dead_code(Graph(body.name, list(body.inputs), forward_eqns + pack,
                                       list(body.outputs) + extra, origin=body.origin))
    adjoint = without_dead_code(Graph(f"{body.name}_adjoint", list(body.inputs) + residuals + list(cts),
                                      unpack + adjoint_eqns, list(grads), origin=body.origin))
    _EXTENDS[id(forward)] = weakref.ref(body)
    weakref.finalize(forward, _EXTENDS.pop, id(forward), None)
    positions = [next(k for k, o in enumerate(forward.outputs) if o is r) for r in residuals]
    return forward, adjoint, positions


# a split forward passes at most this many residual arrays of one dtype separately; more are packed into one flat
# array (the adjoint reads each back as a view). An inner helper's residuals are residuals of its caller too, and
# a recursion calls its inner level from two sites (the first iteration, run while the loop's carry is a Python
# number, and the loop): unpacked, a cofactor determinant's residuals double at every level
PACK_LIMIT = 8


def _packed(residuals: list, outputs) -> tuple:
    """``(pack equations, unpack equations, residuals)``: when more than PACK_LIMIT residuals of one dtype (not
    outputs of the body, shapes of fixed size) are passed, one flat array of that dtype instead of them, made in the
    forward by ravel and concatenate and read in the adjoint by slices reshaped back."""
    outs = {id(o) for o in outputs}
    groups: dict = {}
    for r in residuals:
        if id(r) not in outs and all(isinstance(d, int) for d in r.type.shape):
            groups.setdefault(r.type.dtype, []).append(r)
    pack, unpack, packed = [], [], {}
    for dtype, members in sorted(groups.items()):
        if len(members) <= PACK_LIMIT:
            continue
        flats, start = [], 0
        whole = Var(f"{members[0].name}_packed", TensorType((sum(r.type.size for r in members),), dtype))
        for r in members:
            n = r.type.size
            flat = Var(f"{r.name}_flat", TensorType((n,), dtype))
            pack.append(Eqn("reshape", (r,), {"shape": (n,)}, flat))
            flats.append(flat)
            part = Var(f"{r.name}_part", TensorType((n,), dtype))
            unpack.append(Eqn("index", (whole,), {"spec": (("slice", start, start + n, None),)}, part))
            unpack.append(Eqn("reshape", (part,), {"shape": tuple(r.type.shape)}, r))
            start += n
            packed[id(r)] = whole
        pack.append(Eqn("concatenate", tuple(flats), {"axis": 0}, whole))
    if not packed:
        return [], [], residuals
    kept, seen = [], set()
    for r in residuals:
        r = packed.get(id(r), r)
        if id(r) not in seen:
            seen.add(id(r))
            kept.append(r)
    return pack, unpack, kept


def _without_dead_code(graph: Graph) -> Graph:
    """``graph`` without the equations no output depends on, its checks kept (they raise in the forward)."""
    live = {id(o) for o in graph.outputs if isinstance(o, Var)}
    kept = []
    for eqn in reversed(graph.eqns):
        if id(eqn.out) in live or has_effects(eqn):
            kept.append(eqn)
            live.update(id(a) for a in eqn.inputs if isinstance(a, Var))
    kept.reverse()
    return graph.replace(eqns=kept)


def split_calls(graph: Graph, active: set, active_vars, vjp_graph, in_loop: bool = False) -> Graph:
    """``graph`` with each call whose inputs carry derivatives replaced by its split forward (its residual items
    taken out right after it), and each loop's body so too: the reverse sweep then reads the residuals (a loop
    tapes them) instead of running the helper's forward again. ``graph`` itself when nothing changes.

    ``active``: ids of the values carrying derivatives; ``active_vars(body, wrt_vars)``: the same analysis for a
    loop body; ``vjp_graph``: reverse mode's (``gradc.transforms.reverse``, which calls this).
    """
    eqns, renamed, keys = [], {}, []
    changed = False
    for eqn in graph.eqns:
        inputs = tuple(renamed.get(id(a), a) for a in eqn.inputs)
        flags = [isinstance(a, Var) and id(a) in active for a in eqn.inputs]
        if eqn.op == "call" and extended_body(eqn.params["body"]) is None:
            body = eqn.params["body"]
            need = tuple(f and v.type.is_inexact for f, v in zip(flags, body.inputs))
            # at any depth of helper calls: a helper's forward passes the residuals of every level below it, packed
            # past PACK_LIMIT so that their number stays bounded; a loop tapes them when recomputing costs more (a
            # cofactor determinant's minors are cheaper to make again: at size 11 they are 40 million numbers)
            split = split_bodies(body, need, vjp_graph) if any(need) else None
            if split is not None and split[2] and (not in_loop or worth_taping(split[0], split[2])):
                forward, adjoint, positions = split
                out = Var(eqn.out.name, TupleType(tuple(o.type for o in forward.outputs)))
                eqns.append(Eqn("call", inputs, dict(eqn.params, body=forward,
                                                     helper=f"{eqn.params['helper']}_forward"), out))
                elements = []
                for k in positions:
                    element = Var(f"{eqn.out.name}_r{k}", forward.outputs[k].type)
                    eqns.append(Eqn("element", (out,), {"index": k}, element))
                    elements.append(element)
                RESIDUALS[id(out)] = (out, elements, adjoint, need)
                keys.append(id(out))
                renamed[id(eqn.out)] = out
                changed = True
                continue
        if eqn.op in ("scan", "while_loop") and any(flags) and IN_LOOPS:
            body = _split_loop_body(eqn, flags, active_vars, vjp_graph)
            if body is not eqn.params["body"]:
                eqn = Eqn(eqn.op, inputs, dict(eqn.params, body=body), eqn.out)
                changed = True
        if inputs != eqn.inputs:
            eqn = Eqn(eqn.op, inputs, eqn.params, eqn.out)
            changed = True
        eqns.append(eqn)
    if not changed:
        return graph
    result = graph.replace(eqns=eqns, outputs=[renamed.get(id(o), o) for o in graph.outputs])
    if keys:
        weakref.finalize(result, _forget, keys)
    return result


# whether a loop's body has its calls split too (their residuals taped); False: the loop's reverse sweep runs the
# helper's forward again each iteration (a benchmark compares the two)
IN_LOOPS = True

# id(split forward's result) -> (that result, its residual items, the adjoint body, need): what the call's VJP
# rule reads; dropped with the graph holding them
RESIDUALS: dict = {}


def _forget(keys) -> None:
    for key in keys:
        RESIDUALS.pop(key, None)


_LOOP_MEMO: dict = {}  # (id(body), flags) -> the body with its calls split, while the body lives


def _split_loop_body(eqn, flags, active_vars, vjp_graph) -> Graph:
    """A loop's body with its calls split, for the inputs the loop's VJP rule differentiates (as
    ``gradc.transforms.control`` picks them: the flagged loop-invariant and per-iteration inputs, every float
    carry)."""
    from gradc.ops.control import scan_parts, while_parts
    body, params = eqn.params["body"], eqn.params
    if params.get("checkpoint") is not None:
        return body  # its reverse sweep follows a checkpointing schedule (gradc.transforms.binomial): as it was
    if eqn.op == "scan":
        n_len = 1 if params["length"] is None else 0
        _, consts, carry, xs = scan_parts(eqn.inputs, params)
        b_in = body.inputs[1:]
        outer_flags = flags[n_len:]
        n_c, n_k = len(consts), len(carry)
    else:
        _, consts, carry = while_parts(eqn.inputs, params)
        n_skip = params["n_cond_consts"]
        b_in = body.inputs
        outer_flags = flags[n_skip:]
        n_c, n_k = len(consts), len(carry)
    wrt = [v for k, (v, f) in enumerate(zip(b_in, outer_flags))
           if v.type.is_inexact and (f or n_c <= k < n_c + n_k)]
    key = (id(body), tuple(id(v) for v in wrt))
    found = _LOOP_MEMO.get(key)
    if found is None:
        found = split_calls(body, active_vars(body, wrt), active_vars, vjp_graph, in_loop=True)
        _LOOP_MEMO[key] = found
        weakref.finalize(body, _LOOP_MEMO.pop, key, None)
    return found


# a transcendental function costs about this many elementwise operations (a libm exp, tanh: 10-40 ns)
TRANSCENDENTAL_COST = 16.0
_TRANSCENDENTAL = frozenset({"exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "tanh", "sinh",
                             "cosh", "arcsin", "arccos", "arctan", "arctan2", "arcsinh", "arccosh", "arctanh", "pow",
                             "erf", "erfc", "lgamma", "digamma", "logaddexp", "sigmoid", "softplus"})
# a loop tapes a helper's residuals when recomputing its forward's costly work (transcendental functions,
# products, factorisations) comes to this many times their elements or more (they are written to the tape and
# read back); else its reverse sweep runs the forward again: a cofactor expansion's residuals are its minors,
# as cheap to recompute as to tape (measured: taping them made det at size 7 1.4x slower, an LSTM's sigmoids
# and tanhs 2x faster)
TAPE_RATIO = 2.0


def worth_taping(forward: Graph, positions: list) -> bool:
    """Whether a loop should tape the residuals of a call of ``forward`` rather than run it again backwards."""
    taped = sum(_size(forward.outputs[k].type) for k in positions)
    return _costly_work(forward) >= TAPE_RATIO * taped


def _size(t) -> float:
    from gradc.ir.cost import _elements
    return _elements(t)


def _costly_work(graph: Graph, memo: dict | None = None) -> float:
    """Transcendental elements (weighted) and products' and factorisations' work in ``graph``, loops times their
    static trips. Each sub-graph is costed once (``memo``): a recursive helper's bodies are shared, so walking
    every path through them would take time exponential in the recursion's depth."""
    from gradc.ir import cost
    from gradc.ir.graph import subgraphs
    memo = {} if memo is None else memo
    known = memo.get(id(graph))
    if known is not None:
        return known[0]
    total = 0.0
    for e in graph.eqns:
        inner = subgraphs(e)
        if inner:
            trips = e.params.get("length") if e.op == "scan" else 1
            factor = float(trips) if isinstance(trips, int) else 1.0
            total += factor * sum(_costly_work(sub, memo) for sub in inner)
        elif e.op in _TRANSCENDENTAL:
            total += TRANSCENDENTAL_COST * _size(e.out.type)
        elif e.op in cost._CONTRACTIONS or e.op in cost._FACTORISATIONS:
            total += cost._eqn_work(e, {})
    memo[id(graph)] = (total, graph)  # (the graph kept alive: its id stays its own while the memo lives)
    return total
