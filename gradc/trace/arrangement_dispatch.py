"""NumPy's arrangement and in-place placement functions on traced values (merged by ``gradc.trace.dispatch``).

``np.broadcast_arrays`` and ``np.rot90`` are compositions of ``broadcast_to``, ``index``
(reversed slices) and ``transpose``. ``np.fill_diagonal`` and ``np.put_along_axis`` write
into their array in place, as NumPy does: they are the item assignment ``a[rows, cols] = v``
of ``gradc.trace.inplace`` at the positions NumPy's own definition names, so the array must
be one the function may write into (a copy it made), and repeated positions keep NumPy's
last write.

>>> from gradc.trace import trace
>>> print(trace(lambda x: np.rot90(x), np.ones((2, 3))))
def lambda_(x: f64[2,3]) -> f64[3,2]:
  t0: f64[2,3] = index x spec=(:, ::-1)
  t1: f64[3,2] = transpose t0 perm=(1, 0)
  return t1
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, StaticValueNeeded, TraceError
from gradc.ir.builder import Traced
from gradc.ops import shape as sh
from gradc.ops.values import aval, broadcast_shapes, first_traced, normalize_axes
from gradc.trace import shape_dispatch

_FULL = sh.slice_item(None, None, None)


def _operand(x):
    return x if isinstance(x, Traced) else np.asarray(x)


def _broadcast_arrays(*args, subok=False):
    args = [_operand(a) for a in args]
    shape = broadcast_shapes(*[aval(a).shape for a in args], what="np.broadcast_arrays's arguments")
    out = []
    for a in args:
        if aval(a).shape == tuple(shape):
            out.append(a)
        elif isinstance(a, Traced):
            out.append(sh.broadcast_to(a, shape))
        else:
            out.append(np.broadcast_to(a, shape))
    return tuple(out)


def _flip(m, axis):
    nd = aval(m).ndim
    return sh.index(m, tuple(sh.slice_item(None, None, -1) if i == axis else _FULL for i in range(nd)))


def _rot90(m, k=1, axes=(0, 1)):
    m = _operand(m)
    nd = aval(m).ndim
    axes = tuple(axes)
    if len(axes) != 2:
        raise ShapeError("np.rot90: len(axes) must be 2", hint="name the two axes of the plane to rotate in")
    if isinstance(k, Traced):
        raise StaticValueNeeded("np.rot90: the number of turns k must be known at trace time", hint="pass an int")
    a0, a1 = axes
    if a0 == a1 or abs(a0 - a1) == nd:
        raise ShapeError("np.rot90: axes must be different", hint="rotate in the plane of two distinct axes")
    if not (-nd <= a0 < nd and -nd <= a1 < nd):
        raise ShapeError(f"np.rot90: axes={axes} out of range for an array of dimension {nd}",
                         hint="axes lie in [-ndim, ndim)")
    a0, a1 = normalize_axes(a0, nd)[0], normalize_axes(a1, nd)[0]
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return _flip(_flip(m, a0), a1)
    perm = list(range(nd))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return sh.transpose(_flip(m, a1), perm)
    return _flip(sh.transpose(m, perm), a1)


def _writable(a, what):
    if not isinstance(a, Traced):
        raise TraceError(f"{what} writes a traced value into a NumPy array in place; gradc cannot change that "
                         "array", hint="make the array part of the computation first, e.g. `a = np.zeros(n) + 0 * x`,"
                                       " or build the result with np.where / index assignment into a copy")


def _fill_diagonal(a, val, wrap=False):
    """NumPy's definition: ``a.flat[:end:step] = val``, ``val`` repeated as flat assignment repeats it."""
    from gradc.trace.inplace import setitem
    _writable(a, "np.fill_diagonal")
    t = aval(a)
    if t.ndim < 2:
        raise ShapeError("np.fill_diagonal: array must be at least 2-d", hint="pass a matrix")
    if not all(isinstance(d, int) for d in t.shape):
        raise StaticValueNeeded("np.fill_diagonal on an array of named size", hint="compile for a fixed size")
    end = None
    if t.ndim == 2:
        step = t.shape[1] + 1
        if not wrap:  # NumPy stops after the square part of a tall matrix
            end = t.shape[1] * t.shape[1]
    else:
        if len(set(t.shape)) != 1:
            raise ShapeError("np.fill_diagonal: all dimensions of input must be of equal length",
                             hint="pass an array whose axes all have the same length")
        step = 1 + int(np.cumprod(t.shape[:-1]).sum())
    flat = np.arange(t.size, dtype=np.int64)[:end:step]
    if flat.size == 0:
        return None
    rows = np.unravel_index(flat, t.shape)
    val = _operand(val)
    if aval(val).size != 1 and aval(val).size != flat.size:  # flat assignment cycles through the values
        ravelled = sh.reshape(val, (aval(val).size,)) if isinstance(val, Traced) else np.ravel(val)
        repeat = np.arange(flat.size, dtype=np.int64) % aval(val).size
        val = sh.gather(ravelled, [repeat], (("array", 0),)) if isinstance(val, Traced) else ravelled[repeat]
    elif aval(val).size == flat.size and aval(val).ndim != 1:
        val = sh.reshape(val, (flat.size,)) if isinstance(val, Traced) else np.ravel(val)
    elif aval(val).size == 1:
        val = sh.reshape(val, ()) if isinstance(val, Traced) else np.ravel(val)[0]
    setitem(a, tuple(np.asarray(r, dtype=np.int64) for r in rows), val)
    return None


def _put_along_axis(arr, indices, values, axis):
    """NumPy's definition: ``arr[index] = values`` with ``indices`` along ``axis`` and ``arange`` on the others."""
    from gradc.trace.inplace import setitem
    _writable(arr, "np.put_along_axis")
    t = aval(arr)
    indices = _operand(indices)
    it = aval(indices)
    if it.dtype not in ("i64", "i32"):
        raise TraceError(f"np.put_along_axis: `indices` must be an integer array, not {it.dtype}",
                         hint="convert them with .astype(np.int64)")
    if axis is None:
        if t.ndim != 1:
            raise TraceError("np.put_along_axis with axis=None writes into the flattened array in place",
                             hint="write into a 1-d array, or pass an axis")
        axis = 0
    if it.ndim != t.ndim:
        raise ShapeError(f"np.put_along_axis: `indices` and `arr` must have the same number of dimensions "
                         f"({it.ndim} != {t.ndim})", hint="give the indices the array's number of dimensions")
    axis = normalize_axes(axis, t.ndim)[0]
    key = []
    for dim in range(t.ndim):
        if dim == axis:
            key.append(indices)
            continue
        shape = [1] * t.ndim
        shape[dim] = t.shape[dim]
        key.append(np.arange(t.shape[dim], dtype=np.int64).reshape(shape))
    if first_traced([values]) is None:
        values = np.asarray(values, dtype=t.np_dtype)
    setitem(arr, tuple(key), values)
    return None


FUNCTIONS = {
    np.broadcast_arrays: _broadcast_arrays, np.rot90: _rot90, np.fill_diagonal: _fill_diagonal,
    np.put_along_axis: _put_along_axis,
}
if hasattr(np, "row_stack"):  # NumPy's deprecated alias of vstack (autograd's tests call it)
    FUNCTIONS[np.row_stack] = lambda tup, **kw: shape_dispatch.FUNCTIONS[np.vstack](tup, **kw)
UFUNCS: dict = {}
