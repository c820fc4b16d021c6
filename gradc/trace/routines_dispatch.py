"""NumPy's numerical routines on traced values (tables merged into ``numpy_dispatch`` by ``gradc.trace.dispatch``).

Finite differences (``np.gradient``, ``np.ediff1d``), evenly spaced sequences with traced end
points (``np.linspace``, ``np.logspace``, ``np.geomspace``), ``np.select``, ``np.partition`` and
the floating-point decompositions ``np.frexp``, ``np.ldexp``, ``np.modf`` (polynomials are in
``polynomial_dispatch``). Each is a composition of registry ops written as NumPy's own definition
reads, so both targets have it and the derivatives are those ops' tested rules.

>>> from gradc.trace import trace
>>> print(trace(lambda x: np.ediff1d(x), np.ones(3)))
def lambda_(x: f64[3]) -> f64[2]:
  t0: f64[2] = index x spec=(1:,)
  t1: f64[2] = index x spec=(:-1,)
  t2: f64[2] = sub t0 t1
  return t2
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, StaticValueNeeded, TraceError
from gradc.ir.builder import Traced
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops import special_numpy
from gradc.ops.values import aval, first_traced, lift, normalize_axes, result_dtype

_FULL = sh.slice_item(None, None, None)


def _operand(x):
    if isinstance(x, Traced):
        return x
    if isinstance(x, (list, tuple)) and first_traced(list(x)) is not None:
        from gradc.trace import array_like_dispatch
        return array_like_dispatch.build(list(x))
    return np.asarray(x)


def _float(x):
    """``x`` in floating point, as NumPy's routines compute (integers become float64)."""
    t = aval(x)
    if t.dtype in ("f64", "f32"):
        return x
    return ew.astype(x, "f64") if isinstance(x, Traced) else np.asarray(x, dtype=np.float64)


def _as_f64(x):
    if aval(x).dtype == "f64":
        return x
    return ew.astype(x, "f64") if isinstance(x, Traced) else np.asarray(x, dtype=np.float64)


def _static_int(value, what):
    if isinstance(value, Traced):
        raise StaticValueNeeded(f"{what} must be known at trace time, not a traced value",
                                hint="pass a Python int")
    return int(value)


def _along(a, axis, start, stop, step=None):
    nd = aval(a).ndim
    return sh.index(a, (_FULL,) * axis + (sh.slice_item(start, stop, step),) + (_FULL,) * (nd - axis - 1))


def _at(a, axis, i):
    """``a[..., i:i+1, ...]`` along ``axis`` (the axis kept, length 1)."""
    return _along(a, axis, i, i + 1 if i != -1 else None)


# ---------------------------------------------------------------- differences
def _spacing(value, n, what):
    """One axis's spacing: a scalar (Python, NumPy or traced) or the coordinates (1-d, ``n`` long)."""
    value = _operand(value)
    t = aval(value)
    if t.ndim == 0:
        return value, None
    if t.ndim != 1:
        raise ShapeError(f"{what}: distances must be either scalars or 1d, not of shape {t.shape}",
                         hint="pass one spacing per axis: a number or the 1-d coordinates")
    if t.shape[0] != n:
        raise ShapeError(f"{what}: when 1d, distances must match the length of the corresponding dimension "
                         f"({t.shape[0]} != {n})", hint="give one coordinate per point along the axis")
    coords = _float(value)
    return None, ew.sub(sh.index(coords, (sh.slice_item(1, None, None),)),
                        sh.index(coords, (sh.slice_item(None, -1, None),)))


def _gradient(f, *varargs, axis=None, edge_order=1):
    f = _float(_operand(f))
    t = aval(f)
    axes = tuple(range(t.ndim)) if axis is None else normalize_axes(axis, t.ndim)
    if len(set(axes)) != len(axes):
        raise ShapeError("np.gradient: an axis is repeated", hint="name each axis once")
    if len(varargs) == 0:
        varargs = (1.0,) * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0 and not (isinstance(varargs[0], Traced) and
                                                                 aval(varargs[0]).ndim):
        varargs = varargs * len(axes)
    elif len(varargs) != len(axes):
        raise TraceError(f"np.gradient: {len(varargs)} spacings for {len(axes)} axes",
                         hint="pass no spacing, one scalar, or one spacing per axis")
    edge_order = _static_int(edge_order, "np.gradient's edge_order")
    if edge_order not in (1, 2):
        raise ShapeError("np.gradient: edge_order must be 1 or 2", hint="pass edge_order=1 or edge_order=2")
    out = []
    for ax, spacing in zip(axes, varargs):
        n = t.shape[ax]
        if n < edge_order + 1:
            raise ShapeError(f"np.gradient: an axis of length {n} is too short for edge_order={edge_order}",
                             hint=f"each differentiated axis needs at least {edge_order + 1} points")
        h, dx = _spacing(spacing, n, "np.gradient")
        out.append(_gradient_axis(f, ax, n, h, dx, edge_order))
    return out[0] if len(out) == 1 else tuple(out)


