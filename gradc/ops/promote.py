"""How an elementwise op's operands meet: NumPy 2 dtype promotion and explicit broadcasting.

``apply_elementwise(name, *xs)`` converts every operand to the result dtype,
broadcasts it to the result shape (each step recorded as an op when tracing,
so broadcasting is explicit in the IR) and binds op ``name``; concrete operands
that need neither step take a fast path (the eager facade's per-op cost).

>>> import numpy as np
>>> apply_elementwise("add", np.ones(2, np.float32), 1.0)
array([2., 2.], dtype=float32)
"""
from __future__ import annotations

import math

import numpy as np

import gradc.ops.shape as shape_ops
from gradc.ir.registry import bind
from gradc.ir.types import INEXACT_DTYPES, NP_DTYPES
from gradc.ops.values import aval, broadcast_shapes, first_traced, lift, result_dtype


def coerce(x, dtype: str, shape: tuple, like=None):
    """``x`` converted to ``dtype`` and broadcast to ``shape`` (each step only if needed).

    With ``like`` (a traced value), a concrete ``x`` becomes a constant of that
    trace first, so the broadcast of a scalar constant is recorded, not computed.
    """
    t = aval(x)
    if t.dtype is None:
        x = np.asarray(x, dtype=NP_DTYPES[dtype])
    x = lift(x, like)
    if t.dtype is not None and t.dtype != dtype:
        x = bind("astype", x, dtype=dtype)  # the op itself: gradc.ops.elementwise builds on this module
    if t.shape != shape:
        x = shape_ops.broadcast_to(x, shape)
    return x


# Concrete operand types whose ``.dtype``/``.shape`` an eager op can read directly.
_CONCRETE = frozenset({np.ndarray, np.float64, np.float32, np.int64, np.int32, np.bool_})


FAST_DTYPES = frozenset(NP_DTYPES.values())


_FLOAT_NP = frozenset({np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.complex128), np.dtype(np.complex64)})


def _fast(name, xs, float_only, params):
    """``apply_elementwise`` for concrete operands that need no promotion or broadcast of arrays, else None.

    Arrays (and NumPy scalars) of one shape and dtype, with Python floats/ints next to
    float arrays (weak scalars: converted to the arrays' dtype and broadcast, as ``coerce`` does).
    """
    dt = shape = None
    weak = mixed = False
    for x in xs:
        tx = type(x)
        if tx in _CONCRETE:
            if dt is None:
                dt, shape = x.dtype, x.shape
            elif x.dtype != dt:
                return None
            elif x.shape != shape:
                mixed = True
        elif tx is float or tx is int:
            weak = True
        else:
            return None
    if dt is None or dt not in FAST_DTYPES or ((weak or float_only) and dt not in _FLOAT_NP):
        return None
    if mixed:
        shape = _joint_shape([x.shape for x in xs if type(x) in _CONCRETE])
        if shape is None:
            return None  # the general path words the error
        xs = [shape_ops.broadcast_to(x, shape) if type(x) in _CONCRETE and x.shape != shape else x for x in xs]
    if weak:
        xs = [x if type(x) in _CONCRETE else _constant(x, dt, shape) for x in xs]
    return bind(name, *xs, **params)


def _joint_shape(shapes):
    """NumPy's broadcast of ``shapes``, or None if they do not broadcast."""
    n = max(len(s) for s in shapes)
    dims = [1] * n
    for s in shapes:
        off = n - len(s)
        for i, d in enumerate(s):
            cur = dims[off + i]
            if d != cur:
                if cur == 1:
                    dims[off + i] = d
                elif d != 1:
                    return None
    return tuple(dims)


_CONSTANTS: dict = {}


def _constant(value, dt, shape):
    """``broadcast_to(asarray(value, dt), shape)`` for concrete code, cached (a read-only view)."""
    sign = math.copysign(1.0, value) if type(value) is float else 0  # -0.0 and 0.0 are different constants
    if type(value) is complex:
        sign = (math.copysign(1.0, value.real), math.copysign(1.0, value.imag))
    key = (type(value), value, sign, dt, shape)
    c = _CONSTANTS.get(key)
    if c is None:
        c = shape_ops.broadcast_to(np.asarray(value, dtype=dt), shape)
        if type(c) is np.ndarray and not c.flags.writeable:
            if len(_CONSTANTS) > 1024:
                _CONSTANTS.clear()
            _CONSTANTS[key] = c
    return c


def apply_elementwise(name, *xs, float_only=False, **params):
    out = _fast(name, xs, float_only, params)
    if out is not None:
        return out
    dtype = result_dtype(*xs)
    if float_only and dtype not in INEXACT_DTYPES:  # complex stays complex: exp, log, sqrt ... are NumPy's on C
        dtype = "f64"
    shape = broadcast_shapes(*(aval(x).shape for x in xs), what=f"{name} operands")
    like = first_traced(xs)
    return bind(name, *(coerce(x, dtype, shape, like) for x in xs), **params)


def full_like(x, value):
    """A constant with ``x``'s shape and dtype (recorded as a broadcast scalar)."""
    if type(x) is np.ndarray and type(value) in (int, float, complex) and x.dtype in FAST_DTYPES:
        return _constant(value, x.dtype, x.shape)
    t = aval(x)
    return shape_ops.broadcast_to(lift(np.asarray(value, dtype=t.np_dtype), first_traced([x])), t.shape)


def zeros_like(x):
    return full_like(x, 0)
