"""Per-op table entries for the stats family (merged into ``op_cases``; see its docstring for the checks).

Sort-based cases (sort, median, quantiles, ptp) take ``distinct`` values, so no
finite-difference step reorders them; ``interp`` keeps its points away from the
knots; the nan-reductions' inputs hold NaNs (which get a zero gradient). The
primitives argsort, searchsorted and convolve are named in every case that uses
them (the C table runs them through gradc/backends/c/sorting.py and convolution.py);
cumsum and cumprod run as C loops.
"""
from __future__ import annotations

import numpy as np
import numpy.polynomial.polynomial as polynomial
import scipy.stats
from numpy.polynomial import Polynomial
from op_cases import Case, NondiffCase, away_from_zero, const, distinct, f32, normal, positive, uniform
from op_cases_special import routed

import gradc
from gradc.ops.refused_derivative import refuse_derivative


def with_nans(*shape):
    """Normal values with NaN at a few fixed places (every row and column keeps two numbers)."""
    def make(rng):
        x = rng.standard_normal(shape)
        flat = x.reshape(-1)
        flat[[1, flat.size - 2]] = np.nan
        return x
    return make


def zeros_at(*shape, where=((1,), (3,))):
    """Normal values with exact zeros at ``where`` (cumprod's special case)."""
    def make(rng):
        x = rng.standard_normal(shape)
        for index in where:
            x[index] = 0.0
        return x
    return make


def increasing(n, lo=-1.0, hi=2.0):
    """``n`` increasing knots with gaps of at least 0.2."""
    return lambda rng: np.cumsum(rng.uniform(0.2, 1.0, n)) * (hi - lo) / n + lo


def off_knots(*shape):
    """Points in [-1.5, 3.5] (beyond the knots of ``increasing`` on both sides), not within 0.02 of a knot."""
    def make(rng):
        return rng.choice(np.arange(-1.5, 3.5, 0.05), shape, replace=False) + 0.013
    return make


KNOTS = np.array([-1.0, -0.2, 0.5, 1.1, 2.0])
VALUES = np.array([0.3, -1.0, 2.0, 0.5, 1.5])
HAS_CUMULATIVE = hasattr(np, "cumulative_sum")

