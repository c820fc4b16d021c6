"""Reductions: sum, mean, max, min, prod (with axes and keepdims), argmax, argmin.

Axes are a sorted tuple of non-negative ints in the IR; the functions here
accept NumPy's ``axis`` forms.

>>> import numpy as np
>>> mean(np.arange(4.0).reshape(2, 2), 0)
array([1., 2.])
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as shape_ops
from gradc.errors import ShapeError
from gradc.ir import dims
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.sizes import size_value
from gradc.ops.values import aval, normalize_axes


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _reduce_infer(types, params):
    return types[0].with_shape(reduced_shape(types[0].shape, params["axes"], params["keepdims"]))


def _axis_ast(axes, ndim):
    if len(axes) == ndim:
        return ast.Constant(None)
    return spell.literal(axes[0] if len(axes) == 1 else tuple(axes))


def _ufunc_reduce_spell(ufunc):
    def spell_it(args, params, out, target):
        kwargs = {"keepdims": ast.Constant(True)} if params["keepdims"] else {}
        ndim = len(out.shape) if params["keepdims"] else len(out.shape) + len(params["axes"])
        return spell.call(f"np.{ufunc}.reduce", args[0], _axis_ast(params["axes"], ndim), **kwargs)
    return spell_it


def _count(x, axes):
    """How many elements a reduction over ``axes`` takes in: an int, or a size expression (``n``)."""
    shape = aval(x).shape
    return dims.prod(shape[a] for a in axes)


def expand_to(ct, x, axes, keepdims):
    """Broadcast a reduction's cotangent back over the reduced axes of ``x``."""
    t = aval(x)
    if not keepdims:
        ct = shape_ops.reshape(ct, reduced_shape(t.shape, axes, True))
    return shape_ops.broadcast_to(ct, t.shape)


defop("sum", infer=_reduce_infer, impl=lambda x, axes, keepdims: np.add.reduce(x, axes, keepdims=keepdims),
      vjp=lambda ct, out, x, needs, axes, keepdims: (expand_to(ct, x, axes, keepdims),), linear=True,
      doc="x_bar = broadcast(ct) over the summed axes", np=_ufunc_reduce_spell("add"), c=c_spell.loop("reduce"))


def _mean_impl(x, axes, keepdims):
    return np.add.reduce(x, axes, keepdims=keepdims) / _count(x, axes)


def _mean_spell(args, params, out, target):
    total = _ufunc_reduce_spell("add")(args, params, out, target)
    return ast.BinOp(total, ast.Div(), spell.literal(params["count"]))


def _mean_vjp(ct, out, x, needs, axes, keepdims, count):
    return (expand_to(ew.div(ct, size_value(x, axes, aval(ct).dtype)), x, axes, keepdims),)


defop("mean", infer=_reduce_infer, impl=lambda x, axes, keepdims, count: _mean_impl(x, axes, keepdims),
      vjp=_mean_vjp, linear=True, doc="x_bar = broadcast(ct / n) over the averaged axes", np=_mean_spell,
      c=c_spell.loop("reduce"))


def _extremum_vjp(ct, out, x, needs, axes, keepdims):
    # the cotangent is shared evenly among the positions that attain the extremum
    hit = ew.equal(x, expand_to(out, x, axes, keepdims))
    count = sum_(ew.astype(hit, aval(x).dtype), axes, keepdims=True)
    share = ew.div(shape_ops.reshape(ct, reduced_shape(aval(x).shape, axes, True)), count)
    return (ew.where(hit, shape_ops.broadcast_to(share, aval(x).shape), ew.zeros_like(x)),)


defop("max", infer=_reduce_infer,
      impl=lambda x, axes, keepdims: np.maximum.reduce(x, axes, keepdims=keepdims), vjp=_extremum_vjp,
      doc="x_bar = ct where x attains the max (shared evenly among ties), else 0",
      np=_ufunc_reduce_spell("maximum"), c=c_spell.loop("reduce"))
defop("min", infer=_reduce_infer,
      impl=lambda x, axes, keepdims: np.minimum.reduce(x, axes, keepdims=keepdims), vjp=_extremum_vjp,
      doc="x_bar = ct where x attains the min (shared evenly among ties), else 0",
      np=_ufunc_reduce_spell("minimum"), c=c_spell.loop("reduce"))


