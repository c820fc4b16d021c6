"""``scipy.stats`` regression and hypothesis tests on traced values, as NumPy compositions with SciPy's result
objects: ``linregress``, ``ttest_ind`` (``equal_var`` either way), ``ttest_rel``, ``ttest_1samp``, ``chisquare``,
``power_divergence``, ``jarque_bera``, ``pointbiserialr``, ``skewtest``, ``kurtosistest``, ``normaltest``.

The statistics are smooth functions of the data and their p-values the tail of the reference distribution
(``t``, ``chi2``) evaluated by gradc's distribution functions, so both differentiate (Welch's degrees of freedom
too: the t tail's derivative in ``df`` is the incomplete beta function's in its shape). ``chisquare`` checks when
the compiled code runs that the observed and expected totals agree, as SciPy does (``ValueError``).

>>> import scipy.stats
>>> from gradc.trace import trace
>>> print(trace(lambda a: scipy.stats.ttest_1samp(a, 1.0).statistic, np.ones(3)).name)
lambda_
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.ops import checks
from gradc.ops import special_scipy as sc
from gradc.ops.special_stats import evaluate
from gradc.trace import scipy_dispatch, stats_summaries
from gradc.trace.stats_descriptive import _alternative, _array, _correlation, _nan_policy, pearsonr

_Linregress = namedtuple("LinregressResult", ["slope", "intercept", "rvalue", "pvalue", "stderr"])
_Ttest = namedtuple("TtestResult", ["statistic", "pvalue"])
Power_divergenceResult = namedtuple("Power_divergenceResult", ["statistic", "pvalue"])
SignificanceResult = namedtuple("SignificanceResult", ["statistic", "pvalue"])


class LinregressResult(_Linregress):
    """SciPy's result: five entries when unpacked, ``intercept_stderr`` as an attribute (kept inside the traced
    function; a result returned from a compiled one is rebuilt from its five entries)."""

    def __new__(cls, *fields, intercept_stderr=None):
        out = super().__new__(cls, *fields)
        out.intercept_stderr = intercept_stderr
        return out


class TtestResult(_Ttest):
    """SciPy's result: ``(statistic, pvalue)`` when unpacked, ``df`` as an attribute."""

    def __new__(cls, statistic, pvalue, *, df=None):
        out = super().__new__(cls, statistic, pvalue)
        out.df = df
        return out


def _t_pvalue(t, df, alternative):
    if alternative == "two-sided":
        return evaluate("t", "sf", np.abs(t), (df,), 0.0) * 2.0
    return evaluate("t", "sf" if alternative == "greater" else "cdf", t, (df,), 0.0)


def _keepdims(what, keepdims):
    if keepdims:
        raise TraceError(f"scipy.stats.{what}: keepdims=True is not supported by gradc",
                         hint="expand the result with np.expand_dims(result, axis)")


# ---------------------------------------------------------------- regression
def linregress(x, y, alternative="two-sided", *, axis=0, nan_policy="propagate", keepdims=False):
    """Least-squares line of ``y`` on ``x``: slope, intercept, r, the p-value of slope 0, and standard errors."""
    _nan_policy("linregress", nan_policy)
    _alternative("linregress", alternative)
    _keepdims("linregress", keepdims)
    x, y = np.broadcast_arrays(_array(x) * 1.0, _array(y) * 1.0)
    if axis is None:
        x, y, axis = np.reshape(x, (-1,)), np.reshape(y, (-1,)), 0
    n = np.shape(x)[axis]
    xm, ym = np.mean(x, axis=axis, keepdims=True), np.mean(y, axis=axis, keepdims=True)
    ssxm, ssym = np.mean((x - xm) ** 2, axis=axis), np.mean((y - ym) ** 2, axis=axis)
    ssxym = np.mean((x - xm) * (y - ym), axis=axis)
    r = _correlation(x, y, axis)
    slope = ssxym / ssxm
    intercept = np.squeeze(ym, axis) - slope * np.squeeze(xm, axis)
    if n == 2:  # SciPy: a line through two points, p-value 1 for equal y else 0, no standard errors
        return LinregressResult(slope, intercept, r, np.where(ssym == 0.0, 1.0, 0.0), slope * 0.0,
                                intercept_stderr=slope * 0.0)
    df = n - 2.0
    tiny = 1.0e-20
    t = r * np.sqrt(df / ((1.0 - r + tiny) * (1.0 + r + tiny)))
    stderr = np.sqrt((1.0 - r ** 2) * ssym / ssxm / df)
    return LinregressResult(slope, intercept, r, _t_pvalue(t, df, alternative), stderr,
                            intercept_stderr=stderr * np.sqrt(ssxm + np.squeeze(xm, axis) ** 2))


