"""``scipy.stats.expectile`` on both targets: values against SciPy on seeded data (weights, ties, a single value,
alpha at 0 and 1), gradients in the data, the weights and alpha against central differences, the refusal of an
alpha outside [0, 1]."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from finite_differences import central_gradient

import gradc
from gradc.errors import GradcError

CASES = [(n, alpha) for n in (1, 2, 7, 40) for alpha in (0.0, 0.1, 0.5, 0.77, 1.0)]
TIES = [[1.0, 1.0, 1.0], [0.0, 1.0, 1.0, 2.0], [0.1, 0.2, 0.3, 0.3, 0.3, 0.7], [3.0]]


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("n,alpha", CASES)
def test_values_against_scipy(target, n, alpha):
    rng = np.random.default_rng(n * 100 + int(alpha * 100))
    a, w = rng.standard_normal(n) * 3.0, rng.uniform(0.2, 2.0, n)
    got = gradc.jit(lambda a, w: scipy.stats.expectile(a, alpha, weights=w), target=target)(a, w)
    expected = scipy.stats.expectile(a, alpha, weights=w)  # SciPy's root finder: good to about 1e-12
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    plain = gradc.jit(lambda a: scipy.stats.expectile(a, alpha), target=target)(a.reshape(1, -1))
    np.testing.assert_allclose(plain, scipy.stats.expectile(a, alpha), rtol=1e-9, atol=1e-12)


def test_weights_broadcast_against_two_dimensional_data():
    a, w = np.array([[0.3, -1.2, 2.0], [0.5, 0.1, -0.4]]), np.array([1.0, 2.0, 0.5])
    got = gradc.jit(lambda a, w: scipy.stats.expectile(a, 0.3, weights=w))(a, w)
    np.testing.assert_allclose(got, scipy.stats.expectile(a, 0.3, weights=w), rtol=1e-9)


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("data", TIES, ids=str)
def test_ties(target, data):
    a = np.array(data)
    for alpha in (0.0, 0.2, 0.5, 0.9, 1.0):
        got = gradc.jit(lambda a, alpha=alpha: scipy.stats.expectile(a, alpha), target=target)(a)
        np.testing.assert_allclose(got, scipy.stats.expectile(a, alpha), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.8])
def test_gradients_against_central_differences(alpha):
    rng = np.random.default_rng(11)
    a, w = rng.standard_normal(9), rng.uniform(0.5, 2.0, 9)
    f = lambda a, w, alpha: scipy.stats.expectile(a, alpha, weights=w)  # noqa: E731
    ga, gw, g_alpha = gradc.grad(f, argnums=(0, 1, 2))(a, w, alpha)
    np.testing.assert_allclose(ga, central_gradient(lambda t: f(t, w, alpha), a), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gw, central_gradient(lambda t: f(a, t, alpha), w), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(g_alpha, central_gradient(lambda t: f(a, w, t), alpha), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(np.sum(ga), 1.0, rtol=1e-12)  # shifting all data shifts the expectile


def test_alpha_outside_the_unit_interval_is_refused():
    with pytest.raises(GradcError, match=r"scipy.stats.expectile: alpha=1.5 is outside \[0, 1\]") as info:
        gradc.jit(lambda a: scipy.stats.expectile(a, 1.5))(np.ones(3))
    assert "test_stats_expectile.py" in str(info.value)
