"""What NumPy's ufuncs, functions and indexing mean on traced values.

Each entry maps a NumPy callable onto gradc op functions; anything not listed
here is refused with a clear TraceError by the tracer.

>>> np.exp in UFUNCS, np.mean in FUNCTIONS
(True, True)
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, StaticValueNeeded, TraceError
from gradc.ir import dims
from gradc.ir.builder import Traced
from gradc.ir.dims import is_symbolic
from gradc.ir.types import dtype_name
from gradc.ops import bitwise as bits
from gradc.ops import elementwise as ew
from gradc.ops import linalg as la
from gradc.ops import reduce as red
from gradc.ops import shape as sh
from gradc.ops.values import aval, lift, normalize_axes
from gradc.trace import complex_dispatch, linalg_dispatch


def _reciprocal(x):
    """``1 / x``; NumPy's reciprocal of integers truncates (``1 // x``): refused rather than computed otherwise."""
    if np.dtype(aval(x).np_dtype).kind in "iub":
        raise TraceError("np.reciprocal of integers truncates in NumPy (1 // x, 0 for |x| > 1): gradc does not "
                         "follow it", hint="convert first: np.reciprocal(x.astype(float)), or write 1.0 / x")
    return ew.div(1.0, x)


UFUNCS = {
    np.add: ew.add, np.subtract: ew.sub, np.multiply: ew.mul, np.true_divide: ew.div, np.divide: ew.div,
    np.power: ew.power, np.negative: ew.neg, np.positive: lambda x: x, np.absolute: ew.abs_,
    np.exp: ew.exp, np.log: ew.log, np.log1p: ew.log1p, np.expm1: ew.expm1, np.sqrt: ew.sqrt,
    np.square: ew.square, np.sin: ew.sin, np.cos: ew.cos, np.tan: ew.tan, np.tanh: ew.tanh,
    np.arctan: ew.arctan, np.sinh: ew.sinh, np.cosh: ew.cosh, np.maximum: ew.maximum,
    np.minimum: ew.minimum, np.logaddexp: ew.logaddexp, np.sign: ew.sign, np.floor: ew.floor,
    np.less: ew.less, np.less_equal: ew.less_equal, np.greater: ew.greater,
    np.greater_equal: ew.greater_equal, np.equal: ew.equal, np.not_equal: ew.not_equal,
    np.logical_and: ew.logical_and, np.logical_or: ew.logical_or, np.logical_not: ew.logical_not,
    np.matmul: la.matmul, np.reciprocal: _reciprocal,
    np.bitwise_and: bits.bitwise_and, np.bitwise_or: bits.bitwise_or, np.bitwise_xor: bits.bitwise_xor,
    np.invert: bits.invert, np.left_shift: bits.left_shift, np.right_shift: bits.right_shift,
    **complex_dispatch.UFUNCS,  # np.conjugate, np.fabs
}

UFUNC_REDUCE = {np.add: red.sum_, np.multiply: red.prod, np.maximum: red.max_, np.minimum: red.min_}


def _reduction(fn):
    def apply(a, axis=None, dtype=None, out=None, keepdims=False, **rest):
        if out is not None or rest.get("where") is not None or rest.get("initial") is not None:
            raise TraceError(f"np.{fn.__name__.rstrip('_')}: out=, where= and initial= are not supported",
                             hint="apply a mask with np.where(mask, x, 0), add an initial value after")
        if dtype is not None:
            a = ew.astype(a, dtype_name(dtype))
        return fn(a, axis, keepdims)
    return apply