def _gradient_axis(f, ax, n, h, dx, edge_order):
    def part(i, j=None):
        return _along(f, ax, i, j)

    def first(a, i):  # a 1-d value's entry i, shaped to broadcast along the axis
        shape = [1] * aval(f).ndim
        shape[ax] = 1
        return sh.reshape(sh.index(a, (sh.slice_item(i, None if i == -1 else i + 1, None),)), tuple(shape))

    def along(a):  # a 1-d value along the axis
        shape = [1] * aval(f).ndim
        shape[ax] = aval(a).shape[0]
        return sh.reshape(a, tuple(shape))

    if dx is None:  # a uniform spacing h (NumPy's formulas for a scalar)
        interior = ew.div(ew.sub(part(2, None), part(None, -2)), ew.mul(2.0, h))
        if edge_order == 1:
            lo = ew.div(ew.sub(part(1, 2), part(0, 1)), h)
            hi = ew.div(ew.sub(part(-1, None), part(-2, -1)), h)
        else:
            lo = ew.div(ew.add(ew.add(ew.mul(-1.5, part(0, 1)), ew.mul(2.0, part(1, 2))),
                               ew.mul(-0.5, part(2, 3))), h)
            hi = ew.div(ew.add(ew.add(ew.mul(0.5, part(-3, -2)), ew.mul(-2.0, part(-2, -1))),
                               ew.mul(1.5, part(-1, None))), h)
    else:  # coordinates: second-order differences on a non-uniform grid
        dx1 = sh.index(dx, (sh.slice_item(None, -1, None),))
        dx2 = sh.index(dx, (sh.slice_item(1, None, None),))
        total = ew.add(dx1, dx2)
        a = along(ew.div(ew.neg(dx2), ew.mul(dx1, total)))
        b = along(ew.div(ew.sub(dx2, dx1), ew.mul(dx1, dx2)))
        c = along(ew.div(dx1, ew.mul(dx2, total)))
        interior = ew.add(ew.add(ew.mul(a, part(None, -2)), ew.mul(b, part(1, -1))), ew.mul(c, part(2, None)))
        if edge_order == 1:
            lo = ew.div(ew.sub(part(1, 2), part(0, 1)), first(dx, 0))
            hi = ew.div(ew.sub(part(-1, None), part(-2, -1)), first(dx, -1))
        else:
            d1, d2 = first(dx, 0), first(dx, 1)
            s = ew.add(d1, d2)
            lo = ew.add(ew.add(ew.mul(ew.neg(ew.div(ew.add(ew.mul(2.0, d1), d2), ew.mul(d1, s))), part(0, 1)),
                               ew.mul(ew.div(s, ew.mul(d1, d2)), part(1, 2))),
                        ew.mul(ew.neg(ew.div(d1, ew.mul(d2, s))), part(2, 3)))
            d1, d2 = first(dx, -2), first(dx, -1)
            s = ew.add(d1, d2)
            hi = ew.add(ew.add(ew.mul(ew.div(d2, ew.mul(d1, s)), part(-3, -2)),
                               ew.mul(ew.neg(ew.div(s, ew.mul(d1, d2))), part(-2, -1))),
                        ew.mul(ew.div(ew.add(ew.mul(2.0, d2), d1), ew.mul(d2, s)), part(-1, None)))
    dtype = aval(f).dtype
    pieces = [ew.astype(p, dtype) if aval(p).dtype != dtype else p for p in (lo, interior, hi)]
    pieces = [sh.broadcast_to(p, aval(p).shape) for p in pieces]
    anchor = first_traced(pieces)
    return sh.concatenate([lift(p, anchor) for p in pieces], ax)


def _ediff1d(ary, to_end=None, to_begin=None):
    a = _operand(ary)
    a = sh.reshape(a, (aval(a).size,))
    parts = [ew.sub(sh.index(a, (sh.slice_item(1, None, None),)), sh.index(a, (sh.slice_item(None, -1, None),)))]
    dtype = aval(a).dtype
    for extra, before in ((to_begin, True), (to_end, False)):
        if extra is None:
            continue
        extra = _operand(extra)
        extra = sh.reshape(extra, (aval(extra).size,)) if isinstance(extra, Traced) else np.ravel(extra)
        extra = ew.astype(extra, dtype) if isinstance(extra, Traced) else extra.astype(aval(a).np_dtype)
        if before:
            parts.insert(0, extra)
        else:
            parts.append(extra)
    anchor = first_traced(parts)
    return sh.concatenate([lift(p, anchor) for p in parts], 0) if len(parts) > 1 else parts[0]


