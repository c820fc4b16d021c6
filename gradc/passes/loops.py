"""Passes over loops and branches: merge a loop with its taping twin, optimise sub-graphs.

Reverse mode re-issues a loop with extra per-iteration outputs (its tape), and a helper's call with its
residuals as extra outputs (split mode, ``gradc.transforms.call_residuals``); the two
equations have the same inputs and the same body but for those outputs.
``merge_loops`` keeps one, so the forward sweep runs once. ``optimize_subgraphs``
runs a pass pipeline on every sub-graph (a body keeps its inputs and outputs).

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.trace.control import fori_loop
>>> from gradc.transforms.reverse import value_and_grad_graph
>>> g = value_and_grad_graph(trace(lambda x: fori_loop(0, 5, lambda i, v: np.sin(v) * x, x), 0.5), ["x"])
>>> sum(e.op == "scan" for e in g.eqns), sum(e.op == "scan" for e in merge_loops(g).eqns)
(3, 2)
"""
from __future__ import annotations

from gradc.ir.graph import Eqn, Graph, subgraphs
from gradc.ops.checks import has_effects
from gradc.transforms.call_residuals import extended_body

_LOOPS = ("scan", "while_loop")
_MERGED = _LOOPS + ("call",)


def _body_text(graph: Graph) -> tuple:
    return tuple(id(v) for v in graph.inputs), tuple(id(e) for e in graph.eqns)


def _extends(longer: Eqn, shorter: Eqn) -> bool:
    """Whether ``longer`` is ``shorter`` with more per-iteration outputs (same inputs, same computation), or
    a helper's call returning its residuals too (``gradc.transforms.call_residuals``) beside its plain call."""
    if longer.op != shorter.op or longer.op not in _MERGED or len(longer.inputs) != len(shorter.inputs):
        return False
    if any(a is not b and not (_is_const(a) and _is_const(b) and a.key() == b.key())
           for a, b in zip(longer.inputs, shorter.inputs)):
        return False
    if longer.op == "call":
        return extended_body(longer.params["body"]) is shorter.params["body"]
    pl, ps = longer.params, shorter.params
    if set(pl) != set(ps) or any(pl[k] != ps[k] for k in pl if k not in ("body", "cond")):
        return False
    if longer.op == "while_loop" and pl["cond"] is not ps["cond"] and str(pl["cond"]) != str(ps["cond"]):
        return False
    bl, bs = pl["body"], ps["body"]
    if _body_text(bl) != _body_text(bs):
        return False
    n = len(bs.outputs)
    return len(bl.outputs) >= n and all(a is b for a, b in zip(bl.outputs, bs.outputs))


def _is_const(atom) -> bool:
    return hasattr(atom, "key") and hasattr(atom, "value")


def merge_loops(graph: Graph) -> Graph:
    """One loop where a loop and its extension (the taping twin) both run."""
    loops = [e for e in graph.eqns if e.op in _MERGED]
    if len(loops) < 2:
        return graph
    replaced: dict = {}  # id(shorter eqn) -> longer eqn
    for k, short in enumerate(loops):
        for long in loops[k + 1:]:
            if id(long) not in replaced.values() and _extends(long, short):
                replaced[id(short)] = long
                break
    if not replaced:
        return graph
    longer_ids = {id(e) for e in replaced.values()}
    for short_id, long in list(replaced.items()):  # a chain (a third-order forward extends a second-order one,
        while id(long) in replaced:                # which extends the plain call): the longest serves them all
            long = replaced[id(long)]
        replaced[short_id] = long
    subst = {id(short_out): long.out for short_id, long in replaced.items()
             for short_out in [next(e.out for e in loops if id(e) == short_id)]}
    # an item the longer loop's own element already takes out: that element (and its name: x_tape, trips) serves
    taken = {(id(e.inputs[0]), e.params["index"]): e.out for e in graph.eqns
             if e.op == "element" and id(e.inputs[0]) in {id(v) for v in subst.values()}}
    renamed: dict = {}
    eqns = []
    for eqn in graph.eqns:
        if id(eqn) in longer_ids:
            continue  # issued where the loop it extends stood
        if id(eqn) in replaced:
            long = replaced[id(eqn)]
            inputs = tuple(renamed.get(id(a), a) for a in long.inputs)
            eqns.append(long if inputs == long.inputs else Eqn(long.op, inputs, long.params, long.out))
            continue
        inputs = tuple(renamed.get(id(a), a) for a in eqn.inputs)
        if eqn.op == "element" and id(inputs[0]) in subst:
            long_out = subst[id(inputs[0])]
            twin = taken.get((id(long_out), eqn.params["index"]))
            if twin is not None:
                renamed[id(eqn.out)] = twin
                continue
            eqn = Eqn("element", (long_out,), eqn.params, eqn.out)
        elif inputs != eqn.inputs:
            eqn = Eqn(eqn.op, inputs, eqn.params, eqn.out)
        eqns.append(eqn)
    outputs = [renamed.get(id(o), o) for o in graph.outputs]
    return graph.replace(eqns=_definitions_first(eqns), outputs=outputs)


