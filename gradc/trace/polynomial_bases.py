"""The other ``numpy.polynomial`` bases on traced coefficients or points: ``chebval``/``chebvander``/``chebfit``
(Chebyshev), ``legval``/``legvander``/``legfit`` (Legendre), ``hermval``/``hermvander``/``hermfit`` (physicists'
Hermite), ``hermeval``/``hermevander``/``hermefit`` (probabilists' Hermite), ``lagval``/``lagvander``/``lagfit``
(Laguerre), routed by name as ``numpy.polynomial.chebyshev.chebval`` and so on.

Each basis is its three-term recurrence ``P[k+1] = (a_k x + b_k) P[k] - c_k P[k-1]``: ``*vander`` stacks the
``P[k](x)``, ``*val`` sums ``c[k] P[k](x)`` (``tensor=`` as NumPy's), ``*fit`` solves the least-squares problem
on the Vandermonde matrix (an int degree; NumPy scales its columns first: the same solution).

>>> float(chebval(0.5, np.array([1.0, 2.0, 3.0])))  # 1 + 2 x + 3 (2 x^2 - 1) at 0.5
0.5
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, TraceError
from gradc.ops import linalg_api as lin
from gradc.trace.routines_dispatch import _float, _operand, _static_int


def _recurrence(first, step):
    """A basis: ``first(x) = P[1](x)`` and ``step(k, x, p_k, p_km1) = P[k+1](x)``."""
    return first, step


BASES = {
    "cheb": _recurrence(lambda x: x, lambda k, x, p, q: 2.0 * x * p - q),
    "leg": _recurrence(lambda x: x, lambda k, x, p, q: ((2 * k + 1) * x * p - k * q) / (k + 1.0)),
    "herm": _recurrence(lambda x: 2.0 * x, lambda k, x, p, q: 2.0 * x * p - 2.0 * k * q),
    "herme": _recurrence(lambda x: x, lambda k, x, p, q: x * p - k * q),
    "lag": _recurrence(lambda x: 1.0 - x, lambda k, x, p, q: ((2 * k + 1 - x) * p - k * q) / (k + 1.0)),
}
MODULES = {"cheb": "chebyshev", "leg": "legendre", "herm": "hermite", "herme": "hermite_e", "lag": "laguerre"}


def _terms(basis, x, n):
    """``[P[0](x), ..., P[n-1](x)]``."""
    first, step = BASES[basis]
    terms = [x * 0.0 + 1.0]
    if n > 1:
        terms.append(first(x) + x * 0.0)
    for k in range(1, n - 1):
        terms.append(step(k, x, terms[k], terms[k - 1]))
    return terms


def vander(basis, x, deg):
    deg = _static_int(deg, f"numpy.polynomial.{MODULES[basis]}.{basis}vander's degree")
    if deg < 0:
        raise ShapeError(f"{basis}vander: the degree must be non-negative", hint="pass deg >= 0")
    x = _float(_operand(x))
    return np.stack(_terms(basis, x, deg + 1), axis=-1)


def value(basis, x, c, tensor=True):
    c = _float(_operand(c))
    if np.ndim(c) == 0:
        c = np.reshape(c, (1,))
    x = _operand(x)
    if tensor and np.ndim(c) > 1:
        c = np.reshape(c, np.shape(c) + (1,) * np.ndim(x))
    terms = _terms(basis, x, np.shape(c)[0])
    out = c[0] * terms[0]
    for k in range(1, len(terms)):
        out = out + c[k] * terms[k]
    return out


def fit(basis, x, y, deg, rcond=None, full=False, w=None):
    if not isinstance(deg, (int, np.integer)) or full:
        raise TraceError(f"numpy.polynomial.{MODULES[basis]}.{basis}fit with a list of degrees or full=True is not "
                         "supported by gradc", hint="pass the highest degree as an int; compute residuals yourself")
    x, y = _float(_operand(x)), _float(_operand(y))
    lhs, rhs = vander(basis, x, int(deg)), y
    if w is not None:
        w = _float(_operand(w))
        lhs = lhs * w[:, None]
        rhs = rhs * (w if np.ndim(rhs) == 1 else w[:, None])
    rcond = np.shape(x)[0] * np.finfo(np.float64).eps if rcond is None else rcond
    return lin.lstsq(lhs, rhs, rcond, what=f"numpy.polynomial.{MODULES[basis]}.{basis}fit")[0]


def _named(basis, kind):
    fn = {"val": value, "vander": vander, "fit": fit}[kind]

    def call(*args, **kwargs):
        return fn(basis, *args, **kwargs)
    call.__name__ = call.__qualname__ = f"{basis}{kind}"
    return call


chebval, legval, hermval, hermeval, lagval = (_named(b, "val") for b in BASES)
FUNCTIONS = {(basis, f"{basis}{kind}"): _named(basis, kind) for basis in BASES for kind in ("val", "vander", "fit")}

__all__ = ["BASES", "MODULES", "FUNCTIONS", "value", "vander", "fit", "chebval", "legval", "hermval", "hermeval",
           "lagval"]
