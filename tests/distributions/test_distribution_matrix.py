"""``scipy.stats.multinomial``, ``wishart`` and ``invwishart`` on traced values: values against SciPy (plain,
frozen inside and outside the function, batches of samples), gradients against central differences in every
argument, the C target, and the refusals."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats as st
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError

PRIOR = st.wishart(6.0, np.diag([1.0, 2.0, 0.5]))  # frozen outside the traced functions


def _spd(rng, d, shift=1.0):
    a = rng.standard_normal((d, d))
    return a @ a.T + shift * np.eye(d)


def _samples(rng, d, n):
    return np.stack([_spd(rng, d) for _ in range(n)], axis=-1)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("target", ["numpy", "c"])
def test_multinomial_against_scipy(seed, target):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(4))
    x = np.array([[1.0, 2.0, 0.0, 3.0], [6.0, 0.0, 0.0, 0.0], [1.0, 2.0, 2.0, 0.0], [1.5, 1.5, 1.0, 2.0],
                  [-1.0, 3.0, 2.0, 2.0]])  # whole counts summing to 6, a wrong sum, fractions, a negative
    f = lambda p: st.multinomial.logpmf(x, 6, p)  # noqa: E731
    np.testing.assert_allclose(gradc.jit(f, target=target)(p), f(p), rtol=1e-12)
    g = lambda p: st.multinomial(6, p).pmf(x[0])  # noqa: E731
    np.testing.assert_allclose(gradc.jit(g, target=target)(p), g(p), rtol=1e-12)
    loss = lambda p: np.sum(st.multinomial.logpmf(x[:1], 6, p))  # noqa: E731
    np.testing.assert_allclose(gradc.grad(loss)(p), fd_grad(loss, p), rtol=1e-6, atol=1e-8)
    assert gradc.grad(loss)(p)[-1] == 0.0  # SciPy reads p[-1] as 1 - sum(p[:-1])


def test_multinomial_invalid_probabilities_are_nan():
    p = np.array([0.2, -0.1, 0.9])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = st.multinomial.logpmf([1.0, 1.0, 1.0], 3, p)
    assert np.isnan(expected) and np.isnan(gradc.jit(lambda p: st.multinomial.logpmf([1.0, 1.0, 1.0], 3, p))(p))


@pytest.mark.parametrize("name", ["wishart", "invwishart"])
@pytest.mark.parametrize("target", ["numpy", "c"])
def test_wishart_values_and_gradients(name, target):
    rng = np.random.default_rng(4)
    dist = getattr(st, name)
    x, scale = _samples(rng, 3, 4), _spd(rng, 3)
    f = lambda x, df, scale: dist.logpdf(x, df, scale)  # noqa: E731
    np.testing.assert_allclose(gradc.jit(f, target=target)(x, 5.5, scale), f(x, 5.5, scale), rtol=1e-10)
    one = x[..., 0]
    np.testing.assert_allclose(gradc.jit(lambda m: dist(7.0, scale).pdf(m), target=target)(one),
                               dist(7.0, scale).pdf(one), rtol=1e-10)
    for i, arg in enumerate((one, 5.5, scale)):
        def loss(v, i=i):
            args = [one, 5.5, scale]
            args[i] = (v + np.swapaxes(v, -1, -2)) / 2 if np.ndim(v) == 2 else v  # symmetric perturbations
            return dist.logpdf(*args)
        grad = gradc.jit(gradc.grad(loss), target=target)(arg)
        # gradc's gradient in a matrix reads its lower triangle (Cholesky): compare the symmetric directions
        if np.ndim(arg) == 2:
            grad = (grad + grad.T) / 2
        np.testing.assert_allclose(grad, fd_grad(loss, arg), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("scale", [2.5, np.array([[2.5]])])
def test_wishart_one_dimensional_and_frozen_outside(scale):
    x = np.array([0.7, 1.9, 3.3])
    f = lambda x: st.wishart.logpdf(x, 3.0, scale)  # noqa: E731
    np.testing.assert_allclose(gradc.jit(f)(x), f(x), rtol=1e-12)
    m = _spd(np.random.default_rng(1), 3)
    np.testing.assert_allclose(gradc.jit(lambda m: PRIOR.logpdf(m))(m), PRIOR.logpdf(m), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(st.invwishart.logpdf, argnums=1)(m, 5.0, np.eye(3)),
                               fd_grad(lambda df: st.invwishart.logpdf(m, df, np.eye(3)), np.float64(5.0)), rtol=1e-6)


@pytest.mark.parametrize("call, match", [
    (lambda m: st.wishart.logpdf(m, 1.0, np.eye(3)), r"df=1.0 must be greater"),
    (lambda m: st.wishart.logpdf(m[:2], 5.0, np.eye(3)), r"x must be a \(3, 3\) matrix"),
    (lambda m: st.wishart.logpdf(m, 5.0), r"wishart.logpdf is missing scale"),
    (lambda m: st.invwishart.rvs(5.0, m), r"invwishart.rvs is not supported"),
    (lambda m: st.multinomial.logpmf(m[0], 3, m[1, :2]), r"x has \(3,\) entries .* p has 2"),
])
def test_refusals(call, match):
    with pytest.raises(GradcError, match=match) as info:
        gradc.jit(call)(np.eye(3) + 0.1)
    assert "test_distribution_matrix.py" in str(info.value)
