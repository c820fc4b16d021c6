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
from gradc.ops.linalg import matmul
from gradc.ops.linalg_api import cholesky, eigh
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


def _as_matrix(cov, d):
    """A vector (diagonal) or scalar covariance as the matrix SciPy makes of it."""
    ndim = aval(cov).ndim
    if ndim == 2:
        return cov
    eye = np.eye(d)
    return ew.mul(eye, cov if ndim == 0 else sh.reshape(cov, (1, d)))


def _symmetric_lower(cov):
    """The symmetric matrix of ``cov``'s lower triangle (the entries SciPy reads)."""
    return ew.add(tri(cov, True), mT(tri(cov, True, -1)))


def _singular_logpdf(diff, cov, d):
    """SciPy's pseudo-density (``allow_singular=True``): eigenvalues above SciPy's cutoff count, the rest span
    directions with no spread; a point off the support (a deviation along those directions) has log-density -inf."""
    values, vectors = eigh(_symmetric_lower(_as_matrix(cov, d)))
    cutoff = ew.mul(red.max_(ew.abs_(values)), 1e6 * float(np.finfo(np.float64).eps))
    kept = ew.greater(values, cutoff)
    safe = ew.where(kept, values, 1.0)
    log_pdet = red.sum_(ew.where(kept, ew.log(safe), 0.0))
    rank = red.sum_(ew.astype(kept, "f64"))
    whitened = matmul(diff, ew.mul(vectors, ew.where(kept, ew.div(1.0, ew.sqrt(safe)), 0.0)))
    maha = red.sum_(ew.mul(whitened, whitened), axis=-1)
    off = matmul(diff, ew.mul(vectors, ew.where(kept, 0.0, 1.0)))
    outside = ew.greater_equal(ew.sqrt(red.sum_(ew.mul(off, off), axis=-1)), ew.mul(cutoff, 1e3))
    value = ew.mul(ew.add(ew.add(maha, log_pdet), ew.mul(rank, _LOG_2PI)), -0.5)
    return ew.where(outside, -np.inf, value)


def _log_det(cov, d, what):
    """``log det cov`` and the Cholesky factor of a matrix ``cov`` (None for a diagonal or a scalar)."""
    cov_ndim = aval(cov).ndim
    if cov_ndim == 0:
        return ew.mul(ew.log(cov), float(d)), None
    if cov_ndim == 1:
        return red.sum_(ew.log(cov)), None
    factor = cholesky(_symmetric_lower(cov), what=what)
    return ew.mul(red.sum_(ew.log(red.sum_(ew.mul(factor, eye_like(factor)), axis=-1))), 2.0), factor


def _mahalanobis(diff, cov, factor, what):
    """The squared Mahalanobis length of each point (row) of ``diff``."""
    if factor is None:  # a diagonal (vector) or a multiple of the identity (scalar)
        return red.sum_(ew.div(ew.mul(diff, diff), cov), axis=-1)
    if aval(diff).ndim > 2:
        raise TraceError(f"{what}: x of shape {aval(diff).shape}: gradc takes a point or a matrix of points",
                         hint="reshape x to (n, d) and the result back")
    solved = solve_triangular(factor, mT(diff) if aval(diff).ndim == 2 else diff, lower=True, what=what)
    return red.sum_(ew.mul(solved, solved), axis=0)


def multivariate_normal_logpdf(x, mean, cov, allow_singular=False, what="scipy.stats.multivariate_normal.logpdf"):
    """``scipy.stats.multivariate_normal.logpdf(x, mean, cov, allow_singular)`` (``mean`` may be 0, ``cov`` 1)."""
    d = _dimension(mean, cov, what)
    diff = ew.sub(_points(x, d, what), mean)  # (..., d)
    if allow_singular:
        return _squeezed(_singular_logpdf(diff, cov, d))
    log_det, factor = _log_det(cov, d, what)
    value = ew.mul(ew.add(ew.add(_mahalanobis(diff, cov, factor, what), log_det), d * _LOG_2PI), -0.5)
    return _squeezed(value)


def multivariate_normal_entropy(mean, cov, what="scipy.stats.multivariate_normal.entropy"):
    """``scipy.stats.multivariate_normal.entropy(mean, cov)``: ``(d (1 + log 2 pi) + log det cov) / 2``."""
    d = _dimension(mean, cov, what)
    log_det, _ = _log_det(cov, d, what)
    return ew.mul(ew.add(log_det, d * (1.0 + _LOG_2PI)), 0.5)


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


__all__ = ["multivariate_normal_logpdf", "multivariate_normal_entropy", "dirichlet_logpdf"]
