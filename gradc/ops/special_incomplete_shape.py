"""The derivatives of ``gammainc``/``betainc`` in their shape parameters, as ops: ``gammainc_da``, ``betainc_da``,
``betainc_db``.

``gammainc_da(a, x) = dP/da``, ``betainc_da(a, b, x) = dI_x(a, b)/da``, ``betainc_db`` likewise in ``b``; the
methods (Moore's series, the continued fractions differentiated through their Lentz recurrences as Boik and
Robison-Cox do) are in ``gradc.ops.incomplete_shape_source``, whose text the NumPy target writes into
emitted modules; C calls gradc's C math library (``gradc/backends/c/mathlib/incomplete_shape.py``).

The ops differentiate again in ``x`` (the shape derivative of the density): ``d/dx dP/da = density (log x -
digamma(a))``, ``d/dx dI/da = density (log x - digamma(a) + digamma(a + b))``, ``d/dx dI/db = density (log(1-x)
- digamma(b) + digamma(a + b))``. A second derivative in a shape parameter has no rule: asking for one is
refused at the user's line (recorded when tracing in ``where``).

>>> import numpy as np, scipy.special
>>> h = 1e-6
>>> fd = (scipy.special.betainc(2.0, 3.0 + h, 0.4) - scipy.special.betainc(2.0, 3.0 - h, 0.4)) / (2 * h)
>>> bool(abs(betainc_db(2.0, 3.0, np.float64(0.4)) - fd) < 1e-8)
True
"""
from __future__ import annotations

import functools

import numpy as np

from gradc.errors import TraceError
from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _same_types
from gradc.ops.incomplete_shape_source import SOURCE, run
from gradc.ops.promote import apply_elementwise
from gradc.ops.special_numpy import c_call
from gradc.ops.special_scipy import _like, betaln, digamma, gammaln, xlog1py, xlogy

for _name in ("_gammainc_da", "_betainc_dab"):
    spell.HELPERS[_name] = SOURCE  # emitted modules define them (one text: both, and the helper they share)


@functools.lru_cache(maxsize=None)
def _functions() -> dict:
    return run()


def _gammainc_da_impl(a, x, **refusal):
    with np.errstate(all="ignore"):
        return _like(x, _functions()["_gammainc_da"](a, x))


def _betainc_impl(which):
    def impl(a, b, x, **refusal):
        with np.errstate(all="ignore"):
            return _like(x, _functions()["_betainc_dab"](a, b, x)[which])
    return impl


def _helper_spelling(call: str, index=None):
    def build(args, params, out, target):
        node = spell.call(call, *args)
        if index is not None:
            import ast
            node = ast.Subscript(node, ast.Constant(index), ast.Load())
        return spell.call("np.float32", node) if out.dtype == "f32" else node
    return build


def _mathlib(name):
    def build(args, params, in_types, out_type):
        holes = ", ".join(f"{{{i}}}" for i in range(len(args)))
        return c_call(f"gradc_{name}", list(args), template=f"gradc_{name}{{f}}({holes})")
    return c_spell.scalar(build)


def _refuse_second(name, needs, where="", public="", shape_names=""):
    if not any(needs):
        return
    names = shape_names.split(",") if shape_names else ["a", "b"][:len(needs)]
    what = " and ".join(n for n, need in zip(names, needs) if need)
    raise TraceError(f"{public or 'scipy.special.' + name}: the second derivative in {what} is not available in "
                     f"gradc (the first derivative in the shape parameters is, and every derivative in x)",
                     where=where or None,
                     hint="differentiate once in the shape parameters, or hold them constant in the outer "
                          "derivative (gradc.stop_gradient(...) or argnums=/wrt=)")


def _gamma_density(a, x):
    return ew.exp(ew.sub(ew.sub(xlogy(ew.sub(a, 1.0), x), x), gammaln(a)))


def _beta_density(a, b, x):
    return ew.exp(ew.sub(ew.add(xlogy(ew.sub(a, 1.0), x), xlog1py(ew.sub(b, 1.0), ew.neg(x))), betaln(a, b)))


def _gammainc_da_vjp(ct, out, a, x, needs, **refusal):
    _refuse_second("gammainc", needs[:1], **refusal)
    if not needs[1]:
        return None, None
    return None, ew.mul(ct, ew.mul(_gamma_density(a, x), ew.sub(ew.log(x), digamma(a))))


def _betainc_shape_vjp(which):
    def vjp(ct, out, a, b, x, needs, **refusal):
        _refuse_second("betainc", needs[:2], **refusal)
        if not needs[2]:
            return None, None, None
        both = digamma(ew.add(a, b))
        log_part = ew.log(x) if which == 0 else ew.log1p(ew.neg(x))
        shift = ew.sub(log_part, ew.sub(digamma(a if which == 0 else b), both))
        return None, None, ew.mul(ct, ew.mul(_beta_density(a, b, x), shift))
    return vjp


defop("gammainc_da", infer=_same_types, impl=_gammainc_da_impl, vjp=_gammainc_da_vjp, elementwise=True,
      doc="d/da gammainc(a, x); x_bar = ct * density * (log x - digamma(a)); a: refused (second order)",
      np=_helper_spelling("_gammainc_da"), c=_mathlib("gammainc_da"))
defop("betainc_da", infer=_same_types, impl=_betainc_impl(0), vjp=_betainc_shape_vjp(0), elementwise=True,
      doc="d/da betainc(a, b, x); x_bar = ct * density * (log x - digamma(a) + digamma(a + b))",
      np=_helper_spelling("_betainc_dab", 0), c=_mathlib("betainc_da"))
defop("betainc_db", infer=_same_types, impl=_betainc_impl(1), vjp=_betainc_shape_vjp(1), elementwise=True,
      doc="d/db betainc(a, b, x); x_bar = ct * density * (log(1 - x) - digamma(b) + digamma(a + b))",
      np=_helper_spelling("_betainc_dab", 1), c=_mathlib("betainc_db"))


def gammainc_da(a, x, **refusal):
    """``d/da scipy.special.gammainc(a, x)``; ``refusal`` (``where``, ``public``, ``shape_names``) names the
    user's call in the refusal of a second derivative in ``a``.

    >>> round(float(gammainc_da(1.0, np.float64(2.0))), 6)
    -0.220825
    """
    return apply_elementwise("gammainc_da", a, x, float_only=True, **refusal)


def betainc_da(a, b, x, **refusal):
    """``d/da scipy.special.betainc(a, b, x)`` (see :func:`gammainc_da` for ``refusal``).

    >>> bool(abs(betainc_da(1.0, 1.0, np.float64(0.5)) + 0.5 * np.log(2.0)) < 1e-12)
    True
    """
    return apply_elementwise("betainc_da", a, b, x, float_only=True, **refusal)


def betainc_db(a, b, x, **refusal):
    """``d/db scipy.special.betainc(a, b, x)`` (see :func:`gammainc_da` for ``refusal``).

    >>> bool(abs(betainc_db(1.0, 1.0, np.float64(0.5)) - 0.5 * np.log(2.0)) < 1e-12)
    True
    """
    return apply_elementwise("betainc_db", a, b, x, float_only=True, **refusal)


__all__ = ["gammainc_da", "betainc_da", "betainc_db"]
