"""Negative-step slices in the array API standard: a flip, then a positive-step slice.

The standard (and torch) index with positive steps only. On an axis of any length,
``a[start:stop:-k]`` equals ``flip(a)[~start:~stop:k]`` (``None`` stays ``None``):
position ``i`` of ``a`` is position ``n - 1 - i`` (``~i`` counted from the end) of the
flipped axis, and Python's clipping of out-of-range bounds maps across the same way.

>>> import numpy as np
>>> a = np.arange(7)
>>> start, stop, step = flipped_slice(5, 1, -2)
>>> (start, stop, step), list(a[5:1:-2]) == list(a[::-1][start:stop:step])
((-6, -2, 2), True)
"""
from __future__ import annotations

import ast


def flipped_slice(start: int | None, stop: int | None, step: int) -> tuple:
    """The positive-step slice of the flipped axis that selects what ``start:stop:step`` (step < 0) does.

    >>> flipped_slice(None, None, -1)
    (None, None, 1)
    """
    return (None if start is None else ~start, None if stop is None else ~stop, -step)


def stored_slice(start: int | None, stop: int | None, step: int, n: int) -> tuple:
    """The positive-step slice of an axis of length ``n`` holding ``start:stop:step``'s positions (step < 0),
    in increasing order: a store writes the flipped value there.

    >>> stored_slice(5, 1, -2, 7)
    (3, 6, 2)
    """
    positions = range(*slice(start, stop, step).indices(n))
    if not positions:
        return (0, 0, -step)
    return (positions[-1], positions[0] + 1, -step)


def _int(node) -> int | None:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and type(node.operand.value) is int:
        return -node.operand.value
    return None


def _literal(value):
    if value is None:
        return None
    return ast.Constant(value) if value >= 0 else ast.UnaryOp(ast.USub(), ast.Constant(-value))


def _is_negative(item) -> bool:
    return isinstance(item, ast.Slice) and item.step is not None and (_int(item.step) or 0) < 0


def _bound(node):
    return None if node is None else _int(node)


def positive_items(items: list, shape: tuple | None = None, store: bool = False) -> tuple:
    """``(items with positive steps, flipped axes of the indexed array, flipped axes of the result)``.

    Axes before an ``...`` count from the front, axes after it from the back, in the indexed
    array and in the result (the value a store writes, which has the result's rank).
    ``shape`` is the indexed array's (a dim may be unknown). A ``store``'s slices select the
    target's own positions in increasing order (an axis of unknown length raises ValueError);
    a load's select the flipped array's, in range where the length is known.
    """
    ellipsis = next((k for k, i in enumerate(items) if isinstance(i, ast.Constant) and i.value is Ellipsis), None)
    consumes = [not (isinstance(i, ast.Constant) and (i.value is None or i.value is Ellipsis)) for i in items]
    keeps = [isinstance(i, ast.Slice) or isinstance(i, ast.Constant) and i.value is None for i in items]
    out, axes, result_axes = [], [], []
    for k, item in enumerate(items):
        if not _is_negative(item) or _bound(item.lower) is None and item.lower is not None \
                or _bound(item.upper) is None and item.upper is not None:
            out.append(item)
            continue
        axis = sum(consumes[:k]) if ellipsis is None or k < ellipsis else -sum(consumes[k:])
        n = shape[axis] if shape is not None and -len(shape) <= axis < len(shape) else None
        if not store and isinstance(n, int):  # the flipped axis's own positions, in range for any library
            start, stop, step = stored_slice(_bound(item.lower), _bound(item.upper), _int(item.step), n)
            start, stop = (0, 0) if start == stop else (n - stop or None, None if start == 0 else n - start)
        elif not store:  # any length: exact where bounds out of range clip, as in NumPy and torch
            start, stop, step = flipped_slice(_bound(item.lower), _bound(item.upper), _int(item.step))
        elif isinstance(n, int):
            start, stop, step = stored_slice(_bound(item.lower), _bound(item.upper), _int(item.step), shape[axis])
        else:
            raise ValueError("a store through a negative step into an axis of unknown length")
        out.append(ast.Slice(_literal(start), _literal(stop), None if step == 1 else _literal(step)))
        axes.append(axis)
        result_axes.append(sum(keeps[:k]) if ellipsis is None or k < ellipsis else -sum(keeps[k + 1:]) - 1)
    return out, axes, result_axes


def flip_call(xp: str, value, axes: list):
    """``xp.flip(value, axis=axes)``."""
    axis = ast.Tuple([_literal(a) for a in axes], ast.Load()) if len(axes) > 1 else _literal(axes[0])
    return ast.Call(ast.Attribute(ast.Name(xp, ast.Load()), "flip", ast.Load()), [value], [ast.keyword("axis", axis)])
