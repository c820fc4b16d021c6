"""``scipy.special``'s exponential integrals: ``expn(n, x)`` (``E_n``, the integer ``n`` a constant), ``exp1``
(``E_1``) and ``expi`` (``Ei``); the dilogarithm ``spence`` (``Li2(1 - z)``, derivative ``log(z) / (1 - z)``),
Dawson's integral ``dawsn`` (derivative ``1 - 2 x dawsn(x)``; C for these two in
``gradc/backends/c/mathlib/dilogarithm.py``) and ``shichi``, composed of ``expi`` and ``exp1``.

Each primitive computes with SciPy and is spelled ``scipy.special.NAME`` in emitted NumPy; C calls gradc's C math
library (``gradc/backends/c/mathlib/exponential_integral.py``). The derivatives (DLMF 8.19.13, 6.6.1) are written
with these ops, so they differentiate again::

    E_n' = -E_{n-1}   (E_0 = e^-x / x, whose derivative is -E_0 (1 + 1/x))
    E_1' = -e^-x / x        Ei' = e^x / x

>>> import numpy as np
>>> bool(np.isclose(exp1(np.float64(1.0)), 0.21938393439552029))
True
"""
from __future__ import annotations

import numpy as np  # noqa: F401 (the doctests use it)

from gradc.errors import TraceError
from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise
from gradc.ops.special_numpy import c_call
from gradc.ops.special_scipy import _like, _scipy_special, scipy_spelling
from gradc.ops.values import aval, first_traced


def _library(name):
    return c_spell.scalar(lambda a, p, ti, to: c_call(f"gradc_{name}", [a[0]], template=f"gradc_{name}{{f}}({{0}})"))


def _exp1_vjp(ct, out, x, needs):
    return (ew.neg(ew.mul(ct, ew.div(ew.exp(ew.neg(x)), x))),)


def _expi_vjp(ct, out, x, needs):
    return (ew.mul(ct, ew.div(ew.exp(x), x)),)


defop("exp1", infer=_same_types, impl=lambda x: _like(x, _scipy_special().exp1(x)), vjp=_exp1_vjp, elementwise=True,
      doc="x_bar = -ct * exp(-x) / x", np=scipy_spelling("exp1"),
      c=c_spell.scalar(lambda a, p, ti, to: c_call("gradc_expn", [a[0]], template="gradc_expn{f}(1, {0})")))
defop("expi", infer=_same_types, impl=lambda x: _like(x, _scipy_special().expi(x)), vjp=_expi_vjp, elementwise=True,
      doc="x_bar = ct * exp(x) / x", np=scipy_spelling("expi"), c=_library("expi"))


def _expn_vjp(ct, out, x, needs, n):
    if n == 0:  # d/dx e^-x / x = -out (1 + 1/x)
        return (ew.neg(ew.mul(ct, ew.mul(out, ew.add(1.0, ew.div(1.0, x))))),)
    return (ew.neg(ew.mul(ct, expn(n - 1, x))),)


def _expn_spelling(args, params, out, target):
    return spell.call("scipy.special.expn", spell.literal(int(params["n"])), args[0])


defop("expn", infer=_same_types, impl=lambda x, n: _like(x, _scipy_special().expn(n, x)), vjp=_expn_vjp,
      elementwise=True, doc="x_bar = -ct * expn(n - 1, x) (n = 0: -ct * out (1 + 1/x)); n is static",
      np=_expn_spelling,
      c=c_spell.scalar(lambda a, p, ti, to: c_call("gradc_expn", [a[0]],
                                                   template=f"gradc_expn{{f}}({int(p['n'])}, {{0}})")))


def _spence_vjp(ct, out, z, needs):
    """``log(z) / (1 - z)``; at ``z = 1`` its limit -1 with the slope 1/2 of the exact derivative there."""
    one = ew.equal(z, 1.0)
    safe = ew.where(one, 2.0, z)
    near = ew.add(-1.0, ew.mul(ew.sub(z, 1.0), 0.5))
    return (ew.mul(ct, ew.where(one, near, ew.div(ew.log(safe), ew.sub(1.0, safe)))),)