DIFF_CASES = [
    # the refusal itself is tested in tests/ops/test_stats_descriptive.py (scipy.stats.mode); here its value
    # passes on every target, and a derivative path that does not cross it is unaffected
    Case("no_derivative",
         lambda a: a * 2.0 + (refuse_derivative(gradc.stop_gradient(a), what="f") - gradc.stop_gradient(a)),
         [normal(4)], ("no_derivative",)),
    # ---- moments
    Case("var_all", lambda a: np.var(a), [normal(3, 4)], ("mean", "sum")),
    Case("var_axis_ddof_keepdims", lambda a: np.var(a, axis=1, ddof=1, keepdims=True), [normal(3, 4)], ("mean",)),
    Case("var_method_axes", lambda a: a.var(axis=(0, 2), ddof=1), [normal(2, 3, 2)], ("mean",)),
    Case("std_axis", lambda a: np.std(a, axis=0), [normal(4, 3)], ("sqrt", "mean")),
    Case("std_method_ddof", lambda a: a.std(ddof=1), [normal(5)], ("sqrt",)),
    Case("average_weights_axis", lambda a, w: np.average(a, axis=1, weights=w), [normal(3, 4), positive(4)],
         ("sum", "div")),
    Case("average_returned", lambda a, w: np.stack(np.average(a, axis=0, weights=w, returned=True)),
         [normal(3, 2), positive(3, 2)], ("sum", "div")),
    Case("average_plain", lambda a: np.average(a, axis=(0, 1), keepdims=True), [normal(2, 3)], ("mean",)),
    Case("ptp_axis", lambda a: np.ptp(a, axis=1), [distinct(3, 4)], ("max", "min")),
    Case("cov_rows", lambda a: np.cov(a), [normal(3, 5)], ("matmul", "mean")),
    Case("cov_columns_bias", lambda a, b: np.cov(a, b, rowvar=False, bias=True), [normal(5, 2), normal(5)],
         ("matmul", "concatenate")),
    Case("cov_weights", lambda a, f, w: np.cov(a, fweights=f, aweights=w), [normal(2, 4), const(np.array([1, 2, 1, 3])),
                                                                          positive(4)], ("matmul",)),
    Case("corrcoef", lambda a: np.corrcoef(a), [normal(3, 6)], ("sqrt", "gather")),
    # ---- NaN-ignoring reductions (NaN entries get a zero gradient)
    Case("nansum_axis", lambda a: np.nansum(a, axis=0), [with_nans(3, 4)], ("where", "isnan")),
    Case("nanmean", lambda a: np.nanmean(a, axis=1, keepdims=True), [with_nans(3, 4)], ("where", "div")),
    Case("nanvar_ddof", lambda a: np.nanvar(a, axis=1, ddof=1), [with_nans(3, 4)], ("where",)),
    Case("nanstd", lambda a: np.nanstd(a), [with_nans(2, 5)], ("sqrt", "where")),
    Case("nanmax_nanmin", lambda a: np.nanmax(a, axis=0) - np.nanmin(a, axis=0),
         [lambda rng: np.where(np.eye(3, 4, dtype=bool), np.nan, distinct(3, 4)(rng))], ("max", "min")),
    # ---- scans and differences
    Case("cumsum_axis", lambda a: np.cumsum(a, axis=1), [normal(3, 4)], ("cumsum",)),
    Case("cumsum_flat_method", lambda a: a.cumsum(), [normal(2, 3)], ("cumsum", "reshape")),
    Case("cumprod_axis0", lambda a: np.cumprod(a, axis=0), [uniform(0.5, 1.5, 4, 3)], ("cumprod",)),
    Case("cumprod_with_zeros", lambda a: np.cumprod(a), [zeros_at(6)], ("cumprod",)),
    Case("cumprod_two_zeros_rows", lambda a: a.cumprod(axis=1), [zeros_at(2, 4, where=((0, 1), (1, 0), (1, 2)))],
         ("cumprod",)),
    Case("cumsum_f32", lambda a: np.cumsum(a, axis=0), [f32(normal(4, 2))], ("cumsum",), rtol=1e-4),
    Case("diff_axis0", lambda a: np.diff(a, axis=0), [normal(4, 3)], ("sub", "index")),
    Case("diff_n2_prepend_append", lambda a, b: np.diff(a, n=2, prepend=0.5, append=b), [normal(3, 4), normal(3, 1)],
         ("concatenate", "sub")),
    Case("trapezoid_dx", lambda a: np.trapezoid(a, dx=0.5), [normal(3, 5)], ("sum",)),
    Case("trapezoid_x", lambda a, x: np.trapezoid(a, x, axis=0), [normal(4, 2), increasing(4)], ("sum", "sub")),
    Case("convolve_full", lambda a, v: np.convolve(a, v), [normal(5), normal(3)], ("convolve",)),
    Case("convolve_same_long_v", lambda a, v: np.convolve(a, v, "same"), [normal(3), normal(4)], ("convolve",)),
    Case("convolve_valid", lambda a, v: np.convolve(a, v, mode="valid"), [normal(6), normal(3)], ("convolve",)),
    Case("correlate_same", lambda a, v: np.correlate(a, v, "same"), [normal(3), normal(6)], ("convolve",)),
    Case("correlate_valid_f32", lambda a, v: np.correlate(a, v), [f32(normal(5)), f32(normal(2))], ("convolve",),
         rtol=1e-4),
    # ---- order statistics: a gather at argsort's indices, so the gradient is a scatter
    Case("sort_last", lambda a: np.sort(a), [distinct(3, 4)], ("argsort", "gather")),
    Case("sort_axis0", lambda a: np.sort(a, axis=0), [distinct(4, 3)], ("argsort", "gather")),
    Case("sort_flat", lambda a: np.sort(a, axis=None), [distinct(2, 3)], ("argsort", "gather")),
    Case("sort_f32", lambda a: np.sort(a, axis=-1), [f32(distinct(2, 5))], ("argsort", "gather"), rtol=1e-4),
    Case("median_odd", lambda a: np.median(a), [distinct(5)], ("argsort", "index")),
    Case("median_even_axis", lambda a: np.median(a, axis=1, keepdims=True), [distinct(3, 4)], ("argsort", "add")),
    Case("quantile_list_axes", lambda a: np.quantile(a, [0.1, 0.5, 0.95], axis=(0, 2)), [distinct(2, 3, 4)],
         ("argsort", "gather")),
    Case("percentile_methods", lambda a: np.percentile(a, 30, axis=0) + np.percentile(a, 70, axis=0, method="nearest")
         + np.quantile(a, 0.4, axis=0, method="midpoint"), [distinct(6, 2)], ("argsort",)),
    # ---- interpolation: in x (slopes), xp and fp (knots), left/right
    Case("interp_x", lambda x: np.interp(x, KNOTS, VALUES), [off_knots(12)], ("searchsorted", "gather")),
    Case("interp_all_traced", lambda x, xp, fp: np.interp(x, xp, fp, left=-2.0, right=fp[0]),
         [off_knots(7), increasing(4), normal(4)], ("searchsorted", "gather")),
]


