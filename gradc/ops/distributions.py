"""What every ``scipy.stats`` distribution table shares: the ``Spec`` record and support/validity helpers.

A distribution is a ``Spec``: its shape parameters' names, a function of them telling where they are valid
(SciPy's ``_argcheck``: NaN elsewhere), and its methods as functions of the *standardised* value
``z = (x - loc) / scale`` (``k - loc`` for a discrete one) and the shape parameters. Outside a support a
formula is evaluated at a safe point and replaced (two ``where``: the value and the gradient stay finite).

>>> float(on_support(True, np.float64(2.0), ew.log, -np.inf))
0.6931471805599453
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from gradc.ops import elementwise as ew
from gradc.ops import special_incomplete
from gradc.ops import special_numpy as sn


@dataclass(frozen=True)
class Spec:
    """One distribution: ``shapes`` (SciPy's names), ``valid(*shapes)`` (or None: always), ``methods``."""

    shapes: tuple
    methods: dict
    valid: Callable | None = None
    symmetric: bool = False  # sf(z) = cdf(-z), isf(p) = -ppf(p)
    discrete: bool = False
    extra: dict = field(default_factory=dict)


def is_static(value) -> bool:
    return isinstance(value, (bool, int, float)) and not isinstance(value, np.generic)


def all_of(*conditions):
    """The elementwise ``and`` of conditions (Python bools fold away)."""
    out = True
    for c in conditions:
        if c is True:
            continue
        if c is False:
            return False
        out = c if out is True else ew.logical_and(out, c)
    return out


def on_support(inside, z, formula, outside, safe=1.0):
    """``formula(z)`` where ``inside``, ``outside`` elsewhere (``formula`` evaluated at ``safe`` there)."""
    if inside is True:
        return formula(z)
    if inside is False:
        return ew.add(ew.mul(z, 0.0), outside)
    return ew.where(inside, formula(ew.where(inside, z, safe)), outside)


def positive(z, formula, outside=-np.inf, strict=False):
    """``formula`` on ``z >= 0`` (``z > 0`` when ``strict``)."""
    return on_support((ew.greater if strict else ew.greater_equal)(z, 0.0), z, formula, outside)


def unit(z, formula, outside=-np.inf):
    """``formula`` on ``0 <= z <= 1``."""
    return on_support(all_of(ew.greater_equal(z, 0.0), ew.less_equal(z, 1.0)), z, formula, outside, safe=0.5)


def between(z, low_value, formula, high_value, low=0.0, high=1.0):
    """``low_value`` below ``low``, ``high_value`` above ``high``, ``formula`` in between (a cdf's shape)."""
    inside = all_of(ew.greater(z, low), ew.less(z, high))
    middle = on_support(inside, z, formula, 0.0, safe=0.5 * (low + high))
    return ew.where(ew.less_equal(z, low), low_value, ew.where(ew.greater_equal(z, high), high_value, middle))


def log1mexp(t):
    """``log(1 - exp(t))`` for ``t <= 0``, accurate at both ends (Maechler's switch at ``-log 2``)."""
    near = ew.greater(t, -0.6931471805599453)
    a = ew.log(ew.neg(ew.expm1(ew.where(near, t, -1.0))))
    b = ew.log1p(ew.neg(ew.exp(ew.where(near, -1.0, t))))
    return ew.where(near, a, b)


def log_probability(p, complement):
    """``log(p)`` given ``p`` and ``complement = 1 - p``, each computed directly: ``log1p(-complement)`` when
    ``p`` is near 1 (where ``log(p)`` would have lost the digits of a tiny ``complement``)."""
    small = ew.less(p, 0.5)
    return ew.where(small, ew.log(ew.where(small, p, 0.5)), ew.log1p(ew.neg(ew.where(small, 0.5, complement))))


def is_integer(k):
    """``k`` is a whole number (SciPy's discrete distributions are 0 elsewhere)."""
    return ew.equal(ew.floor(k), k)


PUBLIC = [""]  # the scipy.stats method being evaluated (special_stats.evaluate sets it): named in refusals


def incomplete(name, *operands, names=()):
    """``scipy.special.<name>`` (incomplete gamma/beta or an inverse) of ``operands``, a refusal of its derivative in
    a shape parameter naming the public ``scipy.stats`` method and that parameter (``names``, per operand)."""
    return getattr(special_incomplete, name)(*operands, public=PUBLIC[0], shape_names=tuple(names))


def arctan2(y, x):
    return sn.arctan2(y, x)


__all__ = ["Spec", "all_of", "on_support", "positive", "unit", "between", "log1mexp", "log_probability", "is_integer",
           "incomplete", "PUBLIC",
           "is_static"]
