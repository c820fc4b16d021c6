"""``numpy.polynomial.polynomial`` (coefficients lowest power first) and ``numpy.polynomial.Polynomial`` on traced
coefficients, routed by name (``np.polynomial.polynomial.polyval``, ``from numpy.polynomial import Polynomial``).

Functions: ``polyval`` (Horner's rule; ``tensor=`` as NumPy's), ``polyder`` and ``polyint`` (``m``, ``scl``,
``k``, ``lbnd``, ``axis``), ``polyadd``, ``polysub``, ``polymul``, ``polymulx``, ``polypow``, ``polyvander``,
``polyfit`` (least squares, an int degree), ``polyfromroots``, ``polyline``. ``Polynomial``: evaluation,
``deriv``, ``integ``, ``+ - *`` and ``**`` with polynomials and numbers, ``fit`` (its domain the data's range,
mapped to the window), ``coef``, ``domain``, ``window``, ``degree()``, ``mapparms()``, ``linspace()``.

NumPy trims trailing zero coefficients from sums and products (``trimseq``): a result's length would depend on
the values. Constant operands are trimmed while tracing; a traced result's last coefficient is checked when the
compiled code runs (``ValueError`` if it is 0, where NumPy would have returned a shorter array).

>>> from gradc.trace import trace
>>> print(trace(lambda c: polyval(2.0, c), np.ones(2)).eqns[-1].op)
add
"""
from __future__ import annotations

import numpy as np
import numpy.polynomial.polyutils as pu

from gradc.errors import ShapeError, TraceError, user_location
from gradc.ir.builder import Traced
from gradc.ops import checks
from gradc.ops import elementwise as ew
from gradc.trace import polynomial_dispatch
from gradc.trace.routines_dispatch import _float, _operand, _static_int

_REAL = np.polynomial.polynomial
_TRIMMED = ("numpy.polynomial: the result's last coefficient is 0; NumPy drops trailing zero coefficients, which "
            "makes the result's length depend on the values (trim them before the call)")


def _traced(*values) -> bool:
    return any(isinstance(v, Traced) or (isinstance(v, (list, tuple)) and _traced(*v)) for v in values)


def _series(c, what):
    c = _float(_operand(c))
    if np.ndim(c) == 0:
        c = np.reshape(c, (1,))
    if isinstance(c, Traced):
        return c
    return pu.trimseq(np.atleast_1d(c)) if np.ndim(c) == 1 else c


def _trimmed(c):
    """NumPy's ``trimseq`` of a result: now for constants, checked at run time for a traced one."""
    if not isinstance(c, Traced):
        return pu.trimseq(c)
    if np.shape(c)[0] > 1:
        checks.check(ew.equal(c[-1], 0.0), "ValueError", (_TRIMMED,), user_location() or "")
    return c


def polyval(x, c, tensor=True):
    """``c[0] + c[1] x + c[2] x^2 + ...`` (Horner's rule)."""
    c = _float(_operand(c))
    if np.ndim(c) == 0:
        c = np.reshape(c, (1,))
    x = _operand(x)
    if tensor and np.ndim(c) > 1:
        c = np.reshape(c, np.shape(c) + (1,) * np.ndim(x))
    y = c[-1] + x * 0.0
    for i in range(np.shape(c)[0] - 2, -1, -1):
        y = y * x + c[i]
    return y


def polyder(c, m=1, scl=1, axis=0):
    """The ``m``-th derivative (each multiplied by ``scl``) along ``axis``."""
    m = _static_int(m, "numpy.polynomial.polynomial.polyder's order m")
    if m < 0:
        raise ShapeError("numpy.polynomial.polynomial.polyder: the order must be non-negative", hint="pass m >= 0")
    c = np.moveaxis(_float(_operand(c)), axis, 0)
    for _ in range(m):
        n = np.shape(c)[0]
        if n <= 1:
            c = c[:1] * 0.0
            break
        factors = np.reshape(np.arange(1.0, n), (n - 1,) + (1,) * (np.ndim(c) - 1))
        c = c[1:] * factors * scl
    return np.moveaxis(c, 0, axis)


