"""``scipy.stats`` continuous families with shape parameters: t, gamma, chi2, beta, lognorm, weibull_min, pareto,
invgamma (methods of ``z = (x - loc) / scale`` and the shapes; see ``gradc.ops.distributions``).

The distribution functions of t, gamma, chi2, beta and invgamma are the regularized incomplete gamma and
beta functions (``gradc.ops.special_incomplete``): differentiable in ``x``, ``loc`` and ``scale``; their
derivative in a shape parameter is refused by name at the user's line.

>>> sorted(DISTRIBUTIONS)
['beta', 'chi2', 'gamma', 'invgamma', 'lognorm', 'pareto', 't', 'weibull_min']
"""
from __future__ import annotations

import math

import numpy as np

from gradc.ops import elementwise as ew
from gradc.ops import special_scipy as sc
from gradc.ops.distributions import (
    Spec,
    all_of,
    between,
    incomplete,
    log1mexp,
    log_probability,
    on_support,
    positive,
    unit,
)

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_LOG2 = math.log(2.0)


def _gt0(*values):
    return all_of(*(ew.greater(v, 0.0) for v in values))


# ---------------------------------------------------------------- t
def _t_logpdf(z, df):
    half = ew.mul(ew.add(df, 1.0), 0.5)
    norm = ew.sub(ew.sub(sc.gammaln(half), sc.gammaln(ew.mul(df, 0.5))), ew.mul(ew.log(ew.mul(df, math.pi)), 0.5))
    return ew.sub(norm, ew.mul(half, ew.log1p(ew.div(ew.mul(z, z), df))))


def _t_tail(z, df):
    """P(T < -|z|) = I_{df / (df + z^2)}(df / 2, 1 / 2) / 2."""
    x = ew.div(df, ew.add(df, ew.mul(z, z)))
    return ew.mul(incomplete("betainc", ew.mul(df, 0.5), 0.5, x, names=("df", "")), 0.5)


def _t_cdf(z, df):
    tail = _t_tail(z, df)
    return ew.where(ew.less(z, 0.0), tail, ew.sub(1.0, tail))


def _t_logcdf(z, df):
    tail = _t_tail(z, df)
    return ew.where(ew.less(z, 0.0), ew.log(tail), ew.log1p(ew.neg(tail)))


def _t_ppf(p, df):
    """The quantile from the inverse incomplete beta of the smaller tail."""
    low = ew.less(p, 0.5)
    tail = ew.where(low, p, ew.sub(1.0, p))
    x = incomplete("betaincinv", ew.mul(df, 0.5), 0.5, ew.mul(tail, 2.0), names=("df", ""))  # df / (df + t^2)
    magnitude = ew.sqrt(ew.div(ew.mul(df, ew.sub(1.0, x)), x))
    return ew.where(low, ew.neg(magnitude), magnitude)


# ---------------------------------------------------------------- gamma family
def _gamma_logpdf(z, a):
    return positive(z, lambda s: ew.sub(ew.sub(sc.xlogy(ew.sub(a, 1.0), s), s), sc.gammaln(a)))


def _gamma_methods(a_of, z_scale, names):
    """gamma's methods in ``a_of(shape)`` and ``z / z_scale`` (chi2: a = df / 2, scale 2); ``names``: the shape's."""
    def z_of(z):
        return z if z_scale == 1 else ew.div(z, z_scale)

    return {
        "logpdf": lambda z, s: ew.sub(_gamma_logpdf(z_of(z), a_of(s)), math.log(z_scale)),
        "cdf": lambda z, s: positive(z_of(z), lambda u: incomplete("gammainc", a_of(s), u, names=names), 0.0),
        "sf": lambda z, s: positive(z_of(z), lambda u: incomplete("gammaincc", a_of(s), u, names=names), 1.0),
        "logcdf": lambda z, s: positive(z_of(z), lambda u: _log_gamma_tail("gammainc", a_of(s), u, names)),
        "logsf": lambda z, s: positive(z_of(z), lambda u: _log_gamma_tail("gammaincc", a_of(s), u, names), 0.0),
        "ppf": lambda p, s: ew.mul(incomplete("gammaincinv", a_of(s), p, names=names), z_scale),
        "isf": lambda p, s: ew.mul(incomplete("gammainccinv", a_of(s), p, names=names), z_scale),
    }


