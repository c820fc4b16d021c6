"""``scipy.special``'s regularized incomplete gamma and beta functions and their inverses.

``gammainc(a, x) = P(a, x)``, ``gammaincc(a, x) = Q(a, x) = 1 - P(a, x)``, ``betainc(a, b, x) = I_x(a, b)``,
and the inverses in their last argument ``gammaincinv(a, y)``, ``gammainccinv(a, y)``, ``betaincinv(a, b, y)``.
Each primitive computes with SciPy and is spelled ``scipy.special.NAME(...)`` in emitted NumPy; C calls
gradc's C math library (``gradc/backends/c/mathlib/incomplete.py``).

Derivatives: in ``x`` the density, ``dP/dx = x^(a-1) e^-x / Gamma(a)`` (``-`` that for ``Q``) and
``dI/dx = x^(a-1) (1-x)^(b-1) / B(a, b)``, written with gradc ops (``xlogy``, ``gammaln``, ``betaln``), so they
differentiate again; the inverses by the inverse function rule, ``dx/dy = 1 / density(x)`` at ``x = out``.
In the shape parameters (``a``, ``b``) there is no closed form: the ops ``gammainc_da``, ``betainc_da`` and
``betainc_db`` (``gradc.ops.special_incomplete_shape``: Moore's series, the continued fractions differentiated
through their Lentz recurrences) compute them; ``gammaincc``'s is ``-gammainc_da``, and the inverses' follow from
the implicit function rule, ``dx/da = -(dF/da)(a, x) / density(x)`` at ``x = out`` (the same for ``P`` and ``Q``).
A second derivative in a shape parameter is refused, naming the user's function and line (recorded when
tracing in the op's ``where``, only when a shape parameter is traced). Callers standing for another public
function (``scipy.stats.gamma.cdf``) pass ``public=`` and ``shape_names=`` to be named instead.

>>> import numpy as np
>>> bool(np.isclose(gammainc(2.0, np.float64(1.0)), 1.0 - 2.0 / np.e))
True
"""
from __future__ import annotations

import numpy as np  # noqa: F401 (the doctests use it)

from gradc.errors import user_location
from gradc.ir.registry import defop
from gradc.ops import c_spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise
from gradc.ops.special_incomplete_shape import betainc_da, betainc_db, gammainc_da
from gradc.ops.special_numpy import c_call
from gradc.ops.special_scipy import (
    _like,
    _scipy_special,
    betaln,
    gammaln,
    scipy_operands,
    scipy_spelling,
    xlog1py,
    xlogy,
)
from gradc.ops.values import first_traced


def _impl(name):
    def run(*xs, **refusal):
        return _like(xs[-1], getattr(_scipy_special(), name)(*xs))
    return run


def _mathlib(name):
    """The C spelling calling ``gradc_<name>`` of gradc's C math library (float: ``gradc_<name>f``)."""
    def build(args, params, in_types, out_type):
        holes = ", ".join(f"{{{i}}}" for i in range(len(args)))
        return c_call(f"gradc_{name}", list(args), template=f"gradc_{name}{{f}}({holes})")
    return c_spell.scalar(build)


def _gamma_density(a, x):
    """``x^(a-1) e^-x / Gamma(a)`` (0 at x = 0 for a > 1, as the limit)."""
    return ew.exp(ew.sub(ew.sub(xlogy(ew.sub(a, 1.0), x), x), gammaln(a)))


def _beta_density(a, b, x):
    """``x^(a-1) (1-x)^(b-1) / B(a, b)``."""
    return ew.exp(ew.sub(ew.add(xlogy(ew.sub(a, 1.0), x), xlog1py(ew.sub(b, 1.0), ew.neg(x))), betaln(a, b)))


def _gamma_vjp(sign):
    def vjp(ct, out, a, x, needs, **refusal):
        a_bar = ew.mul(ct, ew.mul(gammainc_da(a, x, **refusal), sign)) if needs[0] else None
        return a_bar, (ew.mul(ct, ew.mul(_gamma_density(a, x), sign)) if needs[1] else None)
    return vjp


def _gamma_inverse_vjp(sign):
    def vjp(ct, out, a, y, needs, **refusal):
        density = _gamma_density(a, out)
        a_bar = ew.neg(ew.div(ew.mul(ct, gammainc_da(a, out, **refusal)), density)) if needs[0] else None
        return a_bar, (ew.div(ct, ew.mul(density, sign)) if needs[1] else None)
    return vjp


def _betainc_vjp(ct, out, a, b, x, needs, **refusal):
    a_bar = ew.mul(ct, betainc_da(a, b, x, **refusal)) if needs[0] else None
    b_bar = ew.mul(ct, betainc_db(a, b, x, **refusal)) if needs[1] else None
    return a_bar, b_bar, (ew.mul(ct, _beta_density(a, b, x)) if needs[2] else None)


