"""``scipy.stats`` location-scale families without shape parameters: norm, expon, laplace, cauchy, logistic,
uniform, halfnorm (methods of ``z = (x - loc) / scale``; see ``gradc.ops.distributions``).

Each tail is computed where it is accurate: ``logcdf`` far left and ``logsf`` far right never take the log of
a difference that has lost its digits (``log_ndtr``, ``log_expit``, ``arctan2`` in place of ``0.5 + arctan``).

>>> sorted(DISTRIBUTIONS)
['cauchy', 'expon', 'halfnorm', 'laplace', 'logistic', 'norm', 'uniform']
"""
from __future__ import annotations

import math

import numpy as np

from gradc.ops import elementwise as ew
from gradc.ops import special_scipy as sc
from gradc.ops.distributions import Spec, arctan2, log1mexp, positive

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)


def _laplace_cdf(z):
    negative = ew.less_equal(z, 0.0)
    low = ew.mul(ew.exp(ew.where(negative, z, 0.0)), 0.5)
    high = ew.sub(1.0, ew.mul(ew.exp(ew.neg(ew.where(negative, 0.0, z))), 0.5))
    return ew.where(negative, low, high)


def _laplace_logcdf(z):
    negative = ew.less(z, 0.0)
    high = ew.log1p(ew.mul(ew.exp(ew.neg(ew.where(negative, 0.0, z))), -0.5))
    return ew.where(negative, ew.sub(z, _LOG2), high)


def _laplace_ppf(p):
    low = ew.less_equal(p, 0.5)
    return ew.where(low, ew.log(ew.mul(ew.where(low, p, 0.25), 2.0)),
                    ew.neg(ew.log(ew.mul(ew.sub(1.0, ew.where(low, 0.75, p)), 2.0))))


def _logistic_logpdf(z):
    a = ew.abs_(z)
    return ew.sub(ew.neg(a), ew.mul(ew.log1p(ew.exp(ew.neg(a))), 2.0))


def _halfnorm_cdf(z):
    return sc.erf(ew.mul(z, 1.0 / math.sqrt(2.0)))


def _cauchy_ppf(p):
    """``tan(pi (p - 1/2))``, as ``-1 / tan(pi p)`` in the tails (where ``p - 1/2`` would lose ``p``'s digits)."""
    middle = ew.logical_and(ew.greater(p, 0.25), ew.less(p, 0.75))
    centre = ew.tan(ew.mul(ew.sub(ew.where(middle, p, 0.5), 0.5), math.pi))
    low = ew.less_equal(p, 0.25)
    tail = ew.where(low, p, ew.sub(1.0, p))  # the smaller tail, <= 1/4
    magnitude = ew.div(1.0, ew.tan(ew.mul(ew.where(middle, 0.25, tail), math.pi)))
    return ew.where(middle, centre, ew.where(low, ew.neg(magnitude), magnitude))


def _halfnorm_logcdf(z):
    """``log(erf(z / sqrt 2))``; beyond 1 as ``log1p(-2 ndtr(-z))`` (erf near 1 keeps no digits of its gap)."""
    far = ew.greater(z, 1.0)
    near = ew.log(_halfnorm_cdf(ew.where(far, 1.0, z)))
    return ew.where(far, ew.log1p(ew.mul(sc.ndtr(ew.neg(ew.where(far, z, 2.0))), -2.0)), near)


def _clip01(z):
    return ew.clip(z, 0.0, 1.0)


DISTRIBUTIONS = {
    "norm": Spec((), {
        "logpdf": lambda z: ew.sub(ew.mul(ew.mul(z, z), -0.5), _HALF_LOG_2PI),
        "cdf": sc.ndtr, "logcdf": sc.log_ndtr, "ppf": sc.ndtri,
    }, symmetric=True),
    "expon": Spec((), {
        "logpdf": lambda z: positive(z, ew.neg),
        "cdf": lambda z: positive(z, lambda s: ew.neg(ew.expm1(ew.neg(s))), 0.0),
        "logcdf": lambda z: positive(z, lambda s: log1mexp(ew.neg(s)), -np.inf, strict=True),
        "sf": lambda z: positive(z, lambda s: ew.exp(ew.neg(s)), 1.0),
        "logsf": lambda z: positive(z, ew.neg, 0.0),
        "ppf": lambda p: ew.neg(ew.log1p(ew.neg(p))), "isf": lambda p: ew.neg(ew.log(p)),
    }),
    "laplace": Spec((), {
        "logpdf": lambda z: ew.sub(ew.neg(ew.abs_(z)), _LOG2),
        "cdf": _laplace_cdf, "logcdf": _laplace_logcdf, "ppf": _laplace_ppf,
    }, symmetric=True),
    "cauchy": Spec((), {
        "logpdf": lambda z: ew.neg(ew.add(ew.log1p(ew.mul(z, z)), math.log(math.pi))),
        # arctan2(1, -z) / pi = 1/2 + arctan(z) / pi, without the cancellation far left
        "cdf": lambda z: ew.div(arctan2(1.0, ew.neg(z)), math.pi),
        "logcdf": lambda z: ew.log(ew.div(arctan2(1.0, ew.neg(z)), math.pi)),
        "ppf": _cauchy_ppf,
    }, symmetric=True),
    "logistic": Spec((), {
        "logpdf": _logistic_logpdf,
        "cdf": sc.expit, "logcdf": sc.log_expit, "ppf": sc.logit,
    }, symmetric=True),
    "uniform": Spec((), {
        "logpdf": lambda z: ew.where(ew.logical_and(ew.greater_equal(z, 0.0), ew.less_equal(z, 1.0)), 0.0, -np.inf),
        "cdf": _clip01, "logcdf": lambda z: ew.log(_clip01(z)),
        "sf": lambda z: ew.sub(1.0, _clip01(z)), "logsf": lambda z: ew.log1p(ew.neg(_clip01(z))),
        "ppf": lambda p: p, "isf": lambda p: ew.sub(1.0, p),
    }),
    "halfnorm": Spec((), {
        "logpdf": lambda z: positive(z, lambda s: ew.sub(ew.mul(ew.mul(s, s), -0.5), _HALF_LOG_2PI - _LOG2)),
        "cdf": lambda z: positive(z, _halfnorm_cdf, 0.0),
        "logcdf": lambda z: positive(z, _halfnorm_logcdf),
        "sf": lambda z: positive(z, lambda s: ew.mul(sc.ndtr(ew.neg(s)), 2.0), 1.0),
        "logsf": lambda z: positive(z, lambda s: ew.add(sc.log_ndtr(ew.neg(s)), _LOG2), 0.0),
        "ppf": lambda p: sc.ndtri(ew.mul(ew.add(p, 1.0), 0.5)),
        "isf": lambda p: ew.neg(sc.ndtri(ew.mul(p, 0.5))),
    }),
}

__all__ = ["DISTRIBUTIONS"]
