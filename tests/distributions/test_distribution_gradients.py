"""Gradients of every (distribution, method) pair in every traced argument (x, shape parameters, loc, scale)
against central differences of SciPy's own function, on the NumPy and C targets; zero and finite gradients
beyond the support where SciPy's value is finite there."""
from __future__ import annotations

import distribution_cases as cases
import numpy as np
import pytest
import scipy.stats

import gradc
from gradc.backends.c import build as c_build


def _check(name, method, target):
    x = cases.smooth_points(name, method)
    args = cases.arguments(name, x)
    wrt = cases.differentiated(name, method, len(args))
    fn = cases.method_function(name, method, weighted=True)
    if target == "c":
        try:
            grad = gradc.compile(fn, *args, argnums=wrt, target="c").grad
        except gradc.GradcError as e:
            missing = str(e).split("no C lowering for op")[-1].split(" in ")[0].lstrip("s ").split(", ")
            assert "no C lowering" in str(e) and set(missing) <= cases.PENDING_C, str(e)
            pytest.xfail(f"C lowering of {', '.join(missing)} pending")
    else:
        grad = gradc.grad(fn, argnums=wrt)
    got = grad(*args)
    got = got if isinstance(got, tuple) else (got,)
    for g, i in zip(got, wrt):
        expected = cases.central_differences(fn, args, i)
        np.testing.assert_allclose(g, expected, rtol=2e-6, atol=1e-7, err_msg=f"{name}.{method} argument {i}")


@pytest.mark.parametrize("name, method", cases.PAIRS, ids=[f"{n}.{m}" for n, m in cases.PAIRS])
def test_gradient_matches_central_differences(name, method):
    _check(name, method, "numpy")


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")
@pytest.mark.parametrize("name, method", cases.PAIRS, ids=[f"{n}.{m}" for n, m in cases.PAIRS])
def test_c_gradient_matches_central_differences(name, method):
    _check(name, method, "c")


@pytest.mark.parametrize("name, method, x, expected", [
    ("expon", "cdf", -1.0, 0.0), ("expon", "sf", -1.0, 1.0), ("expon", "logsf", -2.0, 0.0),
    ("gamma", "cdf", -0.5, 0.0), ("beta", "cdf", 1.5, 1.0), ("beta", "sf", -0.5, 1.0),
    ("uniform", "cdf", 2.0, 1.0), ("uniform", "cdf", -1.0, 0.0), ("pareto", "sf", 0.5, 1.0),
    ("lognorm", "logsf", -1.0, 0.0), ("weibull_min", "cdf", -1.0, 0.0), ("halfnorm", "pdf", -1.0, 0.0),
    ("invgamma", "cdf", -1.0, 0.0), ("t", "pdf", 1e200, 0.0),
])
def test_outside_the_support_value_is_scipys_and_gradient_finite(name, method, x, expected):
    shapes = cases.SHAPES.get(name, ())

    def f(v, loc, scale):
        return getattr(getattr(scipy.stats, name), method)(v, *shapes, loc=loc, scale=scale)

    with np.errstate(over="ignore"):  # t far out: z * z overflows to inf in SciPy's formula and gradc's alike
        assert f(x, 0.0, 1.0) == expected
        value, grads = gradc.compile(f, x, 0.0, 1.0, argnums=(0, 1, 2)).value_and_grad(x, 0.0, 1.0)
    assert value == expected
    assert all(np.isfinite(g) and g == 0.0 for g in grads), grads


def test_discrete_pmf_off_the_whole_numbers_is_zero_with_a_finite_gradient():
    def f(mu):
        return np.sum(scipy.stats.poisson.pmf(np.array([-1.0, 1.5, 2.0]), mu))

    value, grad = gradc.compile(f, 2.5).value_and_grad(2.5)
    assert value == f(2.5)
    expected = (f(2.5 + 1e-6) - f(2.5 - 1e-6)) / 2e-6
    assert np.isfinite(grad) and abs(grad - expected) < 1e-8


def test_second_shape_derivative_of_the_incomplete_functions_is_refused_at_the_users_line():
    def f(x, a):
        return np.sum(scipy.stats.gamma.cdf(x, a))

    x = np.array([0.5, 1.5])
    assert np.allclose(gradc.grad(f)(x, 2.0), scipy.stats.gamma.pdf(x, 2.0))  # in x: fine with a traced
    expected = (f(x, 2.0 + 1e-6) - f(x, 2.0 - 1e-6)) / 2e-6  # the first derivative in a: fine
    assert abs(gradc.grad(f, argnums=1)(x, 2.0) - expected) < 1e-8
    with pytest.raises(gradc.GradcError,
                       match=r"scipy\.stats\.gamma\.cdf: the second derivative in a .*gradients\.py:\d+"):
        gradc.grad(gradc.grad(f, argnums=1), argnums=1)(x, 2.0)

    def g(x, b):
        return np.sum(scipy.stats.beta.sf(x, 2.0, b))

    with pytest.raises(gradc.GradcError, match=r"scipy\.stats\.beta\.sf: the second derivative in b is not"):
        gradc.grad(gradc.grad(g, argnums=1), argnums=1)(np.array([0.3, 0.6]), 2.5)


def test_second_derivative_of_norm_logpdf_in_scale():
    def f(x, s):
        return np.sum(scipy.stats.norm.logpdf(x, 0.2, s))

    x = np.array([-1.0, 0.5, 2.0])
    second = gradc.grad(lambda s: gradc.grad(f, argnums=1)(x, s))(1.3)
    h = 1e-4
    expected = (f(x, 1.3 + h) - 2 * f(x, 1.3) + f(x, 1.3 - h)) / h ** 2
    assert abs(second - expected) < 1e-5 * abs(expected)


def test_forward_mode_agrees_with_reverse_mode():
    def f(x, mu, s):
        return (scipy.stats.norm.logcdf(x, mu, s) + scipy.stats.gamma.logpdf(x * x, 2.5, scale=s)
                + scipy.stats.t.logsf(x, 4.0, mu, s) + scipy.stats.logistic.logsf(x, mu))

    x, mu, s = np.array([-1.5, 0.3, 2.0]), 0.2, 1.4
    tangents = (np.array([0.3, -0.2, 0.5]), 0.7, -0.4)
    _, tangent_out = gradc.jvp(f, (x, mu, s), tangents)
    grads = gradc.grad(lambda x, mu, s: np.sum(f(x, mu, s) * np.array([1.0, 2.0, 3.0])), argnums=(0, 1, 2))(x, mu, s)
    reverse = sum(np.sum(g * t) for g, t in zip(grads, tangents))
    np.testing.assert_allclose(np.sum(tangent_out * np.array([1.0, 2.0, 3.0])), reverse, rtol=1e-12)
    h = 1e-6
    up = f(x + h * tangents[0], mu + h * tangents[1], s + h * tangents[2])
    down = f(x - h * tangents[0], mu - h * tangents[1], s - h * tangents[2])
    np.testing.assert_allclose(tangent_out, (up - down) / (2 * h), rtol=1e-6)
