"""``scipy.stats`` summary statistics on traced values, as NumPy compositions: ``gmean``, ``hmean``, ``sem``,
``moment``, ``variation``, ``skew``, ``kurtosis`` (SciPy's formulas, ``bias=False`` corrections included).

>>> import scipy.stats
>>> from gradc.trace import trace
>>> print(trace(lambda a: scipy.stats.gmean(a), np.ones(2)).name)
lambda_
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.trace import scipy_dispatch


def _prepare(what, a, axis, nan_policy="propagate"):
    if nan_policy != "propagate":
        raise TraceError(f"scipy.stats.{what}: nan_policy={nan_policy!r} is not supported on traced values",
                         hint="use nan_policy='propagate' (whether a NaN is present depends on the data)")
    a = np.asarray(a) if not hasattr(a, "aval") else a
    if axis is None:
        return np.reshape(a, (-1,)) * 1.0, 0
    return a * 1.0, axis


def _central(a, axis, order):
    return np.mean((a - np.mean(a, axis=axis, keepdims=True)) ** order, axis=axis)


def gmean(a, axis=0, dtype=None, weights=None):
    a, axis = _prepare("gmean", a, axis)
    if weights is None:
        return np.exp(np.mean(np.log(a), axis=axis))
    return np.exp(np.sum(weights * np.log(a), axis=axis) / np.sum(weights * np.ones_like(a), axis=axis))


def hmean(a, axis=0, dtype=None, *, weights=None):
    a, axis = _prepare("hmean", a, axis)
    if weights is None:
        return 1.0 / np.mean(1.0 / a, axis=axis)
    return np.sum(weights * np.ones_like(a), axis=axis) / np.sum(weights / a, axis=axis)


def sem(a, axis=0, ddof=1, nan_policy="propagate"):
    a, axis = _prepare("sem", a, axis, nan_policy)
    return np.std(a, axis=axis, ddof=ddof) / np.sqrt(np.shape(a)[axis])


def moment(a, order=1, axis=0, nan_policy="propagate", *, center=None):
    a, axis = _prepare("moment", a, axis, nan_policy)
    if center is None and order == 1:  # SciPy: exactly 0, not the rounding of mean(a - mean(a))
        return np.sum(a * 0.0, axis=axis)
    middle = np.mean(a, axis=axis, keepdims=True) if center is None else center
    return np.mean((a - middle) ** order, axis=axis)


def variation(a, axis=0, nan_policy="propagate", ddof=0, *, keepdims=False):
    a, axis = _prepare("variation", a, axis, nan_policy)
    return np.std(a, axis=axis, ddof=ddof, keepdims=keepdims) / np.mean(a, axis=axis, keepdims=keepdims)


def skew(a, axis=0, bias=True, nan_policy="propagate"):
    a, axis = _prepare("skew", a, axis, nan_policy)
    n = np.shape(a)[axis]
    g = _central(a, axis, 3) / _central(a, axis, 2) ** 1.5
    return g if bias or n <= 2 else g * np.sqrt((n - 1.0) * n) / (n - 2.0)


def kurtosis(a, axis=0, fisher=True, bias=True, nan_policy="propagate"):
    a, axis = _prepare("kurtosis", a, axis, nan_policy)
    n = np.shape(a)[axis]
    ratio = _central(a, axis, 4) / _central(a, axis, 2) ** 2
    if not bias and n > 3:
        ratio = ((n * n - 1.0) * ratio - 3.0 * (n - 1.0) ** 2) / ((n - 2.0) * (n - 3.0)) + 3.0
    return ratio - 3.0 if fisher else ratio


for _fn in (gmean, hmean, sem, moment, variation, skew, kurtosis):
    scipy_dispatch.register(f"scipy.stats.{_fn.__name__}", _fn)
