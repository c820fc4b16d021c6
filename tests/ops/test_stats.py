"""Statistics beyond the op table: NumPy's keyword combinations (values against NumPy, gradients against
central differences), derivatives at zeros and ties, NaN handling, second order, the emitted spelling,
and refusals that name the problem at the user's line. References are NumPy values, closed forms and
finite differences, never gradc against itself."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError, ShapeError, TraceError
from gradc.ir.interpret import evaluate

R = np.random.default_rng(29)




def traced_value(f, *args):
    """``f(*args)`` computed by the reference interpreter from gradc's trace (arrays, not a weighted sum)."""
    graph = gradc.trace(f, *args)
    outs = evaluate(graph, *[a for a, p in zip(args, graph.params) if p not in graph.static])
    return outs[0] if len(outs) == 1 else outs


def check(f, x, rtol=1e-7):
    """f's value (interpreter) equals NumPy's, its dtype too; the compiled gradient of a weighted sum equals
    central differences."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = f(x)
    value = traced_value(f, x)
    single = np.asarray(expected).dtype == np.float32
    np.testing.assert_allclose(value, expected, rtol=1e-6 if single else 1e-12, atol=1e-6 if single else 1e-12)
    assert np.asarray(value).dtype == np.asarray(expected).dtype, (np.asarray(value).dtype, expected.dtype)
    ct = R.standard_normal(np.shape(expected))

    def loss(x):
        return np.sum(f(x) * ct)
    if not single and np.all(np.isfinite(expected)):  # float32 rounding would swamp the differences
        np.testing.assert_allclose(gradc.grad(loss)(x), fd_grad(loss, x), rtol=rtol, atol=1e-7)


X = R.standard_normal((3, 4, 5))
DISTINCT = (R.permutation(60) * 0.25 + R.uniform(0, 0.05, 60)).reshape(3, 4, 5)


@pytest.mark.parametrize("f", [
    lambda x: np.var(x, axis=(0, 2), ddof=2, keepdims=True),
    lambda x: np.std(x, axis=-1, dtype=np.float32),
    lambda x: x.std(axis=1, ddof=1),
    lambda x: np.var(x, axis=0, mean=np.mean(x, axis=0, keepdims=True)),
    lambda x: np.var(x, correction=1),
    lambda x: np.average(x, axis=(1, 2), weights=np.abs(x) + 1.0, keepdims=True),
    lambda x: np.average(x, axis=1, weights=np.array([1.0, 2.0, 0.5, 3.0])),
    lambda x: np.stack(np.average(x, axis=2, returned=True)),
    lambda x: np.cumsum(x, axis=-2),
    lambda x: np.cumsum(x, dtype=np.float32),
    lambda x: np.cumprod(x[0], axis=1),
    lambda x: np.diff(x, n=3, axis=1),
    lambda x: np.diff(x, axis=0, prepend=x[:1], append=2.0),
    lambda x: np.diff(x, n=0),
    lambda x: np.trapezoid(x, x=np.cumsum(np.abs(x), axis=1), axis=1),
    lambda x: np.trapezoid(x, dx=0.25, axis=0),
    lambda x: np.cov(x[0], x[1], rowvar=False, ddof=0),
    lambda x: np.cov(x[0, 0], aweights=np.abs(x[0, 1]) + 0.5, bias=True),
    lambda x: np.cov(x[0], ddof=2, fweights=np.array([1, 2, 3, 1, 1]), aweights=np.abs(x[1, 0]) + 0.5),
    lambda x: np.corrcoef(x[0], x[1, :2]),
    lambda x: np.corrcoef(x[0, 0], x[1, 0]),
    lambda x: np.ptp(x, axis=(0, 1), keepdims=True),
    lambda x: np.interp(x, np.array([-1.0, -0.1, 0.3, 2.0]), np.array([0.0, 1.0, -1.0, 3.0]), right=-2.0),
], ids=lambda f: "")
def test_keywords_like_numpy(f):
    check(f, X)


@pytest.mark.parametrize("f", [
    lambda x: np.sort(x, axis=1),
    lambda x: np.sort(x, axis=None),
    lambda x: np.median(x, axis=(0, 2)),
    lambda x: np.median(x[:, :, :4], axis=-1, keepdims=True),
    lambda x: np.quantile(x, np.array([[0.0, 0.25], [0.5, 1.0]]), axis=1),
    lambda x: np.quantile(x, 0.3, axis=0, method="lower") + np.quantile(x, 0.3, axis=0, method="higher"),
    lambda x: np.quantile(x, [0.2, 0.5, 0.7], axis=2, method="nearest", keepdims=True),
    lambda x: np.quantile(x, [0.25, 0.4], method="midpoint"),
    lambda x: np.percentile(x, [10, 90], axis=(1, 2)),
    lambda x: np.percentile(x, 50.0, axis=1, keepdims=True),
], ids=lambda f: "")
def test_order_statistics_like_numpy(f):
    check(f, DISTINCT)


def test_quantile_keeps_numpy_dtypes():
    x32 = DISTINCT.astype(np.float32)
    for f in (lambda x: np.quantile(x, 0.3), lambda x: np.quantile(x, [0.3]), lambda x: np.median(x, axis=0),
              lambda x: np.quantile(x, [0.3], method="lower"), lambda x: np.percentile(x, 40)):
        assert traced_value(f, x32).dtype == f(x32).dtype
    ints = np.arange(7)
    assert traced_value(lambda x: np.median(x * 2), ints).dtype == np.float64


@pytest.mark.parametrize("n,m", [(5, 3), (5, 4), (3, 5), (4, 5), (6, 2), (2, 6), (4, 4), (1, 3), (3, 1)])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("fn", [np.convolve, np.correlate], ids=["convolve", "correlate"])
def test_convolve_and_correlate_modes(n, m, mode, fn):
    a, v = R.standard_normal(n), R.standard_normal(m)
    value = traced_value(lambda a, v: fn(a, v, mode), a, v)
    np.testing.assert_allclose(value, fn(a, v, mode), rtol=1e-12, atol=1e-14)
    ct = R.standard_normal(value.shape)
    ga, gv = gradc.grad(lambda a, v: np.sum(fn(a, v, mode) * ct), wrt=("a", "v"))(a, v)
    np.testing.assert_allclose(ga, fd_grad(lambda a: np.sum(fn(a, v, mode) * ct), a), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gv, fd_grad(lambda v: np.sum(fn(a, v, mode) * ct), v), rtol=1e-7, atol=1e-8)


# ---------------------------------------------------------------- cumprod at zeros, sort at ties, NaNs
def test_cumprod_gradient_and_hessian_at_zero_closed_form():
    x = np.array([2.0, 0.0, 3.0])

    def f(x):
        return np.sum(np.cumprod(x))
    # f = x0 + x0 x1 + x0 x1 x2
    np.testing.assert_allclose(gradc.grad(f)(x), [1.0 + 0.0 + 0.0, 2.0 + 2.0 * 3.0, 0.0])
    expected = np.array([[0.0, 1.0 + 3.0, 0.0], [4.0, 0.0, 2.0], [0.0, 2.0, 0.0]])
    np.testing.assert_allclose(gradc.hessian(f)(x), expected, atol=1e-12)


def test_cumprod_with_several_zeros_matches_differences():
    x = np.array([[0.0, 1.5, 0.0, -2.0], [1.2, -0.7, 0.0, 0.4]])
    ct = R.standard_normal(x.shape)

    def f(x):
        return np.sum(np.cumprod(x, axis=1) * ct)
    np.testing.assert_allclose(gradc.grad(f)(x), fd_grad(f, x), rtol=1e-8, atol=1e-9)


def test_sort_ties_send_each_cotangent_to_one_position():
    x = np.array([1.0, 3.0, 1.0, 2.0])
    w = np.array([10.0, 20.0, 30.0, 40.0])
    g = gradc.grad(lambda x: np.sum(np.sort(x) * w))(x)
    np.testing.assert_allclose(g, [10.0, 40.0, 20.0, 30.0])  # stable: the first 1.0 takes the first place


def test_median_of_a_slice_with_nan_is_nan_and_the_gradient_is_zero():
    x = np.array([[1.0, np.nan, 3.0], [4.0, 0.5, 2.0]])
    value = traced_value(lambda x: np.median(x, axis=1), x)
    np.testing.assert_array_equal(np.isnan(value), [True, False])
    np.testing.assert_allclose(value[1], 2.0)
    g = gradc.grad(lambda x: np.sum(np.median(x, axis=1)))(x)
    np.testing.assert_array_equal(g, [[0.0, 0.0, 0.0], [0.0, 0.0, 1.0]])


def along_rows(fn, weights=None):
    """``fn(x, axis=1)``, or its weighted sum (a function of ``x`` alone, for tracing)."""
    def f(x):
        out = fn(x, axis=1)
        return out if weights is None else np.sum(out * weights)
    return f


def test_nan_reductions_ignore_nans_and_give_them_zero_gradient():
    x = np.array([[1.0, np.nan, 3.0, 0.5], [np.nan, np.nan, np.nan, np.nan], [np.nan, 2.0, -1.0, 4.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for fn in (np.nansum, np.nanmean, np.nanvar, np.nanstd, np.nanmax, np.nanmin):
            np.testing.assert_allclose(traced_value(along_rows(fn), x), fn(x, axis=1), rtol=1e-12)
        np.testing.assert_allclose(traced_value(lambda x: np.nanvar(x, axis=0, ddof=1), x),
                                   np.nanvar(x, axis=0, ddof=1), rtol=1e-12)
    rows = x[[0, 2]]
    for fn in (np.nansum, np.nanmean, np.nanvar, np.nanstd, np.nanmax, np.nanmin):
        loss = along_rows(fn, np.array([1.0, -2.0]))
        g = gradc.grad(loss)(rows)
        assert np.all(g[np.isnan(rows)] == 0.0) and np.all(np.isfinite(g))
        filled = np.where(np.isnan(rows), 0.0, rows)
        finite = fd_grad(lambda y: loss(np.where(np.isnan(rows), np.nan, y)), filled)  # noqa: B023 (called here)
        np.testing.assert_allclose(g, finite, rtol=1e-7, atol=1e-8)


# ---------------------------------------------------------------- interp
def test_interp_values_left_right_and_knots():
    xp, fp = np.array([-1.0, 0.0, 0.5, 2.0]), np.array([1.0, 3.0, -1.0, 2.0])
    x = np.array([-3.0, -1.0, -0.4, 0.0, 0.5, 1.7, 2.0, 5.0])
    for kw in ({}, {"left": -7.0}, {"right": 9.0, "left": 0.0}):
        value = traced_value(lambda x: np.interp(x, xp, fp, **kw), x)  # noqa: B023 (called right here)
        np.testing.assert_allclose(value, np.interp(x, xp, fp, **kw))
    single = traced_value(lambda x: np.interp(x, xp[:1], fp[:1], left=5.0), x)
    np.testing.assert_allclose(single, np.interp(x, xp[:1], fp[:1], left=5.0))
    assert traced_value(lambda s: np.interp(s, xp, fp), 0.25) == np.interp(0.25, xp, fp)


def test_interp_derivatives_in_x_xp_and_fp():
    x = np.array([-2.0, -0.3, 0.2, 1.3, 3.0])
    xp, fp = np.array([-1.0, 0.0, 0.5, 2.0]), np.array([1.0, 3.0, -1.0, 2.0])
    ct = R.standard_normal(5)

    def f(x, xp, fp):
        return np.sum(np.interp(x, xp, fp) * ct)
    gx, gxp, gfp = gradc.grad(f, wrt=("x", "xp", "fp"))(x, xp, fp)
    np.testing.assert_allclose(gx, fd_grad(lambda v: f(v, xp, fp), x), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gxp, fd_grad(lambda v: f(x, v, fp), xp), rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gfp, fd_grad(lambda v: f(x, xp, v), fp), rtol=1e-7, atol=1e-8)
    assert gx[0] == 0.0 and gx[-1] == 0.0  # outside the knots the value is constant


def test_searchsorted_and_argsort_like_numpy():
    a = np.array([0.0, 1.0, 1.0, 2.5])
    v = np.array([[1.0, -1.0], [3.0, 0.5]])
    for side in ("left", "right"):
        value = traced_value(lambda v: np.searchsorted(a, v, side=side) * 1.0, v)  # noqa: B023 (called right here)
        np.testing.assert_array_equal(value, np.searchsorted(a, v, side=side))
    np.testing.assert_array_equal(traced_value(lambda x: x.argsort(axis=0) * 1.0, DISTINCT),
                                  DISTINCT.argsort(axis=0))
    np.testing.assert_array_equal(traced_value(lambda x: np.argsort(x, axis=None, stable=True) * 1.0, DISTINCT),
                                  np.argsort(DISTINCT, axis=None, stable=True))


def test_lists_where_numpy_takes_arrays():
    x = X[0, 0]
    for f in (lambda x: np.convolve([1.0, -2.0, 0.5], x, "same"), lambda x: np.interp(x, [-1.0, 0.0, 2.0], [0, 1, 3]),
              lambda x: np.average(x, weights=[1, 2, 3, 4, 5]), lambda x: np.diff(x, prepend=[0.0]),
              lambda x: np.trapezoid(x, [0.0, 0.5, 1.5, 2.0, 4.0]), lambda x: np.cov(x, [1.0, 2.0, 0.0, 1.0, 5.0])):
        check(f, x)


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="NumPy < 2.1")
def test_cumulative_functions():
    x = X[0]
    for f in (lambda x: np.cumulative_sum(x, axis=1, include_initial=True),
              lambda x: np.cumulative_prod(x, axis=0),
              lambda x: np.cumulative_prod(x[0], include_initial=True)):
        check(f, x)


# ---------------------------------------------------------------- second order, emitted spelling
@pytest.mark.parametrize("f", [
    lambda x: np.std(x, axis=0).sum(),
    lambda x: np.sum(np.cumprod(x, axis=1) ** 2),
    lambda x: np.sum(np.sort(x, axis=0) ** 3 * np.arange(4.0)[None, :]),
    lambda x: np.median(x ** 2, axis=1).sum(),
    lambda x: np.sum(np.convolve(x[0], x[1]) ** 2),
    lambda x: np.sum(np.corrcoef(x)),
])
def test_hessian_matches_differences_of_the_gradient(f):
    x = DISTINCT[0, :3, :4] * 0.3
    grad = gradc.grad(f)
    h = gradc.hessian(f)(x).reshape(x.size, x.size)
    columns = [fd_grad(lambda y, i=i: grad(y)[i], x).reshape(-1) for i in np.ndindex(x.shape)]
    np.testing.assert_allclose(h, np.array(columns), rtol=1e-5, atol=1e-6)


def test_emitted_code_reads_like_numpy():
    def f(x, v):
        return np.sum(np.cumsum(x, axis=0) * np.cumprod(x, axis=1)) + np.sum(np.convolve(x[0], v))

    source = gradc.compile(f, X[0], X[1, 0], wrt=("x", "v")).source
    for text in ("np.cumsum(x, axis=0)", "np.cumprod(x, axis=1)", "np.convolve("):
        assert text in source, source
    sorted_source = gradc.compile(lambda x: np.sum(np.sort(x) * x), X[0]).source
    assert "np.argsort(x, axis=1, stable=True)" in sorted_source and "np.add.at(" in sorted_source


# ---------------------------------------------------------------- refusals, at the user's line
def uses_partition(x):
    return np.partition(x, 9)


def uses_method(x):
    return np.quantile(x, 0.5, method="weibull")


def uses_traced_q(x):
    return np.quantile(x, x[0])


def uses_out(x):
    return np.var(x, out=np.empty(()))


def uses_big_ddof(x):
    return np.var(x, ddof=4)


@pytest.mark.parametrize("f,error,message", [
    (uses_partition, ShapeError, r"np\.partition: kth\(=9\) out of bounds \(4\)"),  # (supported: issue 24)
    (lambda x: np.argpartition(x, 1, order="f"), TraceError, r"np\.argpartition: order= is not supported"),
    (uses_method, TraceError, r"method='weibull' is not supported .*; use one of linear, lower"),
    (uses_traced_q, TraceError, r"q depends on a traced value"),
    (lambda x: np.quantile(x, [0.5, 1.5]), ShapeError, r"quantiles must be in the range \[0, 1\]"),
    (lambda x: np.percentile(x, 150), ShapeError, r"np\.percentile: percentiles must be in the range \[0, 100\]"),
    (lambda x: np.quantile(x, 0.5, weights=x), TraceError, r"weights= not supported"),
    (uses_out, TraceError, r"np\.var: out= not supported"),
    (uses_big_ddof, ShapeError, r"4 values with ddof=4 leave 0 degrees of freedom"),
    (lambda x: np.nanmean(x, where=x > 0), TraceError, r"np\.nanmean: where= not supported"),
    (lambda x: np.diff(x, n=-1), ShapeError, r"order n=-1 must be non-negative"),
    (lambda x: np.diff(x.reshape(2, 2), prepend=np.ones((3, 3))), ShapeError, r"prepend of shape \(3, 3\) does not"),
    (lambda x: np.convolve(x.reshape(2, 2), x), ShapeError, r"needs two non-empty 1-d arrays"),
    (lambda x: np.convolve(x, x, mode="middle"), ShapeError, r"mode must be 'full', 'same' or 'valid'"),
    (lambda x: np.interp(x, x.reshape(2, 2), x), ShapeError, r"np\.interp needs 1-d xp and fp"),
    (lambda x: np.interp(x, x, x, period=2.0), TraceError, r"np\.interp: period= not supported"),
    (lambda x: np.cov(x.reshape(1, 2, 2)), ShapeError, r"more than 2 dimensions"),
    (lambda x: np.cov(x, fweights=np.ones(3)), ShapeError, r"fweights must be 1-d with one weight per observation"),
    (lambda x: np.average(x.reshape(2, 2), weights=x[:3]), ShapeError, r"no axis is given"),
    (lambda x: np.searchsorted(x, 0.5, side="middle"), ShapeError, r"side must be 'left' or 'right'"),
    (lambda x: np.sort(x[0]), ShapeError, r"0-d array needs axis=None"),
    (lambda x: np.median(x[:0]), ShapeError, r"empty axis"),
])
def test_refusals_are_clear(f, error, message):
    with pytest.raises(error, match=message) as info:
        gradc.grad(lambda x: np.sum(f(x)))(np.array([0.5, 1.0, 2.0, 3.0]))
    assert "test_stats.py:" in str(info.value), str(info.value)


def test_sort_in_place_method_is_refused_with_the_fix():
    with pytest.raises(GradcError, match=r"x\.sort\(\) changes an array in place.*np\.sort\(x\)"):
        gradc.grad(lambda x: np.sum(x.sort()))(np.ones(3))


@pytest.mark.skipif(not hasattr(np, "cumulative_sum"), reason="NumPy < 2.1")
def test_cumulative_sum_of_a_matrix_needs_an_axis():
    with pytest.raises(ShapeError, match=r"np\.cumulative_sum of a 2-d array needs axis="):
        gradc.grad(lambda x: np.sum(np.cumulative_sum(x)))(np.ones((2, 2)))


def zscore_loss(x):
    return np.sum(scipy.stats.zscore(x, axis=1) * np.arange(20.0).reshape(4, 5) ** 2)


def test_scipy_stats_zscore():
    x = X[0]
    x_nan = np.where(np.eye(4, 5, dtype=bool), np.nan, x)
    for f, arg in ((lambda x: scipy.stats.zscore(x), x), (lambda x: scipy.stats.zscore(x, axis=1, ddof=1), x),
                   (lambda x: scipy.stats.zscore(x, axis=None), x),
                   (lambda x: scipy.stats.zscore(x, nan_policy="omit"), x_nan)):
        np.testing.assert_allclose(traced_value(f, arg), f(arg), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(zscore_loss)(x), fd_grad(zscore_loss, x), rtol=1e-7, atol=1e-7)
    with pytest.raises(TraceError, match="nan_policy='raise' is not supported"):
        gradc.grad(lambda x: np.sum(scipy.stats.zscore(x, nan_policy="raise")))(x)