def _piecewise(t):
    return t * t if t > 0.0 else np.sin(t)


# compositions over existing ops added by the stats part: ufunc methods, scipy.stats functions, numpy.polynomial,
# np.vectorize (SciPy's and numpy.polynomial's names routed as a user's module sees them: op_cases_special.routed)
DIFF_CASES += [
    Case("maximum_accumulate", lambda a: np.maximum.accumulate(a, axis=1), [distinct(3, 5)], ("maximum",)),
    Case("logaddexp_reduce_accumulate", lambda a: np.logaddexp.reduce(a, axis=0) + np.logaddexp.accumulate(a)[-1],
         [normal(5, 3)], ("logaddexp",)),
    Case("nancumsum_nancumprod", lambda a: np.nancumsum(a, axis=0) + np.nancumprod(a, axis=1),
         [with_nans(3, 4)], ("cumsum", "cumprod")),
    Case("scipy_trim_mean_iqr", routed(lambda a: scipy.stats.trim_mean(a, 0.2) + scipy.stats.iqr(a, axis=0)),
         [distinct(6, 2)], ("argsort",)),
    Case("scipy_linregress_ttest", routed(lambda a: np.stack(scipy.stats.linregress(a[0], a[1])[:3])
                                          + scipy.stats.ttest_ind(a[0], a[1]).pvalue),
         [uniform(0.5, 2.0, 2, 6)], ("betainc",)),
    Case("numpy_polynomial", routed(lambda c: Polynomial(c, domain=[0.0, 2.0]).deriv()(KNOTS)
                                    + polynomial.polyval(KNOTS, c)), [normal(4)], ("mul",)),
    Case("numpy_vectorize", routed(lambda a: np.vectorize(_piecewise)(a)), [away_from_zero(5)], ("greater",)),
]
if HAS_CUMULATIVE:
    DIFF_CASES += [
        Case("cumulative_sum_initial", lambda a: np.cumulative_sum(a, axis=0, include_initial=True), [normal(3, 2)],
             ("cumsum", "concatenate")),
        Case("cumulative_prod", lambda a: np.cumulative_prod(a), [uniform(-1.5, 1.5, 4)], ("cumprod",)),
    ]

NONDIFF_CASES = [
    NondiffCase("argsort", lambda a: np.argsort(a, axis=0) * 1.0, [distinct(4, 3)], ("argsort",)),
    NondiffCase("argsort_method_flat", lambda a: a.argsort(axis=None, kind="stable") * 1.0, [distinct(2, 3)],
                ("argsort",)),
    NondiffCase("searchsorted", lambda a: np.searchsorted(KNOTS, a, side="right") * 1.0, [off_knots(5)],
                ("searchsorted",)),
]