defop("spence", infer=_same_types, impl=lambda z: _like(z, _scipy_special().spence(z)), vjp=_spence_vjp,
      elementwise=True, doc="z_bar = ct * log(z) / (1 - z) (-1 at z = 1)", np=scipy_spelling("spence"),
      c=_library("spence"))


def spence(z):
    """``scipy.special.spence(z)``: ``integral_1^z log(t) / (1 - t) dt`` for real ``z >= 0`` (NaN below).

    >>> float(spence(np.float64(1.0)))
    0.0
    """
    return apply_elementwise("spence", z, float_only=True)


defop("dawsn", infer=_same_types, impl=lambda x: _like(x, _scipy_special().dawsn(x)), elementwise=True,
      vjp=lambda ct, out, x, needs: (ew.mul(ct, ew.sub(1.0, ew.mul(ew.mul(x, out), 2.0))),),
      doc="x_bar = ct * (1 - 2 x out)", np=scipy_spelling("dawsn"), c=_library("dawsn"))


def dawsn(x):
    """``scipy.special.dawsn(x)``: Dawson's integral ``e^(-x^2) integral_0^x e^(t^2) dt``.

    >>> bool(np.isclose(dawsn(np.float64(1.0)), 0.5380795069127684))
    True
    """
    return apply_elementwise("dawsn", x, float_only=True)


def exp1(x):
    """``scipy.special.exp1(x)``: ``E_1(x) = integral_x^inf e^-t / t dt`` (NaN for ``x < 0``, as SciPy).

    >>> float(exp1(np.float64(np.inf)))
    0.0
    """
    return apply_elementwise("exp1", x, float_only=True)


def expi(x):
    """``scipy.special.expi(x)``: ``Ei(x) = -PV integral_-x^inf e^-t / t dt``.

    >>> bool(np.isclose(expi(np.float64(1.0)), 1.8951178163559368))
    True
    """
    return apply_elementwise("expi", x, float_only=True)


def expn(n, x):
    """``scipy.special.expn(n, x)``: ``E_n(x)``, the integer ``n >= 0`` a constant (float64, as SciPy's).

    >>> float(expn(2, np.float64(0.0)))
    1.0
    """
    if first_traced([n]) is not None:
        raise TraceError("scipy.special.expn: the order n must be a Python int known when tracing, not a traced value",
                         hint="pass n as a Python int (it selects the function: it has no derivative)")
    if isinstance(n, bool) or not float(n).is_integer():
        raise TraceError(f"scipy.special.expn: the order n must be an integer, not {n!r}", hint="pass an int n >= 0")
    if aval(x).dtype != "f64":
        x = ew.astype(x, "f64")  # SciPy's only float loop is (long, double) -> double
    return apply_elementwise("expn", x, float_only=True, n=int(n))


def shichi(x):
    """``scipy.special.shichi(x)``: the hyperbolic sine and cosine integrals ``(Shi(x), Chi(x))``, composed as
    ``(Ei(|x|) +- E_1(|x|)) / 2`` (``Shi`` odd, ``Chi`` of ``|x|``: SciPy's real part), and below ``|x| = 1/2`` Shi by
    its series ``sum x^(2k+1) / ((2k+1) (2k+1)!)`` (where the two logarithms would cancel).

    >>> [round(float(v), 12) for v in shichi(np.float64(1.0))]
    [1.057250875376, 0.83786694098]
    """
    x = ew.astype(x, "f64") if aval(x).dtype not in ("f32", "f64") else x
    size = ew.abs_(x)
    small = ew.less(size, 0.5)
    inside = ew.where(small, size, 0.0)
    square = ew.mul(inside, inside)
    term, series = inside, inside
    for k in range(1, 9):
        term = ew.mul(term, ew.div(square, float((2 * k) * (2 * k + 1))))
        series = ew.add(series, ew.div(term, float(2 * k + 1)))
    away = ew.where(small, 1.0, size)
    shi = ew.where(small, series, ew.mul(ew.add(expi(away), exp1(away)), 0.5))
    shi = ew.where(ew.equal(size, 0.0), ew.mul(size, 0.0), ew.mul(ew.sign(x), shi))
    chi = ew.mul(ew.sub(expi(size), exp1(size)), 0.5)
    return shi, chi


__all__ = ["exp1", "expi", "expn", "spence", "dawsn", "shichi"]
