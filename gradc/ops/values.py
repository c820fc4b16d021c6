"""Helpers shared by every op family: abstract values, promotion, broadcasting.

``aval(x)`` is the TensorType of anything an op accepts (traced values, NumPy
arrays and scalars); Python scalars are *weak* (``dtype None``): they take the
dtype of the array they meet, as in NumPy 2.

>>> aval(np.ones(3, np.float32))
f32[3]
>>> aval(2.0).dtype is None
True
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError
from gradc.ir.atoms import Const
from gradc.ir.dims import broadcast
from gradc.ir.registry import bind
from gradc.ir.types import TensorType, dtype_name, type_of_array

_NDARRAY = np.ndarray


def aval(x) -> TensorType:
    """The shape and dtype of an op operand (weak dtype None for Python scalars)."""
    if type(x) is _NDARRAY:
        return type_of_array(x)
    t = getattr(x, "aval", None)
    if t is not None:
        return t
    if isinstance(x, (bool, int, float, complex)) and not isinstance(x, np.generic):
        return TensorType((), None)
    return type_of_array(x)


def is_concrete(x) -> bool:
    """True for values that hold numbers (not traced)."""
    return getattr(type(x), "__gradc_bind__", None) is None


def first_traced(xs):
    """The first operand that records into a Builder (see ``gradc.ir.builder.Traced``), or None."""
    for x in xs:
        if hasattr(x, "builder") and hasattr(x, "wrap"):
            return x
    return None


def lift(x, like):
    """A concrete ``x`` as a constant of ``like``'s trace (so ops on it are recorded, not computed)."""
    if like is None or not is_concrete(x):
        return x
    return like.wrap(Const(np.asarray(x)))


def result_dtype(*xs) -> str:
    """NumPy 2 promotion with weak Python scalars; ``"f64"`` when all are Python floats.

    >>> result_dtype(np.ones(2, np.float32), 2.0)
    'f32'
    """
    parts = []
    for x in xs:
        t = aval(x)
        if getattr(x, "weak_python", False):  # a loop's counter or a carry begun as a Python number
            parts.append(0.0 if t.np_dtype.kind == "f" else 0)
        else:
            parts.append(x if t.dtype is None else t.np_dtype)
    return dtype_name(np.result_type(*parts))


def broadcast_shapes(*shapes, what: str = "operands") -> tuple:
    """NumPy broadcasting of shapes, or a ShapeError naming them.

    >>> broadcast_shapes((5, 1), (3,))
    (5, 3)
    """
    try:
        return broadcast(*shapes)
    except ValueError:
        listed = ", ".join(f"({', '.join(map(str, s))}{',' if len(s) == 1 else ''})" for s in shapes)
        raise ShapeError(f"shapes {listed} of the {what} do not broadcast together",
                         hint="check the operands' shapes, or reshape one of them explicitly") from None


def normalize_axes(axis, ndim: int) -> tuple:
    """``axis`` (None, int or tuple, negatives allowed) as a sorted tuple of non-negative ints.

    >>> normalize_axes(-1, 3)
    (2,)
    """
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    out = []
    for a in axes:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise ShapeError(f"axis {a} is out of bounds for an array of dimension {ndim}",
                             hint="axes run from -ndim to ndim - 1")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ShapeError(f"repeated axis in {axis!r}", hint="name each axis once")
    return tuple(sorted(out))


# ---------------------------------------------------------------- for the ops' batching rules (``batch=``)
def batch_size(xs, batched) -> int:
    """The batch size of a batched equation: the leading dimension of its batched inputs.

    >>> batch_size([np.ones(3), np.ones((4, 3))], [False, True])
    4
    """
    return next(aval(x).shape[0] for x, b in zip(xs, batched) if b)


def with_batch(x, is_batched: bool, size: int):
    """``x`` with a leading batch axis: itself if it has one, else broadcast along a new one.

    >>> with_batch(np.arange(2.0), False, 3).shape
    (3, 2)
    """
    if is_batched:
        return x
    return bind("broadcast_to", x, shape=(size,) + aval(x).shape)

