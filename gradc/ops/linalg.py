"""Linear algebra: matmul (1-D, 2-D and batched, as NumPy's ``@``) and outer.

In the IR, batched matmul operands have equal batch dimensions (the function
``matmul`` broadcasts them first), so the VJP never unbroadcasts.

>>> import numpy as np
>>> matmul(np.ones(3), np.ones((3, 2)))
array([3., 3.])
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
from gradc.ops.values import aval, batch_size, broadcast_shapes, result_dtype, with_batch


def _matmul_infer(types, params):
    a, b = types
    if a.dtype != b.dtype:
        raise ShapeError(f"matmul operands {a} and {b} differ in dtype (internal: convert first)")
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError("matmul does not take scalars", hint="use * for scaling")
    k_a = a.shape[-1]
    k_b = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if k_a != k_b:
        raise ShapeError(f"matmul shapes {a} and {b} do not fit: inner dimensions {k_a} and {k_b} differ",
                         hint="check the operands' shapes (transpose one with .T?)")
    if a.ndim == 1 and b.ndim == 1:
        shape = ()
    elif a.ndim == 1:
        shape = b.shape[:-2] + b.shape[-1:]
    elif b.ndim == 1:
        shape = a.shape[:-1]
    else:
        if a.shape[:-2] != b.shape[:-2]:
            raise ShapeError(f"batched matmul {a} @ {b} needs equal batch dimensions (internal)")
        shape = a.shape[:-1] + b.shape[-1:]
    if (a.ndim == 1 and b.ndim > 2) or (b.ndim == 1 and a.ndim > 2):
        raise ShapeError(f"matmul of {a} and {b}: 1-D with batched operands is reshaped first (internal)")
    return a.with_shape(shape)


def swap_last(x):
    if type(x) is np.ndarray and x.ndim == 2:
        return bind("transpose", x, perm=(1, 0))
    nd = aval(x).ndim
    return shape_ops.transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _matmul_vjp(ct, out, a, b, needs):
    na, nb = aval(a).ndim, aval(b).ndim
    if na == 1 and nb == 1:
        a_bar = ew.mul(ct, b) if needs[0] else None
        b_bar = ew.mul(ct, a) if needs[1] else None
    elif na == 1:
        a_bar = matmul(b, ct) if needs[0] else None
        b_bar = outer(a, ct) if needs[1] else None
    elif nb == 1:
        a_bar = outer(ct, b) if needs[0] else None
        b_bar = matmul(swap_last(a), ct) if needs[1] else None
    else:
        a_bar = matmul(ct, swap_last(b)) if needs[0] else None
        b_bar = matmul(swap_last(a), ct) if needs[1] else None
    return a_bar, b_bar


def _matmul_spell(args, params, out, target):
    """``a @ b``; the dot product of two vectors as ``np.dot(a, b)`` (the same BLAS call, less overhead)."""
    if out.shape == ():
        return spell.call("np.dot", args[0], args[1])
    return ast.BinOp(args[0], ast.MatMult(), args[1])


def _rows_times(a, b):
    """``a[i] @ b`` for every i, with ``b`` (1-D or 2-D) shared: one matmul of all of a's rows."""
    sa, sb = aval(a).shape, aval(b).shape
    rows = shape_ops.reshape(a, (dims.prod(sa[:-1]), sa[-1]))
    return shape_ops.reshape(bind("matmul", rows, b), sa[:-1] + sb[1:])


def _matmul_batch(a, b, batched):
    n = batch_size((a, b), batched)
    na, nb = aval(a).ndim - batched[0], aval(b).ndim - batched[1]  # the ranks of one batch element
    if not batched[1] and nb <= 2:  # only a batched: its rows, all batch elements' together, times b
        return _rows_times(a, b)
    if not batched[0] and na <= 2:  # a @ b == (b.T @ a.T).T, so b's batch becomes rows again
        a_t = swap_last(a) if na == 2 else a
        if nb == 1:
            return _rows_times(b, a_t)
        out = _rows_times(swap_last(b), a_t)
        return out if na == 1 else swap_last(out)
    # both batched (or the shared one has batch dimensions): a batched matmul, 1-D operands as matrices
    a, b = with_batch(a, batched[0], n), with_batch(b, batched[1], n)
    sa, sb = aval(a).shape, aval(b).shape
    out_shape = (n,) + sa[1:-1] + sb[-1:] if nb > 1 else (n,) + sa[1:-1]
    if na == 1:
        a = shape_ops.reshape(a, (n, 1) + sa[1:])
    if nb == 1:
        b = shape_ops.reshape(b, sb + (1,))
    return shape_ops.reshape(bind("matmul", a, b), out_shape)