def _definitions_first(eqns: list) -> list:
    """``eqns`` reordered so every value is defined before it is read (a stable topological order)."""
    defined_at = {id(e.out): k for k, e in enumerate(eqns)}
    if all(defined_at.get(id(a), -1) < k for k, e in enumerate(eqns) for a in e.inputs):
        return eqns
    # a check (or a loop or branch holding one) waits for the one before it: checks raise in program order
    after: dict = {}
    last = None
    for e in eqns:
        if has_effects(e):
            if last is not None:
                after[id(e)] = id(last.out)
            last = e
    done: set = set()
    order: list = []
    waiting = list(eqns)
    while waiting:
        rest = []
        for e in waiting:
            if all(id(a) not in defined_at or id(a) in done for a in e.inputs) and after.get(id(e), id(e)) in (
                    done | {id(e)}):
                order.append(e)
                done.add(id(e.out))
            else:
                rest.append(e)
        if len(rest) == len(waiting):
            raise AssertionError("internal: merge_loops made a cycle")
        waiting = rest
    return order


def optimize_subgraphs(graph: Graph, optimize) -> Graph:
    """``graph`` with ``optimize`` applied to the sub-graphs of its equations (at any depth, through ``optimize``)."""
    if not any(subgraphs(e) for e in graph.eqns):
        return graph
    eqns = []
    for eqn in graph.eqns:
        if subgraphs(eqn):
            params = {}
            for key, value in eqn.params.items():
                if isinstance(value, Graph):
                    value = optimize(value)
                elif isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
                    value = tuple(optimize(v) for v in value)
                params[key] = value
            eqn = Eqn(eqn.op, eqn.inputs, params, eqn.out)
        eqns.append(eqn)
    return graph.replace(eqns=eqns)


def prune_loop_inputs(graph: Graph) -> Graph:
    """Loops and branches without the loop-invariant inputs their sub-graphs no longer read (after their DCE).

    >>> import numpy as np
    >>> from gradc.ir.graph import Graph
    >>> prune_loop_inputs(Graph("f", [], [], [])).eqns
    []
    """
    eqns, changed = [], False
    for eqn in graph.eqns:
        new = _pruned(eqn)
        changed |= new is not eqn
        eqns.append(new)
    return graph.replace(eqns=eqns) if changed else graph


def _reads(g: Graph) -> set:
    return {id(a) for e in g.eqns for a in e.inputs} | {id(o) for o in g.outputs}


