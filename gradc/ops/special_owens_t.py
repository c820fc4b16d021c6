"""``scipy.special.owens_t(h, a)``: Owen's T function
``T(h, a) = 1/(2 pi) integral_0^a e^(-h^2 (1 + x^2) / 2) / (1 + x^2) dx``, differentiable in both arguments.

Computed with SciPy and spelled ``scipy.special.owens_t`` in emitted NumPy; C calls gradc's C math library
(``gradc/backends/c/mathlib/owens_t.py``). Both partial derivatives are elementary, written with gradc's ops, so
they differentiate again::

    dT/dh = -e^(-h^2/2) erf(a h / sqrt 2) / (2 sqrt(2 pi))
    dT/da = e^(-h^2 (1 + a^2) / 2) / (2 pi (1 + a^2))

``skewnorm_cdf(z, a)`` is the skew-normal distribution function ``Phi(z) - 2 T(z, a)`` as one op (NumPy: SciPy's
``scipy.stats.skewnorm.cdf``; C: the difference, or in the left tail for ``a > 0``, where it cancels, a positive
integral), with the derivatives ``2 phi(z) Phi(a z)`` and ``-e^(-(1 + a^2) z^2 / 2) / (pi (1 + a^2))``.

>>> import numpy as np
>>> bool(np.isclose(owens_t(np.float64(0.0), np.float64(1.0)), 0.125))
True
"""
from __future__ import annotations

import math

import numpy as np

from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise
from gradc.ops.special_numpy import c_call
from gradc.ops.special_scipy import _like, _scipy_special, erf, ndtr, scipy_spelling


def _owens_t_vjp(ct, out, h, a, needs):
    h_bar = a_bar = None
    if needs[0]:
        gauss = ew.exp(ew.mul(ew.mul(h, h), -0.5))
        h_bar = ew.mul(ct, ew.mul(ew.mul(gauss, erf(ew.mul(ew.mul(a, h), math.sqrt(0.5)))),
                                  -0.5 / math.sqrt(2.0 * math.pi)))
    if needs[1]:
        one_plus = ew.add(ew.mul(a, a), 1.0)
        a_bar = ew.mul(ct, ew.div(ew.exp(ew.mul(ew.mul(ew.mul(h, h), one_plus), -0.5)),
                                  ew.mul(one_plus, 2.0 * math.pi)))
    return h_bar, a_bar


defop("owens_t", infer=_same_types, impl=lambda h, a: _like(h, _scipy_special().owens_t(h, a)), vjp=_owens_t_vjp,
      elementwise=True, np=scipy_spelling("owens_t"),
      doc="h_bar = -ct * exp(-h**2/2) * erf(a h / sqrt 2) / (2 sqrt(2 pi)); "
          "a_bar = ct * exp(-h**2 (1 + a**2) / 2) / (2 pi (1 + a**2))",
      c=c_spell.scalar(lambda a, p, ti, to: c_call("gradc_owens_t", [a[0], a[1]],
                                                   template="gradc_owens_t{f}({0}, {1})")))


def _skewnorm_cdf_vjp(ct, out, z, a, needs):
    z_bar = a_bar = None
    if needs[0]:
        density = ew.exp(ew.mul(ew.mul(z, z), -0.5))
        z_bar = ew.mul(ct, ew.mul(ew.mul(density, ndtr(ew.mul(a, z))), 2.0 / math.sqrt(2.0 * math.pi)))
    if needs[1]:
        one_plus = ew.add(ew.mul(a, a), 1.0)
        a_bar = ew.mul(ct, ew.div(ew.exp(ew.mul(ew.mul(ew.mul(z, z), one_plus), -0.5)),
                                  ew.mul(one_plus, -math.pi)))
    return z_bar, a_bar


def _skewnorm_cdf_impl(z, a):
    import scipy.stats  # on first use: importing gradc does not import SciPy
    with np.errstate(all="ignore"):
        return _like(z, scipy.stats.skewnorm.cdf(z, a))


def _skewnorm_cdf_spelling(args, params, out, target):
    value = spell.call("scipy.stats.skewnorm.cdf", *args)
    return value if out.dtype == "f64" else spell.method_call(value, "astype", spell.dotted(f"np.{out.np_dtype.name}"))


defop("skewnorm_cdf", infer=_same_types, impl=_skewnorm_cdf_impl, vjp=_skewnorm_cdf_vjp, elementwise=True,
      np=_skewnorm_cdf_spelling,
      doc="z_bar = ct * 2 phi(z) ndtr(a z); a_bar = -ct * exp(-(1 + a**2) z**2 / 2) / (pi (1 + a**2))",
      c=c_spell.scalar(lambda a, p, ti, to: c_call("gradc_skewnorm_cdf", [a[0], a[1]],
                                                   template="gradc_skewnorm_cdf{f}({0}, {1})")))


def skewnorm_cdf(z, a):
    """``scipy.stats.skewnorm.cdf(z, a)`` on gradc values (op ``skewnorm_cdf``).

    >>> bool(np.isclose(skewnorm_cdf(np.float64(0.0), np.float64(1.0)), 0.25))
    True
    """
    return apply_elementwise("skewnorm_cdf", z, a, float_only=True)


def owens_t(h, a):
    """``scipy.special.owens_t(h, a)`` on gradc values (op ``owens_t``), broadcast as SciPy's ufunc does.

    >>> bool(np.isclose(owens_t(np.float64(1.0), np.float64(np.inf)), 0.0793276269657285))
    True
    """
    return apply_elementwise("owens_t", h, a, float_only=True)


__all__ = ["owens_t"]
