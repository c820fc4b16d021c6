"""``scipy.stats`` descriptive statistics on traced values: values against SciPy itself (seeded data, several
axes), gradients against central differences, the C target against SciPy, and the refusals."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError, MissingRuleError

CASES = {
    "entropy": lambda a: st.entropy(a),
    "entropy_axis1_base2": lambda a: st.entropy(a, base=2, axis=1),
    "entropy_relative": lambda a: st.entropy(a, a[::-1] + 0.5),
    "entropy_keepdims": lambda a: st.entropy(a, axis=0, keepdims=True),
    "pearsonr_statistic": lambda a: st.pearsonr(a[:, 0], a[:, 1]).statistic,
    "pearsonr_pvalue": lambda a: st.pearsonr(a[:, 0], a[:, 1] + a[:, 2]).pvalue,
    "pearsonr_less": lambda a: st.pearsonr(a[:, 0], a[:, 1], alternative="less")[1],
    "pearsonr_greater": lambda a: st.pearsonr(a[:, 0], a[:, 1], alternative="greater")[1],
    "pearsonr_axis1": lambda a: st.pearsonr(a[:3], a[3:6], axis=1).statistic,
    "trim_mean": lambda a: st.trim_mean(a, 0.2),
    "trim_mean_none": lambda a: st.trim_mean(a, 0.1, axis=None),
    "trim_mean_axis1": lambda a: st.trim_mean(a, 0.25, axis=1),
    "describe_mean_var": lambda a: st.describe(a).mean + st.describe(a, ddof=0).variance,
    "describe_minmax": lambda a: st.describe(a, axis=1).minmax[1] - st.describe(a, axis=1).minmax[0],
    "describe_shape": lambda a: st.describe(a, bias=False).skewness + st.describe(a).kurtosis,
    "iqr": lambda a: st.iqr(a),
    "iqr_axis_normal": lambda a: st.iqr(a, axis=0, scale="normal", rng=(10, 80)),
    "iqr_nearest": lambda a: st.iqr(a, axis=1, interpolation="midpoint", keepdims=True),
    "tmean": lambda a: st.tmean(a, (0.8, 2.6)),
    "tmean_exclusive_axis": lambda a: st.tmean(a, (0.8, None), (False, True), axis=0),
    "tmean_plain": lambda a: st.tmean(a),
    "tvar": lambda a: st.tvar(a, (0.7, 2.7)),
    "tvar_plain": lambda a: st.tvar(a, axis=1),
    "tstd": lambda a: st.tstd(a, (None, 2.5), ddof=0),
    "tsem": lambda a: st.tsem(a, (0.8, 2.6)),
    "tmin_tmax": lambda a: st.tmin(a, 1.0) + st.tmax(a, 2.5, axis=1, inclusive=False).sum(),
    "mad": lambda a: st.median_abs_deviation(a),
    "mad_normal_none": lambda a: st.median_abs_deviation(a, axis=None, scale="normal"),
    "mad_mean_centre": lambda a: st.median_abs_deviation(a, axis=1, center=np.mean),
}


def _data(seed, shape=(7, 6)):
    # values far enough apart that no finite-difference step reorders them or crosses a trimming limit
    rng = np.random.default_rng(seed)
    grid = np.linspace(0.5, 3.0, int(np.prod(shape)))
    a = rng.permutation(grid).reshape(shape) + rng.uniform(0.0, 0.01, shape)
    return np.where(np.abs(a - np.round(a * 10) / 10) < 0.003, a + 0.006, a)


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(2))
def test_value_and_gradient(name, seed):
    f = CASES[name]
    a = _data(seed)
    np.testing.assert_allclose(gradc.jit(f)(a), f(a), rtol=1e-11, atol=1e-13)
    w = np.random.default_rng(seed + 11).standard_normal(np.shape(f(a)))

    def loss(a):
        return np.sum(w * f(a))

    np.testing.assert_allclose(gradc.grad(loss)(a), fd_grad(loss, a), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["entropy_relative", "pearsonr_pvalue", "trim_mean", "iqr_axis_normal", "tvar",
                                  "mad", "describe_shape", "tmin_tmax"])
def test_c_target(name):
    f = CASES[name]
    a = _data(5)
    np.testing.assert_allclose(gradc.jit(f, target="c")(a), f(a), rtol=1e-11, atol=1e-13)

    def loss(a):
        return np.sum(f(a))

    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(a), fd_grad(loss, a), rtol=1e-5, atol=1e-7)


def test_pearsonr_result_unpacks_like_scipy():
    x, y = _data(1)[:, 0], _data(2)[:, 1]
    r, p = gradc.jit(lambda x, y: tuple(st.pearsonr(x, y)))(x, y)
    expected = st.pearsonr(x, y)
    np.testing.assert_allclose([r, p], [expected.statistic, expected.pvalue], rtol=1e-10)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_spearmanr_with_ties_against_scipy(seed, alternative):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, 12).astype(float)  # ties: SciPy's average ranks
    y = rng.standard_normal(12) + x

    def f(x, y):
        res = st.spearmanr(x, y, alternative=alternative)
        return res.statistic, res.pvalue

    expected = st.spearmanr(x, y, alternative=alternative)
    np.testing.assert_allclose(gradc.jit(f)(x, y), [expected.statistic, expected.pvalue], rtol=1e-10)
    np.testing.assert_allclose(gradc.jit(f, target="c")(x, y), [expected.statistic, expected.pvalue], rtol=1e-10)


def test_spearmanr_matrix_and_static_ranks():
    a = np.random.default_rng(3).standard_normal((9, 3))
    got = gradc.jit(lambda a: st.spearmanr(a).statistic)(a)
    np.testing.assert_allclose(got, st.spearmanr(a).statistic, rtol=1e-12)
    np.testing.assert_allclose(gradc.jit(lambda a: st.spearmanr(a, axis=1).pvalue)(a.T),
                               st.spearmanr(a.T, axis=1).pvalue, rtol=1e-10)
    # ranks are piecewise constant in the data: the derivative is zero (documented), as central differences say
    loss = lambda a: st.spearmanr(a[:, 0], a[:, 1]).statistic  # noqa: E731
    np.testing.assert_array_equal(gradc.grad(loss)(a), np.zeros_like(a))
    np.testing.assert_allclose(fd_grad(loss, a), 0.0, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, None])
def test_mode_value_count_and_refused_derivative(axis):
    a = np.random.default_rng(axis or 7).integers(0, 4, (6, 5)).astype(float)
    expected = st.mode(a, axis=axis)
    value, count = gradc.jit(lambda a: tuple(st.mode(a, axis=axis)))(a)
    np.testing.assert_array_equal(value, expected.mode)
    np.testing.assert_array_equal(count, expected.count)
    value_c, count_c = gradc.jit(lambda a: tuple(st.mode(a, axis=axis)), target="c")(a)
    np.testing.assert_array_equal(value_c, expected.mode)
    np.testing.assert_array_equal(count_c, expected.count)
    with pytest.raises(MissingRuleError, match=r"scipy.stats.mode has no derivative.*test_stats_descriptive"):
        gradc.grad(lambda a: np.sum(st.mode(a, axis=axis).mode))(a)
    with pytest.raises(MissingRuleError, match="scipy.stats.mode"):
        gradc.jvp(lambda a: np.sum(st.mode(a, axis=axis).mode), (a,), (np.ones_like(a),))


@pytest.mark.parametrize("call, match", [
    (lambda a: st.entropy(a, nan_policy="omit"), "nan_policy='omit'"),
    (lambda a: st.pearsonr(a, a, alternative="bigger"), "alternative='bigger'"),
    (lambda a: st.pearsonr(a, a, method=object()), "method="),
    (lambda a: st.trim_mean(a, 0.5), "cuts every value"),
    (lambda a: st.iqr(a, scale="cauchy"), "scale='cauchy'"),
    (lambda a: st.spearmanr(a), "needs a second one"),
])
def test_refusals_name_the_function_and_line(call, match):
    with pytest.raises(GradcError, match=match) as info:
        gradc.jit(call)(np.linspace(0.5, 2.0, 6))
    assert "test_stats_descriptive.py" in str(info.value)


@pytest.mark.parametrize("data", [[1.0, 2.0, 2.0, np.nan], [1.0, np.nan, np.nan], [1.0, np.nan], [np.nan, np.nan],
                                  [3.0, 1.0, 3.0, 1.0]])
@pytest.mark.parametrize("target", ["numpy", "c"])
def test_mode_with_nan_as_scipy(data, target):
    a = np.array(data)
    expected = st.mode(a)
    value, count = gradc.jit(lambda a: tuple(st.mode(a)), target=target)(a)
    np.testing.assert_array_equal([value, count], [expected.mode, expected.count])


def test_nan_propagates_through_ranks():
    x, y = np.array([1.0, 2.0, np.nan, 4.0]), np.array([1.0, 3.0, 2.0, 4.0])
    got = gradc.jit(lambda x, y: tuple(st.spearmanr(x, y)))(x, y)
    assert np.all(np.isnan(got)) and np.all(np.isnan(st.spearmanr(x, y)))
    np.testing.assert_array_equal(gradc.jit(lambda x: st.rankdata(x))(x), st.rankdata(x))
    with pytest.raises(ValueError, match="NaN ranks"):  # SciPy's dtype would depend on the values
        gradc.jit(lambda x: st.rankdata(x, "min"))(x)


@pytest.mark.parametrize("name", ["tmean", "tvar", "tstd", "tsem", "tmin_tmax"])
def test_trimmed_statistics_propagate_nan_as_scipy(name):
    a = _data(3)
    a[2, 1] = np.nan
    f = CASES[name]
    with np.errstate(all="ignore"):
        expected = f(a)
    np.testing.assert_array_equal(np.isnan(gradc.jit(f)(a)), np.isnan(expected))
