"""``scipy.spatial.distance`` on traced values: ``cdist``, ``pdist``, ``squareform`` and the pair functions.

Each metric is written once, on pairs of rows that broadcast (``cdist``: every row of ``XA`` against
every row of ``XB``; ``pdist``: the pairs ``i < j`` of ``X``, gathered by static indices; the pair
functions such as ``euclidean(u, v)``: one pair), from NumPy ops gradc differentiates, so every
target (C included) computes them. Metrics: ``euclidean``, ``sqeuclidean``, ``cityblock``,
``chebyshev``, ``minkowski`` (``p``, ``inf`` included), ``cosine``, ``correlation``,
``braycurtis``, ``canberra``, ``seuclidean`` (``V``), ``mahalanobis`` (``VI``), ``jensenshannon``
(``base``), ``hamming``, with SciPy's weights ``w`` where SciPy takes them, and a Python callable
``metric(u, v)`` (traced once per pair). The values are SciPy's (float64, as SciPy converts to
double); the defaults of ``V`` and ``VI`` are computed from the data, as SciPy's are.

Derivatives: where two points coincide a norm has no derivative; the gradient there is zero (the
subgradient torch's ``cdist`` returns), for ``|d|^p`` with any ``p`` and the roots. ``chebyshev``'s
gradient goes to the first coordinate of largest difference; ``hamming`` counts unequal coordinates
and has no derivative. ``squareform`` moves entries (a gather), so its derivative moves them back.
``squareform(..., checks=True)`` cannot check traced values for symmetry: it checks shapes only.

>>> import numpy as np, gradc
>>> from scipy.spatial.distance import cdist
>>> x = np.array([[0.0, 0.0], [3.0, 4.0]])
>>> gradc.grad(lambda a: np.sum(cdist(a, a)))(x)
array([[-1.2, -1.6],
       [ 1.2,  1.6]])
"""
from __future__ import annotations

import math

import numpy as np

from gradc.errors import ShapeError, StaticValueNeeded, TraceError, user_location
from gradc.ir.builder import Traced
from gradc.trace import scipy_dispatch

FUNCTIONS: dict = {}
UFUNCS: dict = {}

_WEIGHTED = {"euclidean", "sqeuclidean", "cityblock", "chebyshev", "minkowski", "cosine", "correlation",
             "braycurtis", "canberra", "hamming"}
METRICS = sorted(_WEIGHTED | {"seuclidean", "mahalanobis", "jensenshannon"})
_ALIASES = {"euclid": "euclidean", "eu": "euclidean", "e": "euclidean", "sqe": "sqeuclidean", "sqeuclid":
            "sqeuclidean", "cblock": "cityblock", "cb": "cityblock", "c": "cityblock", "manhattan": "cityblock",
            "chebychev": "chebyshev", "cheby": "chebyshev", "cheb": "chebyshev", "ch": "chebyshev", "mi": "minkowski",
            "minkowski": "minkowski", "pnorm": "minkowski", "cos": "cosine", "co": "correlation",
            "corr": "correlation", "braycurtis": "braycurtis", "canb": "canberra", "se": "seuclidean",
            "mahal": "mahalanobis", "mah": "mahalanobis", "js": "jensenshannon", "ham": "hamming",
            "hamm": "hamming", "ha": "hamming", "h": "hamming", "matching": "hamming"}


def _float(x):
    """``x`` as float64 (SciPy computes in double), traced or not."""
    if isinstance(x, Traced):
        return x if x.dtype == np.float64 else x.astype(np.float64)
    return np.asarray(x, dtype=np.float64)


def _positive(s):
    """``s > 0`` and ``s`` with its non-positive entries replaced by 1: a root or power of it has a finite
    derivative everywhere, and the caller puts 0 where ``s`` was 0."""
    keep = s > 0
    return keep, np.where(keep, s, 1.0)


def _root(s, p):
    """``s ** (1/p)`` for ``s >= 0``, with derivative zero at ``s = 0`` (see the module docstring)."""
    keep, safe = _positive(s)
    return np.where(keep, np.sqrt(safe) if p == 2 else safe ** (1.0 / p), 0.0)


