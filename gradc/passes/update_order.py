"""The order of index updates and reads, arranged so that updates can run in place (``gradc.passes.in_place``).

An update ``t = index_update(a, v, idx)`` may write into ``a`` only after ``a``'s last read.
:func:`sink_updates` moves each update down past later reads of its operand that do not
depend on it (a reverse sweep zeroes ``ct[i]`` in the IR before it reads ``ct[i]``); where a
read of the update's own result stands in the way, the later slot reads of the operand are
moved up above the update instead; and a part of the operand (a row, ``index``/``gather``)
read after the update becomes a copy of that part (an ``astype`` to its own dtype), so that
a row is copied rather than the array. :func:`read_positions` says where the NumPy emitter
really reads each equation's operands (it writes a sum of scatters into one buffer at the
sum).

>>> from gradc.ir.graph import Graph
>>> sink_updates([], [])
[]
"""
from __future__ import annotations

from gradc.ir.graph import Eqn, Var
from gradc.ir.registry import OPS

UPDATE_OPS = frozenset({"index_update", "index_add"})
# ops whose NumPy (and C) result is a new array; any other op may return a view of, or its very, operand
# (``gather`` with 0-d index arrays is spelled as a basic index, ``Y[:, i]``: a view)
_NOT_FRESH_ELEMENTWISE = frozenset({"stop_gradient", "recompute"})  # (``astype`` copies, even to its dtype)
_FRESH = frozenset({"index_update", "index_add", "index_grad", "gather_grad", "matmul", "dot",
                    "concatenate", "stack", "sum", "prod", "mean", "max", "min", "cumsum", "cumprod", "outer",
                    "tensordot", "einsum", "contract", "where", "zeros", "ones", "full", "arange"})


def fresh(op: str, out=None) -> bool:
    """Whether an ``op`` equation's result is a new array (``out``: the result, when known; a single entry read
    from an array is a new NumPy scalar, not a view)."""
    if out is not None and op in ("index", "gather") and out.type.shape == ():
        return True
    o = OPS.get(op)
    return op in _FRESH or (o is not None and o.elementwise and op not in _NOT_FRESH_ELEMENTWISE)


def sink_updates(eqns: list, outputs) -> list:
    """Each update moved to just after the last later read of its operand (or of a view of it) when nothing in
    between depends on the update's result (a reverse sweep zeroes ``ct[i]`` before reading ``ct[i]``)."""
    eqns = list(eqns)
    done: set = set()  # each update is arranged once (two updates of one operand must not swap for ever)
    p = 0
    while p < len(eqns):
        e = eqns[p]
        if e.op in UPDATE_OPS and isinstance(e.inputs[0], Var) and id(e) not in done:
            done.add(id(e))
            start = p
            for _ in range(len(eqns)):  # each step moves reads up or copies a part: bounded
                p = next(k for k, q in enumerate(eqns) if q is e)
                q = _last_read_of(eqns, p, e.inputs[0], read_positions(eqns, outputs))
                if q <= p:
                    break
                if not _depends_between(eqns, p, q, e.out):
                    eqns.insert(q, eqns.pop(p))
                    break
                if not (_hoist_reads(eqns, p, e.inputs[0]) or _copy_views(eqns, p, e.inputs[0], outputs)):
                    break
            p = start
            continue  # the equation now at p is another one (or this one, done)
        p += 1
    return eqns


def _copy_views(eqns: list, p: int, target, outputs) -> bool:
    """Make each part of ``target`` read (``index``/``gather``, smaller than it) before position ``p`` and used
    after it a copy (an ``astype`` to its own dtype): copying a row per iteration instead of the array."""
    later_reads = {id(a) for e in eqns[p + 1:] for a in e.inputs}
    kept = {id(o) for o in outputs}
    changed = False
    for r in range(p):
        e = eqns[r]
        if e.op not in ("index", "gather") or e.inputs[0] is not target or e.out.type.shape == () or \
                id(e.out) not in later_reads or id(e.out) in kept or \
                len(e.out.type.shape) >= len(target.type.shape):
            continue
        copy = Var(f"{e.out.name}_copy", e.out.type)
        for q in range(p + 1, len(eqns)):
            if any(a is e.out for a in eqns[q].inputs):
                eqns[q] = Eqn(eqns[q].op, tuple(copy if a is e.out else a for a in eqns[q].inputs),
                              eqns[q].params, eqns[q].out)
        eqns.insert(r + 1, Eqn("astype", (e.out,), {"dtype": e.out.type.dtype}, copy))
        changed = True
        break  # positions moved: the caller looks again
    return changed


def _hoist_reads(eqns: list, p: int, target) -> bool:
    """Move the slot reads of ``target`` after position ``p`` (``ct[j]`` read after ``ct[i] = 0`` and after a read
    of the update's result) to just before ``p``, where their operands are all computed before ``p``."""
    later = {id(e.out) for e in eqns[p:]}  # (graph inputs and earlier results are available before p)
    moved = []
    for q in range(p + 1, len(eqns)):
        e = eqns[q]
        if e.op in ("index", "gather") and e.inputs[0] is target and all(
                id(a) not in later for a in e.inputs[1:]):
            moved.append(q)
    if not moved:
        return False
    hoisted = [eqns[q] for q in moved]
    for q in reversed(moved):
        del eqns[q]
    eqns[p:p] = hoisted
    return True


def read_positions(eqns: list, outputs) -> list:
    """Where each equation's operands are read in the emitted code: its own position, except for the scatters
    into zeros that the NumPy emitter writes into one buffer at the sum that adds them (``x_bar[s1] = a``,
    ``x_bar[s2] += b``, see ``gradc.backends.numpy.analysis.accumulations``): that sum's position."""
    uses: dict = {}
    for atom in [a for e in eqns for a in e.inputs] + list(outputs):
        uses[id(atom)] = uses.get(id(atom), 0) + 1
    pieces: dict = {}  # id(value) -> positions of the scatters it sums
    inner: set = set()
    for p, e in enumerate(eqns):
        if e.op == "index_grad":
            pieces[id(e.out)] = [p]
        elif e.op == "add" and e.inputs[0] is not e.inputs[1] and all(
                isinstance(a, Var) and id(a) in pieces and uses[id(a)] == 1 for a in e.inputs):
            pieces[id(e.out)] = pieces[id(e.inputs[0])] + pieces[id(e.inputs[1])]
            inner.update(id(a) for a in e.inputs)
    at = list(range(len(eqns)))
    for p, e in enumerate(eqns):
        if id(e.out) in pieces and id(e.out) not in inner and len(pieces[id(e.out)]) > 1:
            for q in pieces[id(e.out)]:
                at[q] = p
    return at


def _last_read_of(eqns: list, p: int, target, at: list) -> int:
    """The last position after ``p`` of an equation reading ``target`` or a value viewing it (program order;
    a read the emitter defers counts where it happens)."""
    family = {id(target)}
    last = p
    for q in range(len(eqns)):
        e = eqns[q]
        if q != p and any(id(a) in family for a in e.inputs):
            if q > p:
                last = max(last, at[q])
            if not fresh(e.op, e.out):
                family.add(id(e.out))  # a view (or a loop result that may be it), made before or after
    return last


def _depends_between(eqns: list, p: int, q: int, value) -> bool:
    seen = {id(value)}
    for e in eqns[p + 1:q + 1]:
        if any(id(a) in seen for a in e.inputs):
            return True
    return False
