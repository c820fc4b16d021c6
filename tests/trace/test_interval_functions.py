"""np.digitize, np.histogram, np.piecewise: NumPy's values on generated inputs (edges hit exactly included),
derivatives against central differences, both targets."""
import numpy as np
import pytest

import gradc


def central(fun, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (fun(x + e) - fun(x - e)) / (2 * eps)
    return g


def data(seed, n=40):
    rng = np.random.default_rng(seed)
    a = np.round(rng.normal(size=n), 1)  # rounded: many values on bin edges and ties
    a[0], a[1] = a.min() - 0.0, a.max()
    return a, rng.uniform(0.5, 2.0, size=n)


HISTOGRAMS = [
    ("bins10", lambda a, w: np.histogram(a)),
    ("bins7", lambda a, w: np.histogram(a, bins=7)),
    ("range", lambda a, w: np.histogram(a, bins=5, range=(-1.0, 1.0))),
    ("edges", lambda a, w: np.histogram(a, bins=np.array([-2.0, -0.5, 0.0, 0.3, 1.0, 2.5]))),
    ("weights", lambda a, w: np.histogram(a, bins=6, weights=w)),
    ("density", lambda a, w: np.histogram(a, bins=4, density=True)),
    ("weights_density", lambda a, w: np.histogram(a, bins=[-3.0, -1.0, 0.0, 0.5, 3.0], weights=w, density=True)),
]


@pytest.mark.parametrize("name, fn", HISTOGRAMS, ids=[h[0] for h in HISTOGRAMS])
@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("target", ["numpy", "c"])
def test_histogram_matches_numpy(name, fn, seed, target):
    a, w = data(seed)
    want = fn(a, w)
    got = gradc.compile(fn, a, w, mode="jvp", target=target).forward(a, w)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert np.asarray(got[0]).dtype == want[0].dtype
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12)


def test_histogram_derivatives_in_weights_and_in_the_edges():
    a, w = data(3)
    c = np.random.default_rng(0).normal(size=6)

    def weighted(w):
        return np.sum(np.histogram(a, bins=6, weights=w)[0] * c)
    np.testing.assert_allclose(gradc.grad(weighted)(w), central(weighted, w), rtol=1e-7)

    def edges(a):
        return np.sum(np.histogram(a, bins=5)[1] * np.arange(6.0))
    np.testing.assert_allclose(gradc.grad(edges)(a), central(edges, a), rtol=1e-6, atol=1e-9)


def test_histogram_with_estimated_bin_count_is_refused():
    with pytest.raises(gradc.TraceError) as info:
        gradc.compile(lambda a: np.histogram(a, bins="auto")[1].sum(), np.ones(4))
    assert "bins='auto'" in str(info.value)


@pytest.mark.parametrize("bins", [np.array([-1.0, 0.0, 0.5, 2.0]), np.array([2.0, 0.5, 0.0, -1.0])])
@pytest.mark.parametrize("right", [False, True])
def test_digitize_matches_numpy(bins, right):
    a = np.array([-3.0, -1.0, 0.0, 0.2, 0.5, 1.9, 2.0, 5.0])
    def fn(x):
        return (np.digitize(x, bins, right=right))
    np.testing.assert_array_equal(gradc.compile(fn, a, mode="jvp").forward(a), fn(a))
    def traced_bins(x, b):
        return (np.digitize(x, b, right=right))
    np.testing.assert_array_equal(gradc.compile(traced_bins, a, bins, mode="jvp").forward(a, bins),
                                  traced_bins(a, bins))


PIECEWISE = [
    ("two", lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v ** 2])),
    ("sqrt", lambda x: np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, np.sqrt])),
    ("otherwise", lambda x: np.piecewise(x, [x < -0.5, x > 0.5], [lambda v: np.sin(v), 2.0, lambda v: v * 3])),
    ("overlap", lambda x: np.piecewise(x, [x < 1.0, x < 0.0], [lambda v: v, lambda v: np.exp(v)])),
    ("log", lambda x: np.piecewise(x, [x > 0], [np.log, lambda v: v - 1.0])),
]


@pytest.mark.parametrize("name, fn", PIECEWISE, ids=[p[0] for p in PIECEWISE])
@pytest.mark.parametrize("seed", range(3))
def test_piecewise_values_and_gradients(name, fn, seed):
    x = np.random.default_rng(seed).uniform(-2, 2, size=9)
    x = x[np.abs(x) > 0.01]  # away from the kinks, where the derivative is defined
    x = x[(np.abs(x - 0.5) > 0.01) & (np.abs(x + 0.5) > 0.01) & (np.abs(x - 1.0) > 0.01)]
    with np.errstate(invalid="ignore", divide="ignore"):
        want = fn(x)
    for target in ("numpy", "c"):
        np.testing.assert_allclose(gradc.compile(fn, x, mode="jvp", target=target).forward(x), want, rtol=1e-12)
    grad = gradc.grad(lambda x: np.sum(fn(x)))(x)
    assert np.all(np.isfinite(grad))
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_allclose(grad, central(lambda x: np.sum(fn(x)), x), rtol=1e-6, atol=1e-8)


def test_piecewise_keeps_an_integer_dtype():
    x = np.arange(-3, 4)
    def fn(x):
        return (np.piecewise(x, [x < 0], [lambda v: -v * 2, lambda v: v]))
    got = gradc.compile(lambda x, s: (fn(x), s * 1.0), x, 1.0, mode="jvp", wrt="s").forward(x, 1.0)[0]
    np.testing.assert_array_equal(got, fn(x))
    assert got.dtype == fn(x).dtype
