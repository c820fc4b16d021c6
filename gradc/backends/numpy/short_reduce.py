"""Sums and extrema over one short axis spelled as a chain of slices.

NumPy's ``np.add.reduce(x, axis)`` over an axis of length 2-7 runs its inner loop once per outer
element, a few elements at a time: on a (1000, 5, 2) array it is ~25x slower than
``x[..., 0] + x[..., 1]``, which makes two passes over contiguous memory. GradBench's gmm spends
much of its gradient in such sums (squared norms over d = 2). The chain adds in the order the
reduction does (left to right; NumPy's pairwise summation only unrolls blocks of 8 or more), so
the values are the same.

>>> import numpy as np
>>> x = np.arange(12.0).reshape(3, 2, 2)
>>> bool(np.array_equal(np.add.reduce(x, 2), x[:, :, 0] + x[:, :, 1]))
True
"""
from __future__ import annotations

import ast

from gradc.ops import spell

# below 8 NumPy's pairwise sum is a plain left-to-right loop, so the chain gives the same bits; the
# chain is still ~3x faster at 7 (and ~4x at 5: gmm's log-sum-exp over k = 5 components)
MAX_UNROLLED = 7
_COMBINE = {"sum": None, "max": "np.maximum", "min": "np.minimum"}


def short_axis_reduction(eqn, args: list) -> ast.expr | None:
    """The slice chain for a float sum/max/min over one static axis of length 2..MAX_UNROLLED, else None."""
    if eqn.op not in _COMBINE or len(args) != 1:
        return None
    axes = tuple(eqn.params.get("axes") or ())
    source = eqn.inputs[0].type
    shape = tuple(source.shape)
    if len(axes) != 1 or not all(isinstance(n, int) for n in shape):
        return None
    dtype = source.np_dtype
    if dtype.kind not in ("fc" if eqn.op == "sum" else "f") or eqn.out.type.np_dtype != dtype:
        return None
    axis = axes[0] % len(shape)
    length = shape[axis]
    if not 2 <= length <= MAX_UNROLLED or len(shape) < 2:
        return None
    keep = bool(eqn.params.get("keepdims"))
    parts = [_take(args[0], axis, i, keep) for i in range(length)]
    combine = _COMBINE[eqn.op]
    total = parts[0]
    for part in parts[1:]:
        total = ast.BinOp(total, ast.Add(), part) if combine is None else spell.call(combine, total, part)
    return total


def _take(array: ast.expr, axis: int, index: int, keep: bool) -> ast.expr:
    """``array[:, index]`` (``array[:, index:index + 1]`` when the axis is kept)."""
    item = ast.Slice(ast.Constant(index), ast.Constant(index + 1)) if keep else ast.Constant(index)
    items = [ast.Slice() for _ in range(axis)] + [item]
    key = items[0] if len(items) == 1 else ast.Tuple(items, ast.Load())
    return ast.Subscript(array, key, ast.Load())
