"""scipy.spatial.distance on traced values (gradc/trace/spatial_dispatch.py): cdist, pdist, squareform and the pair
functions, every metric with and without weights, against SciPy's values and central differences of the user's
own function run by SciPy, on both targets; seeded random generators of point sets; coincident points (zero
gradient, no NaN); bad input with clear errors."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.spatial.distance as ssd
from finite_differences import central_gradient
from scipy.spatial.distance import cdist, pdist, squareform

import gradc
from gradc.backends.c import build as c_build

HAS_C = c_build.find_compiler() is not None
TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(not HAS_C, reason="no C compiler"))]

METRICS = [("euclidean", {}), ("sqeuclidean", {}), ("cityblock", {}), ("chebyshev", {}), ("minkowski", {"p": 3}),
           ("minkowski", {"p": 1.5}), ("minkowski", {"p": np.inf}), ("cosine", {}), ("correlation", {}),
           ("braycurtis", {}), ("canberra", {}), ("seuclidean", {}), ("mahalanobis", {}), ("jensenshannon", {})]
WEIGHTED = ["euclidean", "sqeuclidean", "cityblock", "minkowski", "cosine", "correlation", "braycurtis", "canberra"]


def points(seed, m, k, positive=False):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((m, k))
    return np.abs(x) + 0.1 if positive else x


def _inputs(metric, seed, m=4, n=5, k=3):
    positive = metric in ("jensenshannon", "braycurtis")
    k = max(k, 6) if metric == "mahalanobis" else k  # (a covariance of full rank: more points than coordinates)
    return points(seed, m + (4 if metric == "mahalanobis" else 0), k, positive), points(seed + 1, n, k, positive)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("metric,kw", METRICS, ids=[f"{m}{kw.get('p', '')}" for m, kw in METRICS])
def test_cdist_and_pdist_values_and_gradients(metric, kw, target):
    a, b = _inputs(metric, 3)
    weights = np.random.default_rng(0).uniform(0.5, 2.0, size=(a.shape[0], b.shape[0]))

    def loss(x, y):
        return np.sum(cdist(x, y, metric, **kw) * weights) + np.sum(pdist(x, metric, **kw) ** 2)

    compiled = gradc.compile(loss, a, b, wrt=("x", "y"), target=target)
    value, grads = compiled.value_and_grad(a, b)
    np.testing.assert_allclose(value, loss(a, b), rtol=1e-12)
    h = 1e-4 if metric == "mahalanobis" else 1e-6  # (an inverse covariance of the points: rounding grows)
    np.testing.assert_allclose(grads[0], central_gradient(lambda x: loss(x, b), a, h), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grads[1], central_gradient(lambda y: loss(a, y), b, h), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("metric", WEIGHTED)
def test_weighted_metrics(metric):
    a, b = points(5, 3, 4), points(6, 2, 4)
    w = np.array([0.5, 1.0, 2.0, 0.25])
    kw = {"p": 3} if metric == "minkowski" else {}

    def f(x, y):
        return cdist(x, y, metric, w=w, **kw)
    np.testing.assert_allclose(gradc.jit(f)(a, b), f(a, b), rtol=1e-12)
    np.testing.assert_allclose(gradc.jit(lambda x: pdist(x, metric, w=w, **kw))(a), pdist(a, metric, w=w, **kw),
                               rtol=1e-12)
    grad = gradc.grad(lambda x, y: np.sum(f(x, y) ** 2), wrt=("x", "y"))(a, b)
    np.testing.assert_allclose(grad[0], central_gradient(lambda x: np.sum(f(x, b) ** 2), a), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("seed", range(6))
def test_random_point_sets_and_metrics(seed):
    """A seeded generator: random sizes, metric and dtype; value against SciPy, gradient against differences."""
    rng = np.random.default_rng(100 + seed)
    m, n, k = (int(v) for v in rng.integers(1, 6, size=3))
    metric, kw = METRICS[int(rng.integers(len(METRICS)))]
    if metric in ("seuclidean", "mahalanobis") and m + n <= k + 1:
        m = n = k + 1
    a, b = _inputs(metric, seed, m, n, k)
    dtype = np.float32 if seed % 3 == 0 else np.float64
    a, b = a.astype(dtype), b.astype(dtype)

    def f(x, y):
        return cdist(x, y, metric, **kw)
    value = gradc.jit(f)(a, b)
    assert value.dtype == np.float64 and value.shape == (a.shape[0], b.shape[0])
    np.testing.assert_allclose(value, f(a, b), rtol=1e-10, atol=1e-12)
    if dtype == np.float64:
        g = gradc.grad(lambda x, y: np.sum(np.sin(f(x, y))))(a, b)
        np.testing.assert_allclose(g, central_gradient(lambda x: np.sum(np.sin(f(x, b))), a), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_squareform_round_trip_and_gradient(target):
    x = points(7, 5, 2)

    def loss(x):
        d = squareform(pdist(x))
        back = squareform(d * np.arange(25.0).reshape(5, 5), checks=False)
        return np.sum(d @ d) + np.sum(back)
    compiled = gradc.compile(loss, x, target=target)
    value, grad = compiled.value_and_grad(x)
    np.testing.assert_allclose(value, loss(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(loss, x), rtol=1e-5, atol=1e-6)
    v = np.arange(1.0, 7.0)
    np.testing.assert_array_equal(gradc.jit(lambda v: squareform(v))(v), squareform(v))
    np.testing.assert_array_equal(gradc.jit(lambda v: squareform(v, force="tomatrix"))(v), squareform(v))
    np.testing.assert_array_equal(gradc.jit(lambda v: squareform(v[:0]))(v), squareform(v[:0]))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("metric,kw", [("euclidean", {}), ("minkowski", {"p": 3}), ("minkowski", {"p": 0.5}),
                                       ("cityblock", {}), ("seuclidean", {"V": np.array([1.0, 2.0])})])
def test_coincident_points_have_a_zero_gradient(metric, kw, target):
    """Rows 0 and 1 coincide: their distance has no derivative (zero is the choice); moving both together, and
    moving row 2, are smooth and match central differences."""
    x = np.array([[1.0, 2.0], [1.0, 2.0], [0.0, -1.0]])

    def loss(x):
        return np.sum(cdist(x, x, metric, **kw)) + np.sum(pdist(x, metric, **kw))
    g = gradc.compile(loss, x, target=target).grad(x)
    assert np.all(np.isfinite(g)), g
    together = central_gradient(lambda s: loss(np.stack([x[0] + s, x[1] + s, x[2]])), np.zeros(2))
    np.testing.assert_allclose(g[0] + g[1], together, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(g[2], central_gradient(lambda r: loss(np.stack([x[0], x[1], r])), x[2]),
                               rtol=1e-6, atol=1e-6)


_W = np.array([1.0, 0.5, 2.0, 1.5])
PAIR_CASES = [(ssd.euclidean, {}), (ssd.sqeuclidean, {"w": _W}), (ssd.cityblock, {}), (ssd.chebyshev, {}),
              (ssd.minkowski, {"p": 3, "w": _W}), (ssd.cosine, {}), (ssd.correlation, {"centered": False}),
              (ssd.correlation, {"w": _W}), (ssd.braycurtis, {}), (ssd.canberra, {"w": _W}),
              (ssd.seuclidean, {"V": np.array([1.0, 2.0, 0.5, 1.0])}), (ssd.mahalanobis, {"VI": np.eye(4) + 0.1})]


@pytest.mark.parametrize("fn,kw", PAIR_CASES, ids=[f"{fn.__name__}-{sorted(kw)}" for fn, kw in PAIR_CASES])
def test_pair_functions(fn, kw):
    u, v = points(8, 2, 4)
    value = gradc.jit(lambda u, v: fn(u, v, **kw))(u, v)
    np.testing.assert_allclose(value, fn(u, v, **kw), rtol=1e-12)
    g = gradc.grad(lambda u: fn(u, v, **kw))(u)
    np.testing.assert_allclose(g, central_gradient(lambda s: fn(s, v, **kw), u), rtol=1e-5, atol=1e-7)


def test_jensenshannon_and_hamming():
    u, v = points(8, 2, 4)
    p, q = np.abs(u) + 0.1, np.abs(v) + 0.2
    np.testing.assert_allclose(gradc.jit(lambda p: ssd.jensenshannon(p, q, base=2))(p), ssd.jensenshannon(p, q, 2))
    g = gradc.grad(lambda p: ssd.jensenshannon(p, q))(p)
    np.testing.assert_allclose(g, central_gradient(lambda s: ssd.jensenshannon(s, q), p), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(gradc.jit(lambda u, v: ssd.hamming(u, v))(u, np.round(u)),
                               ssd.hamming(u, np.round(u)))


def test_callable_metric():
    a, b = points(9, 3, 2), points(10, 2, 2)

    def metric(u, v):
        return np.sum((u - v) ** 4) ** 0.25

    def f(x):
        return np.sum(cdist(x, b, metric)) + np.sum(pdist(x, metric))
    np.testing.assert_allclose(gradc.jit(f)(a), f(a), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(f)(a), central_gradient(f, a), rtol=1e-5, atol=1e-7)


def test_scipy_routing_by_every_import_style():
    import scipy.spatial
    from scipy.spatial import distance
    x = points(11, 3, 2)
    for fn in (lambda x: distance.cdist(x, x), lambda x: scipy.spatial.distance.cdist(x, x),
               lambda x: squareform(ssd.pdist(x))):
        np.testing.assert_allclose(gradc.jit(fn)(x), cdist(x, x), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("call, message", [
    (lambda x: cdist(x, x[:, :1]), "same number of columns"),
    (lambda x: cdist(x[0], x), "XA must be a 2-dimensional array"),
    (lambda x: cdist(x, x, "yule"), "metric 'yule' is not supported"),
    (lambda x: cdist(x, x, "seuclidean", w=np.ones(2)), "takes no weights"),
    (lambda x: cdist(x, x, "minkowski", p=-1), "fixed p > 0"),
    (lambda x: cdist(x, x, "euclidean", q=1), "unexpected keyword q"),
    (lambda x: squareform(x.ravel()[:4]), "not the pairs of any number of points"),
    (lambda x: squareform(x), "must be square"),
    (lambda x: pdist(x, out=np.zeros(3)), "out= is not supported"),
])
def test_bad_input_is_refused_clearly(call, message):
    x = points(12, 3, 2)
    with pytest.raises(gradc.GradcError, match=message) as info:
        gradc.jit(call)(x)
    assert "test_spatial_distance.py" in str(info.value)


def test_named_sizes():
    """cdist takes a named number of points; pdist and squareform (whose pairs are static) say so clearly."""
    x = points(13, 4, 3)
    compiled = gradc.compile(lambda a: np.sum(cdist(a, a) ** 2), gradc.spec("f64[m,3]"))
    np.testing.assert_allclose(compiled.grad(x), central_gradient(lambda a: np.sum(cdist(a, a) ** 2), x), rtol=1e-6)
    for fn in (lambda a: np.sum(pdist(a)), lambda a: np.sum(squareform(a @ a.T, checks=False))):
        with pytest.raises(gradc.GradcError, match="named number of points") as info:
            gradc.compile(fn, gradc.spec("f64[m,3]"))
        assert "test_spatial_distance.py" in str(info.value)
