"""Counted loops whose iterations are independent, run as whole-array operations (the NumPy target).

A ``scan`` of static length costs the emitted NumPy a Python iteration per trip, and a tiny body
(``z[i] = x[i] * y[i - 1]``) is all overhead. When no iteration reads what another wrote, the
body can run once on every iteration counter at once (``vmap`` over the counter) and the carried
values be assembled from the per-iteration results. A carried value qualifies when the body

* hands it through unchanged;
* adds to it: ``c + e`` with ``c`` read nowhere else (``total = total + f(i)``): ``c + sum(e)``;
* adds a scatter to it: ``c + gather_grad(v, idx)`` (an adjoint's accumulation): one scatter-add
  of every iteration's ``v`` (repeated positions accumulate, as ``np.add.at`` does);
* fills it: ``index_update(c, v, idx)`` at ``idx = i + k`` with every iteration's position distinct
  and in range (no negative index wrapping onto another), ``c`` read only at ``c[idx]``: no other
  iteration touches that position, so the read sees the start value.

Anything else (a recurrence, a read of the whole carried array, an effect, a helper call, a batch
larger than ``MAX_BATCH_ELEMENTS`` elements of intermediates) keeps the loop: batching a helper would
emit a vmapped copy of it per nesting level and call site, hundreds for a recursive one. Sums are taken in a different
order than the loop's (pairwise instead of left to right): equal up to rounding.

>>> import numpy as np
>>> from gradc.trace import trace
>>> def fill(x):
...     z = np.zeros(4)
...     for i in range(1, 4):
...         z[i] = x[i] * x[i - 1]
...     return z
>>> g = vectorise_loops(trace(fill, np.arange(4.0)))
>>> any(e.op == "scan" for e in g.eqns)
False
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numpy as np

from gradc.ir.builder import Builder, Traced, next_index
from gradc.ir.graph import Const, Eqn, Graph, Var, subgraphs
from gradc.ir.interpret import evaluate
from gradc.ops import reduce as red
from gradc.ops import shape as sh
from gradc.ops.checks import EFFECT_OPS
from gradc.ops.elementwise import add
from gradc.ops.shape_extra import index_update
from gradc.passes.cse import cse
from gradc.passes.dce import dce
from gradc.passes.fold import fold
from gradc.passes.strided_indices import strided
from gradc.transforms.batching import vmap_graph
from gradc.transforms.inline_calls import has_calls
from gradc.transforms.inlining import inline

# at most this many elements of intermediates over all iterations at once (2**22 float64: 32 MiB)
MAX_BATCH_ELEMENTS = 1 << 22
_KEEPING = [0]  # > 0 inside ``loops_kept()``
MAX_NESTED_LEVELS = 2  # loops inside a vectorised body vectorised in their turn, this many levels down
_DEPTH = [0]


@contextlib.contextmanager
def loops_kept() -> Iterator[None]:
    """Within this block emitted NumPy keeps every loop as a loop (to read or test the loops themselves).

    >>> with loops_kept():
    ...     pass
    """
    _KEEPING[0] += 1
    try:
        yield
    finally:
        _KEEPING[0] -= 1


def vectorise_loops(graph: Graph, memo: dict | None = None) -> Graph:
    """``graph`` with each qualifying ``scan`` (at any depth) replaced by whole-array operations.

    ``memo`` maps ids of graphs already done to ``(graph, result)``: a helper's body shared by many
    calls becomes one new body.
    """
    memo = {} if memo is None else memo
    if _KEEPING[0]:
        return graph
    done = memo.get(id(graph))
    if done is not None:
        return done[1]
    eqns = [_with_new_subgraphs(e, memo) for e in graph.eqns]
    read = _read_results(eqns, graph.outputs)
    plans = {id(e): plan for e in eqns if (plan := _plan(e, read.get(id(e.out), set()))) is not None}
    if plans:
        result = _rebuild(graph, eqns, plans)
    elif any(a is not b for a, b in zip(eqns, graph.eqns)):
        result = graph.replace(eqns=eqns)
    else:
        result = graph
    memo[id(graph)] = (graph, result)  # the graph is kept alive with its id
    return result


def _with_new_subgraphs(eqn: Eqn, memo: dict) -> Eqn:
    params, changed = dict(eqn.params), False
    for key, value in eqn.params.items():
        if isinstance(value, Graph):
            params[key] = vectorise_loops(value, memo)
            changed = changed or params[key] is not value
        elif isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
            params[key] = tuple(vectorise_loops(v, memo) for v in value)
            changed = changed or any(a is not b for a, b in zip(params[key], value))
    return Eqn(eqn.op, eqn.inputs, params, eqn.out) if changed else eqn


# ---------------------------------------------------------------- which loops, and how their carries combine
_FULL = ("slice", None, None, None)


def _simple_spec(spec) -> bool:
    """``c[idx]`` or ``c[idx, :, ...]``: the batched index stands where the scalar one stood."""
    return len(spec) >= 1 and tuple(spec[0]) == ("array", 0) and all(tuple(s) == _FULL for s in spec[1:])


def _scalar_index(eqn: Eqn, first: int) -> bool:
    arrays = eqn.inputs[first:]
    return len(arrays) == 1 and isinstance(arrays[0], Var) and arrays[0].type.shape == ()


def _offset(idx, counter, producers):
    """``k`` when ``idx`` is ``counter + k`` (or ``counter - k``) for an int constant ``k``; else None."""
    if idx is counter:
        return 0
    eqn = producers.get(id(idx))
    if eqn is None or eqn.op not in ("add", "sub") or len(eqn.inputs) != 2:
        return None
    a, b = eqn.inputs
    if eqn.op == "add" and isinstance(a, Const):
        a, b = b, a
    if a is not counter or not isinstance(b, Const) or np.ndim(b.value) != 0:
        return None
    k = b.value.item() if hasattr(b.value, "item") else b.value
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool):
        return None
    return int(k) if eqn.op == "add" else -int(k)


def _positions(idx, counter, producers, params, carried):
    """The positions ``idx`` takes over the loop (non-negative), when they are ``counter + k``, distinct and in
    range of the carried array's first axis (all negative ones too: none wraps onto another); else None."""
    offset = _offset(idx, counter, producers)
    size, step = carried.type.shape[0], params.get("step", 1)
    if offset is None or not isinstance(size, int) or step == 0:
        return None
    positions = params.get("start", 0) + step * np.arange(params["length"], dtype=np.int64) + offset
    if np.all((positions >= -size) & (positions < 0)):
        positions = positions + size
    return positions if np.all((positions >= 0) & (positions < size)) else None


