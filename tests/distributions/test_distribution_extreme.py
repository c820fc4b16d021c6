"""The extreme-value, skewed and truncated families (gradc/ops/distributions_extreme.py) where SciPy's own care
matters: far tails, genextreme's c = 0 (Gumbel) and its bounded support, truncnorm's mass in a far tail, a
large von Mises concentration, frozen forms, and second derivatives against central differences of gradients."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError

TAILS = {
    "gumbel_r_logsf_far": (lambda x: st.gumbel_r.logsf(x, 0.2, 1.5), np.array([-3.0, 0.0, 10.0, 40.0, 300.0])),
    "gumbel_r_logcdf_far_left": (lambda x: st.gumbel_r.logcdf(x), np.array([-6.0, -3.0, 0.0, 5.0])),
    "gumbel_l_logcdf_far": (lambda x: st.gumbel_l.logcdf(x), np.array([-300.0, -40.0, -3.0, 0.0, 2.0])),
    "gumbel_l_isf": (lambda p: st.gumbel_l.isf(p, 1.0, 2.0), np.array([1e-12, 0.1, 0.5, 0.9, 1 - 1e-9])),
    "rayleigh_logsf_far": (lambda x: st.rayleigh.logsf(x, scale=0.5), np.array([0.0, 0.1, 3.0, 30.0])),
    "rayleigh_logcdf_near_zero": (lambda x: st.rayleigh.logcdf(x), np.array([1e-9, 1e-4, 0.5, 3.0])),
    "genextreme_gumbel_limit": (lambda x: st.genextreme.logpdf(x, 0.0), np.array([-2.0, 0.0, 1.5, 6.0])),
    "genextreme_negative_c": (lambda x: st.genextreme.cdf(x, -0.4), np.array([-4.0, -2.4, -1.0, 0.0, 9.0])),
    "genextreme_bounded": (lambda x: st.genextreme.logsf(x, 0.5, 0.1, 2.0), np.array([-3.0, 0.0, 3.0, 4.2, 9.0])),
    "genextreme_ppf": (lambda p: st.genextreme.ppf(p, 0.25), np.array([1e-10, 0.2, 0.5, 0.99, 1.0])),
    "loggamma_far_left": (lambda x: st.loggamma.logcdf(x, 2.5), np.array([-30.0, -5.0, 0.0, 2.0])),
    "loggamma_isf": (lambda p: st.loggamma.isf(p, 0.7), np.array([1e-8, 0.3, 0.9])),
    "skewnorm_far": (lambda x: st.skewnorm.logpdf(x, -4.0, 0.3, 1.2), np.array([-5.0, 0.0, 3.0, 12.0])),
    "truncnorm_far_right": (lambda x: st.truncnorm.logpdf(x, 8.0, 9.5), np.array([7.0, 8.0, 8.3, 9.0, 10.0])),
    "truncnorm_far_left_cdf": (lambda x: st.truncnorm.logcdf(x, -12.0, -10.0), np.array([-11.5, -10.5, -10.1])),
    "truncnorm_sf_one_sided": (lambda x: st.truncnorm.sf(x, 0.5, np.inf), np.array([0.0, 0.6, 2.0, 30.0])),
    "vonmises_large_kappa": (lambda x: st.vonmises.logpdf(x, 800.0), np.array([-0.1, 0.0, 0.05, 3.0])),
    "vonmises_pdf_loc": (lambda x: st.vonmises.pdf(x, 0.3, loc=1.0), np.array([-3.0, 0.0, 1.0, 2.5])),
}


@pytest.mark.parametrize("name", sorted(TAILS))
@pytest.mark.parametrize("target", ["numpy", "c"])
def test_against_scipy(name, target):
    f, x = TAILS[name]
    with np.errstate(all="ignore"):
        expected = f(x)
    np.testing.assert_allclose(gradc.jit(f, target=target)(x), expected, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("f, x", [
    (lambda x: st.genextreme.logpdf(x, 1e-9), np.array([-1.0, 0.5, 2.0])),  # beside the Gumbel limit
    (lambda x: st.truncnorm(-1.0, 2.0, loc=0.5, scale=2.0).logpdf(x), np.array([-1.0, 0.5, 2.0])),
    (lambda x: st.gumbel_r(0.5, 2.0).logcdf(x) + st.gumbel_l(scale=3.0).logsf(x), np.array([-1.0, 0.5, 2.0])),
])
def test_frozen_and_near_limits(f, x):
    np.testing.assert_allclose(gradc.jit(f)(x), f(x), rtol=1e-7)


@pytest.mark.parametrize("f", [
    lambda p: np.sum(st.genextreme.logpdf(np.array([-0.5, 0.7, 1.4]), p[0], p[1], p[2])),
    lambda p: np.sum(st.truncnorm.logcdf(np.array([0.3, 0.4, 1.1]), p[0], p[1] + 2.0, scale=p[2])),  # inside
    lambda p: np.sum(st.skewnorm.logpdf(np.array([-0.5, 0.7, 1.4]), p[0], p[1], p[2])),
    lambda p: np.sum(st.vonmises.logpdf(np.array([-0.5, 0.7, 1.4]), p[0] + 1.0, p[1], p[2])),
    lambda p: np.sum(st.loggamma.logpdf(np.array([-0.5, 0.7, 1.4]), p[0] + 1.0, p[1], p[2])),  # logsf: once in c
])
def test_gradient_and_hessian_in_every_parameter(f):
    p = np.array([0.2, 0.1, 1.3])
    assert np.isfinite(f(p)), "a point outside the support would compare NaN with NaN"
    np.testing.assert_allclose(gradc.grad(f)(p), fd_grad(f, p), rtol=1e-6, atol=1e-8)
    g = gradc.grad(f)
    hessian = np.array([fd_grad(lambda q, i=i: g(q)[i], p) for i in range(3)])
    np.testing.assert_allclose(gradc.hessian(f)(p), hessian, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name,method", [("vonmises", "cdf"), ("vonmises", "sf"), ("vonmises", "ppf"),
                                         ("skewnorm", "ppf"), ("skewnorm", "isf")])
def test_missing_methods_are_refused_by_name(name, method):
    with pytest.raises(GradcError, match=f"scipy.stats.{name}.{method} is not supported"):
        gradc.jit(lambda x: getattr(getattr(st, name), method)(x, 1.5))(np.array([0.3]))


GUMBEL, VONMISES, TRUNCATED = st.gumbel_r(0.5, 2.0), st.vonmises(1.5, loc=0.2), st.truncnorm(-1.0, 2.0)


def test_frozen_outside_the_traced_function():
    def f(x):
        return np.sum(GUMBEL.logpdf(x) + VONMISES.logpdf(x) + TRUNCATED.logcdf(x))

    x = np.array([0.1, 0.5, 1.2])
    np.testing.assert_allclose(gradc.jit(f)(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(f)(x), fd_grad(f, x), rtol=1e-6)


@pytest.mark.parametrize("method", ["logpdf", "cdf", "ppf"])
def test_genextreme_derivative_in_c_through_zero(method):
    x = np.array([0.3]) if method == "ppf" else np.array([-0.7, 0.4, 1.8])
    f = lambda c: np.sum(getattr(st.genextreme, method)(x, c, 0.1, 1.3))  # noqa: E731
    for c in (0.0, 5e-8, -5e-8, 1e-3, -0.2):
        np.testing.assert_allclose(gradc.jit(f)(c), f(c), rtol=1e-12)
        np.testing.assert_allclose(gradc.grad(f)(c), fd_grad(f, np.float64(c), h=1e-5), rtol=1e-6, atol=1e-9)