def pointbiserialr(x, y, *, axis=0, nan_policy="propagate", keepdims=False):
    """The point-biserial correlation: Pearson's of a binary ``x`` and ``y``."""
    _nan_policy("pointbiserialr", nan_policy)
    _keepdims("pointbiserialr", keepdims)
    return SignificanceResult(*pearsonr(x, y, axis=axis))


# ---------------------------------------------------------------- t tests
def _moments(a, axis):
    return np.mean(a, axis=axis), np.var(a, axis=axis, ddof=1), np.shape(a)[axis]


def ttest_ind(a, b, *, axis=0, equal_var=True, nan_policy="propagate", alternative="two-sided", trim=0,
              method=None, keepdims=False):
    """Student's (``equal_var=True``) or Welch's t test of two independent samples."""
    _nan_policy("ttest_ind", nan_policy)
    _alternative("ttest_ind", alternative)
    _keepdims("ttest_ind", keepdims)
    if trim or method is not None:
        raise TraceError("scipy.stats.ttest_ind: trim= and method= (resampling) are not supported by gradc",
                         hint="use the plain t test (drop those arguments)")
    a, b = _array(a) * 1.0, _array(b) * 1.0
    if axis is None:
        a, b, axis = np.reshape(a, (-1,)), np.reshape(b, (-1,)), 0
    (m1, v1, n1), (m2, v2, n2) = _moments(a, axis), _moments(b, axis)
    if equal_var:
        df = n1 + n2 - 2.0
        pooled = ((n1 - 1) * v1 + (n2 - 1) * v2) / df
        denominator = np.sqrt(pooled * (1.0 / n1 + 1.0 / n2))
    else:
        vn1, vn2 = v1 / n1, v2 / n2
        df = (vn1 + vn2) ** 2 / (vn1 ** 2 / (n1 - 1) + vn2 ** 2 / (n2 - 1))
        denominator = np.sqrt(vn1 + vn2)
    t = (m1 - m2) / denominator
    return TtestResult(t, _t_pvalue(t, df, alternative), df=df)


def _one_sample(what, d, axis, alternative):
    _alternative(what, alternative)
    if axis is None:
        d, axis = np.reshape(d, (-1,)), 0
    mean, var, n = _moments(d, axis)
    t = mean / np.sqrt(var / n)
    return TtestResult(t, _t_pvalue(t, n - 1.0, alternative), df=n - 1.0)


def ttest_rel(a, b, axis=0, nan_policy="propagate", alternative="two-sided", *, keepdims=False):
    """The t test of paired samples (of their differences)."""
    _nan_policy("ttest_rel", nan_policy)
    _keepdims("ttest_rel", keepdims)
    return _one_sample("ttest_rel", _array(a) * 1.0 - _array(b), axis, alternative)


def ttest_1samp(a, popmean, axis=0, nan_policy="propagate", alternative="two-sided", *, keepdims=False):
    """The t test of one sample's mean against ``popmean``."""
    _nan_policy("ttest_1samp", nan_policy)
    _keepdims("ttest_1samp", keepdims)
    return _one_sample("ttest_1samp", _array(a) * 1.0 - _array(popmean), axis, alternative)


# ---------------------------------------------------------------- goodness of fit
_LAMBDAS = {"pearson": 1.0, "log-likelihood": 0.0, "freeman-tukey": -0.5, "mod-log-likelihood": -1.0,
            "neyman": -2.0, "cressie-read": 2.0 / 3.0}


