"""``scipy.special``'s Box-Cox transforms and small elementary functions, composed from gradc's ops (so both
targets and every derivative order come from the ops they are made of).

Box-Cox ``(x**lmbda - 1) / lmbda`` is written ``expm1(lmbda log x) / lmbda`` (SciPy's formulation); at
``lmbda = 0`` it is ``log x``. Where ``lmbda`` is 0 (SciPy: ``|lmbda| < 1e-19``) the value is the Taylor
polynomial ``L + lmbda L**2 / 2 + lmbda**2 L**3 / 6`` (``L = log x``), whose value there is SciPy's ``L`` and whose
first and second derivatives in ``lmbda`` are the exact limits, so a gradient in ``lmbda`` at 0 is right.
The inverses are ``exp(log1p(lmbda y) / lmbda)`` (``exp(y)`` at 0) and the same with ``expm1``, with the series
``y - lmbda y**2 / 2 + lmbda**2 y**3 / 3`` for ``log1p(lmbda y) / lmbda`` at 0.

>>> import numpy as np
>>> bool(np.isclose(boxcox(np.float64(2.0), np.float64(0.5)), 2 * (np.sqrt(2.0) - 1)))
True
"""
from __future__ import annotations

import math

import numpy as np

from gradc.ops import elementwise as ew
from gradc.ops import special_numpy as sf
from gradc.ops.values import aval

_TINY = 1e-19  # SciPy's: below this |lmbda| the transform is the logarithm


def as_float(x):
    """``x`` as a float value (SciPy's ufuncs compute integers in float64; a Python number is a float64 scalar)."""
    if type(x) in (int, float):  # Python's own: a float64 scalar (same_float keeps them weak where SciPy does)
        return np.float64(x)
    dtype = aval(x).dtype
    return x if dtype in ("f32", "f64") else ew.astype(x, "f64")


def same_float(*xs):
    """The operands as floats of one dtype, as SciPy's ``ff->f``/``dd->d`` loops give: float32 when every array
    operand is float32 (Python numbers adopt it), float64 otherwise."""
    arrays = [x for x in xs if type(x) not in (int, float)]
    dtype = "f32" if arrays and all(aval(x).dtype == "f32" for x in arrays) else "f64"
    np_dtype = np.float32 if dtype == "f32" else np.float64
    return [np.asarray(x, dtype=np_dtype)[()] if type(x) in (int, float) else ew.astype(as_float(x), dtype)
            if aval(x).dtype != dtype else x for x in xs]


def _power_transform(log_x, lmbda):
    """``expm1(lmbda L) / lmbda``, and its Taylor polynomial in ``lmbda`` where ``|lmbda| < 1e-19``."""
    small = ew.less(ew.abs_(lmbda), _TINY)
    safe = ew.where(small, 1.0, lmbda)  # the unused branch stays finite: no NaN reaches a derivative
    general = ew.div(ew.expm1(ew.mul(safe, log_x)), safe)
    series_l = ew.where(small, lmbda, 0.0)
    finite = ew.where(sf.isfinite(log_x), log_x, 0.0)  # log 0 = -inf: SciPy's value, without 0 * inf terms
    square = ew.mul(finite, finite)
    series = ew.add(log_x, ew.mul(series_l, ew.add(ew.mul(square, 0.5),
                                                    ew.mul(series_l, ew.mul(ew.mul(square, finite), 1.0 / 6.0)))))
    return ew.where(small, series, general)


def _inverse_exponent(y, lmbda):
    """``log1p(lmbda y) / lmbda``, and ``y - lmbda y**2 / 2 + lmbda**2 y**3 / 3`` where ``lmbda`` is 0."""
    zero = ew.equal(lmbda, 0.0)
    safe = ew.where(zero, 1.0, lmbda)
    general = ew.div(ew.log1p(ew.mul(safe, y)), safe)
    at = ew.where(zero, lmbda, 0.0)
    finite = ew.where(sf.isfinite(y), y, 0.0)
    square = ew.mul(finite, finite)
    series = ew.sub(y, ew.mul(at, ew.sub(ew.mul(square, 0.5), ew.mul(at, ew.mul(ew.mul(square, finite), 1.0 / 3.0)))))
    return ew.where(zero, series, general)


def boxcox(x, lmbda):
    """``scipy.special.boxcox(x, lmbda)``: ``(x**lmbda - 1) / lmbda``, ``log(x)`` at ``lmbda = 0``.

    >>> float(boxcox(np.float64(np.e), np.float64(0.0)))
    1.0
    """
    x, lmbda = same_float(x, lmbda)
    return _power_transform(ew.log(x), lmbda)


def boxcox1p(x, lmbda):
    """``scipy.special.boxcox1p(x, lmbda)``: ``((1 + x)**lmbda - 1) / lmbda``, ``log1p(x)`` at ``lmbda = 0``.

    >>> float(boxcox1p(np.float64(1.0), np.float64(1.0)))
    1.0
    """
    x, lmbda = same_float(x, lmbda)
    return _power_transform(ew.log1p(x), lmbda)


