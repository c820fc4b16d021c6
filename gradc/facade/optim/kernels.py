"""The elementwise steps of torch's optimisers on NumPy arrays, rounding as torch's CPU kernels do.

A Python number meeting a float32 tensor is rounded to float32 first (torch's "opmath" type
for float is float). torch's CPU kernels fuse ``a + s * b`` into one multiply-add with one
rounding, which ``gradc.facade.fused.fma`` reproduces. So SGD's trajectories match torch's
bit for bit; where torch's float32 ``sqrt`` is not correctly rounded (Adam, RMSprop,
Adagrad) results agree to about an ulp per step.

>>> import numpy as np
>>> a = np.ones(2, np.float32); add_(a, np.full(2, 2, np.float32), alpha=-0.5); a
array([0., 0.], dtype=float32)
"""
from __future__ import annotations

import numpy as np

from gradc.facade.fused import fma


def _s(x, like):
    """A Python number in the array's dtype."""
    return like.dtype.type(x)


def add(a, b, alpha=1.0):
    """``a + alpha * b`` as a new array (``tensor.add(other, alpha=)``)."""
    if alpha == 1:
        return a + b
    return fma(_s(alpha, a), b, a)


def add_(a, b, alpha=1.0):
    if alpha != 1 and a.dtype == np.float32 and b.dtype == np.float32:  # written in place, no float32 temporary
        fma(_s(alpha, a), b, a, out=a)
    else:
        np.copyto(a, add(a, b, alpha))


def mul_(a, value):
    np.multiply(a, _s(value, a), out=a)


def lerp_(a, end, weight):
    """``a + weight * (end - a)``, from the other end for weights of 0.5 and more (torch's lerp)."""
    w = _s(weight, a)
    diff = end - a
    if abs(weight) < 0.5:
        np.copyto(a, fma(w, diff, a))
    else:
        np.copyto(a, fma(-(_s(1, a) - w), diff, end))


def addcmul(a, t1, t2, value=1.0):
    """``a + value * t1 * t2`` as a new array (the product ``value * t1`` rounded first)."""
    return fma(_s(value, a) * t1, t2, a)


def addcmul_(a, t1, t2, value=1.0):
    np.copyto(a, addcmul(a, t1, t2, value))


def addcdiv_(a, t1, t2, value=1.0):
    """``a += value * t1 / t2``."""
    np.copyto(a, a + _s(value, a) * t1 / t2)