def polyint(c, m=1, k=(), lbnd=0, scl=1, axis=0):
    """The ``m``-th antiderivative (each multiplied by ``scl``, with value ``k[i]`` at ``lbnd``) along ``axis``."""
    m = _static_int(m, "numpy.polynomial.polynomial.polyint's order m")
    if m < 0:
        raise ShapeError("numpy.polynomial.polynomial.polyint: the order must be non-negative", hint="pass m >= 0")
    ks = list(k) if isinstance(k, (list, tuple)) else [k]
    if len(ks) > m:
        raise ShapeError("numpy.polynomial.polynomial.polyint: too many integration constants",
                         hint="pass at most m constants")
    ks += [0.0] * (m - len(ks))
    c = np.moveaxis(_float(_operand(c)), axis, 0)
    for i in range(m):
        n = np.shape(c)[0]
        divisors = np.reshape(np.arange(1.0, n + 1), (n,) + (1,) * (np.ndim(c) - 1))
        higher = c * scl / divisors
        tail = np.concatenate([higher[:1] * 0.0, higher], axis=0)
        shift = ks[i] - polyval(lbnd, tail)
        c = np.concatenate([np.expand_dims(shift * 1.0, 0), higher], axis=0)
    return np.moveaxis(c, 0, axis)


def _padded(c, n):
    return c if np.shape(c)[0] == n else np.concatenate([c, np.zeros(n - np.shape(c)[0])])


def polyadd(c1, c2):
    """The sum of two series (trailing zeros trimmed as NumPy's)."""
    c1, c2 = _series(c1, "polyadd"), _series(c2, "polyadd")
    n = max(np.shape(c1)[0], np.shape(c2)[0])
    return _trimmed(_padded(c1, n) + _padded(c2, n))


def polysub(c1, c2):
    """The difference of two series."""
    return polyadd(c1, -_series(c2, "polysub"))


def polymul(c1, c2):
    """The product of two series (a convolution)."""
    return _trimmed(np.convolve(_series(c1, "polymul"), _series(c2, "polymul")))


def polymulx(c):
    """``c`` times ``x``."""
    c = _series(c, "polymulx")
    return np.concatenate([c[:1] * 0.0, c])


def polypow(c, pow, maxpower=16):  # noqa: A002 (NumPy's name)
    """``c`` to a non-negative integer power."""
    power = _static_int(pow, "numpy.polynomial.polynomial.polypow's power")
    if power < 0 or (maxpower is not None and power > maxpower):
        raise ShapeError(f"numpy.polynomial.polynomial.polypow: the power must be in [0, {maxpower}]",
                         hint="pass a smaller non-negative integer power")
    out = np.ones(1)
    for _ in range(power):
        out = polymul(out, c)
    return out


def polyvander(x, deg):
    """Columns ``x^0 ... x^deg``."""
    deg = _static_int(deg, "numpy.polynomial.polynomial.polyvander's degree")
    x = _float(_operand(x))
    return np.stack([x * 0.0 + 1.0 if i == 0 else x ** float(i) for i in range(deg + 1)], axis=-1)


def polyfit(x, y, deg, rcond=None, full=False, w=None):
    """Least-squares coefficients, lowest power first (an int degree)."""
    if not isinstance(deg, (int, np.integer)):
        raise TraceError("numpy.polynomial.polynomial.polyfit with a list of degrees is not supported by gradc",
                         hint="pass the highest degree as an int")
    if full:
        raise TraceError("numpy.polynomial.polynomial.polyfit with full=True is not supported by gradc",
                         hint="take the coefficients; compute residuals from polyval(x, c) - y")
    highest_first = polynomial_dispatch._polyfit(x, y, int(deg), rcond, False, w)
    return np.flip(highest_first, axis=0)


def polyfromroots(roots):
    """The monic series with these roots."""
    return np.flip(polynomial_dispatch._poly(_operand(roots)), axis=0)


def polyline(off, scl):
    """``off + scl x``."""
    return np.stack([_float(_operand(off)) * 1.0, _float(_operand(scl)) * 1.0]) if _traced(off, scl) else \
        _REAL.polyline(off, scl)


def routed(real, ours):
    """NumPy's function ``real`` on concrete arguments, ``ours`` when one is traced."""
    name = real.__name__

    def call(*args, **kwargs):
        if _traced(*args, *kwargs.values()):
            return ours(*args, **kwargs)
        return real(*args, **kwargs)
    call.__name__ = call.__qualname__ = name
    call.__wrapped__ = real
    return call


OURS = {"polyval": polyval, "polyder": polyder, "polyint": polyint, "polyadd": polyadd, "polysub": polysub,
        "polymul": polymul, "polymulx": polymulx, "polypow": polypow, "polyvander": polyvander, "polyfit": polyfit,
        "polyfromroots": polyfromroots, "polyline": polyline}

__all__ = ["OURS", "routed", *OURS]