def _read_results(eqns: list, outputs) -> dict:
    """id(loop result) -> the positions of its items read (by a live ``element``) in ``eqns``."""
    used = {id(o) for o in outputs if isinstance(o, Var)}
    for e in eqns:
        if e.op != "element":
            used.update(id(a) for a in e.inputs if isinstance(a, Var))
    read: dict = {}
    for e in eqns:
        if e.op == "element" and id(e.out) in used:
            read.setdefault(id(e.inputs[0]), set()).add(e.params["index"])
    return read


def _feeds_only(kin, kout, body) -> bool:
    """Whether everything computed from carried input ``kin`` feeds only ``kout`` (no other result, no check)."""
    marked = {id(kin)}
    for e in body.eqns:
        if any(id(a) in marked for a in e.inputs):
            if e.op in EFFECT_OPS or subgraphs(e):
                return False
            marked.add(id(e.out))
    return not any(id(o) in marked for o in body.outputs if o is not kout)


def _plan(eqn: Eqn, read=frozenset()):
    """How each carried value of a vectorisable ``scan`` combines, or None to keep the loop; ``read``: the
    positions of its results read after it (a carried value no one reads, fed only by itself, is dropped)."""
    p = eqn.params
    length = p.get("length")
    if eqn.op != "scan" or not isinstance(length, int) or isinstance(length, bool) or length < 1:
        return None
    body, k, c = p["body"], p["n_consts"], p["n_carry"]
    if has_calls(body):
        return None  # batching a helper makes a vmapped copy of it per level and per site: the module explodes
    counter, carries = body.inputs[0], body.inputs[1 + k:1 + k + c]
    inits = eqn.inputs[k:k + c]
    producers = {id(e.out): e for e in body.eqns}
    users: dict = {}
    for e in body.eqns:
        for a in e.inputs:
            users.setdefault(id(a), []).append(e)
    outputs = body.outputs
    kinds, removed, reads = [], set(), set()
    for position, (kin, kout, init) in enumerate(zip(carries, outputs[:c], inits)):
        if kout is kin:
            kinds.append(("through",))
            continue
        if sum(o is kin for o in outputs) or sum(o is kout for o in outputs) != 1:
            return None
        sequence = _sequence(kin, kout, init, body, producers, p)
        if sequence is not None:
            kinds.append(sequence)
            continue
        final = producers.get(id(kout))
        if final is None:
            return None
        kind = _carry_kind(kin, final, producers, users, counter, p)
        if kind is None and position not in read and _feeds_only(kin, kout, body):
            kinds.append(("dead",))  # (an adjoint's cotangent of a constant start value: sign_bar)
            continue
        if kind is None:
            return None
        kinds.append(kind)
        removed.add(id(final))
        if kind[0] == "scatter_add":
            removed.add(id(kind[1]))
        if kind[0] == "fill":
            reads.update(id(e) for e in kind[2])
    kept = [e for e in body.eqns if id(e) not in removed]
    state = {id(kin) for kin, kind in zip(carries, kinds) if kind[0] not in ("through", "sequence", "dead")}
    for e in kept:
        if id(e) not in reads and any(id(a) in state for a in e.inputs):
            return None
    if any(id(o) in state for o in outputs[c:]) or not _hands_over(body, k, c, kinds, kept):
        return None
    total = sum(_work(e, {}) for e in kept) * length
    return (kinds, kept) if total <= MAX_BATCH_ELEMENTS else None


