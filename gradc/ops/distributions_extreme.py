"""``scipy.stats`` extreme-value, skewed and truncated families: gumbel_r, gumbel_l, genextreme, rayleigh,
loggamma, skewnorm, truncnorm, vonmises (methods of ``z = (x - loc) / scale``; see ``gradc.ops.distributions``).

Tails are computed where they are accurate (``log1mexp`` for ``log(1 - exp(t))``, ``log_ndtr`` for the normal's
tails, truncnorm's mass ``Phi(b) - Phi(a)`` from the tail it lies in). genextreme follows SciPy's sign of ``c``
(``c > 0``: bounded above at ``1 / c``) and is Gumbel's at ``c = 0``. skewnorm's ``cdf`` is the op ``skewnorm_cdf``
(``Phi(z) - 2 T(z, a)`` with Owen's T, the left tail without cancellation: ``gradc.ops.special_owens_t``), its
``sf`` SciPy's ``cdf(-z, -a)``. truncnorm's ``ppf`` inverts the normal's distribution function in logs from the tail the
lower bound lies in (``isf(q, a, b) = -ppf(q, -b, -a)``). vonmises has ``logpdf``/``pdf`` only (its distribution
function needs von Mises' series: refused by name).

>>> sorted(DISTRIBUTIONS)
['genextreme', 'gumbel_l', 'gumbel_r', 'loggamma', 'rayleigh', 'skewnorm', 'truncnorm', 'vonmises']
"""
from __future__ import annotations

import math

import numpy as np

from gradc.ops import elementwise as ew
from gradc.ops import special_bessel as bessel
from gradc.ops import special_boxcox as boxcox
from gradc.ops import special_owens_t as owens
from gradc.ops import special_scipy as sc
from gradc.ops.distributions import Spec, incomplete, log1mexp, log_probability, positive

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)
_LOG_2PI = math.log(2.0 * math.pi)


def _square_half(u):
    return ew.mul(ew.mul(u, u), 0.5)


# ---------------------------------------------------------------- Gumbel
GUMBEL_R = {
    "logpdf": lambda z: ew.sub(ew.neg(z), ew.exp(ew.neg(z))),
    "cdf": lambda z: ew.exp(ew.neg(ew.exp(ew.neg(z)))),
    "logcdf": lambda z: ew.neg(ew.exp(ew.neg(z))),
    "sf": lambda z: ew.neg(ew.expm1(ew.neg(ew.exp(ew.neg(z))))),
    "logsf": lambda z: log1mexp(ew.neg(ew.exp(ew.neg(z)))),
    "ppf": lambda p: ew.neg(ew.log(ew.neg(ew.log(p)))),
    "isf": lambda p: ew.neg(ew.log(ew.neg(ew.log1p(ew.neg(p))))),
}
GUMBEL_L = {
    "logpdf": lambda z: ew.sub(z, ew.exp(z)),
    "cdf": lambda z: ew.neg(ew.expm1(ew.neg(ew.exp(z)))),
    "logcdf": lambda z: log1mexp(ew.neg(ew.exp(z))),
    "sf": lambda z: ew.exp(ew.neg(ew.exp(z))),
    "logsf": lambda z: ew.neg(ew.exp(z)),
    "ppf": lambda p: ew.log(ew.neg(ew.log1p(ew.neg(p)))),
    "isf": lambda p: ew.log(ew.neg(ew.log(p))),
}


# ---------------------------------------------------------------- generalized extreme value (SciPy's sign of c)
_SMALL_C = 1e-7  # below it, the first two terms of the series in c (the next is c^2 z^3 / 3: below 1e-14 z^3)
def _gev(z, c):
    """``(inside, log t)`` with ``t = (1 - c z)^(1/c)`` (``exp(-z)`` at ``c = 0``); ``inside``: ``1 - c z > 0``."""
    cz = ew.mul(c, z)
    inside = ew.greater(ew.sub(1.0, cz), 0.0)
    small = ew.less(ew.abs_(c), _SMALL_C)
    safe_c = ew.where(small, 1.0, c)
    # near c = 0 the series -z - c z^2 / 2 (its value and its derivative in c at 0 are the limits)
    series = ew.sub(ew.neg(z), ew.mul(ew.mul(c, ew.mul(z, z)), 0.5))
    log_t = ew.where(small, series, ew.div(ew.log1p(ew.neg(ew.where(inside, cz, 0.0))), safe_c))
    return inside, log_t