def inv_boxcox(y, lmbda):
    """``scipy.special.inv_boxcox(y, lmbda)``: ``(1 + lmbda y)**(1 / lmbda)``, ``exp(y)`` at ``lmbda = 0``.

    >>> float(inv_boxcox(np.float64(1.0), np.float64(1.0)))
    2.0
    """
    y, lmbda = same_float(y, lmbda)
    return ew.exp(_inverse_exponent(y, lmbda))


def inv_boxcox1p(y, lmbda):
    """``scipy.special.inv_boxcox1p(y, lmbda)``: ``(1 + lmbda y)**(1 / lmbda) - 1``, ``expm1(y)`` at 0.

    >>> float(inv_boxcox1p(np.float64(1.0), np.float64(1.0)))
    1.0
    """
    y, lmbda = same_float(y, lmbda)
    return ew.expm1(_inverse_exponent(y, lmbda))


def powm1(x, y):
    """``scipy.special.powm1(x, y)``: ``x**y - 1``, accurate for ``y`` near 0 (``expm1(y log x)``; SciPy's
    ``x**y - 1`` for ``x <= 0`` and 1 at ``y = 0``).

    >>> float(powm1(np.float64(4.0), np.float64(0.5)))
    1.0
    """
    x, y = same_float(x, y)
    positive = ew.greater(x, 0.0)
    via_log = ew.expm1(ew.mul(y, ew.log(ew.where(positive, x, 1.0))))
    return ew.where(ew.equal(y, 0.0), ew.mul(y, 0.0), ew.where(positive, via_log, ew.sub(ew.power(x, y), 1.0)))


def cosm1(x):
    """``scipy.special.cosm1(x)``: ``cos(x) - 1`` without cancellation near 0, written ``-2 sin(x/2)**2``.

    >>> float(cosm1(np.float64(0.0)))
    -0.0
    """
    half = ew.sin(ew.mul(as_float(x), 0.5))
    return ew.mul(ew.mul(half, half), -2.0)


def pseudo_huber(delta, r):
    """``scipy.special.pseudo_huber(delta, r)``: ``delta**2 (sqrt(1 + (r/delta)**2) - 1)`` (0 at ``delta = 0``,
    inf for ``delta < 0``), written with ``expm1``/``log1p`` of the ratio so small residuals keep their digits.

    >>> float(pseudo_huber(np.float64(1.0), np.float64(0.0)))
    0.0
    """
    delta, r = same_float(delta, r)
    zero = ew.equal(delta, 0.0)
    safe = ew.where(zero, 1.0, delta)
    ratio = ew.div(r, safe)
    value = ew.mul(ew.mul(safe, safe), ew.expm1(ew.mul(ew.log1p(ew.mul(ratio, ratio)), 0.5)))
    value = ew.where(ew.less(delta, 0.0), math.inf, value)
    return ew.where(zero, ew.mul(r, 0.0), value)


def huber(delta, r):
    """``scipy.special.huber(delta, r)``: ``r**2 / 2`` for ``|r| <= delta``, ``delta (|r| - delta / 2)`` beyond
    (inf for ``delta < 0``).

    >>> float(huber(np.float64(1.0), np.float64(3.0)))
    2.5
    """
    delta, r = same_float(delta, r)
    magnitude = ew.abs_(r)
    inside = ew.mul(ew.mul(r, r), 0.5)
    outside = ew.mul(delta, ew.sub(magnitude, ew.mul(delta, 0.5)))
    value = ew.where(ew.less_equal(magnitude, delta), inside, outside)
    return ew.where(ew.less(delta, 0.0), math.inf, value)


def _degrees(x):
    return ew.mul(as_float(x), math.pi / 180.0)


def radian(d, m, s):
    """``scipy.special.radian(d, m, s)``: degrees, arc minutes and seconds in radians.

    >>> bool(np.isclose(radian(np.float64(180.0), 0.0, 0.0), np.pi))
    True
    """
    return _degrees(ew.add(as_float(d), ew.add(ew.div(m, 60.0), ew.div(s, 3600.0))))


def exp10(x):
    """``scipy.special.exp10(x)``: ``10**x``.

    >>> float(exp10(np.float64(2.0)))
    100.0
    """
    return ew.power(10.0, as_float(x))


def _reduced_degrees(x):
    """``x`` degrees reduced exactly into (-180, 180] by ``fmod``, so the multiples of 90 give exact zeros."""
    return sf.fmod(as_float(x), 360.0)


def sindg(x):
    """``scipy.special.sindg(x)``: the sine of ``x`` degrees (exactly 0 at multiples of 180).

    >>> float(sindg(np.float64(180.0)))
    0.0
    """
    reduced = _reduced_degrees(x)
    exact_zero = ew.equal(sf.fmod(reduced, 180.0), 0.0)
    return ew.where(exact_zero, ew.mul(reduced, 0.0), ew.sin(_degrees(reduced)))


