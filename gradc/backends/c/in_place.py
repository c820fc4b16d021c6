"""Writing arrays in place in C: an index assignment, a loop's carried array and a branch's result reuse storage.

An ``index_update`` copies its operand unless the operand's storage is this emitter's to write
and nothing reads that storage after the equation; then it writes there (``update.in_place``).
The same test lets a loop carry an array in the storage of its initial value, and a branch
compute its result in the storage of an operand, so that ``out[i] = v`` in a loop costs O(1)
per iteration instead of two whole-array copies. The decision is the emitter's own, from the
lifetimes it computes (``FunctionEmitter.plan``): a mark of the IR's in-place pass is a
promise it does not need to trust, so a wrong one costs a copy, never an aliased value.

Storage is *writable* here when it is a work array of this emitter's pool (``SlotPool``) or
an array bound to a nested graph's input that the enclosing code lends it for writing
(``bound``: a loop body's carried values, a branch's operands dead after the branch). Either
way the array's record lists every value held there, and it may be overwritten once none of
them is read after the current segment.

``sink_reads`` orders a graph's equations so that, where it can, the other readers of an
updated array run before the update (the adjoint of ``out[i] = v`` reads ``out_bar[i]``
after zeroing it), which lets the update run in place.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.ops.shape_extra import index_update
>>> g = trace(lambda x: index_update(x * 2.0, 0.0, [], [("int", 0)]) + (x * 2.0)[1], np.ones(3))
>>> [e.op for e in sink_reads(g.eqns)] == [e.op for e in g.eqns]
True
"""
from __future__ import annotations

from gradc.backends.c.update import UPDATE_OPS
from gradc.backends.c.values import C_TYPES, Loc, size
from gradc.ir.graph import Var, subgraphs

# ops whose run may end the function early with a status (their order among themselves is the user's)
_STATUS_OPS = frozenset({"check_raise", "index_update", "index_add", "scan", "while_loop", "cond"})


def _may_stop(eqn) -> bool:
    return eqn.op in _STATUS_OPS or bool(subgraphs(eqn))


def sink_reads(eqns) -> list:
    """``eqns`` reordered (a topological order still) so that each ``index_update``'s operand is read by the
    other equations that can run first before it, where that needs no equation moved past one that stops the
    function (a status: the first failing check stays the first).

    >>> from gradc.ir.graph import Eqn, Var
    >>> from gradc.ir.types import TensorType
    >>> t = TensorType((3,), "f64")
    >>> x, v, y, z = (Var(n, t) for n in "xvyz")
    >>> upd, read = Eqn("index_update", (x, v), {"spec": ()}, y), Eqn("neg", (x,), {}, z)
    >>> [e.op for e in sink_reads([upd, read])]
    ['neg', 'index_update']
    """
    order = list(eqns)
    done: set = set()
    i = 0
    while i < len(order):
        e = order[i]
        if e.op not in UPDATE_OPS or id(e) in done or not isinstance(e.inputs[0], Var):
            i += 1
            continue
        done.add(id(e))
        moved = _readers_first(order, i)
        if moved:
            order[i:i] = [order[p] for p in moved]  # before e, in their order
            for p in reversed(moved):
                del order[p + len(moved)]
            continue  # the moved equations are at i now: look at them (updates among them) too
        i += 1
    return order


def _readers_first(order, at) -> list:
    """Positions after ``at`` of the equations to run before the update there: the later readers of its operand
    and what they need; empty when none, or when one of them needs the update's result (then the update
    copies) or another update of the operand reads it later (only one of them could be in place)."""
    e = order[at]
    x = id(e.inputs[0])
    readers = [p for p in range(at + 1, len(order)) if any(id(a) == x for a in order[p].inputs)]
    if not readers:
        return []
    if any(order[p].op in UPDATE_OPS and id(order[p].inputs[0]) == x for p in readers):
        return []
    end = readers[-1]
    after = {id(e.out)}  # values computed from the update's result
    for p in range(at + 1, end + 1):
        if any(id(a) in after for a in order[p].inputs):
            after.add(id(order[p].out))
    if any(id(order[p].out) in after for p in readers):
        return []
    need, moved = set(), []
    wanted = set(readers)
    for p in range(end, at, -1):
        q = order[p]
        if p in wanted or id(q.out) in need:
            moved.append(p)
            need.update(id(a) for a in q.inputs)
    moved.reverse()
    if _may_stop(e) and any(_may_stop(order[p]) for p in moved):
        return []
    return moved