def _pruned(eqn: Eqn) -> Eqn:
    p = eqn.params
    if eqn.op == "scan":
        body = p["body"]
        off = 1 if p["length"] is None else 0
        k = p["n_consts"]
        used = _reads(body)
        keep = [j for j, v in enumerate(body.inputs[1:1 + k]) if id(v) in used]
        if len(keep) == k:
            return eqn
        consts = list(eqn.inputs[off:off + k])
        new_body = body.replace(inputs=[body.inputs[0]] + [body.inputs[1 + j] for j in keep] + body.inputs[1 + k:])
        new_body.params = [v.name for v in new_body.inputs]
        inputs = tuple(eqn.inputs[:off]) + tuple(consts[j] for j in keep) + tuple(eqn.inputs[off + k:])
        return Eqn("scan", inputs, dict(p, body=new_body, n_consts=len(keep)), eqn.out)
    if eqn.op == "while_loop":
        cond, body = p["cond"], p["body"]
        a, b = p["n_cond_consts"], p["n_body_consts"]
        keep_a = [j for j, v in enumerate(cond.inputs[:a]) if id(v) in _reads(cond)]
        keep_b = [j for j, v in enumerate(body.inputs[:b]) if id(v) in _reads(body)]
        if len(keep_a) == a and len(keep_b) == b:
            return eqn
        new_cond = cond.replace(inputs=[cond.inputs[j] for j in keep_a] + cond.inputs[a:])
        new_body = body.replace(inputs=[body.inputs[j] for j in keep_b] + body.inputs[b:])
        new_cond.params = [v.name for v in new_cond.inputs]
        new_body.params = [v.name for v in new_body.inputs]
        inputs = (tuple(eqn.inputs[j] for j in keep_a) + tuple(eqn.inputs[a + j] for j in keep_b)
                  + tuple(eqn.inputs[a + b:]))
        return Eqn("while_loop", inputs, dict(p, cond=new_cond, body=new_body, n_cond_consts=len(keep_a),
                                              n_body_consts=len(keep_b)), eqn.out)
    if eqn.op == "cond":  # a reverse sweep's branches are given every forward operand; most read a few
        branches = p["branches"]
        reads = [_reads(b) for b in branches]
        n = len(eqn.inputs) - 1
        keep = [j for j in range(n) if any(id(b.inputs[j]) in r for b, r in zip(branches, reads))]
        if len(keep) == n:
            return eqn
        new_branches = []
        for b in branches:
            nb = b.replace(inputs=[b.inputs[j] for j in keep])
            nb.params = [v.name for v in nb.inputs]
            new_branches.append(nb)
        return Eqn("cond", (eqn.inputs[0],) + tuple(eqn.inputs[1 + j] for j in keep),
                   dict(p, branches=tuple(new_branches)), eqn.out)
    return eqn


# A loop whose body computes fewer elements than this per operation (on average; a nested loop counts its
# trips times its body) runs at Python's speed, not NumPy's, on the NumPy target: each emitted
# statement costs about a microsecond of interpreter and call overhead, which is the time NumPy takes
# for about a thousand elements. ``gradc show`` then recommends the C target, which runs the loop
# with no per-iteration cost (GradBench's ode fill loop: 7 ms in NumPy, 14 us in C).
SMALL_BODY_WORK = 1000.0
_MANY_TRIPS = 16  # fewer trips: the overhead is paid too few times to matter


def python_bound(eqn) -> bool:
    """Whether a loop equation's body is so small per operation that Python's per-iteration cost dominates.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> from gradc.trace.control import fori_loop
    >>> g = trace(lambda x: fori_loop(0, 100, lambda i, s: s * x[i], 1.0), np.ones(100))
    >>> python_bound(g.eqns[-2])  # the scan (the last equation takes its result)
    True
    """
    body = eqn.params.get("body")
    if body is None or not body.eqns:
        return False
    trips = eqn.params.get("length")
    if isinstance(trips, int) and trips < _MANY_TRIPS:
        return False
    return _elements_per_op(body) < SMALL_BODY_WORK


def _elements_per_op(body: Graph) -> float:
    """The elements an operation of ``body`` computes, on average (an index reads one element, not its array;
    an update of one element writes one)."""
    total = 0.0
    for e in body.eqns:
        inner = [g for g in (e.params.get("body"),) if isinstance(g, Graph)]
        if inner:
            trips = e.params.get("length")
            total += (trips if isinstance(trips, int) else 1000) * _elements_per_op(inner[0]) * len(inner[0].eqns)
        else:  # an update writes its value's elements in place, not its array's
            written = e.inputs[1] if e.op in ("index_update", "index_add") else \
                e.inputs[0] if e.op in ("index_grad", "gather_grad") else e.out  # (a scatter: added in place)
            size = getattr(getattr(written, "type", None), "size", 1)
            total += float(size) if isinstance(size, int) else 1000.0
    return total / len(body.eqns)


