"""``scipy.stats`` regression and hypothesis tests on traced values: statistics and p-values against SciPy on
seeded samples, gradients against central differences, the C target, and the refusals and run-time checks."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError

CASES = {
    "linregress": lambda a: np.stack(st.linregress(a[0], a[1])),
    "linregress_axis": lambda a: np.concatenate([st.linregress(a[:2], a[2:], axis=1).slope,
                                                 st.linregress(a, a ** 2).intercept]),
    "linregress_less": lambda a: st.linregress(a[0], a[2], alternative="less").pvalue,
    "ttest_ind": lambda a: np.stack(st.ttest_ind(a[0], a[1] + 0.4)),
    "ttest_ind_welch_df": lambda a: st.ttest_ind(a[0], 2.0 * a[2], equal_var=False).pvalue
    + st.ttest_ind(a[0], 2.0 * a[2], equal_var=False).df,
    "ttest_ind_axis": lambda a: st.ttest_ind(a[:2], a[2:], axis=1, alternative="greater").pvalue,
    "ttest_rel": lambda a: np.stack(st.ttest_rel(a[0], a[1], alternative="less")),
    "ttest_1samp": lambda a: np.stack(st.ttest_1samp(a, 1.7, axis=1)),
    "ttest_1samp_none": lambda a: st.ttest_1samp(a, [1.5], axis=None).pvalue,
    "chisquare": lambda a: np.stack(st.chisquare(a[0] * 10.0)),
    "chisquare_expected": lambda a: st.chisquare(a[1], a[1].sum() / a[2].sum() * a[2], ddof=1).pvalue,
    "power_divergence_names": lambda a: sum(st.power_divergence(a[0], lambda_=name).statistic for name in
                                            ("log-likelihood", "freeman-tukey", "mod-log-likelihood", "neyman",
                                             "cressie-read")),
    "power_divergence_axis": lambda a: st.power_divergence(a, axis=1, lambda_=0.3).pvalue,
    "jarque_bera": lambda a: np.stack(st.jarque_bera(a)),
    "pointbiserialr": lambda a: st.pointbiserialr(np.array([0.0, 1, 1, 0, 1, 0, 0, 1]), a[0]).pvalue,
    "skewtest": lambda a: np.stack(st.skewtest(a, axis=None)),
    "skewtest_axis_less": lambda a: st.skewtest(np.concatenate([a, a ** 2], axis=1), axis=1, alternative="less")[1],
    "kurtosistest": lambda a: np.stack(st.kurtosistest(a, axis=None, alternative="greater")),
    "kurtosistest_axis": lambda a: st.kurtosistest(np.concatenate([a, a ** 2], axis=1), axis=1).statistic,
    "normaltest": lambda a: np.stack(st.normaltest(np.exp(a), axis=None)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(2))
def test_against_scipy_and_central_differences(name, seed):
    f = CASES[name]
    a = np.random.default_rng(seed).uniform(0.5, 3.0, (4, 8))
    np.testing.assert_allclose(gradc.jit(f)(a), f(a), rtol=1e-9, atol=1e-13)

    def loss(a):
        return np.sum(f(a))

    np.testing.assert_allclose(gradc.grad(loss)(a), fd_grad(loss, a), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", ["linregress", "ttest_ind_welch_df", "chisquare_expected", "jarque_bera"])
def test_c_target(name):
    f = CASES[name]
    a = np.random.default_rng(7).uniform(0.5, 3.0, (4, 8))
    np.testing.assert_allclose(gradc.jit(f, target="c")(a), f(a), rtol=1e-9, atol=1e-13)
    loss = lambda a: np.sum(f(a))  # noqa: E731
    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(a), fd_grad(loss, a), rtol=1e-5, atol=1e-8)


def test_results_unpack_and_carry_scipys_attributes():
    a = np.random.default_rng(2).uniform(0.5, 3.0, (2, 6))

    def f(a):
        slope, intercept, r, p, se = st.linregress(a[0], a[1])
        result = st.linregress(a[0], a[1])
        t = st.ttest_ind(a[0], a[1])
        return slope, result.intercept_stderr, t.df * 1.0, t[0]

    reference = st.linregress(a[0], a[1])
    expected = [reference.slope, reference.intercept_stderr, st.ttest_ind(a[0], a[1]).df,
                st.ttest_ind(a[0], a[1]).statistic]
    np.testing.assert_allclose(gradc.jit(f)(a), expected, rtol=1e-12)


def test_two_points_linregress():
    a = np.array([[0.5, 2.0], [1.0, 3.0]])
    f = lambda a: np.stack(st.linregress(a[0], a[1])[:4])  # noqa: E731
    np.testing.assert_allclose(gradc.jit(f)(a), f(a))


def test_chisquare_totals_checked_when_the_code_runs():
    f = gradc.jit(lambda o, e: st.chisquare(o, e).statistic)
    f(np.array([3.0, 5.0]), np.array([4.0, 4.0]))
    with pytest.raises(ValueError, match="sums of f_obs and f_exp differ"):
        f(np.array([3.0, 5.0]), np.array([4.0, 5.0]))


@pytest.mark.parametrize("call, match", [
    (lambda a: st.ttest_ind(a, a, trim=0.2), "trim= and method="),
    (lambda a: st.power_divergence(a, lambda_="bogus"), "lambda_='bogus'"),
    (lambda a: st.ttest_1samp(a, 0.0, alternative="up"), "alternative='up'"),
    (lambda a: st.linregress(a, a, keepdims=True), "keepdims=True"),
])
def test_refusals(call, match):
    with pytest.raises(GradcError, match=match) as info:
        gradc.jit(call)(np.linspace(0.5, 2.0, 6))
    assert "test_stats_tests.py" in str(info.value)


def test_normality_tests_below_their_sample_sizes_are_nan_as_scipy():
    a = np.linspace(0.5, 2.0, 6) ** 2
    for f in (lambda a: st.skewtest(a).statistic, lambda a: st.kurtosistest(a[:4]).pvalue):
        with np.errstate(all="ignore"):
            assert np.isnan(f(a)) and np.isnan(gradc.jit(f)(a))