def _hands_over(body: Graph, k: int, c: int, kinds: list, kept: list) -> bool:
    """Whether the batched iterations have every value they read: the counter, constants, rows, the carried values
    handed over as they start (through, fill, dead, sequence) and what ``kept`` computes. A kept equation or a
    combined value reading a carried value that is combined across iterations (a running sum read before the loop
    ends, ``acc = acc + x[i]; ys.append(acc)``), or the updated value itself, keeps the loop."""
    carries = body.inputs[1 + k:1 + k + c]
    handed = {id(kin) for kin, kind in zip(carries, kinds) if kind[0] in ("through", "fill", "dead", "sequence")}
    available = {id(a) for a in body.inputs[:1 + k]} | {id(a) for a in body.inputs[1 + k + c:]} | handed
    available |= {id(e.out) for e in kept}
    wanted = list(body.outputs[c:])
    for kind in kinds:
        if kind[0] == "sum":
            wanted.append(kind[1])
        elif kind[0] in ("scatter_add", "fill"):
            wanted += list(kind[1].inputs[0 if kind[0] == "scatter_add" else 1:][:1]) + list(kind[1].inputs[-1:])
    reads = [a for e in kept for a in e.inputs] + wanted
    return all(not isinstance(a, Var) or id(a) in available for a in reads)


def _work(eqn: Eqn, memo: dict) -> float:
    """Elements an equation holds at once, with what its sub-graphs hold (a loop's body once per trip, as if it
    were vectorised in its turn): batching multiplies all of it by the batch's size."""
    own = 0 if eqn.op == "element" else _elements(eqn.out.type)
    for body in subgraphs(eqn):
        if id(body) not in memo:
            memo[id(body)] = sum(_work(e, memo) for e in body.eqns)
        trips = eqn.params.get("length") if eqn.op == "scan" else 1
        own += memo[id(body)] * (trips if isinstance(trips, int) else float("inf"))
    return own


def _sequence(kin, kout, init, body, producers, params):
    """``("sequence", per-iteration values, final value)`` for a carried value that starts as a constant and is
    updated from itself, the counter and constants alone (``sign = -sign``): computed here, once."""
    if not isinstance(init, Const) or not isinstance(kout, Var) or _elements(kin.type) * params["length"] > 10_000:
        return None
    counter, cone, pending, seen = body.inputs[0], [], [kout], set()
    while pending:
        atom = pending.pop()
        if isinstance(atom, Const) or atom is kin or atom is counter or id(atom) in seen:
            continue
        eqn = producers.get(id(atom))
        if eqn is None or eqn.op in EFFECT_OPS or subgraphs(eqn):
            return None
        seen.add(id(atom))
        cone.append(eqn)
        pending.extend(eqn.inputs)
    order = {id(e): n for n, e in enumerate(body.eqns)}
    step_graph = Graph("sequence", [counter, kin], sorted(cone, key=lambda e: order[id(e)]), [kout])
    dtype = kin.type.np_dtype
    length = params["length"]
    value, values = np.asarray(init.value, dtype), [None] * length
    for j in range(length - 1, -1, -1) if params.get("reverse") else range(length):  # the loop's own order
        values[j] = value  # what iteration j reads
        i = np.int64(params.get("start", 0) + params.get("step", 1) * j)
        value = np.asarray(evaluate(step_graph, i, value)[0], dtype)
    return ("sequence", np.stack(values), value)