def loop_report(graph: Graph) -> list:
    """One line per loop and branch of ``graph`` (nested ones indented): kind, trips, carried values and
    what its reverse sweep tapes per iteration, in bytes (``gradc show`` prints it). A loop whose body is
    small enough that Python's per-iteration cost dominates on the NumPy target (:data:`SMALL_BODY_WORK`)
    says so and recommends the C target.

    >>> loop_report(Graph("f", [], [], []))
    []
    """
    lines: list = []
    _report(graph, lines, "")
    return lines


def _advice(eqn) -> str:
    if not python_bound(eqn):
        return ""
    body = eqn.params["body"]
    per_op = _elements_per_op(body)
    each = f"{per_op:.0f} element" + ("" if round(per_op) == 1 else "s")
    return (f"; small body ({len(body.eqns)} operations on about {each} each per iteration): "
            "Python's per-iteration cost dominates on the NumPy target; compile with --target c")


def _bytes(t) -> int:
    item = getattr(t, "item", t)
    return int(item.size) * item.np_dtype.itemsize


def _tapes(graph: Graph, eqn, body: Graph, n_carry: int, skip: int = 0) -> list:
    """The per-iteration outputs of a loop that are a reverse sweep's tape: a carried value as it came in, or a
    value the adjoint reads rather than recompute (named ``*_tape`` outside the loop). ``skip``: results before
    the stacks besides the carried values (a while loop's trip count)."""
    named = {e.params["index"]: e.out.name for e in graph.eqns if e.op == "element" and e.inputs[0] is eqn.out}
    return [o for k, o in enumerate(body.outputs[n_carry:], n_carry)
            if o in body.inputs or named.get(k + skip, "").endswith("_tape")]


def _report(graph: Graph, lines: list, indent: str, seen: set | None = None) -> None:
    seen = set() if seen is None else seen
    for eqn in graph.eqns:
        p = eqn.params
        if eqn.op == "scan":
            body, n_c = p["body"], p["n_carry"]
            trips = "run-time" if p["length"] is None else str(p["length"])
            carried = ", ".join(f"{v.name}: {v.type}" for v in body.inputs[1 + p["n_consts"]:1 + p["n_consts"] + n_c])
            taped = _tapes(graph, eqn, body, n_c)
            kind = "adjoint loop (runs backwards)" if p.get("adjoint") else ("loop (backwards)" if p.get("reverse")
                                                                             else "loop")
            text = f"{indent}{eqn.out.name}: {kind} of {trips} trips; carries {carried or 'nothing'}"
            if taped:
                text += (f"; tapes {', '.join(o.name for o in taped)}: "
                         f"{sum(_bytes(o.type) for o in taped)} bytes per iteration")
            lines.append(text + _advice(eqn))
            _report(body, lines, indent + "  ", seen)
        elif eqn.op == "while_loop":
            body = p["body"]
            n_c = len(body.inputs) - p["n_body_consts"]
            carried = ", ".join(f"{v.name}: {v.type}" for v in body.inputs[p["n_body_consts"]:])
            taped = _tapes(graph, eqn, body, n_c, skip=1)
            text = f"{indent}{eqn.out.name}: while loop; carries {carried}"
            if taped:
                text += (f"; tapes {', '.join(o.name for o in taped)}: {sum(_bytes(o.type) for o in taped)} bytes "
                         "per trip (a list: the trip count is known at the end)")
            lines.append(text + _advice(eqn))
            _report(body, lines, indent + "  ", seen)
        elif eqn.op == "call":  # a helper's loops, under the call (each helper body once)
            for g in subgraphs(eqn):
                if id(g) not in seen:
                    seen.add(id(g))
                    inner: list = []
                    _report(g, inner, indent + "  ", seen)
                    if inner:
                        lines.append(f"{indent}{eqn.out.name}: call of {eqn.params.get('helper', g.name)}")
                        lines.extend(inner)
        elif eqn.op == "cond":
            lines.append(f"{indent}{eqn.out.name}: if/else on {getattr(eqn.inputs[0], 'name', eqn.inputs[0])}")
            for g in p["branches"]:
                _report(g, lines, indent + "  ", seen)