def power_divergence(f_obs, f_exp=None, ddof=0, axis=0, lambda_=None, *, nan_policy="propagate", keepdims=False):
    """Cressie and Read's power divergence statistic and its chi-squared p-value."""
    return _divergence(f_obs, f_exp, ddof, axis, lambda_, nan_policy, keepdims, "power_divergence", True)


def _divergence(f_obs, f_exp, ddof, axis, lambda_, nan_policy, keepdims, what, sum_check):
    _nan_policy(what, nan_policy)
    _keepdims(what, keepdims)
    if isinstance(lambda_, str):
        if lambda_ not in _LAMBDAS:
            raise TraceError(f"scipy.stats.{what}: lambda_={lambda_!r} is not one of SciPy's",
                             hint=f"use one of {', '.join(_LAMBDAS)} or a number")
        lambda_ = _LAMBDAS[lambda_]
    lam = 1.0 if lambda_ is None else float(lambda_)
    obs = _array(f_obs) * 1.0
    if axis is None:
        obs, axis = np.reshape(obs, (-1,)), 0
    if f_exp is None:
        expected = np.mean(obs, axis=axis, keepdims=True) + obs * 0.0
    else:
        expected = _array(f_exp) * 1.0 + obs * 0.0
        if sum_check:
            total_obs, total_exp = np.sum(obs, axis=axis), np.sum(expected, axis=axis)
            gap = np.abs(total_obs - total_exp) / np.minimum(total_obs, total_exp)
            checks.check(np.any(gap > np.sqrt(np.finfo(float).eps)), "ValueError",
                         (f"scipy.stats.{what}: the sums of f_obs and f_exp differ by more than SciPy's relative "
                          "tolerance (pass f_exp with the same total)",), user_location() or "")
    if lam == 1.0:
        terms = (obs - expected) ** 2 / expected
    elif lam == 0.0:
        terms = 2.0 * sc.xlogy(obs, obs / expected)
    elif lam == -1.0:
        terms = 2.0 * sc.xlogy(expected, expected / obs)
    else:
        terms = obs * ((obs / expected) ** lam - 1.0) / (0.5 * lam * (lam + 1.0))
    statistic = np.sum(terms, axis=axis)
    k = np.shape(obs)[axis]
    pvalue = evaluate("chi2", "sf", statistic, (k - 1.0 - ddof,), 0.0)
    return Power_divergenceResult(statistic, pvalue)


def chisquare(f_obs, f_exp=None, ddof=0, axis=0, *, sum_check=True, nan_policy="propagate", keepdims=False):
    """Pearson's chi-squared test of observed against expected frequencies."""
    return _divergence(f_obs, f_exp, ddof, axis, "pearson", nan_policy, keepdims, "chisquare", sum_check)


def jarque_bera(x, *, axis=None, nan_policy="propagate", keepdims=False):
    """Jarque and Bera's normality test from the sample skewness and excess kurtosis."""
    _nan_policy("jarque_bera", nan_policy)
    _keepdims("jarque_bera", keepdims)
    x = _array(x) * 1.0
    if axis is None:
        x, axis = np.reshape(x, (-1,)), 0
    n = np.shape(x)[axis]
    statistic = n / 6.0 * (stats_summaries.skew(x, axis) ** 2 + stats_summaries.kurtosis(x, axis) ** 2 / 4.0)
    return SignificanceResult(statistic, np.exp(-0.5 * statistic))  # chi2(2).sf


# ---------------------------------------------------------------- D'Agostino's normality tests
SkewtestResult = namedtuple("SkewtestResult", ["statistic", "pvalue"])
KurtosistestResult = namedtuple("KurtosistestResult", ["statistic", "pvalue"])
NormaltestResult = namedtuple("NormaltestResult", ["statistic", "pvalue"])


def _normal_pvalue(z, alternative):
    if alternative == "two-sided":
        return 2.0 * sc.ndtr(-np.abs(z))
    return sc.ndtr(z) if alternative == "less" else sc.ndtr(-z)


def _sample(what, a, axis, nan_policy, alternative, keepdims):
    _nan_policy(what, nan_policy)
    _alternative(what, alternative)
    _keepdims(what, keepdims)
    a = _array(a) * 1.0
    return (np.reshape(a, (-1,)), 0) if axis is None else (a, axis)