def _power(d, p):
    """``|d| ** p``, its derivative zero at ``d = 0`` for every ``p``."""
    if p == 2:
        return d * d
    if p == 1:
        return np.abs(d)
    keep, safe = _positive(np.abs(d))
    return np.where(keep, safe ** p, 0.0)


def _sum(x, w):
    return np.sum(x if w is None else x * w, axis=-1)


def _weighted_mean(x, w):
    return np.mean(x, axis=-1) if w is None else np.sum(x * w, axis=-1) / np.sum(w)


def _pair_distance(metric, u, v, kw, points):
    """The distance ``metric`` of the rows of ``u`` and ``v`` (they broadcast), along the last axis.

    ``points`` gives all the rows (for the data-dependent defaults of ``V`` and ``VI``)."""
    w = kw.pop("w", None)
    if w is not None:
        if metric not in _WEIGHTED:
            raise TraceError(f"scipy.spatial.distance metric {metric!r} takes no weights w", where=user_location(),
                             hint=f"weights are taken by {', '.join(sorted(_WEIGHTED))}")
        w = _float(w)
    d = u - v
    if metric == "minkowski":
        p = kw.pop("p", 2)
        if isinstance(p, Traced) or not p > 0:
            raise TraceError(f"scipy.spatial.distance minkowski needs a fixed p > 0, not {p!r}",
                             where=user_location(), hint="pass p as a positive Python number")
        if math.isinf(p):
            metric = "chebyshev"
        else:
            result = _root(_sum(_power(d, p), w), p)
    if metric == "euclidean":
        result = _root(_sum(d * d, w), 2)
    elif metric == "sqeuclidean":
        result = _sum(d * d, w)
    elif metric == "cityblock":
        result = _sum(np.abs(d), w)
    elif metric == "chebyshev":
        result = np.max(np.abs(d) if w is None else np.where(w > 0, np.abs(d), 0.0), axis=-1)
    elif metric in ("cosine", "correlation"):
        if metric == "correlation" and kw.pop("centered", True):
            u = u - _weighted_mean(u, w)[..., None]
            v = v - _weighted_mean(v, w)[..., None]
        uv, uu, vv = (_weighted_mean(x * y, w) for x, y in ((u, v), (u, u), (v, v)))
        result = np.clip(1.0 - uv / np.sqrt(uu * vv), 0.0, 2.0)
    elif metric == "braycurtis":
        result = _sum(np.abs(d), w) / _sum(np.abs(u + v), w)
    elif metric == "canberra":
        scale = np.abs(u) + np.abs(v)
        keep, safe = _positive(scale)
        result = _sum(np.where(keep, np.abs(d) / safe, 0.0), w)  # 0 / 0 counts 0, as SciPy's
    elif metric == "hamming":
        unequal = (u != v).astype(np.float64)
        result = _weighted_mean(unequal, w)
    elif metric == "seuclidean":
        V = kw.pop("V", None)  # noqa: N806 (SciPy's name)
        V = np.var(points, axis=0, ddof=1) if V is None else _float(V)  # noqa: N806
        result = _root(np.sum(d * d / V, axis=-1), 2)
    elif metric == "mahalanobis":
        VI = kw.pop("VI", None)  # noqa: N806 (SciPy's name)
        VI = np.linalg.inv(np.cov(points.T)).T if VI is None else _float(VI)  # noqa: N806
        result = _root(np.sum((d @ VI.T) * d, axis=-1), 2)
    elif metric == "jensenshannon":
        base = kw.pop("base", None)
        p_, q_ = u / np.sum(u, axis=-1, keepdims=True), v / np.sum(v, axis=-1, keepdims=True)
        m = (p_ + q_) / 2.0
        js = (_relative_entropy(p_, m) + _relative_entropy(q_, m)) / 2.0
        if base is not None:
            js = js / np.log(base)
        result = _root(js, 2)
    elif metric != "minkowski":
        raise TraceError(f"scipy.spatial.distance metric {metric!r} is not supported by gradc on traced values",
                         where=user_location(), hint=f"use one of {', '.join(METRICS)}, or a Python function "
                                                     "metric(u, v)")
    if kw:
        raise TraceError(f"scipy.spatial.distance {metric}: unexpected keyword{'s' if len(kw) > 1 else ''} "
                         f"{', '.join(sorted(kw))}", where=user_location(), hint="see SciPy's signature of the metric")
    return result


