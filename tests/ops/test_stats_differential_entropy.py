"""``scipy.stats.differential_entropy`` on both targets: every method (and "auto" on both sides of its size
thresholds), axis, window_length and base against SciPy on seeded data; gradients against central differences;
invalid window lengths, methods and bases refused at the user's line."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats
from finite_differences import central_gradient

import gradc
from gradc.errors import GradcError

METHODS = ["auto", "vasicek", "van es", "ebrahimi", "correa"]


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", [5, 10, 11, 40])
def test_values_against_scipy(target, method, n):
    x = np.random.default_rng(n).standard_normal((n, 3)) * 2.0 + 1.0
    got = gradc.jit(lambda x: scipy.stats.differential_entropy(x, method=method), target=target)(x)
    np.testing.assert_allclose(got, scipy.stats.differential_entropy(x, method=method), rtol=1e-12)
    other = gradc.jit(lambda x: scipy.stats.differential_entropy(x.T, method=method, axis=1, base=2.0,
                                                                 window_length=2), target=target)(x)
    expected = scipy.stats.differential_entropy(x.T, method=method, axis=1, base=2.0, window_length=2)
    np.testing.assert_allclose(other, expected, rtol=1e-12)


@pytest.mark.parametrize("method", METHODS)
def test_gradient_against_central_differences(method):
    x = np.random.default_rng(3).standard_normal(14)
    f = lambda x: scipy.stats.differential_entropy(x, method=method)  # noqa: E731
    np.testing.assert_allclose(gradc.grad(f)(x), central_gradient(f, x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kwargs,message", [
    ({"window_length": 3}, "window length 3 must be positive and less than half the sample size 6"),
    ({"method": "nearest"}, "unknown method='nearest'"),
    ({"base": -2.0}, "base=-2.0 must be positive"),
    ({"keepdims": True}, "keepdims=True is not supported"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(GradcError, match=message) as info:
        gradc.jit(lambda x: scipy.stats.differential_entropy(x, **kwargs))(np.arange(6.0))
    assert "test_stats_differential_entropy.py" in str(info.value)