def cosdg(x):
    """``scipy.special.cosdg(x)``: the cosine of ``x`` degrees (exactly 0 at odd multiples of 90).

    >>> float(cosdg(np.float64(90.0)))
    0.0
    """
    reduced = _reduced_degrees(x)
    exact_zero = ew.equal(sf.fmod(ew.sub(ew.abs_(reduced), 90.0), 180.0), 0.0)
    return ew.where(exact_zero, ew.mul(reduced, 0.0), ew.cos(_degrees(reduced)))


def tandg(x):
    """``scipy.special.tandg(x)``: ``sindg(x) / cosdg(x)``.

    >>> float(tandg(np.float64(45.0)))
    1.0
    """
    return _at_odd_45s(x, ew.div(sindg(x), cosdg(x)))


def _at_odd_45s(x, value):
    """``value``, and exactly +-1 at the odd multiples of 45 degrees (SciPy's: the quotient rounds there); the
    correction is held constant, so the derivative there stays the quotient's."""
    from gradc.ops.autodiff import stop_gradient
    reduced = sf.fmod(as_float(x), 180.0)
    size = ew.abs_(reduced)
    exact = ew.where(ew.equal(size, 45.0), ew.sign(reduced), ew.neg(ew.sign(reduced)))
    at = ew.logical_or(ew.equal(size, 45.0), ew.equal(size, 135.0))
    return ew.where(at, ew.add(value, stop_gradient(ew.sub(exact, value))), value)


def cotdg(x):
    """``scipy.special.cotdg(x)``: ``cosdg(x) / sindg(x)``.

    >>> float(cotdg(np.float64(45.0)))
    1.0
    """
    return _at_odd_45s(x, ew.div(cosdg(x), sindg(x)))




def ndtri_exp(y):
    """``scipy.special.ndtri_exp(y)``: ``ndtri(exp(y))``, the normal quantile of a log-probability, accurate where
    ``exp(y)`` rounds to 1 (``-ndtri(-expm1(y))`` from ``y = -log 2``) or underflows (below ``y = -700``: Newton
    steps on ``log_ndtr(x) = y`` from the asymptotic ``x**2 = -2y - 2 log(-x) - log(2 pi)``, whose last step makes
    the derivative ``1 / log_ndtr'(x)``, that of the exact inverse; below ``y = -1e10`` the asymptotic alone,
    whose next term is below 1e-19 relative there).

    >>> float(ndtri_exp(np.log(np.float64(0.5))))
    0.0
    """
    from gradc.ops.special_scipy import log_ndtr, ndtri
    y = as_float(y)
    upper = ew.greater(y, -math.log(2.0))
    deep = ew.less(y, -700.0)
    # each branch gets an argument inside its own range, so the unused ones carry no inf or NaN into derivatives
    middle = ndtri(ew.exp(ew.where(ew.logical_or(upper, deep), -1.0, y)))
    top = ew.neg(ndtri(ew.neg(ew.expm1(ew.where(upper, y, -1.0)))))
    minus_inf = ew.logical_and(sf.isinf(y), ew.less(y, 0.0))
    far = ew.where(ew.logical_and(deep, ew.logical_not(minus_inf)), y, -800.0)
    asymptotic = _normal_quantile_asymptotic(far)
    beyond = ew.less(far, -1e10)
    x = _normal_quantile_asymptotic(ew.where(beyond, -800.0, far))
    target = ew.where(beyond, -800.0, far)
    for _ in range(4):
        slope = ew.div(ew.exp(ew.sub(ew.mul(ew.mul(x, x), -0.5), log_ndtr(x))), math.sqrt(2.0 * math.pi))
        x = ew.sub(x, ew.div(ew.sub(log_ndtr(x), target), slope))
    value = ew.where(upper, top, ew.where(deep, ew.where(beyond, asymptotic, x), middle))
    value = ew.where(minus_inf, -math.inf, value)
    return ew.where(ew.greater(y, 0.0), math.nan, value)


def _normal_quantile_asymptotic(y):
    """The x < 0 with ``log ndtr(x) = y`` (``y`` very negative), from ``-x**2/2 - log(-x) - log(2 pi)/2 = y``
    iterated twice from ``x = -sqrt(-2y)``."""
    twice = ew.mul(y, -2.0)
    x = ew.neg(ew.sqrt(twice))
    for _ in range(2):
        x = ew.neg(ew.sqrt(ew.sub(ew.sub(twice, ew.mul(ew.log(ew.neg(x)), 2.0)), math.log(2.0 * math.pi))))
    return x


__all__ = ["boxcox", "boxcox1p", "inv_boxcox", "inv_boxcox1p", "powm1", "cosm1", "pseudo_huber", "huber", "radian",
           "exp10", "sindg", "cosdg", "tandg", "cotdg", "ndtri_exp"]