def _relative_entropy(p, m):
    keep, safe = _positive(p)
    return np.sum(np.where(keep, safe * np.log(safe / np.where(keep, m, 1.0)), 0.0), axis=-1)


def _metric_name(metric):
    if not isinstance(metric, str):
        raise TraceError(f"scipy.spatial.distance: metric {metric!r} is neither a name nor a function",
                         where=user_location(), hint=f"use one of {', '.join(METRICS)}, or a function metric(u, v)")
    name = metric.lower()
    return _ALIASES.get(name, name)


def _matrix(x, what, name):
    x = _float(x)
    if x.ndim != 2:
        raise ShapeError(f"scipy.spatial.distance.{what}: {name} must be a 2-dimensional array, not of shape "
                         f"{tuple(x.shape)}", where=user_location(), hint=f"pass {name} as (points, coordinates)")
    return x


def _no_out(what, out):
    if out is not None:
        raise TraceError(f"scipy.spatial.distance.{what} with out= is not supported by gradc on traced values",
                         where=user_location(), hint=f"use the value {what} returns")


def cdist(XA, XB, metric="euclidean", *, out=None, **kwargs):  # noqa: N803 (SciPy's names)
    """``scipy.spatial.distance.cdist``: the (m, n) distances of the rows of ``XA`` (m, k) and ``XB`` (n, k)."""
    _no_out("cdist", out)
    XA, XB = _matrix(XA, "cdist", "XA"), _matrix(XB, "cdist", "XB")  # noqa: N806
    if XA.shape[1] != XB.shape[1]:
        raise ShapeError(f"scipy.spatial.distance.cdist: XA and XB must have the same number of columns, not "
                         f"{XA.shape[1]} and {XB.shape[1]}", where=user_location(), hint="check the shapes")
    if callable(metric):
        return _stack_rows([[_float(metric(XA[i], XB[j], **kwargs)) for j in range(XB.shape[0])]
                            for i in range(XA.shape[0])], (XA.shape[0], XB.shape[0]))
    points = np.concatenate([XA, XB], axis=0)
    return _pair_distance(_metric_name(metric), XA[:, None, :], XB[None, :, :], dict(kwargs), points)


def pdist(X, metric="euclidean", *, out=None, **kwargs):  # noqa: N803 (SciPy's name)
    """``scipy.spatial.distance.pdist``: the condensed distances of the pairs ``i < j`` of rows of ``X``."""
    _no_out("pdist", out)
    X = _matrix(X, "pdist", "X")  # noqa: N806
    m = _static_count("pdist", X.shape[0])
    first, second = np.triu_indices(m, 1)
    if callable(metric):
        return _stack_rows([_float(metric(X[i], X[j], **kwargs)) for i, j in zip(first, second)], (len(first),))
    if m < 2:
        return np.zeros((0,)) + 0.0 * np.sum(X)
    return _pair_distance(_metric_name(metric), X[first], X[second], dict(kwargs), X)


def _static_count(what, m):
    if not isinstance(m, (int, np.integer)):  # a named size: the pairs i < j are fixed when tracing
        raise StaticValueNeeded(f"scipy.spatial.distance.{what} of a named number of points ({m}): its pairs are "
                                "fixed when the function is traced", where=user_location(),
                                hint="compile for a fixed number of points, or use cdist(X, X), which takes named "
                                     "sizes")
    return int(m)


def _stack_rows(values, shape):
    flat = [v for row in values for v in row] if values and isinstance(values[0], list) else list(values)
    if not flat:
        return np.zeros(shape)
    return np.reshape(np.stack(flat), shape)


