"""A list a traced loop collected (``gradc.trace.capture_lists``), after the loop: a Python list of its items that
also knows their stacked form, so NumPy functions and loops given the list use the stacked array.

>>> StackedList([1.0], [], None).stacked_array() is None
True
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.trace import control_trace as ct
from gradc.trace.loop_outputs import stack_trees


def row_item(rows, k):
    """Item ``k`` of the stacked ``rows`` (a pytree), its traced leaves as list items NumPy functions see through."""
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
                before = stack_trees(self._prefix)
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



def scan_form(value):
    """The array (or tuple of arrays) a ``for`` over ``value`` may scan: a collected list's stacked items."""
    if isinstance(value, StackedList):
        stacked = value.stacked()
        if isinstance(stacked, Traced):
            return stacked
        if isinstance(stacked, tuple) and stacked and all(isinstance(s, Traced) for s in stacked):
            return stacked
    return None


def _register():
    """A collected list is a list to pytree code (a function may return it): its items, rebuilt as a list."""
    from gradc.tree_util import register_pytree_node
    register_pytree_node(StackedList, lambda t: (list(t), None), lambda aux, children: list(children))


_register()