# ---------------------------------------------------------------- evenly spaced sequences
def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    num = _static_int(num, "np.linspace's num")
    if num < 0:
        raise ShapeError(f"np.linspace: number of samples, {num}, must be non-negative", hint="pass num >= 0")
    start, stop = _float(_operand(start)), _float(_operand(stop))
    div = (num - 1) if endpoint else num
    delta = ew.sub(stop, start)
    shape = aval(delta).shape
    iota = np.arange(num, dtype=aval(delta).np_dtype).reshape((num,) + (1,) * len(shape))
    step = ew.div(delta, float(div)) if div > 0 else ew.mul(delta, float("nan"))
    if div > 0:
        y = ew.add(ew.mul(iota, step), start)
    else:
        y = ew.add(ew.mul(iota, delta), start)
    if endpoint and num > 1:  # the last point is stop itself, as NumPy writes it
        head = sh.index(y, (sh.slice_item(None, -1, None),) + (_FULL,) * len(shape))
        last = sh.reshape(sh.broadcast_to(stop, shape), (1,) + tuple(shape))
        y = sh.concatenate([head, ew.astype(last, aval(head).dtype)], 0)
    y = _moved(y, axis, len(shape))
    y = _cast(y, dtype, "np.linspace")
    return (y, step) if retstep else y


def _moved(y, axis, nd):
    axis = normalize_axes(axis, nd + 1)[0]
    if axis == 0:
        return y
    order = list(range(1, nd + 1))
    order.insert(axis, 0)
    return sh.transpose(y, order)


def _cast(y, dtype, what):
    if dtype is None:
        return y
    name = np.dtype(dtype)
    if name.kind in "iu":  # NumPy rounds towards -inf before an integer cast
        return ew.astype(ew.floor(y), {8: "i64", 4: "i32"}.get(name.itemsize, "i64"))
    if name.kind == "f":
        return ew.astype(y, "f32" if name.itemsize == 4 else "f64")
    raise TraceError(f"{what} with dtype={name} is not supported by gradc", hint="use a float or integer dtype")


def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    y = _linspace(start, stop, num, endpoint, axis=0)
    base = base if isinstance(base, (int, float)) else _operand(base)  # a Python number stays weak, as in NumPy
    if aval(base).ndim:  # NumPy broadcasts an array base against the sequence's trailing axes
        base = sh.reshape(base, (1,) + aval(base).shape) if not isinstance(base, np.ndarray) else base[None]
    out = ew.power(base, y)
    return _cast(_moved(out, axis, aval(out).ndim - 1), dtype, "np.logspace")


def _geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    start, stop = (_as_f64(_operand(v)) for v in (start, stop))  # NumPy computes (and returns) float64
    for v in (start, stop):
        if not isinstance(v, Traced) and np.any(v == 0):
            raise ShapeError("np.geomspace: geometric sequence cannot include zero", hint="start and stop must be "
                             "non-zero")
    sign = ew.sign(start)  # NumPy: both negative gives the negated sequence of their magnitudes
    y = _linspace(special_numpy.log10(ew.abs_(start)), special_numpy.log10(ew.abs_(stop)), num, endpoint, axis=0)
    y = ew.mul(sign, ew.power(10.0, y))
    num = aval(y).shape[0]
    nd = aval(y).ndim - 1
    if num > 0:  # the end points exactly, as NumPy writes them
        parts = [sh.reshape(sh.broadcast_to(start, aval(y).shape[1:]), (1,) + aval(y).shape[1:])]
        if num > 1:
            parts.append(sh.index(y, (sh.slice_item(1, -1 if endpoint else None, None),) + (_FULL,) * nd))
            if endpoint:
                parts.append(sh.reshape(sh.broadcast_to(stop, aval(y).shape[1:]), (1,) + aval(y).shape[1:]))
        y = sh.concatenate([lift(p, first_traced(parts)) for p in parts], 0) if len(parts) > 1 else parts[0]
    return _cast(_moved(y, axis, nd), dtype, "np.geomspace")


# ---------------------------------------------------------------- selection
def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ShapeError("np.select: list of cases must be same length as list of conditions",
                         hint="give one choice per condition")
    conds = [_operand(c) for c in condlist]
    for i, c in enumerate(conds):
        if aval(c).dtype != "bool":
            raise TraceError(f"np.select: invalid entry {i} in condlist: should be boolean ndarray",
                             hint="compare to get the conditions (x > 0), or .astype(bool)")
    choices = [_operand(c) for c in choicelist]
    default = _operand(default)
    dtype = result_dtype(*choices, default) if choices else aval(default).dtype
    out = default
    for c, choice in reversed(list(zip(conds, choices))):  # the first condition that holds wins
        out = ew.where(c, choice, out)
    if not choices:
        return out
    out = lift(out, first_traced([out] + conds + choices))
    shape = aval(out).shape
    out = out if aval(out).dtype == dtype else ew.astype(out, dtype)
    return sh.broadcast_to(out, shape)