def update_root(graph, out) -> int | None:
    """The position among ``graph``'s inputs of the array ``out`` is that input updated by index assignments
    (through loops carrying it), else None.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> from gradc.ops.shape_extra import index_update
    >>> g = trace(lambda a, x: index_update(x, a, [], [("int", 0)]), 1.0, np.ones(3))
    >>> update_root(g, g.outputs[0])
    1
    """
    produced = {id(e.out): e for e in graph.eqns}
    value = out
    for _ in range(len(graph.eqns) + 1):
        if not isinstance(value, Var):
            return None
        e = produced.get(id(value))
        if e is None:
            return next((n for n, v in enumerate(graph.inputs) if v is value), None)
        if e.op in UPDATE_OPS:
            value = e.inputs[0]
            continue
        if e.op == "element" and _producer_op(produced, e.inputs[0]) in ("scan", "while_loop"):
            value = _carried_init(produced[id(e.inputs[0])], e.params["index"])
            continue
        return None
    return None


def _producer_op(produced, value):
    e = produced.get(id(value))
    return None if e is None else e.op


def _carried_init(loop, k):
    """The initial value of carried item ``k`` of a ``scan`` or ``while_loop`` (None if ``k`` is not carried)."""
    from gradc.ops.control import scan_parts, while_parts

    if loop.op == "scan":
        carry = scan_parts(loop.inputs, loop.params)[2]
    else:
        carry = while_parts(loop.inputs, loop.params)[2]
    return carry[k] if k < len(carry) else None


class InPlaceStorage:
    """The emitter's test and bookkeeping for writing into a value's storage, mixed into ``FunctionEmitter``."""

    def writable_slot(self, loc: Loc, value, others=()) -> tuple | None:
        """The record of ``loc``'s array when ``value`` (held at ``loc``) may be overwritten there now: the array
        is this emitter's to write, ``loc`` covers it from its start in row-major order, nothing reads the array
        after this segment, and none of ``others`` (the equation's other operands) reads it. Else None."""
        if not isinstance(value, Var) or loc.local or loc.value is not None or not loc.standard or loc.offset != 0:
            return None
        if self.last.get(id(value), -1) > self.segment:
            return None
        slot = self.pool.find(loc.name) or self.bound.get(loc.name)
        if slot is None or self.pool.dead_after(slot) > self.segment:
            return None
        if any(o is not None and o.value is None and o.name == loc.name for o in others):
            return None
        return slot

    def reuse(self, slot, loc: Loc, holder_id: int, shape, dtype) -> Loc:
        """``loc``'s array now holds the value known by ``holder_id`` (alive as long as ``last`` says)."""
        slot[3].append(holder_id)
        return Loc(loc.name, shape, dtype=dtype)

    def lend_for_writing(self, sub, inputs, locs):
        """Let the nested emitter ``sub`` write the arrays ``locs`` bound to its ``inputs`` once it is done
        reading them (a loop's carried values, a branch's dead operands)."""
        for v, loc in zip(inputs, locs):
            if loc is None or loc.local or loc.value is not None or not loc.standard or loc.offset != 0:
                continue
            sub.bound[loc.name] = (loc.name, C_TYPES[loc.dtype], size(loc.shape), [id(v)])


__all__ = ["InPlaceStorage", "sink_reads", "update_root"]