def _prod_vjp(ct, out, x, needs, axes, keepdims):
    # others[..., j] = product of the factors other than x[..., j], computed without division as
    # prod over k of (1 if k == j else x[..., k]): exact at zeros and differentiable again
    # (the old quotient form gave wrong second derivatives at zeros). Costs n**2 per reduced row.
    t = aval(x)
    kept = tuple(i for i in range(t.ndim) if i not in axes)
    n = _count(x, axes)
    rows = tuple(t.shape[i] for i in kept)
    flat = shape_ops.reshape(shape_ops.transpose(x, kept + axes), rows + (1, n))
    square = ew.where(np.eye(n, dtype=bool), 1.0, shape_ops.broadcast_to(flat, rows + (n, n)))
    others = shape_ops.reshape(prod(square, len(rows) + 1), tuple(t.shape[i] for i in kept + axes))
    others = shape_ops.transpose(others, tuple(np.argsort(kept + axes).tolist()))
    return (ew.mul(expand_to(ct, x, axes, keepdims), others),)


defop("prod", infer=_reduce_infer,
      impl=lambda x, axes, keepdims: np.multiply.reduce(x, axes, keepdims=keepdims), vjp=_prod_vjp,
      doc="x_bar = ct * (product of the other factors, without division)", np=_ufunc_reduce_spell("multiply"),
      c=c_spell.loop("reduce"))


def _arg_infer(types, params):
    t = types[0]
    axis = params["axis"]
    shape = () if axis is None else tuple(d for i, d in enumerate(t.shape) if i != axis)
    return t.with_shape(shape).with_dtype("i64")


def _arg_spell(name):
    def spell_it(args, params, out, target):
        return spell.call(f"np.{name}", args[0], axis=spell.literal(params["axis"]))
    return spell_it


def _arg_batch(name):
    def batch(x, batched, axis):
        if axis is None:  # the flat position within each batch element
            t = aval(x)
            flat = dims.prod(t.shape[1:])
            return bind(name, shape_ops.reshape(x, (t.shape[0], flat)), axis=1)
        return bind(name, x, axis=axis + 1)
    return batch


defop("argmax", infer=_arg_infer, impl=lambda x, axis: np.argmax(x, axis=axis).astype(np.int64), nondiff=True,
      doc="integer-valued: no derivative", np=_arg_spell("argmax"), c=c_spell.loop("argreduce"),
      batch=_arg_batch("argmax"))
defop("argmin", infer=_arg_infer, impl=lambda x, axis: np.argmin(x, axis=axis).astype(np.int64), nondiff=True,
      doc="integer-valued: no derivative", np=_arg_spell("argmin"), c=c_spell.loop("argreduce"),
      batch=_arg_batch("argmin"))


# ---------------------------------------------------------------- functions
def _reduce(name, x, axis, keepdims):
    t = aval(x)
    axes = normalize_axes(axis, t.ndim)
    if not axes:
        return x
    if name in ("max", "min", "argmax", "argmin") and any(t.shape[a] == 0 for a in axes):
        raise ShapeError(f"{name} of an empty axis has no value", hint="reduce over a non-empty axis")
    return bind(name, x, axes=axes, keepdims=bool(keepdims))


def _as_numpy_accumulates(x):
    """Booleans and int32 sum and multiply as int64, as NumPy's sum and prod do (a bool sum counts)."""
    return ew.astype(x, "i64") if aval(x).dtype in ("bool", "i32") else x


def sum_(x, axis=None, keepdims=False):
    return _reduce("sum", _as_numpy_accumulates(x), axis, keepdims)


def mean(x, axis=None, keepdims=False):
    t = aval(x)
    axes = normalize_axes(axis, t.ndim)
    if not axes:
        return ew.astype(x, "f64") if not t.is_inexact else x
    if not t.is_inexact:
        x = ew.astype(x, "f64")
    return bind("mean", x, axes=axes, keepdims=bool(keepdims), count=_count(x, axes))


def max_(x, axis=None, keepdims=False):
    return _reduce("max", x, axis, keepdims)


def min_(x, axis=None, keepdims=False):
    return _reduce("min", x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    return _reduce("prod", _as_numpy_accumulates(x), axis, keepdims)


def argmax(x, axis=None):
    t = aval(x)
    if axis is None and t.ndim > 1:
        x = shape_ops.reshape(x, (t.size,))
    return bind("argmax", x, axis=None if axis is None else normalize_axes(axis, t.ndim)[0])


def argmin(x, axis=None):
    t = aval(x)
    if axis is None and t.ndim > 1:
        x = shape_ops.reshape(x, (t.size,))
    return bind("argmin", x, axis=None if axis is None else normalize_axes(axis, t.ndim)[0])