def _gev_method(formula, above, below):
    """A genextreme method: ``formula(log t, c)`` on the support; right of it (``c > 0``) ``above``, left of it
    (``c < 0``) ``below``."""
    def apply(z, c):
        inside, log_t = _gev(z, c)
        outside = ew.where(ew.greater(c, 0.0), above, below)
        return ew.where(inside, formula(log_t, c), outside)
    return apply


def _gev_quantile(neg_log_p, c):
    """``(1 - (-log p)^c) / c`` (``-log(-log p)`` at ``c = 0``) given ``-log p``."""
    small = ew.less(ew.abs_(c), _SMALL_C)
    safe_c = ew.where(small, 1.0, c)
    log_w = ew.log(neg_log_p)
    series = ew.sub(ew.neg(log_w), ew.mul(ew.mul(c, ew.mul(log_w, log_w)), 0.5))
    return ew.where(small, series, ew.div(ew.neg(ew.expm1(ew.mul(safe_c, log_w))), safe_c))


GENEXTREME = {
    "logpdf": _gev_method(lambda lt, c: ew.sub(ew.mul(ew.sub(1.0, c), lt), ew.exp(lt)), -np.inf, -np.inf),
    "cdf": _gev_method(lambda lt, c: ew.exp(ew.neg(ew.exp(lt))), 1.0, 0.0),
    "logcdf": _gev_method(lambda lt, c: ew.neg(ew.exp(lt)), 0.0, -np.inf),
    "sf": _gev_method(lambda lt, c: ew.neg(ew.expm1(ew.neg(ew.exp(lt)))), 0.0, 1.0),
    "logsf": _gev_method(lambda lt, c: log1mexp(ew.neg(ew.exp(lt))), -np.inf, 0.0),
    "ppf": lambda p, c: _gev_quantile(ew.neg(ew.log(p)), c),
    "isf": lambda p, c: _gev_quantile(ew.neg(ew.log1p(ew.neg(p))), c),
}


# ---------------------------------------------------------------- Rayleigh
RAYLEIGH = {
    "logpdf": lambda z: positive(z, lambda u: ew.sub(ew.log(u), _square_half(u))),
    "cdf": lambda z: positive(z, lambda u: ew.neg(ew.expm1(ew.neg(_square_half(u)))), 0.0),
    "logcdf": lambda z: positive(z, lambda u: log1mexp(ew.neg(_square_half(u))), strict=True),
    "sf": lambda z: positive(z, lambda u: ew.exp(ew.neg(_square_half(u))), 1.0),
    "logsf": lambda z: positive(z, lambda u: ew.neg(_square_half(u)), 0.0),
    "ppf": lambda p: ew.sqrt(ew.mul(ew.log1p(ew.neg(p)), -2.0)),
    "isf": lambda p: ew.sqrt(ew.mul(ew.log(p), -2.0)),
}


# ---------------------------------------------------------------- loggamma (log of a gamma(c) variable)
def _loggamma_tail(tail, z, c):
    other = "gammaincc" if tail == "gammainc" else "gammainc"
    u = ew.exp(z)
    return log_probability(incomplete(tail, c, u, names=("c",)), incomplete(other, c, u, names=("c",)))


LOGGAMMA = {
    "logpdf": lambda z, c: ew.sub(ew.sub(ew.mul(c, z), ew.exp(z)), sc.gammaln(c)),
    "cdf": lambda z, c: incomplete("gammainc", c, ew.exp(z), names=("c",)),
    "sf": lambda z, c: incomplete("gammaincc", c, ew.exp(z), names=("c",)),
    "logcdf": lambda z, c: _loggamma_tail("gammainc", z, c),
    "logsf": lambda z, c: _loggamma_tail("gammaincc", z, c),
    "ppf": lambda p, c: ew.log(incomplete("gammaincinv", c, p, names=("c",))),
    "isf": lambda p, c: ew.log(incomplete("gammainccinv", c, p, names=("c",))),
}


# ---------------------------------------------------------------- skew normal, von Mises (densities)
def _normal_logpdf(z):
    return ew.sub(ew.neg(_square_half(z)), _HALF_LOG_2PI)


def _log_of_smaller(p, complement):
    """``log(p)`` where ``p`` is the smaller of the two, else ``log1p(-complement)`` (no rounding of ``1 - tiny``)."""
    small = ew.less(p, 0.5)
    return ew.where(small, ew.log(ew.where(small, p, 0.5)), ew.log1p(ew.neg(ew.where(small, 0.5, complement))))