def squareform(X, force="no", checks=True):  # noqa: N803 (SciPy's name)
    """``scipy.spatial.distance.squareform``: a condensed vector to its symmetric matrix (zero diagonal), or back.

    A traced square matrix is not checked for symmetry (its values are not known when tracing)."""
    x = X if isinstance(X, Traced) else np.asarray(X)
    if force not in ("no", "tomatrix", "tovector"):
        raise TraceError(f"scipy.spatial.distance.squareform: force={force!r}", where=user_location(),
                         hint="force is 'no', 'tomatrix' or 'tovector'")
    if force == "tomatrix" and x.ndim != 1:
        raise ShapeError("scipy.spatial.distance.squareform: force='tomatrix' needs a vector", where=user_location(),
                         hint="pass the condensed distances")
    if force == "tovector" and x.ndim != 2:
        raise ShapeError("scipy.spatial.distance.squareform: force='tovector' needs a matrix", where=user_location(),
                         hint="pass a square matrix")
    if x.ndim == 1:
        size = _static_count("squareform", x.shape[0])
        d = int(math.ceil(math.sqrt(size * 2)))
        if d * (d - 1) != size * 2:
            raise ShapeError(f"scipy.spatial.distance.squareform: a condensed vector of {size} entries is not the "
                             "pairs of any number of points (its length must be n (n - 1) / 2)",
                             where=user_location(), hint="pass the output of pdist")
        d = max(d, 1)
        index = np.full((d, d), size)  # the diagonal reads the appended zero
        first, second = np.triu_indices(d, 1)
        index[first, second] = index[second, first] = np.arange(size)
        padded = np.concatenate([x, np.zeros((1,), dtype=x.dtype)])
        return padded[index]
    if x.ndim == 2:
        if x.shape[0] != x.shape[1]:
            raise ShapeError(f"scipy.spatial.distance.squareform: the matrix must be square, not of shape "
                             f"{tuple(x.shape)}", where=user_location(), hint="pass a distance matrix")
        first, second = np.triu_indices(_static_count("squareform", x.shape[0]), 1)
        return x[first, second]
    raise ShapeError(f"scipy.spatial.distance.squareform: a vector or a square matrix, not {x.ndim}-dimensional",
                     where=user_location(), hint="pass the condensed distances or a distance matrix")


def _pair_function(metric, *names):
    """SciPy's function of one pair of vectors (``euclidean(u, v, w=None)``...), its extra parameters ``names``."""
    def call(u, v, *args, **kwargs):
        kw = dict(zip(names, args), **kwargs)
        u, v = _float(u), _float(v)
        if u.ndim != 1 or v.ndim != 1 or u.shape != v.shape:
            raise ShapeError(f"scipy.spatial.distance.{metric}: u and v must be vectors of one length, not of shapes "
                             f"{tuple(u.shape)} and {tuple(v.shape)}", where=user_location(), hint="check the shapes")
        required = {"seuclidean": "V", "mahalanobis": "VI"}.get(metric)
        if required is not None and kw.get(required) is None:
            raise TraceError(f"scipy.spatial.distance.{metric} needs {required}", where=user_location(),
                             hint=f"pass {required} (as SciPy requires)")
        return _pair_distance(metric, u, v, {k: x for k, x in kw.items() if x is not None}, None)
    call.__name__ = metric
    return call


_PAIR_FUNCTIONS = {
    "euclidean": ("w",), "sqeuclidean": ("w",), "cityblock": ("w",), "chebyshev": ("w",), "minkowski": ("p", "w"),
    "cosine": ("w",), "correlation": ("w", "centered"), "braycurtis": ("w",), "canberra": ("w",),
    "seuclidean": ("V",), "mahalanobis": ("VI",), "hamming": ("w",),
}


def jensenshannon(p, q, base=None, *, axis=0, keepdims=False):
    """``scipy.spatial.distance.jensenshannon`` along ``axis`` (the distributions normalised to sum 1)."""
    p, q = np.moveaxis(_float(p), axis, -1), np.moveaxis(_float(q), axis, -1)
    result = _pair_distance("jensenshannon", p, q, {"base": base}, None)
    return np.expand_dims(result, axis) if keepdims else result


for _name, _params in _PAIR_FUNCTIONS.items():
    scipy_dispatch.register(f"scipy.spatial.distance.{_name}", _pair_function(_name, *_params))
for _fn in (cdist, pdist, squareform, jensenshannon):
    scipy_dispatch.register(f"scipy.spatial.distance.{_fn.__name__}", _fn)