def _reshape(a, shape, order="C", **kw):
    if order != "C":
        raise TraceError("only C-order reshape is supported",
                         hint="drop order=; transpose first if you need Fortran order")
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    size = aval(a).size
    if shape.count(-1) > 1:
        raise ShapeError("can only specify one unknown dimension (-1) in reshape",
                         hint="give every dimension but one explicitly")
    if -1 in shape:
        known = dims.prod([d for d in shape if d != -1])
        if known == 0 or size % known:
            raise ShapeError(f"cannot reshape an array of size {size} into shape {shape}",
                             hint="the new shape must have as many elements as the array")
        shape = tuple(size // known if d == -1 else d for d in shape)
    if dims.prod(shape) != size:
        raise ShapeError(f"cannot reshape an array of size {size} into shape {shape}",
                         hint="the new shape must have as many elements as the array")
    return sh.reshape(a, shape)


def _expand_dims(a, axis):
    t = aval(a)
    axes = normalize_axes(axis, t.ndim + len(axis if isinstance(axis, (tuple, list)) else (axis,)))
    shape = list(t.shape)
    for ax in axes:
        shape.insert(ax, 1)
    return sh.reshape(a, shape)


def _squeeze(a, axis=None):
    t = aval(a)
    axes = tuple(i for i, d in enumerate(t.shape) if d == 1) if axis is None else normalize_axes(axis, t.ndim)
    for ax in axes:
        if t.shape[ax] != 1:
            raise ShapeError(f"cannot squeeze axis {ax} of size {t.shape[ax]}",
                             hint="only axes of length 1 can be squeezed")
    return sh.reshape(a, [d for i, d in enumerate(t.shape) if i not in axes])


def _concatenate(arrays, axis=0, **kw):
    arrays = list(arrays)
    dtype = ew.result_dtype(*arrays)
    ndim = aval(arrays[0]).ndim
    if axis is None:
        arrays = [sh.reshape(a, (aval(a).size,)) for a in arrays]
        axis, ndim = 0, 1
    axis = normalize_axes(axis, ndim)[0]
    return sh.concatenate([ew.astype(_as_operand(a), dtype) for a in arrays], axis)


def _stack(arrays, axis=0, **kw):
    arrays = list(arrays)
    ndim = aval(arrays[0]).ndim + 1
    axis = normalize_axes(axis, ndim)[0]
    return _concatenate([_expand_dims(_as_operand(a), axis) for a in arrays], axis)


def _as_operand(x):
    return x if isinstance(x, Traced) else np.asarray(x)


def _clip(a, a_min=None, a_max=None, **kw):
    lo, hi = kw.pop("min", a_min), kw.pop("max", a_max)
    if kw:
        raise TraceError(f"np.clip: {', '.join(kw)} not supported", hint="pass only the bounds: np.clip(x, lo, hi)")
    scalar = (type(None), int, float, np.floating, np.integer)
    if isinstance(lo, scalar) and isinstance(hi, scalar):
        return ew.clip(a, lo, hi)
    out = a if lo is None else ew.maximum(a, lo)  # array bounds: as max/min
    return out if hi is None else ew.minimum(out, hi)


def _take_along_axis(arr, indices, axis):
    t = aval(arr)
    if axis is None:
        arr, axis = sh.reshape(arr, (t.size,)), 0
        t = aval(arr)
    axis = normalize_axes(axis, t.ndim)[0]
    it = aval(indices)
    if it.ndim != t.ndim:
        raise ShapeError(f"take_along_axis: indices {it} must have as many dimensions as the array {t}",
                         hint="give the indices the array's number of dimensions (e.g. idx[:, None])")
    return sh.take_along_axis(arr, indices, axis)


def _where(cond, x=None, y=None):
    if x is None or y is None:
        raise TraceError("np.where(cond) with one argument gives a data-dependent shape",
                         hint="use np.where(cond, a, b)")
    return ew.where(cond, x, y)


def _dot(a, b, out=None):
    ta, tb = aval(a), aval(b)
    if ta.ndim == 0 or tb.ndim == 0:
        return ew.mul(a, b)
    if ta.ndim > 2 or tb.ndim > 2:
        raise TraceError("np.dot of arrays with more than 2 dimensions is not supported", hint="use @ (np.matmul)")
    return la.matmul(a, b)


def _like(value):
    """``np.zeros_like``/``np.ones_like``: of a traced array, a traced constant the function owns (so
    ``out = np.zeros_like(x); out[0] = ...`` writes into it); of anything else, NumPy's array."""
    def make(a, dtype=None, shape=None, **kw):
        t = aval(a)
        shape = t.shape if shape is None else ((shape,) if isinstance(shape, (int, np.integer)) else tuple(shape))
        if isinstance(a, Traced) and is_symbolic(shape):  # a named size: broadcast when the code runs
            return sh.broadcast_to(lift(np.asarray(value, dtype=dtype or t.np_dtype), a), shape).copy()
        full = np.full(shape, value, dtype=dtype or t.np_dtype)
        if not isinstance(a, Traced):
            return full
        return sh.broadcast_to(lift(full[(0,) * full.ndim] if full.size else full, a), shape).copy()
    return make


FUNCTIONS = {
    np.sum: _reduction(red.sum_), np.mean: _reduction(red.mean), np.max: _reduction(red.max_),
    np.amax: _reduction(red.max_), np.min: _reduction(red.min_), np.amin: _reduction(red.min_),
    np.prod: _reduction(red.prod),
    np.argmax: lambda a, axis=None, **kw: red.argmax(a, axis),
    np.argmin: lambda a, axis=None, **kw: red.argmin(a, axis),
    np.dot: _dot, np.matmul: lambda a, b, **kw: la.matmul(a, b), np.outer: lambda a, b, **kw: la.outer(a, b),
    np.transpose: lambda a, axes=None: sh.transpose(a, axes), np.reshape: _reshape,
    np.expand_dims: _expand_dims, np.squeeze: _squeeze,
    np.broadcast_to: lambda a, shape, **kw: sh.broadcast_to(a, (shape,) if isinstance(shape, int) else shape),
    np.concatenate: _concatenate, np.stack: _stack, np.where: _where, np.clip: _clip,
    np.take_along_axis: _take_along_axis, np.ravel: lambda a, **kw: sh.reshape(a, (aval(a).size,)),
    np.zeros_like: _like(0), np.ones_like: _like(1),
    np.full_like: lambda a, fill_value, dtype=None, **kw: np.full(aval(a).shape, fill_value,
                                                                  dtype=dtype or aval(a).np_dtype),
    np.shape: lambda a: aval(a).shape, np.ndim: lambda a: aval(a).ndim, np.size: lambda a, axis=None: (
        aval(a).size if axis is None else aval(a).shape[axis]),
    np.square: ew.square, np.abs: ew.abs_,
    **complex_dispatch.FUNCTIONS,  # np.real, np.imag, np.conj, np.angle, np.real_if_close
    np.copy: lambda a, order="K", **kw: a.copy(),  # a new array object: writable in place, as in NumPy
}
def _truth(a):
    t = aval(a)
    return a if t.dtype == "bool" else ew.not_equal(a, np.zeros((), t.np_dtype))


def _any_all(kind):
    def reduce(a, axis=None, out=None, keepdims=False, *, where=None):
        if out is not None or where is not None:
            raise TraceError(f"np.{kind}: out= and where= are not supported",
                             hint=f"apply a mask first: np.{kind}(mask & x)")
        truth = _truth(a if isinstance(a, Traced) else np.asarray(a))
        if kind == "any":
            return ew.greater(red.sum_(ew.astype(truth, "i64"), axis, keepdims), np.int64(0))
        return ew.equal(red.sum_(ew.astype(ew.logical_not(truth), "i64"), axis, keepdims), np.int64(0))
    return reduce


def _heaviside(x1, x2, **kw):
    if isinstance(x2, Traced) or np.ndim(x2) != 0:
        raise TraceError("np.heaviside with an array as its value at 0 is not supported by gradc",
                         hint="pass one number: np.heaviside(x, 0.5)")
    return ew.heaviside(x1, float(x2))


FUNCTIONS[np.any] = _any_all("any")
FUNCTIONS[np.all] = _any_all("all")
UFUNCS[np.heaviside] = _heaviside
FUNCTIONS.update(linalg_dispatch.FUNCTIONS)  # np.linalg, einsum and the other contractions
UFUNCS.update(linalg_dispatch.UFUNCS)


# ---------------------------------------------------------------- indexing
def index_value(x, key):
    """``x[key]`` for a traced ``x``: basic indexing becomes ``index``, integer arrays (and static boolean
    masks, as the integer arrays of their ``np.nonzero``) ``gather``.

    >>> from gradc.trace import trace
    >>> print(trace(lambda x: x[np.array([True, False, True])], np.ones(3)))
    def lambda_(x: f64[3]) -> f64[2]:
      t0: f64[2] = gather x const(i64[2]) spec=(<array 0>,)
      return t0
    """
    spec, arrays = parse_index(aval(x), key)
    return read_index(x, spec, arrays)


def read_index(x, spec, arrays):
    """``x`` read at a parsed index (see ``parse_index``).

    >>> read_index(np.arange(4.0), (("slice", None, None, 2),), [])
    array([0., 2.])
    """
    if arrays:
        return sh.gather(x, arrays, spec)
    if all(s == ("slice", None, None, None) for s in spec):
        return x
    return sh.index(x, spec)


def parse_index(t, key):
    """``(spec, arrays)`` of ``key`` for an array of type ``t``: the static spec of ``gradc.ops.shape``
    (covering every axis) and the index arrays it names (NumPy integer arrays or traced integers).

    >>> from gradc.ir.types import TensorType
    >>> parse_index(TensorType((3, 4), "f64"), (Ellipsis, 1))
    ((('slice', None, None, None), ('int', 1)), [])
    """
    items = list(key) if isinstance(key, tuple) else [key]
    items = [_static_mask(i) for i in items]
    if sum(i is Ellipsis for i in items) > 1:
        raise TraceError("an index can only have one ellipsis (...)", hint="use a single ... in the index")
    consumed = sum(_axes_taken(i) for i in items)
    if consumed > t.ndim:
        raise ShapeError(f"too many indices for an array of shape {t.shape}: {consumed} given",
                         hint="index at most one item per dimension")
    if any(i is Ellipsis for i in items):  # not `Ellipsis in items`: that compares arrays with ==
        k = next(n for n, i in enumerate(items) if i is Ellipsis)
        items[k:k + 1] = [slice(None)] * (t.ndim - consumed)
    else:
        items += [slice(None)] * (t.ndim - consumed)
    spec, arrays, axis = [], [], 0
    for item in items:
        if item is None:
            spec.append(("new",))
            continue
        if isinstance(item, _Mask):  # a static boolean mask: the integer arrays of its np.nonzero
            mask = item.mask
            if mask.shape != t.shape[axis:axis + mask.ndim]:
                raise ShapeError(f"a boolean index of shape {mask.shape} does not match the indexed axes "
                                 f"{t.shape[axis:axis + mask.ndim]}", hint="the mask must have the shape of the "
                                 "axes it selects from")
            for rows in np.nonzero(mask):
                spec.append(("array", len(arrays)))
                arrays.append(rows)
            axis += mask.ndim
            continue
        if isinstance(item, slice) and (isinstance(item.start, Traced) or isinstance(item.stop, Traced)):
            spec.append(("array", len(arrays)))  # x[j:j + 3]: a fixed-length window at a traced start
            arrays.append(WINDOW[0](item, t.shape[axis], axis))
        elif isinstance(item, slice):
            spec.append(sh.slice_item(*(None if v is None else _static_int(v) for v in
                                        (item.start, item.stop, item.step))))
        elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
            i = int(item)
            # on a named axis NumPy checks the index when the code runs (x[5] of fewer rows is its IndexError)
            if isinstance(t.shape[axis], int) and not -t.shape[axis] <= i < t.shape[axis]:
                raise ShapeError(f"index {i} is out of bounds for axis {axis} with size {t.shape[axis]}",
                                 hint="indices must lie in [-size, size)")
            spec.append(("int", i))
        else:
            arr = item if isinstance(item, Traced) else np.asarray(item)
            at = aval(arr)
            if at.dtype == "bool":
                raise TraceError("indexing with a traced boolean mask gives a data-dependent shape",
                                 hint="use np.where(mask, x, 0) instead (a mask that is a NumPy array works)")
            if at.dtype not in ("i64", "i32"):
                raise TraceError(f"arrays used as indices must be integers, not {at.dtype}",
                                 hint="convert the index array with .astype(np.int64)")
            if not isinstance(arr, Traced) and arr.size and isinstance(t.shape[axis], int) and not (
                    (arr >= -t.shape[axis]).all() and (arr < t.shape[axis]).all()):
                raise ShapeError(f"an index array is out of bounds for axis {axis} with size {t.shape[axis]}",
                                 hint="indices must lie in [-size, size)")
            spec.append(("array", len(arrays)))
            arrays.append(arr)
        axis += 1
    return tuple(spec), arrays


class _Mask:
    """A concrete boolean index (NumPy array, list of bools or a bool), told apart from integer arrays."""

    def __init__(self, mask):
        self.mask = mask


def _static_mask(item):
    if isinstance(item, (np.ndarray, list)) and not isinstance(item, Traced):
        arr = np.asarray(item)
        if arr.dtype == bool:
            return _Mask(arr)
    return item


def _axes_taken(item):
    if item is None or item is Ellipsis:
        return 0
    return item.mask.ndim if isinstance(item, _Mask) else 1


class TracedSliceBound(StaticValueNeeded):
    """A slice bound is traced (e.g. the counter of a loop gradc traces): the slice's length is not static."""


WINDOW: list = []  # x[j:j + k] at a traced start (gradc.trace.position_dispatch.window registers it)


def _static_int(v):
    if isinstance(v, Traced):
        raise TracedSliceBound("a slice bound depends on a traced value (a loop counter of a traced loop?)",
                               hint="slice bounds must be Python ints; for x[:i] with a traced i, mask instead: "
                                    "np.where(np.arange(len(x)) < i, x, 0)")
    return int(v)