def _log_gamma_tail(tail, a, u, names):
    other = "gammaincc" if tail == "gammainc" else "gammainc"
    return log_probability(incomplete(tail, a, u, names=names), incomplete(other, a, u, names=names))


def _half(df):
    return ew.mul(df, 0.5)


# ---------------------------------------------------------------- beta
def _beta_logpdf(z, a, b):
    return unit(z, lambda s: ew.sub(ew.add(sc.xlog1py(ew.sub(b, 1.0), ew.neg(s)), sc.xlogy(ew.sub(a, 1.0), s)),
                                    sc.betaln(a, b)))


def _beta_cdf(z, a, b):
    return between(z, 0.0, lambda s: incomplete("betainc", a, b, s, names=("a", "b")), 1.0)


def _beta_sf(z, a, b):
    return between(z, 1.0, lambda s: incomplete("betainc", b, a, ew.sub(1.0, s), names=("b", "a")), 0.0)


# ---------------------------------------------------------------- lognorm, weibull_min, pareto, invgamma
def _lognorm(name):
    """lognorm's ``name`` method: norm's of ``w = log(z) / s`` on ``z > 0``."""
    def apply(z, s):
        return positive(z, lambda u: _LOGNORM[name](ew.div(ew.log(u), s), u, s), _OUTSIDE_LOG[name], strict=True)
    return apply


_LOGNORM = {
    "logpdf": lambda w, u, s: ew.sub(ew.mul(ew.mul(w, w), -0.5), ew.add(ew.log(ew.mul(u, s)), _HALF_LOG_2PI)),
    "cdf": lambda w, u, s: sc.ndtr(w), "logcdf": lambda w, u, s: sc.log_ndtr(w),
    "sf": lambda w, u, s: sc.ndtr(ew.neg(w)), "logsf": lambda w, u, s: sc.log_ndtr(ew.neg(w)),
}
# the value of each method left of the support (x <= 0 for the positive families)
_OUTSIDE_LOG = {"logpdf": -np.inf, "pdf": 0.0, "cdf": 0.0, "logcdf": -np.inf, "sf": 1.0, "logsf": 0.0}


def _weibull_power(z, c):
    """``z ** c`` for ``z >= 0`` (0 at 0 with a finite derivative in ``c``)."""
    return on_support(ew.greater(z, 0.0), z, lambda u: ew.power(u, c), 0.0)


def _weibull_logpdf(z, c):
    inside = lambda u: ew.sub(ew.add(ew.log(c), sc.xlogy(ew.sub(c, 1.0), u)), _weibull_power(u, c))  # noqa: E731
    return positive(z, inside)


def _pareto_logz(z, b, formula, outside):
    return on_support(ew.greater_equal(z, 1.0), z, lambda u: formula(ew.log(u)), outside, safe=2.0)


def _invgamma_logpdf(z, a):
    return positive(z, lambda u: ew.sub(ew.neg(ew.add(ew.mul(ew.add(a, 1.0), ew.log(u)), ew.div(1.0, u))),
                                        sc.gammaln(a)), strict=True)


def _reciprocal_positive(z, formula, outside):
    return positive(z, lambda u: formula(ew.div(1.0, u)), outside, strict=True)


