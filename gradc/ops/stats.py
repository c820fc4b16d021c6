"""Statistics and scan reductions: the primitives (cumsum, cumprod, argsort, searchsorted, convolve).

Everything else of the family is a composition of registry ops (no op of its
own, so nothing to register: ``gradc.trace.stats_dispatch`` imports them), in
``stats_moments`` (var, std, average, the nan-reductions, cov, corrcoef, ptp),
``stats_order`` (sort, median, quantile, interp) and ``stats_scan`` (diff,
trapezoid, the cumulative functions, convolve's modes). Sorting is a gather at
indices a nondiff ``argsort`` computes, so its VJP is a scatter.

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> import numpy as np
>>> cumsum(np.arange(4.0), 0)
array([0., 1., 3., 6.])
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.errors import ShapeError
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.reduce import sum_
from gradc.ops.values import aval, batch_size, normalize_axes, result_dtype, with_batch


def flip(x, axis: int):
    """``x`` reversed along ``axis`` (``x[..., ::-1]``, an ``index`` op).

    >>> flip(np.arange(3.0), 0)
    array([2., 1., 0.])
    """
    ndim = aval(x).ndim
    spec = [sh.slice_item(None, None, None)] * ndim
    spec[axis] = sh.slice_item(None, None, -1)
    return sh.index(x, spec)


def move_axis(x, src: int, dst: int):
    """``np.moveaxis(x, src, dst)`` with non-negative axes (a ``transpose``, or ``x`` itself).

    >>> move_axis(np.ones((2, 3, 4)), 0, 2).shape
    (3, 4, 2)
    """
    perm = [i for i in range(aval(x).ndim) if i != src]
    perm.insert(dst, src)
    return sh.transpose(x, perm)


def _same_type(types, params):
    return types[0]


def _axis_call(name):
    def spell_it(args, params, out, target):
        return spell.call(f"np.{name}", args[0], axis=spell.literal(params["axis"]))
    return spell_it


def _shift_axis(name):
    def batch(x, batched, axis, **params):
        return bind(name, x, axis=axis + 1, **params)
    return batch


# ---------------------------------------------------------------- cumsum
defop("cumsum", infer=_same_type, impl=lambda x, axis: np.cumsum(x, axis=axis),
      vjp=lambda ct, out, x, needs, axis: (flip(cumsum(flip(ct, axis), axis), axis),), linear=True,
      doc="x_bar = reversed cumsum of ct along the axis", np=_axis_call("cumsum"), c=c_spell.loop("cumulative"),
      batch=_shift_axis("cumsum"))


# ---------------------------------------------------------------- cumprod
def _cumprod_vjp(ct, out, x, needs, axis):
    # x_bar[j] = sum over i >= j of ct[i] * (product of x[k], k <= i, k != j). Row j of the square
    # S[j, k] = (1 if k == j else x[k]) has those products as its cumprod, so no division happens:
    # exact where x has zeros, and differentiable again. Costs n**2 per row along the axis.
    t = aval(x)
    n = t.shape[axis]
    rest = tuple(d for i, d in enumerate(t.shape) if i != axis)
    last = move_axis(x, axis, t.ndim - 1)
    spread = sh.broadcast_to(sh.reshape(last, rest + (1, n)), rest + (n, n))
    if isinstance(n, int):
        diagonal, later = np.eye(n, dtype=bool), np.triu(np.ones((n, n), dtype=bool))  # later: i >= j
    else:  # a named size: the masks are made when the code runs
        from gradc.ops.linalg_decomp import eye_like, tri
        ones = ew.add(ew.mul(spread, 0.0), 1.0)
        diagonal, later = ew.greater(eye_like(ones), 0.5), ew.greater(tri(ones, lower=False), 0.5)
    square = ew.where(diagonal, 1.0, spread)
    others = cumprod(square, t.ndim)  # others[..., j, i] = prod of x[k] for k <= i, k != j
    weights = sh.broadcast_to(sh.reshape(move_axis(ct, axis, t.ndim - 1), rest + (1, n)), rest + (n, n))
    terms = ew.where(later, ew.mul(others, weights), 0.0)
    return (move_axis(sum_(terms, t.ndim), t.ndim - 1, axis),)


defop("cumprod", infer=_same_type, impl=lambda x, axis: np.cumprod(x, axis=axis), vjp=_cumprod_vjp,
      doc="x_bar[j] = sum over i >= j of ct[i] * (product of x[:i+1] without x[j]), without division",
      np=_axis_call("cumprod"), c=c_spell.loop("cumulative"), batch=_shift_axis("cumprod"))


# ---------------------------------------------------------------- argsort (sort is a gather at its indices)
def _argsort_spell(args, params, out, target):
    kwargs = {"axis": spell.literal(params["axis"])}
    if params["stable"]:
        kwargs["stable"] = ast.Constant(True)  # NumPy 2's keyword, the array API standard's too
    return spell.call("np.argsort", args[0], **kwargs)


defop("argsort", infer=lambda types, params: types[0].with_dtype("i64"),
      impl=lambda x, axis, stable: np.argsort(x, axis=axis, stable=stable or None).astype(np.int64),
      nondiff=True, doc="integer-valued: no derivative (np.sort is a gather at these indices)",
      np=_argsort_spell, c=c_spell.loop("argsort"), batch=_shift_axis("argsort"))


# ---------------------------------------------------------------- searchsorted (interp's segment finder)
def _searchsorted_spell(args, params, out, target):
    return spell.call("np.searchsorted", args[0], args[1], side=ast.Constant(params["side"]))


def _searchsorted_batch(a, v, batched, side):
    # per batch element: how many entries of its sorted row a precede v (as comparisons, which batch)
    n = batch_size((a, v), batched)
    a, v = with_batch(a, batched[0], n), with_batch(v, batched[1], n)
    vt, m = aval(v), aval(a).shape[1]
    rows = sh.broadcast_to(sh.reshape(a, (n,) + (1,) * (vt.ndim - 1) + (m,)), vt.shape + (m,))
    cols = sh.broadcast_to(sh.reshape(v, vt.shape + (1,)), vt.shape + (m,))
    before = ew.less(rows, cols) if side == "left" else ew.less_equal(rows, cols)
    return sum_(ew.astype(before, "i64"), vt.ndim)


defop("searchsorted", infer=lambda types, params: types[1].with_dtype("i64"),
      impl=lambda a, v, side: np.asarray(np.searchsorted(a, v, side=side), dtype=np.int64),
      nondiff=True, doc="integer-valued: no derivative", np=_searchsorted_spell, c=c_spell.loop("searchsorted"),
      batch=_searchsorted_batch)


# ---------------------------------------------------------------- convolve (full mode; the others slice it)
def _convolve_infer(types, params):
    a, v = types
    if a.ndim != 1 or v.ndim != 1 or a.dtype != v.dtype or not a.shape[0] or not v.shape[0]:
        raise ShapeError(f"convolve needs two non-empty 1-d arrays of one dtype, not {a} and {v}",
                         hint="np.convolve works on 1-d sequences")
    return a.with_shape((a.shape[0] + v.shape[0] - 1,))


def _convolve_vjp(ct, out, a, v, needs):
    n, m = aval(a).shape[0], aval(v).shape[0]
    a_bar = sh.index(convolve_full(ct, flip(v, 0)), [sh.slice_item(m - 1, m - 1 + n, None)]) if needs[0] else None
    v_bar = sh.index(convolve_full(ct, flip(a, 0)), [sh.slice_item(n - 1, n - 1 + m, None)]) if needs[1] else None
    return a_bar, v_bar


def _convolve_batch(a, v, batched):
    # out[b, k] = sum_i a[b, i] * vpad[b, k - i + n - 1] with v zero-padded by n - 1 on both sides:
    # a gather of the padded rows at a static Toeplitz index, then a batched matrix-vector product
    b = batch_size((a, v), batched)
    a, v = with_batch(a, batched[0], b), with_batch(v, batched[1], b)
    n, m = aval(a).shape[1], aval(v).shape[1]
    full = n + m - 1
    padded = sh.index_grad(v, (sh.slice_item(None, None, None), sh.slice_item(n - 1, n - 1 + m, None)),
                           (b, m + 2 * n - 2))
    toeplitz = np.arange(full)[:, None] - np.arange(n)[None, :] + n - 1
    rows = np.arange(b).reshape(b, 1, 1)
    windows = sh.gather(padded, [rows, toeplitz[None]], (("array", 0), ("array", 1)))
    return sum_(ew.mul(windows, sh.broadcast_to(sh.reshape(a, (b, 1, n)), (b, full, n))), 2)


defop("convolve", infer=_convolve_infer, impl=lambda a, v: np.convolve(a, v), vjp=_convolve_vjp,
      doc="a_bar = convolve(ct, v[::-1])[m-1:m-1+n]; v_bar = convolve(ct, a[::-1])[n-1:n-1+m]",
      np=lambda args, params, out, target: spell.call("np.convolve", args[0], args[1]), c=c_spell.loop("convolve"),
      batch=_convolve_batch)


# ---------------------------------------------------------------- functions
def _scan_operand(x):
    """Integers and booleans scan as int64, as NumPy's cumsum and cumprod do (float and complex as they are)."""
    return x if aval(x).is_inexact else ew.astype(x, "i64")


