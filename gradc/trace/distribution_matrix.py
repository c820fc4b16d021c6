"""``scipy.stats.multinomial`` (``logpmf``, ``pmf``), ``wishart`` and ``invwishart`` (``logpdf``, ``pdf``) on traced
values, as NumPy compositions routed by public name (plain, frozen, and frozen outside the traced function).

multinomial follows SciPy's reading of ``p``: its last entry is replaced by ``1 - sum(p[:-1])`` (so the result
does not depend on ``p[-1]``, and neither does its derivative); NaN where an entry of ``p`` is outside [0, 1];
``-inf`` where ``x`` is not whole counts summing to ``n``. Wishart's samples are SciPy's: a matrix ``(p, p)``, or
``(p, p, N)`` with the samples along the last axis; ``scale`` a matrix or a scalar (``p = 1``); the log
determinants come from Cholesky factors (``df`` and both matrices differentiable).

>>> import scipy.stats
>>> "scipy.stats.wishart" in STAND_INS and "scipy.stats.multinomial" in STAND_INS
True
"""
from __future__ import annotations

import math

import numpy as np

from gradc.errors import TraceError
from gradc.ops import special_scipy as sc
from gradc.trace import distribution_dispatch as dd
from gradc.trace import scipy_dispatch

_LOG2 = math.log(2.0)


def _array(v):
    return v if hasattr(v, "aval") else np.asarray(v, dtype=float)


def multinomial_logpmf(x, n, p, what="scipy.stats.multinomial.logpmf"):
    """``log(n! / prod(x!) prod(p^x))`` over the last axis, SciPy's checks included."""
    x, p = _array(x) * 1.0, _array(p) * 1.0
    if np.ndim(p) == 0:
        raise TraceError(f"{what}: p must be a vector of probabilities", hint="pass p as an array (..., k)")
    k = np.shape(p)[-1]
    if np.shape(x)[-1:] != (k,):
        raise TraceError(f"{what}: x has {np.shape(x)[-1:] or 'no'} entries on its last axis, p has {k}",
                         hint="give x one count per category on its last axis")
    head = p[..., :-1]
    p = np.concatenate([head, 1.0 - np.sum(head, axis=-1, keepdims=True)], axis=-1)
    n = _array(n) * 1.0
    value = sc.gammaln(n + 1.0) + np.sum(sc.xlogy(x, p) - sc.gammaln(x + 1.0), axis=-1)
    counts = np.all((x >= 0.0) & (np.floor(x) == x), axis=-1) & (np.sum(x, axis=-1) == n)
    value = np.where(counts, value, -np.inf)
    valid = np.all((p >= 0.0) & (p <= 1.0), axis=-1) & (n >= 0.0) & (np.floor(n) == n)
    return np.where(valid, value, np.nan)


def _samples(x, d, what):
    """``x`` as samples of shape ``(N, d, d)`` and whether SciPy returns a scalar (one sample)."""
    x = _array(x) * 1.0
    if d == 1 and np.ndim(x) <= 1:  # SciPy: a scalar or a vector of 1x1 samples
        x = np.reshape(x, (1, 1, -1))
    if np.ndim(x) == 2:
        x = x[:, :, None]
    if np.ndim(x) != 3 or np.shape(x)[:2] != (d, d):
        raise TraceError(f"{what}: x must be a ({d}, {d}) matrix or ({d}, {d}, N) samples, not {np.shape(x)}",
                         hint="put the samples on the last axis, as SciPy does")
    return np.moveaxis(x, -1, 0), np.shape(x)[-1] == 1


def _log_det(m):
    """``log det`` of symmetric positive definite matrices (the lower triangle read, by Cholesky)."""
    factor = np.linalg.cholesky(m)
    return 2.0 * np.sum(np.log(np.diagonal(factor, axis1=-2, axis2=-1)), axis=-1)