def _elements(t) -> float:
    """Elements of a value of type ``t`` (a loop's results: of its items); infinite for a symbolic size."""
    items = getattr(t, "items", None)
    if items is not None:
        return sum(_elements(item) for item in items)
    shape = getattr(t, "shape", None) or ()
    if not all(isinstance(d, int) for d in shape):
        return float("inf")
    return int(np.prod(shape, dtype=np.int64))


def _carry_kind(kin, final, producers, users, counter, params):
    """``("sum", e)``, ``("scatter_add", scatter_eqn)``, ``("fill", update_eqn, reads)`` or None."""
    if final.op == "add" and len(final.inputs) == 2 and sum(a is kin for a in final.inputs) == 1:
        if len(users.get(id(kin), ())) != 1:
            return None
        e = final.inputs[1] if final.inputs[0] is kin else final.inputs[0]
        if not isinstance(e, Var) or e.type != kin.type:
            return None
        scatter = producers.get(id(e))
        if (scatter is not None and scatter.op == "gather_grad" and len(users.get(id(e), ())) == 1
                and _simple_spec(scatter.params["spec"]) and _scalar_index(scatter, 1)):
            return ("scatter_add", scatter, _positions(scatter.inputs[1], counter, producers, params, kin))
        return ("sum", e)
    if final.op != "index_update" or final.inputs[0] is not kin or final.params.get("in_place"):
        return None
    spec = final.params["spec"]
    if not _simple_spec(spec) or not _scalar_index(final, 2) or any(a is kin for a in final.inputs[1:]):
        return None
    idx = final.inputs[2]
    positions = _positions(idx, counter, producers, params, kin)
    if positions is None:
        return None
    reads = [e for e in users.get(id(kin), ()) if e is not final]
    for e in reads:  # only c[idx] at this iteration's own position (the start value: no one else writes it)
        if e.op != "gather" or e.inputs[0] is not kin or e.inputs[1:] != (idx,) or e.params["spec"] != spec:
            return None
    return ("fill", final, reads, positions)


# ---------------------------------------------------------------- the rewrite
def _rebuild(graph: Graph, eqns: list, plans: dict) -> Graph:
    taken = set(graph.params) | {v.name for v in graph.inputs} | {e.out.name for e in eqns}
    builder = Builder(taken=taken, first_index=next_index(graph))
    builder.adopt(graph.inputs)
    env: dict = {}  # id of an old var -> its atom in the new graph (a list for a replaced loop's results)

    made: set = set()  # ids of the vars the rewrite made: a loop's result takes the name of its ``element``

    def read(atom):
        return env.get(id(atom), atom) if isinstance(atom, Var) else atom
    for eqn in eqns:
        if eqn.op == "element" and isinstance(env.get(id(eqn.inputs[0])), list):
            value = env[id(eqn.inputs[0])][eqn.params["index"]]
            if isinstance(value, Var) and id(value) in made:
                made.discard(id(value))
                value.name = eqn.out.name
            env[id(eqn.out)] = value
            continue
        plan = plans.get(id(eqn))
        if plan is not None:
            before = len(builder.eqns)
            env[id(eqn.out)] = _vectorised(builder, eqn, plan, [read(a) for a in eqn.inputs])
            made.update(id(e.out) for e in builder.eqns[before:])
            continue
        inputs = tuple(read(a) for a in eqn.inputs)
        same = all(a is b for a, b in zip(inputs, eqn.inputs))
        builder.eqns.append(eqn if same else Eqn(eqn.op, inputs, eqn.params, eqn.out))
    rebuilt = graph.replace(inputs=list(builder.inputs), eqns=list(builder.eqns),
                            outputs=[read(o) for o in graph.outputs])
    return dce(cse(strided(fold(rebuilt))))