def _scan(name, x, axis):
    x = _scan_operand(x)
    t = aval(x)
    if axis is None:
        x, axis = sh.reshape(x, (t.size,)), 0
    elif t.ndim == 0:
        raise ShapeError(f"axis {axis} is out of bounds for a 0-d array", hint="a 0-d value has no axis to scan")
    else:
        axis = normalize_axes(axis, t.ndim)[0]
    if aval(x).shape[axis] == 1 or aval(x).shape[axis] == 0:  # (a named size may be more than 1)
        return x
    return bind(name, x, axis=axis)


def cumsum(x, axis=None):
    """``np.cumsum(x, axis)``: running sums (``axis=None`` scans the flattened array).

    >>> cumsum(np.ones((2, 2)), 1)
    array([[1., 2.],
           [1., 2.]])
    """
    return _scan("cumsum", x, axis)


def cumprod(x, axis=None):
    """``np.cumprod(x, axis)``: running products; its derivative is exact also where ``x`` is 0.

    >>> cumprod(np.array([2.0, 0.0, 3.0]), 0)
    array([2., 0., 0.])
    """
    return _scan("cumprod", x, axis)


def argsort(x, axis=-1, stable=False):
    """``np.argsort(x, axis)`` as int64 (``axis=None``: of the flattened array).

    >>> argsort(np.array([3.0, 1.0, 2.0]))
    array([1, 2, 0])
    """
    t = aval(x)
    if axis is None:
        x, axis = sh.reshape(x, (t.size,)), 0
    elif t.ndim == 0:
        raise ShapeError("np.argsort of a 0-d array needs axis=None", hint="pass axis=None, or sort a 1-d array")
    else:
        axis = normalize_axes(axis, t.ndim)[0]
    return bind("argsort", x, axis=axis, stable=bool(stable))


