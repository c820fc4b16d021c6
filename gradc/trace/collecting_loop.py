"""A captured ``for`` whose body appends to lists (``gradc.trace.capture_lists``): the appended items become the
loop's per-step outputs (``gradc.trace.loop_outputs.fori_scan`` or ``scan``), or, when the body reads earlier
items, a buffer of every item the loop carries and writes as it appends.

>>> collecting((1.0, []), ("s", "ys"), ("ys",))
[1]
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.trace import control_trace as ct
from gradc.trace.capture_lists import (
    _LAST_HINT,
    Heterogeneous,
    NeedsBuffer,
    NeedsCount,
    StepList,
    _array,
    _as_rows,
    _row,
    _unset,
)
from gradc.trace.collected_list import StackedList, row_item
from gradc.trace.inplace import hold_in_list
from gradc.trace.loop_outputs import stack_trees


def collecting(init, names, collected) -> list:
    """Positions of the carried names the loop collects (appends to) that hold a list or an enclosing loop's
    :class:`StepList`."""
    return [k for k, n in enumerate(names) if n in collected and isinstance(init[k], (list, StepList))]


def _start_state(value):
    """``(last, count, empty)`` of a list (or an enclosing loop's StepList) when a loop starts appending to it."""
    if isinstance(value, StepList):
        last = value.last_item() if value.chunks else value.last
        count = value.length() if value.count is not None else None
        return last, count, value.empty_at_start and not value.chunks
    return (value[-1] if value else None), len(value), not value


def for_collecting(iterable, body, init, names, where, positions, run, first_item, trips, python_items):
    """A captured ``for`` in functional form whose body appends to the lists at ``positions`` of the carry:
    ``run(iterable, step, carry)`` runs ``step(item, carry) -> (carry, ys)`` as a loop with per-step outputs
    and returns ``(carry, ys)``. A list the body reads other than at ``[-1]`` is traced again with a buffer of
    all its items (``first_item``: the loop's first item, for counting the appends; ``trips``: its length). A list
    that gets items of different shapes cannot be stacked: the loop runs in Python over ``python_items()``."""
    buffered: dict = {k: None for k in positions if isinstance(init[k], StepList) and init[k].buffer is not None}
    counted: set = set()  # the lists whose length the loop carries (it reads it)
    while True:
        try:
            return _collect(iterable, body, init, names, where, positions, run, buffered, counted)
        except NeedsCount as need:
            k = next((k for k in positions if need.args[0].startswith(names[k] + " ") and k not in counted), None)
            if k is None or (isinstance(init[k], StepList) and init[k].count is None):
                raise  # an enclosing loop's list: that loop counts it first
            counted.add(k)
        except Heterogeneous as mixed:
            return _in_python(mixed, body, init, names, positions, python_items)
        except NeedsBuffer as need:
            k = next((k for k in positions if need.args[0].startswith(names[k] + "[") and k not in buffered), None)
            if k is None or isinstance(init[k], StepList):
                raise  # an enclosing loop's list: that loop holds the buffer
            try:  # the first run that counts the appends may meet items that cannot stack too
                buffered[k] = _buffer_for(iterable, body, init, names, where, positions, k, first_item, trips)
            except Heterogeneous as mixed:
                return _in_python(mixed, body, init, names, positions, python_items)


def _in_python(mixed, body, init, names, positions, python_items):
    """The loop run in Python (unrolled) because the items appended cannot be one stacked array."""
    if any(isinstance(init[k], StepList) and mixed.args[0].startswith(names[k] + " ") for k in positions):
        raise mixed  # an enclosing loop's list: that loop runs in Python
    carry = tuple(init)
    for item in python_items():
        carry = body(item, carry)
    return carry


def _buffer_for(iterable, body, init, names, where, positions, k, first_item, trips):
    """The buffer of list ``k``: its items so far and zeros for the ``trips`` x (appends an iteration) to come."""
    carry = list(init)
    for j in positions:
        last, count, empty = _start_state(init[j])
        carry[j] = StepList(names[j], where, last if not empty else _unset(names[j]), count,
                            empty_at_start=empty, probe=True)
    out = body(first_item, tuple(carry))[k]  # a first run that only counts the appends
    if not isinstance(out, StepList) or not out.chunks:
        raise TraceError(f"{names[k]!r} is read inside the loop but nothing is appended to it", where=where,
                         hint=_LAST_HINT)
    rows = trips * out.new_rows()
    item = _row(_as_rows(out.chunks[0]), 0)
    zeros = _zeros_rows(item, rows)
    before = list(init[k])
    if not before:
        return zeros
    old = ct.flatten(stack_trees(before))[0]
    leaves, rebuild = ct.flatten(zeros)
    return rebuild([np.concatenate([_array(a), b]) for a, b in zip(old, leaves)])


def _zeros_rows(item, n):
    leaves, rebuild = ct.flatten(item)
    out = []
    for leaf in leaves:
        dtype = leaf.aval.np_dtype if isinstance(leaf, Traced) else np.asarray(leaf).dtype
        out.append(np.zeros((n,) + tuple(np.shape(leaf)), dtype=dtype))
    return rebuild(out)


def _carry0(init, positions, buffered, counted):
    """The loop's initial carry: a list's last item (none when it starts empty: a read of it before an append fails
    at the first iteration, as in Python) and, when the loop reads it, its length; or (buffer, length)."""
    out = list(init)
    for k in positions:
        last, count, empty = _start_state(init[k])
        if k in buffered:
            out[k] = (buffered[k] if buffered[k] is not None else init[k].buffer, count)
        else:
            out[k] = (() if empty else (last,)) + ((count,) if k in counted else ())
    return tuple(out)


def _collect(iterable, body, init, names, where, positions, run, buffered, counted):
    starts = {k: _start_state(init[k]) for k in positions}
    per_step: dict = {}  # position -> 1 (one item an iteration, as it is) or m (m items, stacked)
    rebinds: dict = {}  # position -> whether the body makes a new list (ys = ys + [y])

    def step(item, carry):
        carry = list(carry)
        for k in positions:
            empty = starts[k][2]
            if k in buffered:
                buffer, count = carry[k]
                carry[k] = StepList(names[k], where, _unset(names[k]), count, empty_at_start=empty, buffer=buffer)
                continue
            state = list(carry[k])
            last = state.pop(0) if not empty else _unset(names[k])
            count = state.pop(0) if k in counted else None
            carry[k] = StepList(names[k], where, last, count, empty_at_start=empty)
        body_builder = next((leaf.builder for leaf in ct.flatten([item, carry])[0] if isinstance(leaf, Traced)),
                            None)
        entered = {k: [(leaf, getattr(leaf, "atom", None)) for leaf in ct.flatten(v)[0]]
                   for k, v in enumerate(carry) if k not in positions}
        out = list(body(item, tuple(carry)))
        _refuse_aliased_items(entered, out, positions, names, where)
        held.update(_appended_carries(out, positions, names))
        _hold_captured(out, positions, names, body_builder)
        ys = []
        for k in positions:
            collected = out[k]
            if not isinstance(collected, StepList):
                raise TraceError(f"{names[k]!r} is appended to and also rebound inside a traced loop", where=where,
                                 hint=f"append to {names[k]} only, or use another name for the new value")
            state, rows = collected.step_output()
            rebinds[k] = collected.rebinds
            per_step[k] = None if rows is None else (1 if len(collected.chunks) == 1 and
                                                     collected.chunks[0][0] == "item" else collected.new_rows())
            if k in buffered:
                per_step[k] = "buffer" if collected.new_rows() else None
                out[k] = (state.buffer, state.count)
            else:
                out[k] = (() if starts[k][2] else (state.last,)) + ((state.count,) if k in counted else ())
            ys.append(rows if rows is not None else ())
        return tuple(out), tuple(ys)
    held: dict = {}  # (carry position, leaf) -> the list that appended that carried array itself
    carry, ys = run(iterable, step, _carry0(init, positions, buffered, counted))
    out = list(carry)
    for (k, p), list_name in held.items():
        leaf = ct.flatten(carry[k])[0][p]
        if isinstance(leaf, Traced):
            hold_in_list(leaf.builder, leaf.atom, list_name)  # in NumPy a later `z[0] = v` changes the items
    for j, k in enumerate(positions):
        if per_step.get(k) == "buffer":  # the buffer holds every item: the rows are those after the earlier ones
            leaves, rebuild = ct.flatten(carry[k][0])
            rows = rebuild([leaf[starts[k][1]:] for leaf in leaves])
            if isinstance(init[k], StepList):  # an enclosing loop's buffer: already written
                out[k] = init[k]._with(chunks=init[k].chunks + [("block", rows, _n_rows(rows))],
                                       buffer=carry[k][0])
                continue
            out[k] = _after_loop(init[k], rows, rebinds.get(k, False))
            continue
        rows = None if ys is None or per_step.get(k) is None else ys[j]
        if rows is not None and per_step.get(k, 1) != 1:  # (trips, m, ...) -> (trips * m, ...)
            leaves, rebuild = ct.flatten(rows)
            rows = rebuild([np.reshape(leaf, (-1,) + tuple(leaf.shape[2:])) for leaf in leaves])
        out[k] = _after_loop(init[k], rows, rebinds.get(k, False))
    return tuple(out)


def _refuse_aliased_items(entered, out, positions, names, where) -> None:
    """Refuse an item that is an array the loop carries on and writes in place (``ys.append(z)`` then
    ``z[i] = ...``): NumPy's list holds that array itself and sees every later write, while the loop's stacked
    outputs hold each iteration's value. ``entered``: the carried leaves and their values as the iteration
    began."""
    for k, pairs in entered.items():
        written = {id(leaf) for leaf, atom in pairs if isinstance(leaf, Traced) and leaf.atom is not atom}
        if not written:
            continue
        leaves = ct.flatten(out[k])[0]
        carried_on = {id(after) for (before, _), after in zip(pairs, leaves) if id(before) in written}
        carried_on |= written & {id(leaf) for leaf in leaves}
        for j in positions:
            chunks = out[j].chunks if isinstance(out[j], StepList) else []
            if any(id(_root(leaf)) in carried_on for chunk in chunks for leaf in ct.flatten(chunk[1])[0]):
                raise TraceError(f"{names[j]} holds the array {names[k]} itself, which the loop writes into in "
                                 f"place: NumPy's list would see the later writes, gradc's loop keeps each "
                                 f"iteration's value", where=where,
                                 hint=f"append a copy ({names[j]}.append({names[k]}.copy())), or rebind "
                                      f"{names[k]} instead of writing into it")


def _root(leaf):
    """The array a (basic-index) view writes through to, or ``leaf`` itself."""
    while getattr(leaf, "_base", None) is not None:
        leaf = leaf._base
    return leaf


def _appended_roots(out, positions, names) -> dict:
    """``{id(root): list name}`` for the arrays the lists at ``positions`` appended (or appended views of)."""
    return {id(_root(leaf)): names[j] for j in positions if isinstance(out[j], StepList)
            for chunk in out[j].chunks for leaf in ct.flatten(chunk[1])[0]}


def _hold_captured(out, positions, names, body_builder) -> None:
    """An appended array (or view) from outside the loop (read from an enclosing scope) is that outer array itself
    in NumPy's list: a write into it after the loop is refused (``gradc.trace.inplace.check_writable``)."""
    for j in positions:
        chunks = out[j].chunks if isinstance(out[j], StepList) else []
        for leaf in (_root(leaf) for chunk in chunks for leaf in ct.flatten(chunk[1])[0]):
            builder, atom = getattr(leaf, "builder", None), getattr(leaf, "atom", None)
            if builder is not None and builder is not body_builder:
                hold_in_list(builder, atom, names[j])
            while builder is not None and getattr(builder, "parent", None) is not None:
                k = next((k for k, v in enumerate(builder.capture_inputs) if v is atom), None)
                if k is None:
                    break
                builder, atom = builder.parent, builder.captured[k]
                hold_in_list(builder, atom, names[j])


def _appended_carries(out, positions, names) -> dict:
    """``{(k, p): list name}`` for each carried leaf ``p`` of ``out[k]`` that a list appended as the array itself
    (or a view of it)."""
    appended = _appended_roots(out, positions, names)
    return {(k, p): appended[id(leaf)] for k, v in enumerate(out) if k not in positions
            for p, leaf in enumerate(ct.flatten(v)[0]) if id(leaf) in appended}


def _after_loop(before, rows, rebinds=False):
    """What the name of a collected list holds after the loop: ``before`` with the rows appended (``rebinds``: in a
    new list, ``before`` left as it was)."""
    if rows is None:
        return before
    n = _n_rows(rows)
    if isinstance(before, StepList):  # a nested loop: a block of rows in the enclosing iteration
        return before.with_block(rows, n)
    items = [row_item(rows, k) for k in range(n)]
    after = StackedList(list(before) + items, before, rows)
    if not rebinds:
        before.extend(items)  # another name for the same list sees the items too
    return after


def _n_rows(rows) -> int:
    leaf = ct.flatten(rows)[0][0]
    return int(leaf.shape[0])
