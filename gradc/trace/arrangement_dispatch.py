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
from gradc.ops.values import aval, broadcast_shapes, first_traced, lift, normalize_axes
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
        from gradc.trace.scipy_dispatch import conversion_error  # inside SciPy's code: its public name
        raise conversion_error(TraceError(
            f"{what} writes a traced value into a NumPy array in place; gradc cannot change that array",
            hint="make the array part of the computation first, e.g. `a = np.zeros(n) + 0 * x`, or build the "
                 "result with np.where / index assignment into a copy"))


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


def _cycled(values, count, dtype):
    """``values`` flattened and repeated to ``count`` entries, as NumPy's flat assignments repeat them."""
    values = _operand(values)
    size = aval(values).size
    if size == 0:
        raise ShapeError("cannot write from an empty array of values", hint="pass at least one value")
    flat = sh.reshape(values, (size,)) if isinstance(values, Traced) else np.ravel(values).astype(dtype)
    if size == count:
        return flat
    picks = np.arange(count, dtype=np.int64) % size
    return sh.gather(flat, [picks], (("array", 0),)) if isinstance(flat, Traced) else flat[picks]


def _put(a, ind, v, mode="raise"):
    """``np.put(a, ind, v)``: ``a.flat[ind] = v`` (``v`` repeated), in place."""
    from gradc.trace.inplace import setitem
    _writable(a, "np.put")
    t = aval(a)
    if isinstance(ind, Traced):
        raise TraceError("np.put with traced indices is not supported by gradc",
                         hint="write with index arrays: a[np.unravel_index(...)] = v, or a.reshape(-1) first")
    flat = np.ravel(np.asarray(ind, dtype=np.int64))
    if mode == "wrap":
        flat = flat % t.size
    elif mode == "clip":
        flat = np.clip(flat, 0, t.size - 1)
    elif flat.size and not ((flat >= -t.size).all() and (flat < t.size).all()):
        raise ShapeError(f"np.put: an index is out of bounds for an array of size {t.size}",
                         hint="indices lie in [-size, size), or pass mode='wrap' or mode='clip'")
    if flat.size == 0:
        return None
    rows = np.unravel_index(flat % t.size, t.shape)
    setitem(a, tuple(np.asarray(r, dtype=np.int64) for r in rows), _cycled(v, flat.size, t.np_dtype))
    return None


def _putmask(a, mask, values):
    """``np.putmask(a, mask, values)``: ``a.flat[n] = values[n % len(values)]`` where the mask holds, in place
    (a traced mask too: one ``where`` over the whole array)."""
    from gradc.trace.inplace import _owned, assign, check_writable
    _writable(a, "np.putmask")
    check_writable(a, "np.putmask", owned=_owned(a))
    t = aval(a)
    mask = _operand(mask)
    if aval(mask).shape != t.shape:
        raise ShapeError("np.putmask: mask and data must be the same size", hint="give the mask the array's shape")
    full = _cycled(values, t.size, t.np_dtype)
    full = sh.reshape(full, t.shape) if isinstance(full, Traced) else full.reshape(t.shape)
    assign(a, _where(mask, full, a), "np.putmask")
    return None


def _where(mask, x, y):
    from gradc.ops import elementwise as ew
    mask = mask if aval(mask).dtype == "bool" else (ew.not_equal(mask, 0) if isinstance(mask, Traced) else mask != 0)
    out = ew.where(mask, x, y)
    return out if aval(out).dtype == aval(y).dtype else ew.astype(out, aval(y).dtype)


def _place(arr, mask, vals):
    """``np.place(arr, mask, vals)``: the selected entries in order get ``vals`` repeated (a static mask)."""
    from gradc.trace.inplace import setitem
    _writable(arr, "np.place")
    if isinstance(mask, Traced):
        raise TraceError("np.place with a traced mask: which value goes where depends on how many entries the mask "
                         "selects", hint="use np.putmask(a, mask, values) or np.where(mask, values, a)")
    mask = np.asarray(mask, dtype=bool)
    rows = np.nonzero(np.broadcast_to(mask, aval(arr).shape))
    if rows[0].size:
        setitem(arr, tuple(np.asarray(r, dtype=np.int64) for r in rows),
                _cycled(vals, rows[0].size, aval(arr).np_dtype))
    return None


def _resize(a, new_shape):
    """``np.resize(a, new_shape)``: the flattened array repeated to fill the new shape."""
    a = _operand(a)
    shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(d) for d in new_shape)
    count = int(np.prod(shape))
    if aval(a).size == 0 or count == 0:
        return np.zeros(shape, aval(a).np_dtype)
    flat = _cycled(a, count, aval(a).np_dtype)
    return sh.reshape(flat, shape) if isinstance(flat, Traced) else flat.reshape(shape)