DISTRIBUTIONS = {
    "t": Spec(("df",), {"logpdf": _t_logpdf, "cdf": _t_cdf, "logcdf": _t_logcdf, "ppf": _t_ppf},
              valid=_gt0, symmetric=True),
    "gamma": Spec(("a",), _gamma_methods(lambda a: a, 1.0, ("a",)), valid=_gt0),
    "chi2": Spec(("df",), _gamma_methods(_half, 2.0, ("df",)), valid=_gt0),
    "beta": Spec(("a", "b"), {
        "logpdf": _beta_logpdf, "cdf": _beta_cdf, "sf": _beta_sf,
        "logcdf": lambda z, a, b: log_probability(_beta_cdf(z, a, b), _beta_sf(z, a, b)),
        "logsf": lambda z, a, b: log_probability(_beta_sf(z, a, b), _beta_cdf(z, a, b)),
        "ppf": lambda p, a, b: incomplete("betaincinv", a, b, p, names=("a", "b")),
        "isf": lambda p, a, b: ew.sub(1.0, incomplete("betaincinv", b, a, p, names=("b", "a"))),
    }, valid=_gt0),
    "lognorm": Spec(("s",), {
        **{name: _lognorm(name) for name in _LOGNORM},
        "ppf": lambda p, s: ew.exp(ew.mul(sc.ndtri(p), s)),
        "isf": lambda p, s: ew.exp(ew.mul(sc.ndtri(p), ew.neg(s))),
    }, valid=_gt0),
    "weibull_min": Spec(("c",), {
        "logpdf": _weibull_logpdf,
        "cdf": lambda z, c: positive(z, lambda u: ew.neg(ew.expm1(ew.neg(_weibull_power(u, c)))), 0.0),
        "logcdf": lambda z, c: positive(z, lambda u: log1mexp(ew.neg(ew.power(u, c))), strict=True),
        "sf": lambda z, c: positive(z, lambda u: ew.exp(ew.neg(_weibull_power(u, c))), 1.0),
        "logsf": lambda z, c: positive(z, lambda u: ew.neg(_weibull_power(u, c)), 0.0),
        "ppf": lambda p, c: ew.power(ew.neg(ew.log1p(ew.neg(p))), ew.div(1.0, c)),
        "isf": lambda p, c: ew.power(ew.neg(ew.log(p)), ew.div(1.0, c)),
    }, valid=_gt0),
    "pareto": Spec(("b",), {
        "logpdf": lambda z, b: _pareto_logz(z, b, lambda w: ew.sub(ew.log(b), ew.mul(ew.add(b, 1.0), w)), -np.inf),
        "cdf": lambda z, b: _pareto_logz(z, b, lambda w: ew.neg(ew.expm1(ew.neg(ew.mul(b, w)))), 0.0),
        "logcdf": lambda z, b: on_support(ew.greater(z, 1.0), z, lambda u: log1mexp(ew.neg(ew.mul(b, ew.log(u)))),
                                          -np.inf, safe=2.0),
        "sf": lambda z, b: _pareto_logz(z, b, lambda w: ew.exp(ew.neg(ew.mul(b, w))), 1.0),
        "logsf": lambda z, b: _pareto_logz(z, b, lambda w: ew.neg(ew.mul(b, w)), 0.0),
        "ppf": lambda p, b: ew.exp(ew.div(ew.neg(ew.log1p(ew.neg(p))), b)),
        "isf": lambda p, b: ew.exp(ew.div(ew.neg(ew.log(p)), b)),
    }, valid=_gt0),
    "invgamma": Spec(("a",), {
        "logpdf": _invgamma_logpdf,
        "cdf": lambda z, a: _reciprocal_positive(z, lambda r: incomplete("gammaincc", a, r, names=("a",)), 0.0),
        "sf": lambda z, a: _reciprocal_positive(z, lambda r: incomplete("gammainc", a, r, names=("a",)), 1.0),
        "logcdf": lambda z, a: _reciprocal_positive(z, lambda r: _log_gamma_tail("gammaincc", a, r, ("a",)), -np.inf),
        "logsf": lambda z, a: _reciprocal_positive(z, lambda r: _log_gamma_tail("gammainc", a, r, ("a",)), 0.0),
        "ppf": lambda p, a: ew.div(1.0, incomplete("gammainccinv", a, p, names=("a",))),
        "isf": lambda p, a: ew.div(1.0, incomplete("gammaincinv", a, p, names=("a",))),
    }, valid=_gt0),
}

__all__ = ["DISTRIBUTIONS"]
