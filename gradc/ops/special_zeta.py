"""``scipy.special.zeta(x, q)``: the Hurwitz zeta function ``sum_k (q + k)^-x`` (``x > 1``), differentiable in
``q``; its derivative in ``x`` (a sum of ``log(q + k) (q + k)^-x`` with no closed form in zeta) is refused by name.

Computed with SciPy and spelled ``scipy.special.zeta`` in emitted NumPy; C calls gradc's Hurwitz zeta
(``gradc/backends/c/mathlib/beta_zeta.py``, the one ``polygamma`` uses) with SciPy's special values. The
derivative in ``q`` is again a zeta, so it differentiates to any order::

    d/dq zeta(x, q) = -x zeta(x + 1, q)

>>> import numpy as np
>>> bool(np.isclose(zeta(np.float64(2.0), np.float64(1.0)), np.pi ** 2 / 6))
True
"""
from __future__ import annotations

import numpy as np  # noqa: F401 (the doctests use it)

from gradc.errors import TraceError
from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise
from gradc.ops.refused_derivative import refuse_derivative
from gradc.ops.special_numpy import c_call
from gradc.ops.special_scipy import _like, _scipy_special
from gradc.ops.values import first_traced


def _zeta_vjp(ct, out, x, q, needs):
    # x's cotangent is never used: x went through refuse_derivative, which raises when differentiated
    x_bar = ew.mul(ct, 0.0) if needs[0] else None
    q_bar = ew.mul(ct, ew.mul(ew.neg(x), _hurwitz(ew.add(x, 1.0), q))) if needs[1] else None
    return x_bar, q_bar


defop("zeta", infer=_same_types, impl=lambda x, q: _like(x, _scipy_special().zeta(x, q)), vjp=_zeta_vjp,
      elementwise=True, doc="q_bar = -ct * x * zeta(x + 1, q); x_bar: refused",
      np=lambda args, params, out, target: spell.call("scipy.special.zeta", *args),
      c=c_spell.scalar(lambda a, p, ti, to: c_call("gradc_zeta", [a[0], a[1]], template="gradc_zeta{f}({0}, {1})")))


def _hurwitz(x, q):
    return apply_elementwise("zeta", x, q, float_only=True)


def zeta(x, q=None, out=None):
    """``scipy.special.zeta(x, q)`` on gradc values (op ``zeta``); ``q`` is required (the Riemann zeta
    ``zeta(x)`` continues below ``x = 1`` by reflection, which gradc does not have).

    >>> bool(np.isclose(zeta(np.float64(3.0), np.float64(2.0)), 1.2020569031595942 - 1.0))
    True
    """
    if out is not None:
        raise TraceError("scipy.special.zeta with out= is not supported by gradc", hint="assign the result")
    if q is None:
        raise TraceError("scipy.special.zeta(x) (Riemann's, one argument) is not supported by gradc on traced values",
                         hint="for x > 1 write scipy.special.zeta(x, 1.0) (Hurwitz's, equal there)")
    if first_traced([x]) is not None:
        x = refuse_derivative(x, what="scipy.special.zeta(x, q) in x",
                              hint="gradc differentiates zeta(x, q) in q only; hold x constant "
                                   "(pass it as a number, or stop_gradient it)")
    return _hurwitz(x, q)


__all__ = ["zeta"]
