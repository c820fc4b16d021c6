"""What NumPy's statistics functions mean on traced values (tables merged into ``numpy_dispatch``).

Each entry takes NumPy's signature and calls a function of ``gradc.ops.stats``
(the primitives) or its composition modules; keywords gradc cannot honour
(``out=``, ``where=``, ``weights=`` of the quantiles, ...) are refused by name.
The ndarray methods ``x.var()``, ``x.std()``, ``x.cumsum()``, ``x.argsort()``, ...
reach these entries through the tracer's method table.

>>> np.var in FUNCTIONS and np.median in FUNCTIONS
True
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ir.types import dtype_name
from gradc.ops import elementwise as ew
from gradc.ops import reduce as red
from gradc.ops import stats, stats_moments, stats_nan_order, stats_order, stats_scan
from gradc.trace import distribution_dispatch, scipy_dispatch, ufunc_methods


def _refuse(what, **given):
    """A TraceError naming the keywords of ``what`` that were given but are not supported."""
    used = sorted(k for k, v in given.items() if v is not None and v is not False)
    if used:
        raise TraceError(f"{what}: {', '.join(k + '=' for k in used)} not supported by gradc",
                         hint="drop it; apply a mask with np.where(mask, x, 0), or write into a new name")


def _arr(v):
    """Lists and tuples as NumPy arrays (NumPy's functions take them wherever they take arrays)."""
    return np.asarray(v) if isinstance(v, (list, tuple)) else v


def _with_dtype(a, dtype):
    return a if dtype is None else ew.astype(a, dtype_name(dtype))


def _ddof(ddof, correction, what):
    if correction is not None:
        if ddof not in (0, None):
            raise TraceError(f"{what}: ddof= and correction= are one parameter", hint="pass only one of them")
        return correction
    return ddof


def _moment(fn, what):
    def apply(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
              correction=None):
        _refuse(what, out=out, where=where)
        return fn(_with_dtype(a, dtype), axis, _ddof(ddof, correction, what), keepdims, mean)
    return apply


def _nan_moment(fn, what):
    def apply(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
              correction=None):
        _refuse(what, out=out, where=where, mean=mean)
        return fn(_with_dtype(a, dtype), axis, _ddof(ddof, correction, what), keepdims)
    return apply


def _nan_reduction(fn, what):
    def apply(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        _refuse(what, out=out, initial=initial, where=where)
        return fn(_with_dtype(a, dtype), axis, keepdims)
    return apply


def _nan_extremum(fn, what):
    def apply(a, axis=None, out=None, keepdims=False, initial=None, where=None):
        _refuse(what, out=out, initial=initial, where=where)
        return fn(a, axis, keepdims)
    return apply


def _average(a, axis=None, weights=None, returned=False, *, keepdims=False):
    return stats_moments.average(_arr(a), axis, _arr(weights), returned, keepdims)


def _scan(fn, what):
    def apply(a, axis=None, dtype=None, out=None):
        _refuse(what, out=out)
        return fn(_with_dtype(a, dtype), axis)
    return apply


def _cumulative(name):
    def apply(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
        _refuse(f"np.cumulative_{name}", out=out)
        return stats_scan.cumulative(name, _with_dtype(x, dtype), axis, include_initial)
    return apply


def _diff(a, n=1, axis=-1, prepend=None, append=None):
    return stats_scan.diff(_arr(a), n, axis, _arr(prepend), _arr(append))


def _quantile(fn, what):
    def apply(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
              interpolation=None):
        _refuse(what, out=out, weights=weights)
        if interpolation is not None:
            raise TraceError(f"{what}: interpolation= is NumPy's old name of method=", hint="pass method= instead")
        return fn(a, q, axis, method, keepdims)
    return apply


def _median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _refuse("np.median", out=out)
    return stats_order.median(a, axis, keepdims)


def _nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _refuse("np.nanmedian", out=out)
    return stats_nan_order.nanmedian(a, axis, keepdims)


def _cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    out = stats_moments.cov(_arr(m), _arr(y), rowvar, bias, ddof, _arr(fweights), _arr(aweights))
    return _with_dtype(out, dtype)


def _corrcoef(x, y=None, rowvar=True, bias=None, ddof=None, *, dtype=None):  # bias, ddof: no effect in NumPy
    return _with_dtype(stats_moments.corrcoef(_arr(x), _arr(y), rowvar), dtype)


def _ptp(a, axis=None, out=None, keepdims=False):
    _refuse("np.ptp", out=out)
    return stats_moments.ptp(a, axis, keepdims)


def _trapezoid(y, x=None, dx=1.0, axis=-1):
    return stats_scan.trapezoid(_arr(y), _arr(x), dx, axis)


def _sort(a, axis=-1, kind=None, order=None, *, stable=None):
    _refuse("np.sort", order=order)
    return stats_order.sort(a, axis)  # stable always: same values, and ties keep their order


def _argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    _refuse("np.argsort", order=order)
    return stats.argsort(a, axis, stable=bool(stable) or kind == "stable" or kind == "mergesort")


def _searchsorted(a, v, side="left", sorter=None):
    _refuse("np.searchsorted", sorter=sorter)
    return stats.searchsorted(_arr(a), _arr(v), side)


def _interp(x, xp, fp, left=None, right=None, period=None):
    _refuse("np.interp", period=period)
    return stats_order.interp(_arr(x), _arr(xp), _arr(fp), left, right)


def _zscore(a, axis=0, ddof=0, nan_policy="propagate"):
    """``scipy.stats.zscore``: ``(a - mean) / std`` along the axis (``nan_policy='omit'``: of the non-NaN values)."""
    if nan_policy not in ("propagate", "omit"):
        raise TraceError(f"scipy.stats.zscore: nan_policy={nan_policy!r} is not supported",
                         hint="use nan_policy='propagate' or 'omit' (whether a NaN is present depends on the data)")
    a = stats_moments.as_float(_arr(a))
    if nan_policy == "omit":
        centre, spread = stats_moments.nanmean(a, axis, True), stats_moments.nanstd(a, axis, ddof, True)
    else:
        centre, spread = red.mean(a, axis, True), stats_moments.std(a, axis, ddof, True)
    return ew.div(ew.sub(a, centre), spread)


def _partition(a, *args, **kwargs):
    raise TraceError("np.partition and np.argpartition are not supported by gradc",
                     hint="use np.sort(x, axis) (differentiable) and index the positions you need")


FUNCTIONS = {
    np.var: _moment(stats_moments.var, "np.var"), np.std: _moment(stats_moments.std, "np.std"),
    np.nanvar: _nan_moment(stats_moments.nanvar, "np.nanvar"),
    np.nanstd: _nan_moment(stats_moments.nanstd, "np.nanstd"),
    np.nansum: _nan_reduction(stats_moments.nansum, "np.nansum"),
    np.nanmean: _nan_reduction(stats_moments.nanmean, "np.nanmean"),
    np.nanmax: _nan_extremum(stats_moments.nanmax, "np.nanmax"),
    np.nanmin: _nan_extremum(stats_moments.nanmin, "np.nanmin"),
    np.average: _average, np.ptp: _ptp, np.cov: _cov, np.corrcoef: _corrcoef,
    np.cumsum: _scan(stats.cumsum, "np.cumsum"), np.cumprod: _scan(stats.cumprod, "np.cumprod"),
    np.diff: _diff, np.trapezoid: _trapezoid,
    np.convolve: lambda a, v, mode="full": stats_scan.convolve(_arr(a), _arr(v), mode),
    np.correlate: lambda a, v, mode="valid": stats_scan.correlate(_arr(a), _arr(v), mode),
    np.sort: _sort, np.argsort: _argsort, np.searchsorted: _searchsorted, np.interp: _interp,
    np.median: _median, np.quantile: _quantile(stats_order.quantile, "np.quantile"),
    np.percentile: _quantile(stats_order.percentile, "np.percentile"),
    np.partition: _partition, np.argpartition: _partition,
    np.nanmedian: _nanmedian, np.nanquantile: _quantile(stats_nan_order.nanquantile, "np.nanquantile"),
    np.nanpercentile: _quantile(stats_nan_order.nanpercentile, "np.nanpercentile"),
}
if hasattr(np, "trapz"):  # removed in NumPy 2.4
    FUNCTIONS[np.trapz] = _trapezoid
if hasattr(np, "cumulative_sum"):  # NumPy >= 2.1
    FUNCTIONS[np.cumulative_sum] = _cumulative("sum")
    FUNCTIONS[np.cumulative_prod] = _cumulative("prod")
FUNCTIONS.update(ufunc_methods.FUNCTIONS)  # np.nancumsum, np.nancumprod
UFUNCS: dict = {}
scipy_dispatch.register("scipy.stats.zscore", _zscore)
from gradc.trace import distribution_matrix  # noqa: E402,F401,I001 (registers scipy.stats.wishart, ...)
from gradc.trace import polynomial_class  # noqa: E402,F401,I001 (routes numpy.polynomial)
from gradc.trace import stats_descriptive  # noqa: E402,F401,I001 (registers scipy.stats.entropy, pearsonr, ...)
from gradc.trace import stats_samples  # noqa: E402,F401,I001 (registers scipy.stats.rankdata, circmean, ...)
from gradc.trace import stats_summaries  # noqa: E402,F401 (registers scipy.stats.gmean, skew, ...)
from gradc.trace import stats_tests  # noqa: E402,F401,I001 (registers scipy.stats.linregress, ttest_ind, ...)

__all__ = ["FUNCTIONS", "UFUNCS", "distribution_dispatch"]  # the distributions are registered on import
