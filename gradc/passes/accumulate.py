"""Accumulations rewritten as updates of the accumulator (for :mod:`gradc.passes.in_place`, in loop bodies).

``acc + s``, where ``s`` is a scatter into zeros (``index_grad``, ``gather_grad``) or a sum of
such scatters, each read only there, becomes a chain of ``index_add`` on ``acc``; ``acc + r``
where ``r`` is a result of a branch becomes a branch that adds its result to ``acc`` itself.
Marked in place, a reverse sweep's iteration then adds its few contributions into the
accumulator instead of building and adding a zero array the accumulator's size.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.ops.shape import index_grad
>>> g = trace(lambda a, v: a + index_grad(v, (("int", 1),), (3,)), np.ones(3), 2.0)
>>> [e.op for e in accumulations(g.eqns, g.outputs)]
['index_add']
"""
from __future__ import annotations

from gradc.ir.graph import Const, Eqn, Var

SCATTER_OPS = frozenset({"index_grad", "gather_grad"})


def accumulations(eqns: list, outputs, only_distinct: bool = False) -> list:
    """``add(acc, s)`` with ``s`` a scatter into zeros or a sum of them as ``index_add`` chains on ``acc``.

    ``only_distinct``: only where every scatter is a gather's, at distinct positions (``acc[rows, labels] += v``,
    no ``np.add.at``; outside loops, where the rewrite saves the zero array and the addition, not an order of
    growth). A -0.0 of ``acc`` at a position not written then stays -0.0 (the sum made it 0.0)."""
    from gradc.ops.index_add import distinct_positions, index_add_eqn
    uses: dict = {}
    for e in eqns:
        for a in e.inputs:
            uses[id(a)] = uses.get(id(a), 0) + 1
    for o in outputs:
        uses[id(o)] = uses.get(id(o), 0) + 2
    # id(value) -> the scatters it is the sum of: a scatter (read any number of times: each sum it joins adds its
    # values again), or a sum of such read only there (built forwards: long chains are cheap)
    sums: dict = {}
    members: dict = {}  # id(value) -> ids of the sums absorbed into its tree
    for e in eqns:
        if e.out.type.shape == ():
            continue
        if e.op in SCATTER_OPS:
            sums[id(e.out)], members[id(e.out)] = [e], set()
        elif e.op == "add" and uses.get(id(e.out), 0) == 1 and all(
                id(a) in sums and a.type == e.out.type for a in e.inputs):
            sums[id(e.out)] = sums[id(e.inputs[0])] + sums[id(e.inputs[1])]
            members[id(e.out)] = {id(e.out)} | members[id(e.inputs[0])] | members[id(e.inputs[1])]

    replaced: dict = {}  # id(add equation) -> the equations standing for it
    absorbed: set = set()
    constants = {id(e.out): e.inputs[0] for e in eqns if e.op == "broadcast_to" and isinstance(e.inputs[0], Const)
                 and e.inputs[0].type.shape == ()}  # a constant cotangent scattered: added as the scalar it is
    for e in eqns:
        if e.op != "add" or e.out.type.shape == () or id(e.out) in absorbed or not all(
                isinstance(a, (Var, Const)) and a.type == e.out.type for a in e.inputs):
            continue
        if id(e.out) in sums and uses.get(id(e.out), 0) == 1:
            continue  # a sum of scatters that a longer sum takes in
        for acc_side in (0, 1):
            acc, other = e.inputs[acc_side], e.inputs[1 - acc_side]
            if id(other) not in sums or id(acc) in sums or not isinstance(acc, Var):
                continue
            found = sums[id(other)]
            if only_distinct and not all(piece.op == "gather_grad" and distinct_positions(piece.inputs[1:])
                                         for piece in found):
                continue  # (a basic index's scatter is left as it was: its sum turns a -0.0 of acc into 0.0)
            chain, current = [], acc
            for k, piece in enumerate(found):
                added = index_add_eqn(current, piece, e.out if k == len(found) - 1 else None)
                scalar = constants.get(id(added.inputs[1]))
                if scalar is not None:
                    added = Eqn(added.op, (added.inputs[0], scalar, *added.inputs[2:]), added.params, added.out)
                chain.append(added)
                current = chain[-1].out
            replaced[id(e)] = chain
            absorbed |= members[id(other)]
            break
    if not replaced:
        return eqns
    out = []
    for e in eqns:
        if id(e.out) not in absorbed:
            out.extend(replaced.get(id(e), [e]))
    return _without_unread_scatters(_zeroed_then_added(out, outputs), outputs)