SKEWNORM = {"logpdf": lambda z, a: ew.add(ew.add(_normal_logpdf(z), sc.log_ndtr(ew.mul(a, z))), _LOG2),
            "cdf": owens.skewnorm_cdf,
            "sf": lambda z, a: owens.skewnorm_cdf(ew.neg(z), ew.neg(a)),
            "logcdf": lambda z, a: _log_of_smaller(owens.skewnorm_cdf(z, a), owens.skewnorm_cdf(ew.neg(z), ew.neg(a))),
            "logsf": lambda z, a: _log_of_smaller(owens.skewnorm_cdf(ew.neg(z), ew.neg(a)), owens.skewnorm_cdf(z, a))}
# kappa cos z - log(2 pi I0(kappa)), with I0(kappa) = i0e(kappa) e^kappa (no overflow for a large kappa)
VONMISES = {"logpdf": lambda z, k: ew.sub(ew.mul(k, ew.sub(ew.cos(z), 1.0)), ew.add(ew.log(bessel.i0e(k)), _LOG_2PI))}


# ---------------------------------------------------------------- truncated normal
def _log_mass(lo, hi):
    """``log(Phi(hi) - Phi(lo))`` for ``lo <= hi``, from the tail both lie in (right of 0: the upper tail)."""
    right = ew.greater(lo, 0.0)
    # in the right tail Phi(hi) - Phi(lo) = Phi(-lo) - Phi(-hi)
    big = ew.where(right, ew.neg(lo), hi)
    small = ew.where(right, ew.neg(hi), lo)
    log_big = sc.log_ndtr(big)
    return ew.add(log_big, log1mexp(ew.sub(sc.log_ndtr(small), log_big)))


def _clip_into(z, a, b):
    return ew.minimum(ew.maximum(z, a), b)


def _truncnorm_ppf(q, a, b):
    """``Phi(x) = Phi(a) + q mass`` solved in logs; for ``a >= 0`` from the upper tail:
    ``Q(x) = Q(b) + (1 - q) mass`` (SciPy's formulation)."""
    mass = _log_mass(a, b)
    left = boxcox.ndtri_exp(ew.logaddexp(sc.log_ndtr(a), ew.add(ew.log(q), mass)))
    right = ew.neg(boxcox.ndtri_exp(ew.logaddexp(sc.log_ndtr(ew.neg(b)), ew.add(ew.log1p(ew.neg(q)), mass))))
    return ew.where(ew.less(a, 0.0), left, right)


def _truncnorm(method):
    def apply(z, a, b):
        inside = ew.logical_and(ew.greater_equal(z, a), ew.less_equal(z, b))
        safe = ew.where(inside, z, _clip_into(ew.mul(z, 0.0), a, b))
        mass = _log_mass(a, b)
        if method == "logpdf":
            value, left, right = ew.sub(_normal_logpdf(safe), mass), -np.inf, -np.inf
        elif method in ("logcdf", "cdf"):
            value, left, right = ew.sub(_log_mass(a, safe), mass), -np.inf, 0.0
        else:  # logsf, sf
            value, left, right = ew.sub(_log_mass(safe, b), mass), 0.0, -np.inf
        out = ew.where(inside, value, ew.where(ew.less(z, a), left, right))
        return ew.exp(out) if method in ("cdf", "sf") else out
    return apply


def _finite(v):
    """``v`` is finite (``v * 0`` is NaN for an infinity and for NaN)."""
    return ew.equal(ew.mul(v, 0.0), 0.0)


def _gt0(*values):
    out = True
    for v in values:
        c = ew.greater(v, 0.0)
        out = c if out is True else ew.logical_and(out, c)
    return out


DISTRIBUTIONS = {
    "gumbel_r": Spec((), GUMBEL_R),
    "gumbel_l": Spec((), GUMBEL_L),
    "genextreme": Spec(("c",), GENEXTREME, valid=lambda c: _finite(c)),
    "rayleigh": Spec((), RAYLEIGH),
    "loggamma": Spec(("c",), LOGGAMMA, valid=_gt0),
    "skewnorm": Spec(("a",), SKEWNORM, valid=lambda a: _finite(a)),
    "truncnorm": Spec(("a", "b"), {**{m: _truncnorm(m) for m in ("logpdf", "cdf", "logcdf", "sf", "logsf")},
                                          "ppf": _truncnorm_ppf,
                                          "isf": lambda q, a, b: ew.neg(_truncnorm_ppf(q, ew.neg(b), ew.neg(a)))},
                      valid=lambda a, b: ew.less(a, b)),
    "vonmises": Spec(("kappa",), VONMISES, valid=_gt0),
}

__all__ = ["DISTRIBUTIONS"]