defop("matmul", infer=_matmul_infer, impl=np.matmul, vjp=_matmul_vjp, np=_matmul_spell,
      doc="a_bar = ct @ b.T; b_bar = a.T @ ct (outer products for 1-D operands)", c=c_spell.loop("matmul"),
      batch=_matmul_batch)


def _outer_infer(types, params):
    a, b = types
    if a.ndim != 1 or b.ndim != 1 or a.dtype != b.dtype:
        raise ShapeError(f"outer takes two 1-D operands of one dtype, not {a} and {b}",
                         hint="np.outer takes two vectors")
    return a.with_shape(a.shape + b.shape)


def _outer_batch(a, b, batched):
    n = batch_size((a, b), batched)
    a = shape_ops.reshape(a, (n if batched[0] else 1, aval(a).shape[-1], 1))
    b = shape_ops.reshape(b, (n if batched[1] else 1, 1, aval(b).shape[-1]))
    return ew.mul(a, b)


defop("outer", infer=_outer_infer, impl=np.multiply.outer,
      vjp=lambda ct, out, a, b, needs: (matmul(ct, b) if needs[0] else None,
                                         matmul(a, ct) if needs[1] else None),
      np=spell.fn("np.multiply.outer"), doc="a_bar = ct @ b; b_bar = a @ ct", c=c_spell.loop("outer"),
      batch=_outer_batch)


# ---------------------------------------------------------------- functions
_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


def matmul(a, b):
    """NumPy's ``a @ b``: promotes dtypes and broadcasts batch dimensions explicitly."""
    if (type(a) is np.ndarray and type(b) is np.ndarray and a.dtype == b.dtype and a.dtype in _FLOATS
            and 0 < a.ndim <= 2 and 0 < b.ndim <= 2):
        return bind("matmul", a, b)  # concrete, one float dtype, no batch dimensions: nothing to convert
    ta, tb = aval(a), aval(b)
    if ta.ndim == 0 or tb.ndim == 0:
        raise ShapeError(f"matmul of {ta} and {tb}: operands must be at least 1-D", hint="use * for scaling")
    dtype = result_dtype(a, b)
    if dtype not in ("f32", "f64"):
        dtype = "f64" if dtype.startswith("i") or dtype == "bool" else dtype
    a, b = ew.astype(a, dtype), ew.astype(b, dtype)
    if ta.ndim <= 2 and tb.ndim <= 2:
        return bind("matmul", a, b)
    squeeze_a, squeeze_b = ta.ndim == 1, tb.ndim == 1
    if squeeze_a:
        a = shape_ops.reshape(a, (1,) + ta.shape)
    if squeeze_b:
        b = shape_ops.reshape(b, tb.shape + (1,))
    sa, sb = aval(a).shape, aval(b).shape
    if sa[-1] != sb[-2]:
        raise ShapeError(f"matmul shapes {ta} and {tb} do not fit: inner dimensions {sa[-1]} and {sb[-2]} differ",
                         hint="check the operands' shapes (transpose one with .T?)")
    batch = broadcast_shapes(sa[:-2], sb[:-2], what="matmul batch dimensions")
    a = shape_ops.broadcast_to(a, batch + sa[-2:])
    b = shape_ops.broadcast_to(b, batch + sb[-2:])
    out = bind("matmul", a, b)
    shape = aval(out).shape
    if squeeze_a:
        shape = shape[:-2] + shape[-1:]
    if squeeze_b:
        shape = shape[:-1]
    return shape_ops.reshape(out, shape)


def outer(a, b):
    dtype = result_dtype(a, b)
    a = shape_ops.reshape(ew.astype(a, dtype), (aval(a).size,))
    b = shape_ops.reshape(ew.astype(b, dtype), (aval(b).size,))
    return bind("outer", a, b)
