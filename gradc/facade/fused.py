"""``fma(x, y, z) = x * y + z`` rounded once, as torch's CPU kernels compute it (fused multiply-add).

torch's optimisers (``add(alpha=)``, ``addcmul``, ``lerp``) and ``uniform_`` fuse the multiply
and the add; NumPy rounds twice. For float32 the float64 product of two float32 numbers is
exact, so computing in float64 and rounding once is the fused result. For float64 the
product's rounding error is recovered exactly (Dekker's two-product) and added back before
the last rounding, which gives the fused result except in rare double-rounding ties.

>>> import numpy as np
>>> x = np.float64(1 + 2 ** -30); float(fma(x, x, -1.0)) == 2 ** -29 + 2 ** -60
True
"""
from __future__ import annotations

import numpy as np

_F32 = np.dtype(np.float32)
_SPLIT = 134217729.0  # 2**27 + 1: splits a double into two 26-bit halves


def _split(a):
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def fma(x, y, z, out=None):
    """``x * y + z`` with one rounding, elementwise (arrays or scalars; result in their common dtype).

    ``out``: a float32 array to write the result into (instead of returning a new one).
    """
    if np.result_type(x, y, z) == _F32:
        # one float64 temporary: the product is exact, the sum rounds once in float64, then to float32
        wide = np.asarray(np.multiply(y, np.asarray(x, np.float64), dtype=np.float64))  # (0-d operands: a scalar)
        wide = np.add(wide, z, out=wide if wide.ndim else None, dtype=np.float64)
        if out is None:
            return wide.astype(np.float32)
        np.copyto(out, wide, casting="same_kind")
        return out
    x, y, z = np.asarray(x, np.float64), np.asarray(y, np.float64), np.asarray(z, np.float64)
    p = x * y
    xh, xl = _split(x)
    yh, yl = _split(y)
    err = ((xh * yh - p) + xh * yl + xl * yh) + xl * yl  # x * y == p + err exactly
    s = p + z
    bp = s - p
    tail = (p - (s - bp)) + (z - bp)  # p + z == s + tail exactly
    return s + (tail + err)