def _wishart_logpdf(x, df, scale, inverse, what):
    scale = _array(scale) * 1.0
    if np.ndim(scale) == 0:
        scale = np.reshape(scale, (1, 1))
    if np.ndim(scale) == 1:
        scale = np.diag(scale) if not hasattr(scale, "aval") else scale[:, None] * np.eye(np.shape(scale)[0])
    d = np.shape(scale)[0]
    if np.shape(scale) != (d, d):
        raise TraceError(f"{what}: scale must be a square matrix, not of shape {np.shape(scale)}",
                         hint="pass a symmetric positive definite (d, d) matrix")
    if isinstance(df, (int, float)) and df <= d - 1:
        raise TraceError(f"{what}: df={df} must be greater than the dimension minus 1 ({d - 1})", hint="raise df")
    samples, single = _samples(x, d, what)
    df = _array(df) * 1.0
    log_det_x, log_det_scale = _log_det(samples), _log_det(scale)
    if inverse:  # tr(scale x^-1) = tr(x^-1 scale)
        trace = np.trace(np.linalg.solve(samples, np.broadcast_to(scale, np.shape(samples))), axis1=-2, axis2=-1)
        value = 0.5 * df * log_det_scale - 0.5 * (df + d + 1.0) * log_det_x
    else:
        trace = np.trace(np.linalg.solve(np.broadcast_to(scale, np.shape(samples)), samples), axis1=-2, axis2=-1)
        value = 0.5 * (df - d - 1.0) * log_det_x - 0.5 * df * log_det_scale
    value = value - 0.5 * trace - 0.5 * df * d * _LOG2 - sc.multigammaln(0.5 * df, d)
    return value[0] if single else value


def wishart_logpdf(x, df, scale, what="scipy.stats.wishart.logpdf"):
    """``scipy.stats.wishart.logpdf(x, df, scale)``."""
    return _wishart_logpdf(x, df, scale, False, what)


def invwishart_logpdf(x, df, scale, what="scipy.stats.invwishart.logpdf"):
    """``scipy.stats.invwishart.logpdf(x, df, scale)``."""
    return _wishart_logpdf(x, df, scale, True, what)


_SIGNATURES = {  # name -> (the log function, its parameters, defaults)
    "multinomial": (multinomial_logpmf, ("x", "n", "p"), {}, "logpmf"),
    "wishart": (wishart_logpdf, ("x", "df", "scale"), {"df": None, "scale": None}, "logpdf"),
    "invwishart": (invwishart_logpdf, ("x", "df", "scale"), {"df": None, "scale": None}, "logpdf"),
}


class MatrixDistribution(dd.Multivariate):
    """Stands in for ``scipy.stats.multinomial``, ``wishart`` or ``invwishart`` (the log density or mass and its
    exponential)."""

    def _methods(self):
        log = _SIGNATURES[self._name][3]
        return [log, log[3:]]

    def frozen_arguments(self, frozen):
        """The arguments a frozen SciPy object of this distribution was made with."""
        if self._name == "multinomial":
            return (frozen.n, frozen.p)
        return (frozen.df, frozen.scale)

    def _compute(self, method, args, kwargs):
        fn, names, defaults, log = _SIGNATURES[self._name]
        what = f"scipy.stats.{self._name}.{method}"
        values = {**defaults, **dict(zip(names, args))}
        if len(args) > len(names):
            raise TraceError(f"{what} takes at most {len(names)} arguments ({', '.join(names)})",
                             hint=f"call {what}({', '.join(names)})")
        for key, value in kwargs.items():
            if key not in names or names.index(key) < len(args):
                raise TraceError(f"{what} got an unexpected or repeated argument {key!r}",
                                 hint=f"its arguments are {', '.join(names)}")
            values[key] = value
        missing = [n for n in names if values.get(n) is None]
        if missing:
            raise TraceError(f"{what} is missing {', '.join(missing)}", hint=f"call {what}({', '.join(names)})")
        value = fn(*(values[n] for n in names), what=what)
        return value if method == log else np.exp(value)


STAND_INS = {}
for _name in _SIGNATURES:
    STAND_INS[f"scipy.stats.{_name}"] = dd.STAND_INS[f"scipy.stats.{_name}"] = MatrixDistribution(_name)
    scipy_dispatch.register(f"scipy.stats.{_name}", STAND_INS[f"scipy.stats.{_name}"])

__all__ = ["MatrixDistribution", "multinomial_logpmf", "wishart_logpdf", "invwishart_logpdf", "STAND_INS"]