def _betaincinv_vjp(ct, out, a, b, y, needs, **refusal):
    density = _beta_density(a, b, out)
    a_bar = ew.neg(ew.div(ew.mul(ct, betainc_da(a, b, out, **refusal)), density)) if needs[0] else None
    b_bar = ew.neg(ew.div(ew.mul(ct, betainc_db(a, b, out, **refusal)), density)) if needs[1] else None
    return a_bar, b_bar, (ew.div(ct, density) if needs[2] else None)


def _defop(name, vjp, doc):
    defop(name, infer=_same_types, impl=_impl(name), vjp=vjp, elementwise=True, doc=doc,
          np=scipy_spelling(name), c=_mathlib(name))


_defop("gammainc", _gamma_vjp(1.0), "x_bar = ct * x^(a-1) e^-x / Gamma(a); a_bar = ct * gammainc_da(a, x)")
_defop("gammaincc", _gamma_vjp(-1.0), "x_bar = -ct * x^(a-1) e^-x / Gamma(a); a_bar = -ct * gammainc_da(a, x)")
_defop("gammaincinv", _gamma_inverse_vjp(1.0),
       "y_bar = ct / density(out); a_bar = -ct * gammainc_da(a, out) / density(out)")
_defop("gammainccinv", _gamma_inverse_vjp(-1.0),
       "y_bar = -ct / density(out); a_bar = -ct * gammainc_da(a, out) / density(out)")
_defop("betainc", _betainc_vjp, "x_bar = ct * x^(a-1) (1-x)^(b-1) / B(a, b); a_bar, b_bar = ct * betainc_da/db")
_defop("betaincinv", _betaincinv_vjp,
       "y_bar = ct / density(out); a_bar = -ct * betainc_da(a, b, out) / density(out); b_bar likewise")


def _apply(name, shapes, last, public, shape_names):
    """The op on ``(*shapes, last)``; when a shape parameter is traced, the user's line (and the caller's public
    name and parameter names, if given) recorded for the refusal of its derivative."""
    params = {}
    if first_traced(list(shapes)) is not None:
        params = {"where": user_location() or ""}
        if public:
            params["public"] = public
        if shape_names:
            params["shape_names"] = ",".join(shape_names)
    return apply_elementwise(name, *scipy_operands(name, [*shapes, last]), float_only=True, **params)


def gammainc(a, x, *, public: str = "", shape_names: tuple = ()):
    """``scipy.special.gammainc(a, x)``: the regularized lower incomplete gamma function ``P(a, x)``.

    >>> float(gammainc(1.0, np.float64(0.0)))
    0.0
    """
    return _apply("gammainc", (a,), x, public, shape_names)


def gammaincc(a, x, *, public: str = "", shape_names: tuple = ()):
    """``scipy.special.gammaincc(a, x)``: the regularized upper incomplete gamma function ``1 - P(a, x)``.

    >>> bool(np.isclose(gammaincc(1.0, np.float64(2.0)), np.exp(-2.0)))
    True
    """
    return _apply("gammaincc", (a,), x, public, shape_names)


def gammaincinv(a, y, *, public: str = "", shape_names: tuple = ()):
    """``scipy.special.gammaincinv(a, y)``: ``x`` with ``gammainc(a, x) = y``.

    >>> bool(np.isclose(gammaincinv(1.0, np.float64(1.0 - np.exp(-2.0))), 2.0))
    True
    """
    return _apply("gammaincinv", (a,), y, public, shape_names)


def gammainccinv(a, y, *, public: str = "", shape_names: tuple = ()):
    """``scipy.special.gammainccinv(a, y)``: ``x`` with ``gammaincc(a, x) = y``.

    >>> bool(np.isclose(gammainccinv(1.0, np.float64(np.exp(-2.0))), 2.0))
    True
    """
    return _apply("gammainccinv", (a,), y, public, shape_names)


def betainc(a, b, x, *, public: str = "", shape_names: tuple = ()):
    """``scipy.special.betainc(a, b, x)``: the regularized incomplete beta function ``I_x(a, b)``.

    >>> bool(np.isclose(betainc(1.0, 1.0, np.float64(0.3)), 0.3))
    True
    """
    return _apply("betainc", (a, b), x, public, shape_names)


def betaincinv(a, b, y, *, public: str = "", shape_names: tuple = ()):
    """``scipy.special.betaincinv(a, b, y)``: ``x`` with ``betainc(a, b, x) = y``.

    >>> bool(np.isclose(betaincinv(2.0, 1.0, np.float64(0.25)), 0.5))
    True
    """
    return _apply("betaincinv", (a, b), y, public, shape_names)


__all__ = ["gammainc", "gammaincc", "gammaincinv", "gammainccinv", "betainc", "betaincinv"]
