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
        has_count = self.count is not None  # counted only where the loop reads the length (NeedsCount)
        parts = ([self.last] if has_last else []) + ([self.count] if has_count else []) + \
            ([self.buffer] if has_buffer else []) + \
            [c[1] for c in self.chunks]
        leaves, rebuild_parts = ct.flatten(parts)
        shape = [(c[0], c[2] if c[0] == "block" else None) for c in self.chunks]
        unset = self.last

        def rebuild(new_leaves):
            values = rebuild_parts(list(new_leaves))
            last = values.pop(0) if has_last else unset
            count = values.pop(0) if has_count else None
            buffer = values.pop(0) if has_buffer else None
            chunks = [(kind, v, n) if kind == "block" else (kind, v) for (kind, n), v in zip(shape, values)]
            return self._with(last=last, count=count, chunks=chunks, buffer=buffer)
        return leaves, rebuild

    # ---- what the user's code does with the list inside the loop
    def _check_like(self, item, leading=0):
        """Raise :class:`Heterogeneous` unless ``item`` (after ``leading`` axes) is like the list's other items, and
        traced (Python values, ``n.append(len(xs))``, stay Python values: the loop runs in Python)."""
        if not all(isinstance(leaf, Traced) for leaf in ct.flatten(item)[0]):
            raise Heterogeneous(self.name)
        reference = self.chunks[0] if self.chunks else None
        if reference is not None:
            want = _signature(reference[1], 1 if reference[0] == "block" else 0)
        elif not _is_unset(self.last):
            want = _signature(self.last, 0)
        else:
            return
        if _signature(item, leading) != want:
            raise Heterogeneous(self.name)

    def appended(self, item) -> StepList:
        self._check_like(item)
        buffer = self.buffer
        if buffer is not None:
            buffer = _write_row(buffer, self.count + self.new_rows(), item)
        return self._with(chunks=self.chunks + [("item", item)], buffer=buffer)

    def append(self, item):  # a helper given the list appends to it: this iteration's items
        self._check_like(item)
        if self.buffer is not None:
            self.buffer = _write_row(self.buffer, self.count + self.new_rows(), item)
        self.chunks.append(("item", item))

    def with_block(self, rows, n) -> StepList:
        """This list after a nested loop appended the ``n`` rows ``rows``."""
        self._check_like(rows, 1)
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
        if isinstance(key, Traced):  # a position read from traced data (a parent table passed as an argument)
            raise TraceError(f"{self.name}[...] is read at a position computed from traced values, in a loop that "
                             f"appends to {self.name}: gradc traces every branch of an `if` on traced values, and "
                             "at the loop's first iteration the list is still empty",
                             where=user_location() or self.where,
                             hint="if the position comes from integer data that steers Python (a parent table, a "
                                  "list of indices), make it static: gradc.grad(f, static_argnums=...) or "
                                  "static_argnames=... (gradc compile --static NAME); or give it as a constant "
                                  "(a closure or a global)")
        raise TraceError(f"{self.name}[...] is read before anything was appended to it: the list is empty at the "
                         "loop's first iteration (Python raises IndexError)", where=user_location() or self.where,
                         hint=f"append a first item to {self.name} before the loop")

    def __len__(self):
        raise TraceError(f"len({self.name}) inside a traced loop that appends to it is a traced number",
                         where=self.where, hint="use the loop counter, or len(...) after the loop")

    def length(self):
        """``len(list)`` as a value (traced inside a functional loop)."""
        if self.count is None:
            raise NeedsCount(self.name)
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
            return self._with(count=self.length(), chunks=()), None
        if rows == 0:
            return StepList(self.name, self.where, self.last, self.count, (), self.empty_at_start), None
        last = self.last_item()
        if len(self.chunks) == 1 and self.chunks[0][0] == "item":
            out = self.chunks[0][1]
        else:
            out = _concatenate_rows([_as_rows(c) for c in self.chunks])
        count = None if self.count is None else self.count + rows
        return StepList(self.name, self.where, last, count, (), False), out


class Heterogeneous(TraceError):
    """Items of different shapes or structures appended to one list, or Python values: they cannot be one stacked
    array, so the loop runs in Python (unrolled), as Python runs it (``gradc.trace.collecting_loop``)."""

    def __init__(self, name):
        super().__init__(f"{name} gets items of different shapes in a traced loop", hint="append arrays of one shape")


def _signature(item, leading):
    """The shapes (without ``leading`` axes) and structure of an item: items that stack have the same."""
    leaves, _ = ct.flatten(item)
    return type(item).__name__, tuple(tuple(np.shape(leaf))[leading:] for leaf in leaves)


class NeedsCount(TraceError):
    """The loop reads the length of a list it appends to (``len(ys)``): it is traced again carrying the length."""

    def __init__(self, name):
        super().__init__(f"{name} has a length read inside the loop that appends to it",
                         hint="use the loop counter, or len(...) after the loop")


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


class _NoItem:
    """The last item of a list that is empty: never read (``StepList.last_item`` refuses first), and a value a
    loop may carry unset (``control_trace.is_unset``)."""

    __slots__ = ("name",)
    is_unset = True

    def __init__(self, name):
        self.name = name


def _unset(name):
    return _NoItem(name)


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
