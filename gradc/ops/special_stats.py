"""``scipy.stats`` distributions' log-densities and distribution functions, in gradc ops.

Each distribution is a table of functions of the standardised value ``z = (x - loc) / scale`` and its
shape parameters; ``evaluate`` applies loc and scale (``logpdf`` subtracts ``log(scale)``; ``pdf`` is
``exp(logpdf)``). Outside a distribution's support the log-density is ``-inf`` (the formula is evaluated
at a safe point there, so no NaN reaches the gradient). Which methods each has: ``METHODS``.

>>> import numpy as np
>>> bool(evaluate("norm", "logpdf", np.float64(0.0), (), 0.0, 1.0) == -0.5 * np.log(2 * np.pi))
True
"""
from __future__ import annotations

import math

import numpy as np

from gradc.ops import elementwise as ew
from gradc.ops import special_scipy as sc

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


def _on_support(inside, z, formula, outside, safe=1.0):
    """``formula(z)`` where ``inside``, ``outside`` elsewhere; evaluated at ``safe`` outside (double where)."""
    return ew.where(inside, formula(ew.where(inside, z, safe)), outside)


def _positive(z, formula, outside=-np.inf):
    return _on_support(ew.greater_equal(z, 0.0), z, formula, outside)


def _unit(z, formula):
    inside = ew.logical_and(ew.greater_equal(z, 0.0), ew.less_equal(z, 1.0))
    return _on_support(inside, z, formula, -np.inf, safe=0.5)


def _t_logpdf(z, df):
    half = ew.mul(ew.add(df, 1.0), 0.5)
    norm = ew.sub(ew.sub(sc.gammaln(half), sc.gammaln(ew.mul(df, 0.5))), ew.mul(ew.log(ew.mul(df, math.pi)), 0.5))
    return ew.sub(norm, ew.mul(half, ew.log1p(ew.div(ew.mul(z, z), df))))


def _laplace_cdf(z):
    negative = ew.less_equal(z, 0.0)
    low = ew.mul(ew.exp(ew.where(negative, z, 0.0)), 0.5)
    high = ew.sub(1.0, ew.mul(ew.exp(ew.neg(ew.where(negative, 0.0, z))), 0.5))
    return ew.where(negative, low, high)


def _laplace_logcdf(z):
    negative = ew.less(z, 0.0)
    high = ew.log1p(ew.mul(ew.exp(ew.neg(ew.where(negative, 0.0, z))), -0.5))
    return ew.where(negative, ew.add(z, math.log(0.5)), high)


# name -> (shape parameter names, {method: function of z and the shape parameters})
DISTRIBUTIONS = {
    "norm": ((), {
        "logpdf": lambda z: ew.sub(ew.mul(ew.mul(z, z), -0.5), _HALF_LOG_2PI),
        "cdf": sc.ndtr, "logcdf": sc.log_ndtr,
        "sf": lambda z: sc.ndtr(ew.neg(z)), "logsf": lambda z: sc.log_ndtr(ew.neg(z)),
    }),
    "t": (("df",), {"logpdf": _t_logpdf}),
    "gamma": (("a",), {
        "logpdf": lambda z, a: _positive(z, lambda s: ew.sub(ew.sub(sc.xlogy(ew.sub(a, 1.0), s), s), sc.gammaln(a))),
    }),
    "beta": (("a", "b"), {
        "logpdf": lambda z, a, b: _unit(z, lambda s: ew.sub(
            ew.add(sc.xlog1py(ew.sub(b, 1.0), ew.neg(s)), sc.xlogy(ew.sub(a, 1.0), s)), sc.betaln(a, b))),
    }),
    "expon": ((), {
        "logpdf": lambda z: _positive(z, ew.neg),
        "cdf": lambda z: _positive(z, lambda s: ew.neg(ew.expm1(ew.neg(s))), 0.0),
        "logcdf": lambda z: _positive(z, lambda s: ew.log(ew.neg(ew.expm1(ew.neg(s))))),
        "sf": lambda z: _positive(z, lambda s: ew.exp(ew.neg(s)), 1.0),
        "logsf": lambda z: _positive(z, ew.neg, 0.0),
    }),
    "laplace": ((), {
        "logpdf": lambda z: ew.sub(ew.neg(ew.abs_(z)), math.log(2.0)),
        "cdf": _laplace_cdf, "logcdf": _laplace_logcdf,
        "sf": lambda z: _laplace_cdf(ew.neg(z)), "logsf": lambda z: _laplace_logcdf(ew.neg(z)),
    }),
    "cauchy": ((), {
        "logpdf": lambda z: ew.neg(ew.add(ew.log1p(ew.mul(z, z)), math.log(math.pi))),
        "cdf": lambda z: ew.add(ew.div(ew.arctan(z), math.pi), 0.5),
        "logcdf": lambda z: ew.log(ew.add(ew.div(ew.arctan(z), math.pi), 0.5)),
        "sf": lambda z: ew.sub(0.5, ew.div(ew.arctan(z), math.pi)),
        "logsf": lambda z: ew.log(ew.sub(0.5, ew.div(ew.arctan(z), math.pi))),
    }),
}

METHODS = {name: sorted([*table, "pdf"] if "logpdf" in table else table) for name, (_, table) in DISTRIBUTIONS.items()}


def evaluate(name: str, method: str, x, shapes: tuple, loc, scale):
    """``scipy.stats.<name>.<method>(x, *shapes, loc=loc, scale=scale)`` in gradc ops (``method`` in ``METHODS``).

    >>> float(evaluate("expon", "cdf", np.float64(-1.0), (), 0.0, 1.0))
    0.0
    """
    _, table = DISTRIBUTIONS[name]
    z = x if (isinstance(loc, (int, float)) and loc == 0) else ew.sub(x, loc)
    unit_scale = isinstance(scale, (int, float)) and scale == 1
    z = z if unit_scale else ew.div(z, scale)
    if method == "pdf":
        return ew.exp(evaluate(name, "logpdf", x, shapes, loc, scale))
    value = table[method](z, *shapes)
    if method == "logpdf" and not unit_scale:
        value = ew.sub(value, ew.log(scale))
    return value


__all__ = ["DISTRIBUTIONS", "METHODS", "evaluate"]