def _zeroed_then_added(eqns: list, outputs) -> list:
    """``index_add(index_update(x, 0, idx), v, idx)`` (the zeroed slot read once) as ``index_update(x, v, idx)``:
    a reverse sweep zeroes a slot's cotangent and adds the slot's new contribution at once."""
    uses: dict = {}
    for a in [a for e in eqns for a in e.inputs] + list(outputs):
        uses[id(a)] = uses.get(id(a), 0) + 1
    producer = {id(e.out): e for e in eqns}
    fused: dict = {}  # id(zeroing equation) -> None (dropped); id(add) -> its replacement
    for e in eqns:
        if e.op != "index_add" or not e.params.get("unique"):
            continue
        z = producer.get(id(e.inputs[0]))
        if z is None or z.op != "index_update" or uses.get(id(z.out)) != 1 or id(z) in fused or \
                tuple(z.params["spec"]) != tuple(e.params["spec"]) or len(z.inputs) != len(e.inputs) or \
                any(a is not b for a, b in zip(z.inputs[2:], e.inputs[2:])) or not _is_zero(z.inputs[1]) or \
                e.inputs[1].type.shape != _indexed(z):
            continue
        fused[id(z)] = None
        fused[id(e)] = Eqn("index_update", (z.inputs[0], e.inputs[1], *e.inputs[2:]), {"spec": z.params["spec"]},
                           e.out)
    if not fused:
        return eqns
    return [fused.get(id(e), e) for e in eqns if fused.get(id(e), e) is not None]


def _is_zero(atom) -> bool:
    return isinstance(atom, Const) and atom.value.shape == () and atom.value == 0


def _indexed(update: Eqn) -> tuple:
    from gradc.ops.shape_extra import indexed_shape
    return tuple(indexed_shape(update.out.type.shape, update.params["spec"], [a.type.shape for a in
                                                                              update.inputs[2:]]))


def _without_unread_scatters(eqns: list, outputs) -> list:
    """``eqns`` without the scatters (and sums of them), and the constants they scattered, nothing reads any more."""
    read = {id(o) for o in outputs} | {id(a) for e in eqns for a in e.inputs}
    kept = [e for e in eqns if id(e.out) in read or e.op not in SCATTER_OPS]
    read = {id(o) for o in outputs} | {id(a) for e in kept for a in e.inputs}
    return [e for e in kept if id(e.out) in read or not (e.op == "broadcast_to" and isinstance(e.inputs[0], Const))]


def into_branches(eqns: list, outputs) -> list:
    """``acc + (r + s1 + ...)`` with ``r`` a result of a branch (``cond``) and the sums read only there: ``acc``
    handed to the branches, each adding its result to it, then ``s1, ...`` added: a scatter in a branch (and
    the ``s`` after it) accumulates into ``acc`` (in place, once marked)."""
    uses: dict = {}
    for a in [a for e in eqns for a in e.inputs] + list(outputs):
        uses[id(a)] = uses.get(id(a), 0) + 1
    out = list(eqns)
    while True:  # the outermost sum first (the accumulator reaches every branch of it), until none is left
        rewritten = _one_into_branch(out, uses)
        if rewritten is None:
            return out
        out = rewritten
        uses = {}
        for a in [a for e in out for a in e.inputs] + list(outputs):
            uses[id(a)] = uses.get(id(a), 0) + 1


def _one_into_branch(out: list, uses: dict):
    """``out`` with the last sum of the kind ``into_branches`` rewrites rewritten, or None when there is none."""
    producer = {id(e.out): e for e in out}
    at = {id(q): j for j, q in enumerate(out)}
    for e in reversed(out):
        if e.op != "add" or e.out.type.shape == () or not all(
                isinstance(a, Var) and a.type == e.out.type for a in e.inputs) or e.inputs[0] is e.inputs[1]:
            continue
        for side in (0, 1):
            acc, rest = e.inputs[side], e.inputs[1 - side]
            leaves, inner = _add_tree(rest, producer, uses)
            picked = [x for x in leaves if _branch_result(x, producer, uses)]
            if not picked or acc in leaves:
                continue
            result = picked[0]
            element = producer[id(result)]
            branch = producer[id(element.inputs[0])]
            made = producer.get(id(acc))
            if made is not None and made.op in SCATTER_OPS:
                continue  # a scatter is no accumulator: it joins the sum as an index_add
            if made is not None and at[id(made)] > at[id(branch)]:
                continue  # the accumulator is computed after the branch: it cannot be handed to it
            new_branch = _with_accumulator(branch, acc, element.params["index"])
            others = [x for x in leaves if x is not result]
            total = Var(f"{acc.name}_plus", acc.type) if others else e.out
            new = list(out)
            new[at[id(branch)]] = new_branch
            new[at[id(element)]] = Eqn("element", (new_branch.out,), element.params, total)
            chain, current = [], total
            for j, x in enumerate(others):
                nxt = e.out if j == len(others) - 1 else Var(f"{acc.name}_plus", acc.type)
                chain.append(Eqn("add", (current, x), {}, nxt))
                current = nxt
            dead = {id(producer[id(v)]) for v in inner} | {id(e)}
            spot = at[id(e)]
            return [q for q in new[:spot] if id(q) not in dead] + chain + \
                [q for q in new[spot + 1:] if id(q) not in dead]
    return None