def searchsorted(a, v, side="left"):
    """``np.searchsorted(a, v, side)`` for a sorted 1-d ``a`` (int64, not differentiable).

    >>> searchsorted(np.array([1.0, 2.0, 3.0]), np.array([2.0, 0.5]), "right")
    array([2, 0])
    """
    if side not in ("left", "right"):
        raise ShapeError(f"side must be 'left' or 'right', not {side!r}", hint="np.searchsorted takes side='left' "
                         "or side='right'")
    if aval(a).ndim != 1:
        raise ShapeError(f"np.searchsorted needs a 1-d sorted array, not {aval(a)}", hint="flatten or index it first")
    dtype = result_dtype(a, v)  # compared in one dtype, as NumPy does
    return bind("searchsorted", ew.astype(a, dtype), v if aval(v).dtype in (None, dtype) else ew.astype(v, dtype),
                side=side)


def convolve_full(a, v):
    """``np.convolve(a, v)`` (mode 'full') of two 1-d arrays, cast to one dtype.

    >>> convolve_full(np.array([1.0, 2.0]), np.array([1.0, 1.0, 1.0]))
    array([1., 3., 3., 2.])
    """
    dtype = result_dtype(a, v)
    if dtype not in ("f32", "f64"):
        dtype = "f64"
    return bind("convolve", ew.astype(a, dtype), ew.astype(v, dtype))
