"""np.histogram / np.histogram_bin_edges with an estimator's name for bins (gradc/trace/interval_dispatch.py).

'sqrt', 'sturges', 'rice' (a count from the number of values alone) against NumPy's counts and edges on seeded
random data of many sizes and both dtypes, on both targets; the run-time check where NumPy's count for the values
differs (constant data, integer data); the estimators that need the values' spread refused with the fix; the
edges' and densities' derivatives against central differences of the user's function run by NumPy."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build

TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(c_build.find_compiler() is None,
                                                                  reason="no C compiler"))]
ESTIMATORS = ["sqrt", "sturges", "rice"]


def _run(fn, a, target):
    return gradc.jit(fn, target=target)(a)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ESTIMATORS)
@pytest.mark.parametrize("n", [1, 2, 7, 8, 50, 64, 1000])
def test_counts_and_edges_equal_numpys(name, n, target):
    a = np.random.default_rng(n).standard_normal(n) * 3.0 + 1.0
    hist, edges = _run(lambda x: np.histogram(x, bins=name), a, target)
    want_hist, want_edges = np.histogram(a, bins=name)
    np.testing.assert_array_equal(hist, want_hist)
    np.testing.assert_allclose(edges, want_edges, rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(_run(lambda x: np.histogram_bin_edges(x, name), a, target), want_edges, rtol=1e-15)


@pytest.mark.parametrize("seed", range(8))
def test_random_data_sizes_and_dtypes(seed):
    """A seeded generator: random size, estimator, distribution and dtype (integers spread wide enough)."""
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(1, 300))
    name = ESTIMATORS[seed % 3]
    if seed % 2:
        a = rng.integers(-10 * n, 10 * n, size=n)
    else:
        a = rng.exponential(2.0, size=(n // 3 + 1, 3)).astype(np.float32 if seed % 4 == 0 else np.float64)
    hist, edges = gradc.jit(lambda x: np.histogram(x, bins=name))(a)
    want_hist, want_edges = np.histogram(a, bins=name)
    np.testing.assert_array_equal(hist, want_hist)
    np.testing.assert_allclose(edges, want_edges, rtol=1e-6 if a.dtype == np.float32 else 1e-15)


@pytest.mark.parametrize("target", TARGETS)
def test_a_different_count_for_the_values_raises_at_run_time(target):
    compiled = gradc.jit(lambda x: np.histogram(x, bins="sturges")[0], target=target)
    np.testing.assert_array_equal(compiled(np.arange(50.0)), np.histogram(np.arange(50.0), "sturges")[0])
    with pytest.raises(ValueError, match="number of bins for these values differs from the 7"):
        compiled(np.full(50, 2.0))  # constant data: NumPy makes one bin
    small = np.arange(1000) % 4  # integers spread 3 < sqrt(1000) bins: NumPy widens the bins to 1
    with pytest.raises(ValueError, match="differs from the 32"):
        gradc.jit(lambda x: np.histogram(x, bins="sqrt")[0], target=target)(small)


def test_derivatives_of_edges_and_density():
    a = np.random.default_rng(3).standard_normal(40)

    ramp = np.arange(1.0, 1.0 + len(np.histogram_bin_edges(a, "rice")))

    def edges(x):
        return np.sum(np.histogram_bin_edges(x, "rice") * ramp)

    def density(x):
        return np.sum(np.histogram(x, bins="sturges", density=True)[0] * ramp[:-1] ** 2)
    for fn in (edges, density):
        np.testing.assert_allclose(gradc.grad(fn)(a), central_gradient(fn, a), rtol=1e-6, atol=1e-8)
    assert np.count_nonzero(gradc.grad(edges)(a)) == 2  # the minimum and the maximum only


@pytest.mark.parametrize("call, message", [
    (lambda x: np.histogram(x, bins="auto"), "bins='auto' is not supported by gradc"),
    (lambda x: np.histogram_bin_edges(x, "fd"), "histogram_bin_edges(data, 'fd')"),
    (lambda x: np.histogram(x, bins="scott"), "spread of the values"),
    (lambda x: np.histogram(x, bins="doane"), "spread of the values"),
    (lambda x: np.histogram(x, bins="stone"), "spread of the values"),
    (lambda x: np.histogram(x, bins="median"), "'median' is not a valid estimator"),
    (lambda x: np.histogram(x, bins="sqrt", weights=x), "not supported for weighted data"),
    (lambda x: np.histogram(x, bins="rice", range=(0.0, 1.0)), "how many values fall in the range"),
])
def test_refusals_name_the_fix_and_the_users_line(call, message):
    with pytest.raises(gradc.TraceError, match=message.replace("(", r"\(").replace(")", r"\)")) as info:
        gradc.jit(call)(np.linspace(0.0, 1.0, 20))
    assert "test_histogram_estimators.py" in str(info.value)
