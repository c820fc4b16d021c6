"""``scipy.stats`` discrete distributions: poisson, binom, geom, nbinom (methods of ``k - loc``; see
``gradc.ops.distributions``).

``logpmf`` is ``-inf`` off the whole numbers of the support; ``cdf``/``sf`` read ``floor(k)`` and are the
regularized incomplete gamma (poisson) or beta (binom, nbinom) functions, differentiable in the rate or
probability (their argument ``x``); geom's are closed forms.

>>> sorted(DISTRIBUTIONS)
['binom', 'geom', 'nbinom', 'poisson']
"""
from __future__ import annotations

import numpy as np

from gradc.ops import elementwise as ew
from gradc.ops import special_scipy as sc
from gradc.ops.distributions import Spec, all_of, incomplete, is_integer, log1mexp, log_probability, on_support


def _on_whole(k, low, high, formula):
    """``formula(k)`` at the whole numbers ``low <= k <= high`` (``high`` None: unbounded), ``-inf`` elsewhere."""
    inside = all_of(is_integer(k), ew.greater_equal(k, low), True if high is None else ew.less_equal(k, high))
    return on_support(inside, k, formula, -np.inf, safe=low)


def _counted(k, low, high, formula, below, above):
    """A cdf-like ``formula(floor(k))``: ``below`` left of ``low``, ``above`` from ``high`` on (None: never)."""
    j = ew.floor(k)
    inside = all_of(ew.greater_equal(j, low), True if high is None else ew.less(j, high))
    value = on_support(inside, j, formula, below, safe=low)
    if high is None:
        return value
    return ew.where(ew.greater_equal(j, high), above, value)


def _poisson_logpmf(k, mu):
    return _on_whole(k, 0.0, None, lambda j: ew.sub(ew.sub(sc.xlogy(j, mu), sc.gammaln(ew.add(j, 1.0))), mu))


def _poisson(name, below):
    return lambda k, mu: _counted(k, 0.0, None, lambda j: incomplete(name, ew.add(j, 1.0), mu, names=("k",)),
                                  below, None)


def _binom_logpmf(k, n, p):
    def inside(j):
        log_choose = ew.sub(sc.gammaln(ew.add(n, 1.0)),
                            ew.add(sc.gammaln(ew.add(j, 1.0)), sc.gammaln(ew.add(ew.sub(n, j), 1.0))))
        return ew.add(log_choose, ew.add(sc.xlogy(j, p), sc.xlog1py(ew.sub(n, j), ew.neg(p))))
    return _on_whole(k, 0.0, n, inside)


def _binom_cdf(k, n, p):  # P(K <= j) = I_{1-p}(n - j, j + 1)
    def below(j):
        return incomplete("betainc", ew.sub(n, j), ew.add(j, 1.0), ew.sub(1.0, p), names=("n", "k"))
    return _counted(k, 0.0, n, below, 0.0, 1.0)


def _binom_sf(k, n, p):  # P(K > j) = I_p(j + 1, n - j)
    def above(j):
        return incomplete("betainc", ew.add(j, 1.0), ew.sub(n, j), p, names=("k", "n"))
    return _counted(k, 0.0, n, above, 1.0, 0.0)


def _geom_log_survival(j, p):  # log P(K > j) = j log(1 - p)
    return ew.mul(j, ew.log1p(ew.neg(p)))


def _nbinom_logpmf(k, n, p):
    def inside(j):
        log_choose = ew.sub(sc.gammaln(ew.add(n, j)), ew.add(sc.gammaln(ew.add(j, 1.0)), sc.gammaln(n)))
        return ew.add(log_choose, ew.add(sc.xlogy(n, p), sc.xlog1py(j, ew.neg(p))))
    return _on_whole(k, 0.0, None, inside)


def _nbinom_cdf(k, n, p):  # P(K <= j) = I_p(n, j + 1)
    return _counted(k, 0.0, None, lambda j: incomplete("betainc", n, ew.add(j, 1.0), p, names=("n", "k")), 0.0, None)


def _nbinom_sf(k, n, p):  # P(K > j) = I_{1-p}(j + 1, n)
    def above(j):
        return incomplete("betainc", ew.add(j, 1.0), n, ew.sub(1.0, p), names=("k", "n"))
    return _counted(k, 0.0, None, above, 1.0, None)


def _probability(p):
    return all_of(ew.greater_equal(p, 0.0), ew.less_equal(p, 1.0))


def _log_of(fn, complement):
    return lambda k, *shapes: log_probability(fn(k, *shapes), complement(k, *shapes))


DISTRIBUTIONS = {
    "poisson": Spec(("mu",), {
        "logpmf": _poisson_logpmf, "cdf": _poisson("gammaincc", 0.0), "sf": _poisson("gammainc", 1.0),
    }, valid=lambda mu: ew.greater_equal(mu, 0.0), discrete=True),
    "binom": Spec(("n", "p"), {"logpmf": _binom_logpmf, "cdf": _binom_cdf, "sf": _binom_sf},
                  valid=lambda n, p: all_of(is_integer(n), ew.greater_equal(n, 0.0), _probability(p)), discrete=True),
    "geom": Spec(("p",), {
        "logpmf": lambda k, p: _on_whole(k, 1.0, None, lambda j: ew.add(_geom_log_survival(ew.sub(j, 1.0), p),
                                                                         ew.log(p))),
        "cdf": lambda k, p: _counted(k, 1.0, None, lambda j: ew.neg(ew.expm1(_geom_log_survival(j, p))), 0.0, None),
        "logcdf": lambda k, p: _counted(k, 1.0, None, lambda j: log1mexp(_geom_log_survival(j, p)), -np.inf, None),
        "sf": lambda k, p: _counted(k, 1.0, None, lambda j: ew.exp(_geom_log_survival(j, p)), 1.0, None),
        "logsf": lambda k, p: _counted(k, 1.0, None, lambda j: _geom_log_survival(j, p), 0.0, None),
    }, valid=lambda p: all_of(ew.greater(p, 0.0), ew.less_equal(p, 1.0)), discrete=True),
    "nbinom": Spec(("n", "p"), {"logpmf": _nbinom_logpmf, "cdf": _nbinom_cdf, "sf": _nbinom_sf},
                   valid=lambda n, p: all_of(ew.greater(n, 0.0), _probability(p)), discrete=True),
}
for _spec in DISTRIBUTIONS.values():  # log of the distribution functions where no better form is given
    for _name, _base, _other in (("logcdf", "cdf", "sf"), ("logsf", "sf", "cdf")):
        _spec.methods.setdefault(_name, _log_of(_spec.methods[_base], _spec.methods[_other]))

__all__ = ["DISTRIBUTIONS"]
