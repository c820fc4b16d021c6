"""Lists a traced loop appends to: the loop stays a loop, and the items become the stacked outputs of its ``scan``.

``ys = []`` before a loop and ``ys.append(y)`` (or ``ys += [y]``, ``ys.extend([a, b])``) inside it is how
Python code collects per-step values; JAX's ``scan`` returns them stacked (its ``ys``). The capture
rewrites the appends in a loop's body as ``ys = rt.append_(ys, y)`` (Python's own ``append`` on a list,
so the loop run in Python is unchanged); when the loop runs in functional form, ``ys`` is a
:class:`StepList` inside the body (what this iteration appended, and the last item for a read of
``ys[-1]``), each iteration's items become the loop's per-step outputs, and after the loop ``ys`` is a
:class:`StackedList`: a Python list of the items (the rows of the stacked outputs) that also knows its
stacked form, so ``np.stack(ys)``, ``np.array(ys)``, ``np.concatenate(ys)``, ``np.vstack(ys)``, ``sum(ys)``
and a loop over ``ys`` use the stacked array as it is instead of one operation per item.

Every iteration must append the same number of items of the same types (a traced ``if`` appending in
one branch only, or a ``break`` before an append, makes the count known only at run time: refused at
the user's line); a ``while`` loop on traced values cannot collect (its trip count is not known).
Inside the loop, ``ys[-1]`` and ``len(ys)`` read the list as it stands; other reads of earlier items are
refused with a hint.

>>> StepList.empty("ys", "f.py:1", []).count
0
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.ir.builder import Traced
from gradc.trace import control_trace as ct

_LAST_HINT = ("read the last item with ys[-1], or keep the values the loop needs in variables of their own "
              "(prev = y before appending y)")


class StepList:
    """A list inside one iteration of a loop that collects it: the items appended so far in the iteration
    (``chunks``: ``("item", pytree)`` or ``("block", rows pytree, number of rows)`` for what a nested loop
    collected), the last item before them (``last``, or an unset value when the list was empty), and how many
    items the list held before the iteration (``count``: traced inside a loop)."""

    def __init__(self, name, where, last, count, chunks=(), empty_at_start=False, buffer=None, probe=False,
                 rebinds=False):
        self.name, self.where = name, where
        self.last, self.count, self.chunks = last, count, list(chunks)
        self.empty_at_start = empty_at_start
        # reads of any earlier item (ys[i - 1]): every item so far in an array of the final length, written as
        # appended (``buffer``); ``probe``: a first run that only counts the appends (reads give the last item)
        self.buffer, self.probe = buffer, probe
        self.rebinds = rebinds  # `ys = ys + [y]` made a new list: the list before the loop keeps its items

    def _with(self, **changes) -> StepList:
        fields = dict(name=self.name, where=self.where, last=self.last, count=self.count, chunks=self.chunks,
                      empty_at_start=self.empty_at_start, buffer=self.buffer, probe=self.probe,
                      rebinds=self.rebinds)
        fields.update(changes)
        return StepList(**fields)

    @classmethod
    def empty(cls, name, where, items):
        """The state at the start of a loop over a list holding ``items``."""
        last = items[-1] if len(items) else _unset(name)
        return cls(name, where, last, len(items), empty_at_start=not len(items))

    # ---- a pytree of the loop's carry (gradc.trace.control_trace.flatten)
    def gc_flatten(self):
        has_last = not _is_unset(self.last)  # an empty list has no last item: no leaf (branches agree on that)
        has_buffer = self.buffer is not None
        parts = ([self.last] if has_last else []) + [self.count] + ([self.buffer] if has_buffer else []) + \
            [c[1] for c in self.chunks]
        leaves, rebuild_parts = ct.flatten(parts)
        shape = [(c[0], c[2] if c[0] == "block" else None) for c in self.chunks]
        unset = self.last

        def rebuild(new_leaves):
            values = rebuild_parts(list(new_leaves))
            last = values.pop(0) if has_last else unset
            count = values.pop(0)
            buffer = values.pop(0) if has_buffer else None
            chunks = [(kind, v, n) if kind == "block" else (kind, v) for (kind, n), v in zip(shape, values)]
            return self._with(last=last, count=count, chunks=chunks, buffer=buffer)
        return leaves, rebuild

    # ---- what the user's code does with the list inside the loop
    def appended(self, item) -> StepList:
        buffer = self.buffer
        if buffer is not None:
            buffer = _write_row(buffer, self.count + self.new_rows(), item)
        return self._with(chunks=self.chunks + [("item", item)], buffer=buffer)

    def append(self, item):  # a helper given the list appends to it: this iteration's items
        if self.buffer is not None:
            self.buffer = _write_row(self.buffer, self.count + self.new_rows(), item)
        self.chunks.append(("item", item))

    def with_block(self, rows, n) -> StepList:
        """This list after a nested loop appended the ``n`` rows ``rows``."""
        buffer = self.buffer
        if buffer is not None:
            start = self.count + self.new_rows()
            for k in range(n):
                buffer = _write_row(buffer, start + k, _row(rows, k))
        return self._with(chunks=self.chunks + [("block", rows, n)], buffer=buffer)

    def extend(self, items):
        for item in _items_of(items, self.where):
            self.append(item)

    def __iadd__(self, items):
        out = self
        for item in _items_of(items, self.where):
            out = out.appended(item)
        return out

    def new_rows(self) -> int:
        return sum(1 if c[0] == "item" else c[2] for c in self.chunks)

    def last_item(self):
        if self.chunks:
            kind, value, *rest = self.chunks[-1]
            return value if kind == "item" else _row(value, rest[0] - 1)
        if self.empty_at_start and _is_unset(self.last):
            raise TraceError(f"{self.name}[-1] is read before anything was appended to it: the list is empty at "
                             "the loop's first iteration (Python raises IndexError)",
                             where=user_location() or self.where,
                             hint=f"append a first item to {self.name} before the loop")
        return self.last

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and key == -1 and self.buffer is None:
            return self.last_item()
        if self.buffer is not None and _is_index(key):
            position = key + self.length() if isinstance(key, (int, np.integer)) and key < 0 else key
            if isinstance(key, Traced):
                position = np.where(key < 0, key + self.length(), key)
            return _row(self.buffer, position)
        if self.probe:
            return self.last_item() if self.chunks or not self.empty_at_start else self._empty_read(key)
        if _is_index(key):
            raise NeedsBuffer(self.name)
        raise TraceError(f"{self.name}[{key!r}] inside the loop that appends to {self.name}: only the last item "
                         f"({self.name}[-1]) and len({self.name}) can be read while the loop collects the list",
                         where=self.where, hint=_LAST_HINT)

    def _empty_read(self, key):
        raise TraceError(f"{self.name}[...] is read before anything was appended to it: the list is empty at the "
                         "loop's first iteration (Python raises IndexError)", where=user_location() or self.where,
                         hint=f"append a first item to {self.name} before the loop")

    def __len__(self):
        raise TraceError(f"len({self.name}) inside a traced loop that appends to it is a traced number",
                         where=self.where, hint="use the loop counter, or len(...) after the loop")

    def length(self):
        """``len(list)`` as a value (traced inside a functional loop)."""
        return self.count + self.new_rows()

    def __iter__(self):
        raise TraceError(f"iterating over {self.name} inside the loop that appends to it", where=self.where,
                         hint=_LAST_HINT)

    def __repr__(self):
        return f"<list {self.name} collected by a traced loop>"

    # ---- the end of an iteration
    def step_output(self):
        """``(state for the next iteration, this iteration's rows)``: one item as it is, several stacked (None with
        a buffer, which holds them)."""
        rows = self.new_rows()
        if self.buffer is not None:
            return self._with(count=self.count + rows, chunks=()), None
        if rows == 0:
            return StepList(self.name, self.where, self.last, self.count, (), self.empty_at_start), None
        last = self.last_item()
        if len(self.chunks) == 1 and self.chunks[0][0] == "item":
            out = self.chunks[0][1]
        else:
            out = _concatenate_rows([_as_rows(c) for c in self.chunks])
        return StepList(self.name, self.where, last, self.count + rows, (), False), out


class NeedsBuffer(TraceError):
    """A read of an earlier item than the last (``ys[i - 1]``) inside the loop: the loop is traced again with a
    buffer of every item (:class:`StepList`)."""

    def __init__(self, name):
        super().__init__(f"{name}[k] is read inside the loop that appends to {name}", hint=_LAST_HINT)


def _is_index(key) -> bool:
    if isinstance(key, Traced):
        return key.aval.shape == () and str(key.aval.dtype).startswith(("i", "u"))
    return isinstance(key, (int, np.integer)) and not isinstance(key, bool)


def _write_row(buffer, position, item):
    from gradc.trace import inplace
    leaves, rebuild = ct.flatten(buffer)
    items = ct.flatten(item)[0]
    if len(items) != len(leaves):
        raise TraceError("the items appended to a list in a traced loop differ in structure",
                         hint="append values of the same structure (all arrays, or all tuples of the same length)")
    return rebuild([inplace.setitem(leaf, position, value) for leaf, value in zip(leaves, items)])


def _unset(name):
    from gradc.trace.capture_runtime import Undefined
    return Undefined(name)


def _is_unset(value) -> bool:
    return ct.is_unset(value)


def _items_of(items, where):
    if isinstance(items, (list, tuple)):
        return list(items)
    raise TraceError("extending a list a traced loop collects by something other than a list or tuple", where=where,
                     hint="append the items one by one, or extend by a list display ([a, b])")


def _row(rows, k):
    leaves, rebuild = ct.flatten(rows)
    return rebuild([leaf[k] for leaf in leaves])


def _as_rows(chunk):
    """A chunk as a rows pytree (an item gets a leading axis of 1)."""
    if chunk[0] == "block":
        return chunk[1]
    leaves, rebuild = ct.flatten(chunk[1])
    return rebuild([np.expand_dims(_array(leaf), 0) for leaf in leaves])


def _array(x):
    return x if isinstance(x, Traced) else np.asarray(x)


def _concatenate_rows(parts):
    leaves = [ct.flatten(p)[0] for p in parts]
    _, rebuild = ct.flatten(parts[0])
    return rebuild([np.concatenate([row[j] for row in leaves]) for j in range(len(leaves[0]))])


# ---------------------------------------------------------------- a loop that collects lists
def collecting(init, names, collected) -> list:
    """Positions of the carried names the loop collects (appends to) that hold a list or an enclosing loop's
    :class:`StepList`."""
    return [k for k, n in enumerate(names) if n in collected and isinstance(init[k], (list, StepList))]


def _start_state(value):
    """``(last, count, empty)`` of a list (or an enclosing loop's StepList) when a loop starts appending to it."""
    if isinstance(value, StepList):
        last = value.last_item() if value.chunks else value.last
        return last, value.length(), value.empty_at_start and not value.chunks
    return (value[-1] if value else None), len(value), not value


def for_collecting(iterable, body, init, names, where, positions, run, first_item, trips):
    """A captured ``for`` in functional form whose body appends to the lists at ``positions`` of the carry:
    ``run(iterable, step, carry)`` runs ``step(item, carry) -> (carry, ys)`` as a loop with per-step outputs
    and returns ``(carry, ys)``. A list the body reads other than at ``[-1]`` is traced again with a buffer of
    all its items (``first_item``: the loop's first item, for counting the appends; ``trips``: its length)."""
    buffered: dict = {k: None for k in positions if isinstance(init[k], StepList) and init[k].buffer is not None}
    while True:
        try:
            return _collect(iterable, body, init, names, where, positions, run, buffered)
        except NeedsBuffer as need:
            k = next((k for k in positions if need.args[0].startswith(names[k] + "[") and k not in buffered), None)
            if k is None or isinstance(init[k], StepList):
                raise  # an enclosing loop's list: that loop holds the buffer
            buffered[k] = _buffer_for(iterable, body, init, names, where, positions, k, first_item, trips)


def _buffer_for(iterable, body, init, names, where, positions, k, first_item, trips):
    """The buffer of list ``k``: its items so far and zeros for the ``trips`` x (appends an iteration) to come."""
    carry = list(_carry0(init, positions, {}))
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
    old = ct.flatten(ct.stack_trees(before))[0]
    leaves, rebuild = ct.flatten(zeros)
    return rebuild([np.concatenate([_array(a), b]) for a, b in zip(old, leaves)])


def _zeros_rows(item, n):
    leaves, rebuild = ct.flatten(item)
    out = []
    for leaf in leaves:
        dtype = leaf.aval.np_dtype if isinstance(leaf, Traced) else np.asarray(leaf).dtype
        out.append(np.zeros((n,) + tuple(np.shape(leaf)), dtype=dtype))
    return rebuild(out)


def _carry0(init, positions, buffered):
    """The loop's initial carry: a list's (last item, length), its (length,) when it starts empty (a read of the last
    item before an append fails at the first iteration, as in Python), or (buffer, length)."""
    out = list(init)
    for k in positions:
        last, count, empty = _start_state(init[k])
        if k in buffered:
            out[k] = (buffered[k] if buffered[k] is not None else init[k].buffer, count)
        else:
            out[k] = (count,) if empty else (last, count)
    return tuple(out)


def _collect(iterable, body, init, names, where, positions, run, buffered):
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
            last, count = carry[k] if not empty else (_unset(names[k]), carry[k][0])
            carry[k] = StepList(names[k], where, last, count, empty_at_start=empty)
        out = list(body(item, tuple(carry)))
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
                out[k] = (state.count,) if starts[k][2] else (state.last, state.count)
            ys.append(rows if rows is not None else ())
        return tuple(out), tuple(ys)
    carry, ys = run(iterable, step, _carry0(init, positions, buffered))
    out = list(carry)
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


def _after_loop(before, rows, rebinds=False):
    """What the name of a collected list holds after the loop: ``before`` with the rows appended (``rebinds``: in a
    new list, ``before`` left as it was)."""
    if rows is None:
        return before
    n = _n_rows(rows)
    if isinstance(before, StepList):  # a nested loop: a block of rows in the enclosing iteration
        return before.with_block(rows, n)
    items = [_row_item(rows, k) for k in range(n)]
    after = StackedList(list(before) + items, before, rows)
    if not rebinds:
        before.extend(items)  # another name for the same list sees the items too
    return after


def _n_rows(rows) -> int:
    leaf = ct.flatten(rows)[0][0]
    return int(leaf.shape[0])


def _row_item(rows, k):
    leaves, rebuild = ct.flatten(rows)
    return rebuild([_as_row(leaf[k]) if isinstance(leaf, Traced) else leaf[k] for leaf in leaves])


class StackedList(list):
    """A list a traced loop collected: its items (the loop's rows, after those it held before), which also knows
    its stacked form while it holds exactly those items. NumPy functions given the list itself (``np.mean(ys)``)
    reach :meth:`__array_function__`, as they would an array's."""

    def __array_function__(self, func, types, args, kwargs):
        done = _on_stacked(func, self, args[1:], kwargs) if args and args[0] is self else NotImplemented
        if done is not NotImplemented:
            return done
        row = next((v for v in self if isinstance(v, Traced)), None)
        if row is None:
            return NotImplemented
        return type(row).__array_function__(row, func, types, args, kwargs)

    def __init__(self, items, prefix, rows):
        super().__init__(items)
        self._items, self._prefix, self._rows = tuple(items), list(prefix), rows

    def stacked(self):
        """All items stacked along a new first axis (a pytree like one item), or None when the list changed since
        the loop or its earlier items do not stack with the rows."""
        if len(self) != len(self._items) or any(a is not b for a, b in zip(self, self._items)):
            return None
        if not self._prefix:
            return self._rows
        before = self._prefix.stacked() if isinstance(self._prefix, StackedList) else None
        leaves, rebuild = ct.flatten(self._rows)
        try:
            if before is None:
                before = ct.stack_trees(self._prefix)
            old = ct.flatten(before)[0]
            if len(old) != len(leaves):
                return None
            return rebuild([np.concatenate([a, b]) for a, b in zip(old, leaves)])
        except (TraceError, ValueError, TypeError):
            return None

    def stacked_array(self):
        """:meth:`stacked` when the items are arrays (not tuples), else None."""
        out = self.stacked()
        return out if isinstance(out, Traced) else None


_ROW_CLASS: list = []


def _as_row(value):
    """A traced item of a :class:`StackedList`: NumPy functions given the list (``np.stack(ys)``) take its stacked
    form directly."""
    if not _ROW_CLASS:
        from gradc.trace.tracer import Tracer

        class Row(Tracer):
            __slots__ = ()

            def __array_function__(self, func, types, args, kwargs):
                if args and isinstance(args[0], StackedList):
                    done = _on_stacked(func, args[0], args[1:], kwargs)
                    if done is not NotImplemented:
                        return done
                return super().__array_function__(func, types, args, kwargs)
        _ROW_CLASS.append(Row)
    return _ROW_CLASS[0](value.builder, value.atom)


# functions that read a list argument as the array NumPy makes of it
_COERCING = {np.sum, np.mean, np.prod, np.max, np.min, np.amax, np.amin, np.std, np.var, np.cumsum, np.average,
             np.transpose, np.ravel, np.diff, np.dot, np.linalg.norm, np.trace, np.shape, np.ndim, np.size,
             np.reshape, np.moveaxis, np.swapaxes, np.squeeze, np.expand_dims, np.where, np.clip, np.einsum}


def _on_stacked(func, lst, rest, kwargs):
    stacked = lst.stacked_array()
    if stacked is None:
        return NotImplemented
    if func in _COERCING:
        return func(stacked, *rest, **kwargs)
    axis = rest[0] if rest else kwargs.get("axis", 0)
    if set(kwargs) - {"axis"} or len(rest) > 1 or axis != 0:
        return NotImplemented
    ndim = stacked.ndim - 1  # of one item
    if func is np.stack or (func is np.vstack and ndim == 1):
        return stacked
    if (func is np.concatenate and ndim >= 1) or (func is np.vstack and ndim >= 2) or (func is np.hstack and
                                                                                        ndim == 1):
        return np.reshape(stacked, (-1,) + tuple(stacked.shape[2:]))
    if func is np.hstack and ndim == 0:
        return stacked
    return NotImplemented


def sum_(iterable, start=0):
    """Python's ``sum(iterable, start)``; of a list a traced loop collected, one sum over its stacked items.

    >>> sum_([1, 2], 3)
    6
    """
    if isinstance(iterable, StackedList):
        stacked = iterable.stacked_array()
        if stacked is not None and len(iterable):
            return start + np.sum(stacked, axis=0)
    return sum(iterable, start)


def len_(value):
    """``len(value)``; of a list inside the traced loop that appends to it, its (traced) length.

    >>> len_([1, 2])
    2
    """
    return value.length() if isinstance(value, StepList) else len(value)


def append_(target, item):
    """``target.append(item)``, returning what ``target`` becomes: the same list, or the next :class:`StepList`.

    >>> xs = [1]; append_(xs, 2) is xs, xs
    (True, [1, 2])
    """
    if isinstance(target, StepList):
        return target.appended(item)
    target.append(item)
    return target


def extend_(target, items):
    """``target.extend(items)``, returning what ``target`` becomes.

    >>> extend_([1], (2, 3))
    [1, 2, 3]
    """
    if isinstance(target, StepList):
        for item in _items_of(items, target.where):
            target = target.appended(item)
        return target
    target.extend(items)
    return target


def concat_(target, items):
    """``target + items`` (a new list, as Python's ``+``); in a collecting loop, the next :class:`StepList`.

    >>> xs = [1]; ys = concat_(xs, [2]); ys, ys is xs
    ([1, 2], False)
    """
    if isinstance(target, StepList):
        return extend_(target, items)._with(rebinds=True)
    return target + items


def scan_form(value):
    """The array (or tuple of arrays) a ``for`` over ``value`` may scan: a collected list's stacked items."""
    if isinstance(value, StackedList):
        stacked = value.stacked()
        if isinstance(stacked, Traced):
            return stacked
        if isinstance(stacked, tuple) and stacked and all(isinstance(s, Traced) for s in stacked):
            return stacked
    return None
