"""``scipy.stats.multivariate_normal`` and ``scipy.stats.dirichlet`` log-densities, in gradc ops.

The normal's covariance is what SciPy accepts: a matrix (its lower triangle is read, as SciPy's
eigendecomposition does, so the gradient is zero in the strict upper triangle), a vector (the diagonal) or a
scalar (a multiple of the identity). A matrix is factored by Cholesky: ``log det = 2 sum log diag(L)`` and the
Mahalanobis term is ``|L^-1 (x - mean)|^2``. Shapes follow SciPy: ``x`` of shape ``(..., d)`` gives ``(...)``,
a single point a scalar; with ``d = 1`` a vector ``x`` holds points.

>>> float(multivariate_normal_logpdf(np.zeros(2), np.zeros(2), np.eye(2)))  # -log(2 pi)
-1.8378770664093453
"""
from __future__ import annotations

import math

import numpy as np  # noqa: F401  (the examples)

from gradc.errors import TraceError
from gradc.ops import elementwise as ew
from gradc.ops import reduce as red
from gradc.ops import shape as sh
from gradc.ops import special_scipy as sc
from gradc.ops.linalg_api import cholesky
from gradc.ops.linalg_decomp import eye_like, mT, tri
from gradc.ops.linalg_scipy import solve_triangular
from gradc.ops.values import aval

_LOG_2PI = math.log(2.0 * math.pi)


def _dimension(mean, cov, what):
    mean_shape, cov_shape = aval(mean).shape, aval(cov).shape
    if len(mean_shape) > 1 or len(cov_shape) > 2 or (len(cov_shape) == 2 and cov_shape[0] != cov_shape[1]):
        raise TraceError(f"{what}: mean must be a vector and cov a square matrix, a vector or a scalar "
                         f"(got mean of shape {mean_shape}, cov of shape {cov_shape})",
                         hint="pass one distribution's parameters; for many, call it once per distribution")
    sizes = [s[0] for s in (mean_shape, cov_shape) if len(s) >= 1]
    if len(set(sizes)) > 1:
        raise TraceError(f"{what}: mean has {sizes[0]} entries but cov is of size {sizes[1]}",
                         hint="give mean and cov the same dimension")
    return sizes[0] if sizes else 1


def _points(x, d, what):
    """``x`` as points of shape (..., d) (SciPy's reading of a scalar and of a vector)."""
    shape = aval(x).shape
    if len(shape) == 0 or (len(shape) == 1 and d == 1):
        return sh.reshape(x, shape + (1,))
    if shape[-1] != d:
        raise TraceError(f"{what}: x has {shape[-1]} coordinates in its last axis but the distribution has "
                         f"dimension {d}", hint="put the coordinates of each point in the last axis of x")
    return x


def _squeezed(value):
    """SciPy's ``_squeeze_output``: axes of length 1 dropped."""
    shape = aval(value).shape
    kept = tuple(s for s in shape if s != 1)
    return value if kept == shape else sh.reshape(value, kept)


def multivariate_normal_logpdf(x, mean, cov, what="scipy.stats.multivariate_normal.logpdf"):
    """``scipy.stats.multivariate_normal.logpdf(x, mean, cov)`` (``mean`` may be 0, ``cov`` 1)."""
    d = _dimension(mean, cov, what)
    diff = ew.sub(_points(x, d, what), mean)  # (..., d)
    cov_ndim = aval(cov).ndim
    if cov_ndim < 2:  # a diagonal (vector) or a multiple of the identity (scalar)
        log_det = ew.mul(ew.log(cov), float(d)) if cov_ndim == 0 else red.sum_(ew.log(cov))
        maha = red.sum_(ew.div(ew.mul(diff, diff), cov), axis=-1)
    else:
        lower = tri(cov, True)
        factor = cholesky(ew.add(lower, mT(tri(cov, True, -1))), what=what)
        log_det = ew.mul(red.sum_(ew.log(red.sum_(ew.mul(factor, eye_like(factor)), axis=-1))), 2.0)
        solved = solve_triangular(factor, mT(diff) if aval(diff).ndim == 2 else diff, lower=True, what=what)
        if aval(diff).ndim > 2:
            raise TraceError(f"{what}: x of shape {aval(x).shape}: gradc takes a point or a matrix of points",
                             hint="reshape x to (n, d) and the result back")
        maha = red.sum_(ew.mul(solved, solved), axis=0)
    value = ew.mul(ew.add(ew.add(maha, log_det), d * _LOG_2PI), -0.5)
    return _squeezed(value)


def dirichlet_logpdf(x, alpha, what="scipy.stats.dirichlet.logpdf"):
    """``scipy.stats.dirichlet.logpdf(x, alpha)``: ``x`` of shape ``(K, ...)`` (or ``K - 1`` rows: the last is
    one minus their sum), ``alpha`` of shape ``(K,)``."""
    alpha_shape, x_shape = aval(alpha).shape, aval(x).shape
    if len(alpha_shape) != 1:
        raise TraceError(f"{what}: alpha must be a vector (got shape {alpha_shape})", hint="pass one alpha")
    k = alpha_shape[0]
    if not x_shape or x_shape[0] not in (k, k - 1):
        raise TraceError(f"{what}: x must have {k} or {k - 1} entries in its first axis (got shape {x_shape})",
                         hint="put the components of x along its first axis, as SciPy does")
    if x_shape[0] == k - 1:
        last = ew.sub(1.0, red.sum_(x, axis=0, keepdims=True))
        x = sh.concatenate([x, last], axis=0)
    column = sh.reshape(alpha, (k,) + (1,) * (len(x_shape) - 1))
    norm = ew.sub(sc.gammaln(red.sum_(alpha)), red.sum_(sc.gammaln(alpha)))
    value = ew.add(red.sum_(sc.xlogy(ew.sub(column, 1.0), x), axis=0), norm)
    return _squeezed(value)


__all__ = ["multivariate_normal_logpdf", "dirichlet_logpdf"]
