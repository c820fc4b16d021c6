"""``scipy.special.sici(x)``: the sine and cosine integrals ``Si(x) = integral_0^x sin t / t dt`` and
``Ci(x) = gamma + log|x| + integral_0^x (cos t - 1) / t dt`` (SciPy's real ``Ci(|x|)`` for ``x < 0``), one op each.

Computed with SciPy and spelled ``scipy.special.sici(x)[k]`` in emitted NumPy; C calls gradc's C math library
(``gradc/backends/c/mathlib/sine_cosine_integral.py``). The derivatives are elementary, written with gradc's ops,
so they differentiate again::

    Si'(x) = sin(x) / x   (1 at 0: written sinc(x / pi))        Ci'(x) = cos(x) / x

>>> import numpy as np
>>> [round(float(v), 12) for v in sici(np.float64(1.0))]
[0.946083070367, 0.337403922901]
"""
from __future__ import annotations

import ast
import math

import numpy as np  # noqa: F401 (the doctests use it)

from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops import special_numpy as sf
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise
from gradc.ops.special_numpy import c_call
from gradc.ops.special_scipy import _like, _scipy_special


def _part(k):
    def impl(x):
        return _like(x, _scipy_special().sici(x)[k])

    def spelling(args, params, out, target):
        return ast.Subscript(value=spell.call("scipy.special.sici", args[0]), slice=spell.literal(k), ctx=ast.Load())
    return impl, spelling


def _c(name):
    return c_spell.scalar(lambda a, p, ti, to: c_call(f"gradc_{name}", [a[0]], template=f"gradc_{name}{{f}}({{0}})"))


_si_impl, _si_spelling = _part(0)
_ci_impl, _ci_spelling = _part(1)
defop("sine_integral", infer=_same_types, impl=_si_impl, elementwise=True, np=_si_spelling,
      vjp=lambda ct, out, x, needs: (ew.mul(ct, sf.sinc(ew.mul(x, 1.0 / math.pi))),),
      doc="x_bar = ct * sin(x) / x (1 at 0)", c=_c("sine_integral"))
defop("cosine_integral", infer=_same_types, impl=_ci_impl, elementwise=True, np=_ci_spelling,
      vjp=lambda ct, out, x, needs: (ew.mul(ct, ew.div(ew.cos(x), x)),),
      doc="x_bar = ct * cos(x) / x", c=_c("cosine_integral"))


def sici(x):
    """``scipy.special.sici(x)`` on gradc values: the pair ``(Si(x), Ci(x))`` (ops ``sine_integral``,
    ``cosine_integral``).

    >>> float(sici(np.float64(0.0))[0])
    0.0
    """
    return (apply_elementwise("sine_integral", x, float_only=True),
            apply_elementwise("cosine_integral", x, float_only=True))


__all__ = ["sici"]