def _vectorised(builder: Builder, eqn: Eqn, plan, inputs: list) -> list:
    """The loop's results (carried values, then stacked rows) computed by whole-array operations."""
    kinds, kept = plan
    p = eqn.params
    body, k, c, length = p["body"], p["n_consts"], p["n_carry"], p["length"]
    start, step = p.get("start", 0), p.get("step", 1)
    counter, consts = body.inputs[0], body.inputs[1:1 + k]
    carries, rows = body.inputs[1 + k:1 + k + c], body.inputs[1 + k + c:]
    inits, xs = inputs[k:k + c], inputs[k + c:]
    # read as they start: the values handed through, and the filled arrays (read only where no one else writes)
    fills = [(kin, init) for kin, init, kind in zip(carries, inits, kinds) if kind[0] in ("through", "fill", "dead")]
    sequences = [(kin, kind[1]) for kin, kind in zip(carries, kinds) if kind[0] == "sequence"]
    wanted: list = []  # the per-iteration values the combination reads, then the stacked rows
    for kind in kinds:  # an index at known positions is a constant; a constant value is not batched
        if kind[0] == "sum":
            wanted.append(kind[1])
        elif kind[0] in ("scatter_add", "fill"):
            value, idx = kind[1].inputs[0 if kind[0] == "scatter_add" else 1], kind[1].inputs[-1]
            wanted += [a for a in (value, None if kind[-1] is not None else idx) if isinstance(a, Var)]
    wanted += list(body.outputs[c:])
    per_iteration = dce(body.replace(  # (keeping the checks: a batch raises when any iteration would)
        name=f"{body.name}_iterations", inputs=[counter] + list(consts) + [kin for kin, _ in fills]
        + [kin for kin, _ in sequences] + list(rows), eqns=kept, outputs=wanted, params=[], static={},
        adjoint=frozenset()))
    axes = [0] + [None] * (len(consts) + len(fills)) + [0] * (len(sequences) + len(rows))
    # loops inside the body (a helper's, now batched) in their turn, two levels deep at most: each level vmaps
    # the helpers below it again, and compile time grows with the depth (GradBench det's recursion)
    batched = vmap_graph(per_iteration, axes, length)
    if _DEPTH[0] < MAX_NESTED_LEVELS:
        _DEPTH[0] += 1
        try:
            batched = vectorise_loops(batched)
        finally:
            _DEPTH[0] -= 1
    counters = Const(np.arange(start, start + step * length, step, dtype=np.int64)[:length])
    args = [Traced(builder, counters)] + [Traced(builder, a) for a in inputs[:k]]
    args += [Traced(builder, init) for _, init in fills] + [Traced(builder, Const(v)) for _, v in sequences]
    args += [Traced(builder, x) for x in xs]
    values = iter(inline(batched, *args))
    results = []
    for kin, init, kind in zip(carries, inits, kinds):
        start_value = Traced(builder, init)
        if kind[0] in ("through", "dead"):  # (a dead one's result is read by no one)
            results.append(init)
            continue
        if kind[0] == "sequence":
            results.append(Const(kind[2]))
            continue
        if kind[0] == "sum":
            out = add(start_value, red.sum_(next(values), axis=0))
        else:
            value = kind[1].inputs[0 if kind[0] == "scatter_add" else 1]
            v = next(values) if isinstance(value, Var) else Traced(builder, value)
            known = kind[-1] is not None
            idx = Traced(builder, Const(kind[-1])) if known else next(values)
            target = (length,) + tuple(kin.type.shape[1:])
            vt = v.aval
            if isinstance(value, Var) and vt.shape != target:
                v = sh.broadcast_to(sh.reshape(v, (length,) + (1,) * (len(target) - vt.ndim) + vt.shape[1:]), target)
            spec = kind[1].params["spec"]
            if kind[0] == "fill":
                out = index_update(start_value, v, [idx], spec)
            else:  # distinct known positions: ``acc[idx] += v``; else ``np.add.at``
                out = Traced(builder, builder.add("index_add", (init, v.atom, idx.atom),
                                                  {"spec": tuple(spec), "unique": known}, kin.type))
        results.append(out.atom)
    results += [v.atom for v in values]
    return results
