"""The float32 arithmetic of torch's vectorised normal sampler (CPU, 16 or more contiguous float32 values).

torch fills such a tensor with 24-bit uniforms and turns each block of 16 into normals by the
Box-Muller transform, eight lanes at a time, with the single-precision ``log`` and ``sincos`` of
the cephes-derived "avx_mathfun" routines (range reduction by 4/pi in three parts, degree-8
polynomial for log, degree-2/3 polynomials for sin and cos), compiled with fused multiply-adds.
Reproducing those operations in the same order, with each fused multiply-add rounded once,
gives torch's bits (NumPy's own float32 ``log``/``cos``/``sin`` differ from them by an ulp now
and then).

>>> import numpy as np
>>> [float(v) for v in log_ps(np.array([0.5, 1.0, 2.0], np.float32))]
[-0.6931471824645996, 0.0, 0.6931471824645996]
"""
from __future__ import annotations

import numpy as np

_F32, _F64 = np.float32, np.float64
_LOG_POLY = (7.0376836292E-2, -1.1514610310E-1, 1.1676998740E-1, -1.2420140846E-1, 1.4249322787E-1,
             -1.6668057665E-1, 2.0000714765E-1, -2.4999993993E-1, 3.3333331174E-1)
_COS_POLY = (2.443315711809948E-005, -1.388731625493765E-003, 4.166664568298827E-002)
_SIN_POLY = (-1.9515295891E-4, 8.3321608736E-3, -1.6666654611E-1)
_PI_PARTS = (-0.78515625, -2.4187564849853515625e-4, -3.77489497744594108e-8)  # -pi/4 in three float32 parts
_FOUR_OVER_PI = 1.27323954473516
_HALF_ULP_BITS = np.uint64(1 << 28)  # a float64 exactly halfway between two float32s has these low 29 bits
_LOW_BITS = np.uint64((1 << 29) - 1)


def fma32(a, b, c) -> np.ndarray:
    """``a * b + c`` for float32 values, rounded once to float32 (as the hardware's fused multiply-add).

    The product of two float32 values is exact in float64; the sum is rounded to float64 and then to
    float32, which rounds twice only when the float64 sum lies exactly halfway between two float32
    values: there the sum's rounding error (an exact two-sum) says which way the true value lies.
    """
    p = np.asarray(a, _F64) * np.asarray(b, _F64)
    c = np.asarray(c, _F64)
    t = p + c
    halfway = (t.view(np.uint64) & _LOW_BITS) == _HALF_ULP_BITS
    if halfway.any():
        bp = t - p
        err = (p - (t - bp)) + (c - bp)
        t = np.where(halfway & (err != 0), np.nextafter(t, t + err), t)
    return t.astype(_F32)


def log_ps(x: np.ndarray) -> np.ndarray:
    """Natural log of positive normal float32 values, bit for bit as torch's vectorised sampler computes it."""
    x = np.asarray(x, _F32)
    bits = x.view(np.int32)
    e = (((bits >> 23) & 0xFF) - 0x7E).astype(_F32)  # exponent + 1: the mantissa is scaled into [0.5, 1)
    m = ((bits & 0x007FFFFF) | 0x3F000000).view(_F32)
    small = m < _F32(0.707106781186547524)
    m = (m - _F32(1)) + np.where(small, m, _F32(0))  # below sqrt(1/2): 2m - 1, one exponent less
    e = e - small.astype(_F32)
    z = m * m
    y = np.full_like(m, _F32(_LOG_POLY[0]))
    for coef in _LOG_POLY[1:]:
        y = fma32(y, m, _F32(coef))
    y = y * m
    y = fma32(y, z, e * _F32(-2.12194440e-4))
    y = fma32(z, _F32(-0.5), y)
    return fma32(e, _F32(0.693359375), m + y)


def sincos_ps(x: np.ndarray):
    """``(sin x, cos x)`` of non-negative float32 values, as torch's vectorised sampler computes them."""
    x = np.asarray(x, _F32)
    j = (x * _F32(_FOUR_OVER_PI)).astype(np.int32)
    j = (j + 1) & ~1  # the octant, rounded up to even
    y = j.astype(_F32)
    for part in _PI_PARTS:
        x = fma32(y, _F32(part), x)
    z = x * x
    c = np.full_like(z, _F32(_COS_POLY[0]))
    for coef in _COS_POLY[1:]:
        c = fma32(c, z, _F32(coef))
    c = fma32(c * z, z, -(z * _F32(0.5))) + _F32(1)
    s = np.full_like(z, _F32(_SIN_POLY[0]))
    for coef in _SIN_POLY[1:]:
        s = fma32(s, z, _F32(coef))
    s = fma32(s * z, x, x)
    sine_poly = (j & 2) == 0
    sin = np.where(sine_poly, s, c)
    cos = np.where(sine_poly, c, s)
    sin = np.where((j & 4) != 0, -sin, sin)
    cos = np.where(((j - 2) & 4) != 0, cos, -cos)
    return sin, cos


def box_muller_blocks(u: np.ndarray) -> np.ndarray:
    """Blocks of 16 float32 uniforms (shape (k, 16)) to standard normals, as torch's float32 sampler."""
    u1 = _F32(1) - u[:, :8]
    radius = np.sqrt(_F32(-2) * log_ps(u1))
    sin, cos = sincos_ps(_F32(6.283185307179586) * u[:, 8:])
    out = np.empty_like(u)
    out[:, :8] = radius * cos
    out[:, 8:] = radius * sin
    return out