def _by_static_mask(what):
    def apply(condition, a, axis=None, out=None):
        if out is not None:
            raise TraceError(f"{what}(..., out=...) writes into an array in place", hint="drop out= and assign")
        if isinstance(condition, Traced):
            raise TraceError(f"{what} with a traced condition gives a data-dependent shape",
                             hint="use np.where(condition, a, 0) to keep the shape")
        a = _operand(a)
        keep = np.nonzero(np.ravel(np.asarray(condition)))[0].astype(np.int64)
        if what == "np.extract" or axis is None:
            a = sh.reshape(a, (aval(a).size,))
            axis = 0
        axis = normalize_axes(axis, aval(a).ndim)[0]
        nd = aval(a).ndim
        spec = (_FULL,) * axis + (("array", 0),) + (_FULL,) * (nd - axis - 1)
        return sh.gather(a, [keep], spec)
    return apply


def _choose(a, choices, out=None, mode="raise"):
    """``np.choose(a, choices)``: for each position, the choice its index names (one ``where`` per choice)."""
    from gradc.ops import elementwise as ew
    if out is not None:
        raise TraceError("np.choose(..., out=...) writes into an array in place", hint="drop out= and assign")
    choices = [_operand(c) for c in choices]
    a = _operand(a)
    n = len(choices)
    if mode == "wrap":
        a = ew.mod(a, n) if isinstance(a, Traced) else np.mod(a, n)
    elif mode == "clip":
        a = ew.clip(a, 0, n - 1) if isinstance(a, Traced) else np.clip(a, 0, n - 1)
    elif not isinstance(a, Traced) and np.size(a) and not ((np.asarray(a) >= 0).all() and (np.asarray(a) < n).all()):
        raise ShapeError("np.choose: invalid entry in choice array", hint="indices lie in [0, len(choices))")
    out = choices[0]
    for k in range(1, n):
        out = ew.where(ew.equal(a, k) if isinstance(a, Traced) else np.equal(a, k), choices[k], out)
    shape = broadcast_shapes(aval(a).shape, *[aval(c).shape for c in choices], what="np.choose's arguments")
    out = lift(out, first_traced([out, a] + choices))
    return out if aval(out).shape == tuple(shape) else sh.broadcast_to(out, shape)


def _unstack(x, /, *, axis=0):
    x = _operand(x)
    nd = aval(x).ndim
    axis = normalize_axes(axis, nd)[0]
    return tuple(sh.index(x, (_FULL,) * axis + (("int", i),) + (_FULL,) * (nd - axis - 1))
                 for i in range(aval(x).shape[axis]))


def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` on each 1-d slice along ``axis`` (the other axes are static), the results stacked in place of
    the axis, as NumPy arranges them."""
    from gradc.trace.numpy_dispatch import _stack
    arr = _operand(arr)
    t = aval(arr)
    axis = normalize_axes(axis, t.ndim)[0]
    moved = sh.transpose(arr, [i for i in range(t.ndim) if i != axis] + [axis])
    outer = aval(moved).shape[:-1]
    results = [func1d(sh.index(moved, tuple(("int", int(i)) for i in index) + (_FULL,)) if index else moved,
                      *args, **kwargs) for index in np.ndindex(*outer)]
    if not outer:
        return results[0]
    stacked = _stack([_operand(r) for r in results], 0)
    rest = aval(stacked).shape[1:]
    stacked = sh.reshape(stacked, tuple(outer) + tuple(rest))
    k = len(rest)  # the result's own axes take the place of ``axis``
    order = list(range(axis)) + list(range(len(outer), len(outer) + k)) + list(range(axis, len(outer)))
    return sh.transpose(stacked, order) if order != list(range(len(order))) else stacked


def _indices_from(numpy_fn, what, square=True):
    def apply(arr, *args):
        t = aval(arr)
        if square and (t.ndim < 2 or len(set(t.shape)) != 1) and numpy_fn is np.diag_indices_from:
            raise ShapeError(f"{what}: all dimensions of input must be of equal length", hint="pass a square array")
        return numpy_fn(np.empty(t.shape, dtype=np.int8), *args)  # only the shape matters
    return apply


FUNCTIONS = {
    np.broadcast_arrays: _broadcast_arrays, np.rot90: _rot90, np.fill_diagonal: _fill_diagonal,
    np.put_along_axis: _put_along_axis, np.put: _put, np.putmask: _putmask, np.place: _place, np.resize: _resize,
    np.compress: _by_static_mask("np.compress"), np.extract: _by_static_mask("np.extract"), np.choose: _choose,
    np.apply_along_axis: _apply_along_axis,
    np.triu_indices_from: _indices_from(np.triu_indices_from, "np.triu_indices_from"),
    np.tril_indices_from: _indices_from(np.tril_indices_from, "np.tril_indices_from"),
    np.diag_indices_from: _indices_from(np.diag_indices_from, "np.diag_indices_from"),
}
if hasattr(np, "unstack"):  # NumPy >= 2.1
    FUNCTIONS[np.unstack] = _unstack
if hasattr(np, "row_stack"):  # NumPy's deprecated alias of vstack (autograd's tests call it)
    FUNCTIONS[np.row_stack] = lambda tup, **kw: shape_dispatch.FUNCTIONS[np.vstack](tup, **kw)
UFUNCS: dict = {}