def _skew_z(a, axis):
    n = float(np.shape(a)[axis])
    b2 = stats_summaries.skew(a, axis)
    if n < 8:  # SciPy: NaN below 8 samples
        return b2 * np.nan
    y = b2 * np.sqrt((n + 1) * (n + 3) / (6.0 * (n - 2)))
    beta2 = 3.0 * (n * n + 27 * n - 70) * (n + 1) * (n + 3) / ((n - 2.0) * (n + 5) * (n + 7) * (n + 9))
    w2 = -1.0 + np.sqrt(2.0 * (beta2 - 1.0))
    delta, alpha = 1.0 / np.sqrt(0.5 * np.log(w2)), np.sqrt(2.0 / (w2 - 1.0))
    y = np.where(y == 0.0, 1.0, y)
    return delta * np.log(y / alpha + np.sqrt((y / alpha) ** 2 + 1.0))


def _kurtosis_z(a, axis):
    n = float(np.shape(a)[axis])
    b2 = stats_summaries.kurtosis(a, axis, fisher=False)
    if n < 5:  # SciPy: NaN below 5 samples
        return b2 * np.nan
    mean = 3.0 * (n - 1) / (n + 1)
    variance = 24.0 * n * (n - 2) * (n - 3) / ((n + 1) * (n + 1.0) * (n + 3) * (n + 5))
    x = (b2 - mean) / np.sqrt(variance)
    root_beta1 = 6.0 * (n * n - 5 * n + 2) / ((n + 7) * (n + 9)) * np.sqrt(6.0 * (n + 3) * (n + 5)
                                                                           / (n * (n - 2) * (n - 3)))
    big_a = 6.0 + 8.0 / root_beta1 * (2.0 / root_beta1 + np.sqrt(1 + 4.0 / root_beta1 ** 2))
    term1 = 1 - 2 / (9.0 * big_a)
    denominator = 1 + x * np.sqrt(2 / (big_a - 4.0))
    safe = np.where(denominator == 0.0, 1.0, denominator)
    term2 = np.where(denominator == 0.0, np.nan, np.sign(safe) * ((1 - 2.0 / big_a) / np.abs(safe)) ** (1 / 3))
    return (term1 - term2) / np.sqrt(2 / (9.0 * big_a))


def skewtest(a, axis=0, nan_policy="propagate", alternative="two-sided", *, keepdims=False):
    """D'Agostino's test that the skewness is that of a normal distribution."""
    a, axis = _sample("skewtest", a, axis, nan_policy, alternative, keepdims)
    z = _skew_z(a, axis)
    return SkewtestResult(z, _normal_pvalue(z, alternative))


def kurtosistest(a, axis=0, nan_policy="propagate", alternative="two-sided", *, keepdims=False):
    """Anscombe and Glynn's test that the kurtosis is that of a normal distribution."""
    a, axis = _sample("kurtosistest", a, axis, nan_policy, alternative, keepdims)
    z = _kurtosis_z(a, axis)
    return KurtosistestResult(z, _normal_pvalue(z, alternative))


def normaltest(a, axis=0, nan_policy="propagate", *, keepdims=False):
    """D'Agostino and Pearson's omnibus test: the two statistics squared and summed, a chi-squared(2) tail."""
    a, axis = _sample("normaltest", a, axis, nan_policy, "two-sided", keepdims)
    statistic = _skew_z(a, axis) ** 2 + _kurtosis_z(a, axis) ** 2
    return NormaltestResult(statistic, np.exp(-0.5 * statistic))


for _fn in (linregress, pointbiserialr, ttest_ind, ttest_rel, ttest_1samp, power_divergence, chisquare, jarque_bera,
            skewtest, kurtosistest, normaltest):
    scipy_dispatch.register(f"scipy.stats.{_fn.__name__}", _fn)

__all__ = ["linregress", "pointbiserialr", "ttest_ind", "ttest_rel", "ttest_1samp", "power_divergence", "chisquare",
           "jarque_bera", "skewtest", "kurtosistest", "normaltest", "LinregressResult", "TtestResult"]
