"""Far tails: logcdf far left, logsf far right, distribution functions near 0 and 1 and quantiles of tiny
probabilities against exact references (mpmath at 50 digits), where a naive composition (the log of a
difference) would lose every digit."""
from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
import scipy.stats

import gradc

mp.mp.dps = 50


def _norm_cdf(z):
    return mp.ncdf(z)


def _gamma_p(a, x):
    return mp.gammainc(a, 0, x, regularized=True)


def _gamma_q(a, x):
    return mp.gammainc(a, x, mp.inf, regularized=True)


CASES = [
    ("norm", "logcdf", (), -40.0, lambda x: mp.log(_norm_cdf(x))),
    ("norm", "logsf", (), 38.0, lambda x: mp.log(_norm_cdf(-x))),
    ("norm", "ppf", (), 1e-300, None),
    ("logistic", "logcdf", (), -800.0, lambda x: -mp.log1p(mp.exp(-x))),
    ("logistic", "logsf", (), 800.0, lambda x: -mp.log1p(mp.exp(x))),
    ("logistic", "logcdf", (), 40.0, lambda x: -mp.log1p(mp.exp(-x))),
    ("cauchy", "cdf", (), -1e10, lambda x: mp.mpf(1) / 2 + mp.atan(x) / mp.pi),
    ("cauchy", "logcdf", (), -1e12, lambda x: mp.log(mp.mpf(1) / 2 + mp.atan(x) / mp.pi)),
    ("cauchy", "logsf", (), 1e12, lambda x: mp.log(mp.mpf(1) / 2 - mp.atan(x) / mp.pi)),
    ("cauchy", "ppf", (), 1e-10, lambda p: mp.tan(mp.pi * (mp.mpf(p) - mp.mpf(1) / 2))),
    ("cauchy", "isf", (), 1e-12, lambda p: mp.tan(mp.pi * (mp.mpf(1) / 2 - mp.mpf(p)))),
    ("expon", "logcdf", (), 1e-20, lambda x: mp.log(-mp.expm1(-x))),
    ("expon", "logcdf", (), 50.0, lambda x: mp.log(-mp.expm1(-x))),
    ("expon", "ppf", (), 1e-18, lambda p: -mp.log1p(-mp.mpf(p))),
    ("laplace", "logcdf", (), -50.0, lambda x: x - mp.log(2)),
    ("laplace", "logcdf", (), 50.0, lambda x: mp.log1p(-mp.exp(-x) / 2)),
    ("laplace", "ppf", (), 1e-300, lambda p: mp.log(2 * mp.mpf(p))),
    ("halfnorm", "logsf", (), 40.0, lambda x: mp.log(2 * _norm_cdf(-x))),
    ("halfnorm", "logcdf", (), 7.0, lambda x: mp.log(mp.erf(x / mp.sqrt(2)))),
    ("lognorm", "logcdf", (0.7,), 1e-30, lambda x: mp.log(_norm_cdf(mp.log(x) / mp.mpf(0.7)))),
    ("lognorm", "logsf", (0.7,), 1e30, lambda x: mp.log(_norm_cdf(-mp.log(x) / mp.mpf(0.7)))),
    ("weibull_min", "logcdf", (1.7,), 1e-10, lambda x: mp.log(-mp.expm1(-mp.mpf(x) ** mp.mpf(1.7)))),
    ("weibull_min", "logsf", (1.7,), 50.0, lambda x: -mp.mpf(x) ** mp.mpf(1.7)),
    ("pareto", "logcdf", (2.5,), 1 + 1e-12, lambda x: mp.log(1 - mp.mpf(x) ** mp.mpf(-2.5))),
    ("gamma", "logcdf", (2.2,), 60.0, lambda x: mp.log(_gamma_p(mp.mpf(2.2), x))),
    ("gamma", "logsf", (2.2,), 1e-3, lambda x: mp.log(_gamma_q(mp.mpf(2.2), x))),
    ("chi2", "logcdf", (3.0,), 100.0, lambda x: mp.log(_gamma_p(mp.mpf(1.5), mp.mpf(x) / 2))),
    ("t", "logcdf", (3.5,), -1e3, None),
    ("poisson", "logcdf", (3.2,), 40.0, lambda k: mp.log(_gamma_q(k + 1, mp.mpf(3.2)))),
    ("geom", "logcdf", (0.3,), 200.0, lambda k: mp.log(1 - (1 - mp.mpf(0.3)) ** k)),
]


def _reference(name, method, shapes, x, exact):
    if exact is None:  # SciPy's own value where it is exact (ndtri, the incomplete beta's tail)
        return float(getattr(getattr(scipy.stats, name), method)(x, *shapes))
    return float(exact(x))


@pytest.mark.parametrize("name, method, shapes, x, exact", CASES, ids=[f"{c[0]}.{c[1]}@{c[3]:g}" for c in CASES])
def test_tail_value_is_exact(name, method, shapes, x, exact):
    def f(v):
        return getattr(getattr(scipy.stats, name), method)(v, *shapes)

    actual = gradc.compile(f, x, mode="vjp").forward(x)
    expected = _reference(name, method, shapes, x, exact)
    assert expected != 0.0 and np.isfinite(expected)
    np.testing.assert_allclose(actual, expected, rtol=1e-9)


@pytest.mark.parametrize("name, method, x", [("norm", "logcdf", -30.0), ("logistic", "logsf", 700.0),
                                             ("expon", "logcdf", 1e-12), ("cauchy", "logcdf", -1e8),
                                             ("laplace", "logsf", 60.0)])
def test_tail_gradient_is_finite_and_exact(name, method, x):
    def f(v):
        return getattr(getattr(scipy.stats, name), method)(v)

    g = gradc.grad(f)(x)
    mpf = {"norm": lambda v: mp.log(_norm_cdf(v)), "logistic": lambda v: -mp.log1p(mp.exp(v)),
           "expon": lambda v: mp.log(-mp.expm1(-v)), "cauchy": lambda v: mp.log(mp.mpf(1) / 2 + mp.atan(v) / mp.pi),
           "laplace": lambda v: mp.log(mp.exp(-v) / 2)}[name]
    expected = float(mp.diff(mpf, mp.mpf(x)))
    np.testing.assert_allclose(g, expected, rtol=1e-8)