def _partition(what, arg):
    def apply(a, kth, axis=-1, kind="introselect", order=None):
        if order is not None:
            raise TraceError(f"{what}: order= is not supported by gradc", hint="partition a plain array")
        from gradc.trace.numpy_dispatch import FUNCTIONS
        a = _operand(a)
        if axis is not None:
            n = aval(a).shape[normalize_axes(axis, aval(a).ndim)[0]]
        else:
            n = aval(a).size
        for k in np.ravel(np.asarray(_check_kth(kth, what))):
            if isinstance(n, int) and not -n <= int(k) < n:
                raise ShapeError(f"{what}: kth(={int(k)}) out of bounds ({n})", hint="kth lies in [-n, n)")
        # sorted values are a partition at every kth (NumPy leaves the order within each side unspecified)
        return FUNCTIONS[np.argsort if arg else np.sort](a, axis=axis)
    return apply


def _check_kth(kth, what):
    if isinstance(kth, Traced):
        raise StaticValueNeeded(f"{what}: kth must be known at trace time", hint="pass Python ints")
    return kth


# ---------------------------------------------------------------- comparisons (no derivative)
def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """NumPy's test: ``|a - b| <= atol + rtol |b|`` for finite ``b``, or ``a == b`` (equal infinities)."""
    a, b = _operand(a), _operand(b)
    close = ew.logical_and(ew.less_equal(ew.abs_(ew.sub(a, b)), ew.add(atol, ew.mul(rtol, ew.abs_(b)))),
                           special_numpy.isfinite(b))
    close = ew.logical_or(close, ew.equal(a, b))
    if equal_nan:
        close = ew.logical_or(close, ew.logical_and(special_numpy.isnan(a), special_numpy.isnan(b)))
    return close


def _allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    from gradc.trace.numpy_dispatch import FUNCTIONS as numpy_functions
    return numpy_functions[np.all](_isclose(a, b, rtol, atol, equal_nan))


def _count_nonzero(a, axis=None, *, keepdims=False):
    from gradc.ops import reduce as red
    a = _operand(a)
    nonzero = ew.not_equal(a, np.zeros((), aval(a).np_dtype)) if aval(a).dtype != "bool" else a
    return red.sum_(ew.astype(nonzero, "i64"), axis, keepdims)


# ---------------------------------------------------------------- floating-point decompositions
def _frexp(x):
    """``(m, e)`` with ``x = m * 2**e``, ``0.5 <= |m| < 1`` (``(x, 0)`` for 0, inf and nan): the exponent from
    ``log2`` corrected by one step either way (rounding near a power of two), the mantissa an exact division by a
    power of two, so its derivative is ``2**-e``."""
    x = _float(_operand(x))
    finite = ew.logical_and(special_numpy.isfinite(x), ew.not_equal(x, 0.0))
    magnitude = ew.where(finite, ew.abs_(x), 1.0)
    e = ew.add(ew.floor(special_numpy.log2(magnitude)), 1.0)
    m = ew.div(magnitude, special_numpy.exp2(e))
    e = ew.add(e, ew.sub(ew.astype(ew.greater_equal(m, 1.0), aval(e).dtype),
                         ew.astype(ew.less(m, 0.5), aval(e).dtype)))
    e = ew.where(finite, e, 0.0)
    mantissa = ew.where(finite, ew.div(x, special_numpy.exp2(e)), x)
    return mantissa, ew.astype(e, "i32")


def _ldexp(x1, x2):
    x2 = _operand(x2)
    if aval(x2).dtype not in ("i64", "i32"):
        raise TraceError("np.ldexp: the exponent must be an integer", hint="pass integer exponents (np.int64)")
    x1 = _operand(x1)
    x1 = x1 if aval(x1).dtype in ("f64", "f32") else _float(x1)
    return ew.mul(x1, special_numpy.exp2(ew.astype(x2, aval(x1).dtype)))


def _modf(x):
    x = _float(_operand(x))
    whole = special_numpy.trunc(x)
    return ew.sub(x, whole), whole


FUNCTIONS = {
    np.gradient: _gradient, np.ediff1d: _ediff1d,
    np.linspace: _linspace, np.logspace: _logspace, np.geomspace: _geomspace,
    np.select: _select, np.isclose: _isclose, np.allclose: _allclose, np.count_nonzero: _count_nonzero,
    np.partition: _partition("np.partition", False), np.argpartition: _partition("np.argpartition", True),
}
UFUNCS: dict = {np.frexp: _frexp, np.ldexp: _ldexp, np.modf: _modf}