def _add_tree(atom, producer, uses) -> tuple:
    """``(leaves, inner sums)`` of the sum ``atom`` is: adds of the accumulator's type read only there."""
    e = producer.get(id(atom))
    if e is None or e.op != "add" or uses.get(id(atom)) != 1 or not all(
            isinstance(a, (Var, Const)) and a.type == e.out.type for a in e.inputs):
        return [atom], []
    left, li = _add_tree(e.inputs[0], producer, uses)
    right, ri = _add_tree(e.inputs[1], producer, uses)
    return left + right, [atom] + li + ri


def _branch_result(atom, producer, uses) -> bool:
    element = producer.get(id(atom))
    if element is None or element.op != "element" or uses.get(id(atom)) != 1:
        return False
    branch = producer.get(id(element.inputs[0]))
    return branch is not None and branch.op == "cond"


def _with_accumulator(e: Eqn, acc, k: int) -> Eqn:
    """Cond equation ``e`` with ``acc`` as one more operand and each branch's result ``k`` added to it."""
    branches = []
    for b in e.params["branches"]:
        acc_in = Var(f"{acc.name}_in", acc.type)
        total = Var(f"{acc.name}_sum", acc.type)
        eqns = list(b.eqns) + [Eqn("add", (acc_in, b.outputs[k]), {}, total)]
        outs = list(b.outputs)
        outs[k] = total
        inputs = list(b.inputs) + [acc_in]
        branches.append(b.replace(inputs=inputs, eqns=eqns, outputs=outs, params=[v.name for v in inputs]))
    return Eqn("cond", tuple(e.inputs) + (acc,), {**e.params, "branches": tuple(branches)}, e.out)


def into_loops(eqns: list, outputs) -> list:
    """``acc + r`` with ``r`` an accumulator a loop (``scan``) starts from zeros and only adds to, read only there:
    the loop starts from ``acc`` instead (a nested reverse sweep then adds into the outer accumulator)."""
    from gradc.ops.control import scan_parts
    uses: dict = {}
    for a in [a for e in eqns for a in e.inputs] + list(outputs):
        uses[id(a)] = uses.get(id(a), 0) + 1
    producer = {id(e.out): e for e in eqns}
    out = list(eqns)
    for e in eqns:
        if e.op != "add" or e.out.type.shape == () or not all(isinstance(a, Var) and a.type == e.out.type
                                                                for a in e.inputs):
            continue
        for side in (0, 1):
            acc, result = e.inputs[side], e.inputs[1 - side]
            element = producer.get(id(result))
            loop = producer.get(id(element.inputs[0])) if element is not None and element.op == "element" else None
            if loop is None or loop.op != "scan" or uses.get(id(result)) != 1:
                continue
            k = element.params["index"]
            _, consts, carry, _ = scan_parts(loop.inputs, loop.params)
            if k >= len(carry) or not _zeros(carry[k], producer) or not _only_added(loop.params["body"],
                                                                                      1 + len(consts) + k, k):
                continue
            at = {id(q): j for j, q in enumerate(out)}
            made = producer.get(id(acc))
            if id(loop) not in at or (made is not None and (id(made) not in at or at[id(made)] > at[id(loop)])):
                continue
            position = (1 if loop.params["length"] is None else 0) + len(consts) + k
            inputs = list(loop.inputs)
            inputs[position] = acc
            new_loop = Eqn("scan", tuple(inputs), loop.params, loop.out)
            out[at[id(loop)]] = new_loop
            out[at[id(element)]] = Eqn("element", (loop.out,), element.params, e.out)
            del out[at[id(e)]]
            for q in list(producer):
                if producer[q] is loop:
                    producer[q] = new_loop
            break
    return out


def _zeros(atom, producer) -> bool:
    """Whether ``atom`` is zeros: a zero constant, or one broadcast."""
    if isinstance(atom, Const):
        return not atom.value.any()
    e = producer.get(id(atom))
    return e is not None and e.op == "broadcast_to" and isinstance(e.inputs[0], Const) and not e.inputs[0].value.any()


def _only_added(body, position: int, k: int) -> bool:
    """Whether the body's carried input at ``position`` is read once, by an ``add`` (or an ``index_add`` into it)
    whose result is the body's carried output ``k`` and read nowhere else."""
    v = body.inputs[position]
    readers = [e for e in body.eqns if any(a is v for a in e.inputs)]
    if len(readers) != 1 or sum(o is v for o in body.outputs):
        return False
    e = readers[0]
    if e.op == "add" and sum(a is v for a in e.inputs) == 1 or e.op == "index_add" and e.inputs[0] is v and \
            all(a is not v for a in e.inputs[1:]):
        return body.outputs[k] is e.out and sum(o is e.out for o in body.outputs) == 1 and \
            not any(a is e.out for q in body.eqns for a in q.inputs)
    return False
