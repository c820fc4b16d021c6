"""``scipy.stats`` distributions' densities, distribution functions and quantiles, in gradc ops.

The tables (``gradc.ops.distributions_location``, ``_shaped``, ``_discrete``) give each method as a function
of the standardised value ``z = (x - loc) / scale`` (``k - loc`` for a discrete distribution) and the shape
parameters; ``evaluate`` applies loc and scale (``logpdf`` subtracts ``log(scale)``, ``ppf`` maps back
``loc + scale * q``), derives the methods a table leaves out (``pdf = exp(logpdf)``, a symmetric
distribution's ``sf(z) = cdf(-z)``), and gives NaN where SciPy does: invalid shape parameters or scale, a
probability outside [0, 1]. Everything is composed of differentiable ops with C lowerings, so derivatives in
``x``, ``loc``, ``scale`` and the shapes come from their rules. Which methods each has: ``METHODS``.

>>> import numpy as np
>>> bool(evaluate("norm", "logpdf", np.float64(0.0), (), 0.0, 1.0) == -0.5 * np.log(2 * np.pi))
True
"""
from __future__ import annotations

import numpy as np

from gradc.ops import (
    distributions,
    distributions_discrete,
    distributions_extreme,
    distributions_location,
    distributions_shaped,
)
from gradc.ops import elementwise as ew
from gradc.ops.distributions import Spec, all_of, is_static, on_support

DISTRIBUTIONS: dict[str, Spec] = {**distributions_location.DISTRIBUTIONS, **distributions_shaped.DISTRIBUTIONS,
                                  **distributions_discrete.DISTRIBUTIONS, **distributions_extreme.DISTRIBUTIONS}

_CONTINUOUS = ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf")
_DISCRETE = ("logpmf", "pmf", "cdf", "logcdf", "sf", "logsf")
_QUANTILES = ("ppf", "isf")


def _has(spec: Spec, method: str) -> bool:
    table = spec.methods
    if method in table:
        return True
    if method in ("pdf", "pmf"):
        return "log" + method in table
    if spec.symmetric and method in ("sf", "logsf", "isf"):
        return {"sf": "cdf", "logsf": "logcdf", "isf": "ppf"}[method] in table
    if method in ("logcdf", "logsf"):
        return _has(spec, method[3:])
    return False


METHODS = {name: [m for m in (_DISCRETE if spec.discrete else _CONTINUOUS) if _has(spec, m)]
           for name, spec in DISTRIBUTIONS.items()}


def _standard(spec: Spec, method: str, z, shapes):
    """``method`` of the standardised distribution at ``z`` (a probability for ppf/isf)."""
    table = spec.methods
    if method in table:
        return table[method](z, *shapes)
    if method in ("pdf", "pmf"):
        return ew.exp(_standard(spec, "log" + method, z, shapes))
    if spec.symmetric and method in ("sf", "logsf"):
        return _standard(spec, {"sf": "cdf", "logsf": "logcdf"}[method], ew.neg(z), shapes)
    if spec.symmetric and method == "isf":
        return ew.neg(_standard(spec, "ppf", z, shapes))
    return ew.log(_standard(spec, method[3:], z, shapes))  # logcdf, logsf


def _is(value, number) -> bool:
    return is_static(value) and value == number


def evaluate(name: str, method: str, x, shapes: tuple, loc, scale=1.0):
    """``scipy.stats.<name>.<method>(x, *shapes, loc=loc, scale=scale)`` in gradc ops (``method`` in ``METHODS``).

    >>> float(evaluate("expon", "cdf", np.float64(-1.0), (), 0.0, 1.0))
    0.0
    """
    outer = distributions.PUBLIC[0]
    distributions.PUBLIC[0] = f"scipy.stats.{name}.{method}"
    try:
        return _evaluate(DISTRIBUTIONS[name], method, x, shapes, loc, scale)
    finally:
        distributions.PUBLIC[0] = outer


def _evaluate(spec: Spec, method: str, x, shapes: tuple, loc, scale):
    valid = all_of(spec.valid(*shapes) if spec.valid is not None else True,
                   True if spec.discrete or _is(scale, 1) else ew.greater(scale, 0.0))
    safe_scale = scale if valid is True or spec.discrete else ew.where(valid, scale, 1.0)
    if method in _QUANTILES:
        probability = all_of(ew.greater_equal(x, 0.0), ew.less_equal(x, 1.0))
        q = on_support(probability, x, lambda p: _standard(spec, method, p, shapes), np.nan, safe=0.5)
        value = q if _is(safe_scale, 1) else ew.mul(q, safe_scale)
        value = value if _is(loc, 0) else ew.add(value, loc)
    else:
        z = x if _is(loc, 0) else ew.sub(x, loc)
        z = z if _is(safe_scale, 1) else ew.div(z, safe_scale)
        if method == "pdf" and not _is(safe_scale, 1):
            value = ew.exp(ew.sub(_standard(spec, "logpdf", z, shapes), ew.log(safe_scale)))
        else:
            value = _standard(spec, method, z, shapes)
            if method == "logpdf" and not _is(safe_scale, 1):
                value = ew.sub(value, ew.log(safe_scale))
    if valid is True:
        return value
    return ew.where(valid, value, np.nan)


__all__ = ["DISTRIBUTIONS", "METHODS", "evaluate"]
