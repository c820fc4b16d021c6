"""``scipy.special``'s Bessel functions of real argument: ``j0 j1 jv y0 y1 yv i0 i1 iv k0 k1 kv``, the
exponentially scaled ``i0e i1e ive k0e k1e kve`` and the aliases ``jn`` (``jv``) and ``yn`` (``yv`` of an
integer order).

The order is a constant when tracing (the op's static ``v``): a traced order is refused by name, since SciPy
gives no derivative in it either. Each primitive computes with SciPy and is spelled ``scipy.special.NAME``
in emitted NumPy. Derivatives are the recurrences (DLMF 10.6.1, 10.29.1), written with these ops so they
differentiate again::

    J_v' = (J_{v-1} - J_{v+1}) / 2        (J_0' = -J_1; Y likewise)
    I_v' = (I_{v-1} + I_{v+1}) / 2        (I_0' = I_1)
    K_v' = -(K_{v-1} + K_{v+1}) / 2       (K_0' = -K_1)

and the product rule for the scaled ones, ``ive = iv e^-|x|`` and ``kve = kv e^x`` (SciPy's definitions for
real x): ``ive' = (ive_{v-1} + ive_{v+1}) / 2 - sign(x) ive``, ``kve' = kve - (kve_{v-1} + kve_{v+1}) / 2``.
C: gradc's C math library (``gradc/backends/c/mathlib/bessel.py``): libm's POSIX ``j0 j1 jn y0 y1 yn`` for the
integer orders of J and Y, gradc's own J and Y of fractional order and I and K of any real order.

>>> bool(np.isclose(jv(0, np.float64(1.0)), 0.7651976865579666))
True
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise
from gradc.ops.special_numpy import c_call
from gradc.ops.special_scipy import _like, _scipy_special, scipy_spelling
from gradc.ops.values import aval, first_traced

# ---------------------------------------------------------------- integer orders 0 and 1: one-argument ops
# name -> (its derivative from gradc functions of x, the formula)
_UNARY_RULES = {
    "j0": (lambda x: ew.neg(j1(x)), "-j1(x)"),
    "j1": (lambda x: ew.mul(ew.sub(j0(x), jv(2, x)), 0.5), "(j0(x) - jv(2, x)) / 2"),
    "y0": (lambda x: ew.neg(y1(x)), "-y1(x)"),
    "y1": (lambda x: ew.mul(ew.sub(y0(x), yv(2, x)), 0.5), "(y0(x) - yv(2, x)) / 2"),
    "i0": (lambda x: i1(x), "i1(x)"),
    "i1": (lambda x: ew.mul(ew.add(i0(x), iv(2, x)), 0.5), "(i0(x) + iv(2, x)) / 2"),
    "k0": (lambda x: ew.neg(k1(x)), "-k1(x)"),
    "k1": (lambda x: ew.mul(ew.add(k0(x), kv(2, x)), -0.5), "-(k0(x) + kv(2, x)) / 2"),
    "i0e": (lambda x: ew.sub(i1e(x), ew.mul(ew.sign(x), i0e(x))), "i1e(x) - sign(x) i0e(x)"),
    "i1e": (lambda x: ew.sub(ew.mul(ew.add(i0e(x), ive(2, x)), 0.5), ew.mul(ew.sign(x), i1e(x))),
            "(i0e(x) + ive(2, x)) / 2 - sign(x) i1e(x)"),
    "k0e": (lambda x: ew.sub(k0e(x), k1e(x)), "k0e(x) - k1e(x)"),
    "k1e": (lambda x: ew.sub(k1e(x), ew.mul(ew.add(k0e(x), kve(2, x)), 0.5)), "k1e(x) - (k0e(x) + kve(2, x)) / 2"),
}


def _unary_impl(name):
    return lambda x: _like(x, getattr(_scipy_special(), name)(x))


def _library(name):
    """``gradc_<name>(x)`` (``gradc_<name>f`` for float) of gradc's C math library."""
    return c_spell.scalar(lambda a, p, ti, to: c_call(f"gradc_{name}", [a[0]], template=f"gradc_{name}{{f}}({{0}})"))


for _name, (_rule, _formula) in _UNARY_RULES.items():
    defop(_name, infer=_same_types, impl=_unary_impl(_name), elementwise=True, doc=f"x_bar = ct * {_formula}",
          vjp=(lambda rule: lambda ct, out, x, needs: (ew.mul(ct, rule(x)),))(_rule),
          np=scipy_spelling(_name), c=_library(_name))


# ---------------------------------------------------------------- any real order: the order a static parameter
def _ordered_impl(name):
    return lambda x, v: _like(x, getattr(_scipy_special(), name)(v, x))


def _ordered_spelling(name):
    def build(args, params, out, target):
        return spell.call(f"scipy.special.{name}", spell.literal(params["v"]), args[0])
    return build


def _is_integer(v) -> bool:
    return float(v) == int(v)


def _ordered_c(name):
    """C: ``gradc_<name>(v, x)`` of gradc's C math library; J and Y of an integer order call libm's ``jn``/``yn``."""
    def build(args, params, in_types, out_type):
        v = params["v"]
        if name in ("jv", "yv"):
            function, order = (f"gradc_{name}", str(int(v))) if _is_integer(v) else (f"gradc_{name}_real", repr(v))
        else:
            function, order = f"gradc_{name}", repr(float(v))
        return c_call(function, [args[0]], template=f"{function}{{f}}({order}, {{0}})")
    return c_spell.scalar(build)


def _shifted_pair(fn, v, x):
    return fn(v - 1, x), fn(v + 1, x)


def _jy_vjp(fn):
    def vjp(ct, out, x, needs, v):
        below, above = _shifted_pair(fn, v, x)
        return (ew.mul(ct, ew.mul(ew.sub(below, above), 0.5)),)
    return vjp


def _iv_vjp(ct, out, x, needs, v):
    below, above = _shifted_pair(iv, v, x)
    return (ew.mul(ct, ew.mul(ew.add(below, above), 0.5)),)


def _kv_vjp(ct, out, x, needs, v):
    below, above = _shifted_pair(kv, v, x)
    return (ew.mul(ct, ew.mul(ew.add(below, above), -0.5)),)


def _ive_vjp(ct, out, x, needs, v):
    below, above = _shifted_pair(ive, v, x)
    return (ew.mul(ct, ew.sub(ew.mul(ew.add(below, above), 0.5), ew.mul(ew.sign(x), out))),)


def _kve_vjp(ct, out, x, needs, v):
    below, above = _shifted_pair(kve, v, x)
    return (ew.mul(ct, ew.sub(out, ew.mul(ew.add(below, above), 0.5))),)


for _name, _vjp, _formula in [
        ("jv", _jy_vjp(lambda v, x: jv(v, x)), "(jv(v-1, x) - jv(v+1, x)) / 2"),
        ("yv", _jy_vjp(lambda v, x: yv(v, x)), "(yv(v-1, x) - yv(v+1, x)) / 2"),
        ("iv", _iv_vjp, "(iv(v-1, x) + iv(v+1, x)) / 2"),
        ("kv", _kv_vjp, "-(kv(v-1, x) + kv(v+1, x)) / 2"),
        ("ive", _ive_vjp, "(ive(v-1, x) + ive(v+1, x)) / 2 - sign(x) out"),
        ("kve", _kve_vjp, "out - (kve(v-1, x) + kve(v+1, x)) / 2")]:
    defop(_name, infer=_same_types, impl=_ordered_impl(_name), vjp=_vjp, elementwise=True,
          doc=f"x_bar = ct * ({_formula}); the order v is static", np=_ordered_spelling(_name), c=_ordered_c(_name))


# ---------------------------------------------------------------- the functions tracers and rules call
def _unary(name):
    def apply(x):
        return apply_elementwise(name, x, float_only=True)
    apply.__name__ = name
    apply.__doc__ = f"``scipy.special.{name}`` on gradc values (op ``{name}``)."
    return apply


j0, j1, y0, y1, i0, i1, k0, k1, i0e, i1e, k0e, k1e = (_unary(n) for n in _UNARY_RULES)


def static_order(v, what: str, *, integer: bool = False):
    """The order ``v`` as a Python int (integral) or float, or a clear refusal (traced, an array, not a number).

    >>> static_order(np.float64(2.0), "scipy.special.jv"), static_order(0.5, "scipy.special.jv")
    (2, 0.5)
    """
    if first_traced([v]) is not None:
        raise TraceError(f"{what}: the order must be a constant when tracing, not a traced value (gradc has no "
                         f"derivative in the order)", hint="pass the order as a Python int or float")
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        shown = f"an array of shape {np.shape(v)}" if isinstance(v, np.ndarray) else repr(v)
        raise TraceError(f"{what}: the order must be one number, not {shown}",
                         hint="call once per order, e.g. np.stack([f(v, x) for v in orders])")
    if not np.isfinite(v):
        raise TraceError(f"{what}: the order must be finite, not {v!r}", hint="pass a finite order")
    if integer and not _is_integer(v):
        raise TraceError(f"{what}: the order must be an integer, not {v!r}", hint="use scipy.special.yv for "
                         "fractional orders" if what.endswith("yn") else "pass an integer order")
    return int(v) if _is_integer(v) else float(v)


def _ordered(name):
    def apply(v, x):
        v = static_order(v, f"scipy.special.{name}")
        return apply_elementwise(name, x, float_only=True, v=v)
    apply.__name__ = name
    apply.__doc__ = f"``scipy.special.{name}(v, x)`` on gradc values, ``v`` a constant (op ``{name}``)."
    return apply


jv, yv, iv, kv, ive, kve = (_ordered(n) for n in ("jv", "yv", "iv", "kv", "ive", "kve"))


def in_scipy_dtype(name, v, x):
    """``x`` as float64 where SciPy's ``name`` computes a float32 ``x`` in float64 (``yn``'s first loop is ``ld->d``).

    >>> in_scipy_dtype("jv", 1, np.float32(1.0)).dtype
    dtype('float32')
    """
    t = aval(x)
    if t.dtype != "f32":
        return x
    with np.errstate(all="ignore"):
        result = np.asarray(getattr(_scipy_special(), name)(v, np.ones((), np.float32)))
    return ew.astype(x, "f64") if result.dtype == np.float64 else x


def jn(n, x):
    """``scipy.special.jn``: SciPy's alias of ``jv``.

    >>> bool(jn(1, np.float64(2.0)) == jv(1, np.float64(2.0)))
    True
    """
    return jv(n, in_scipy_dtype("jn", static_order(n, "scipy.special.jn"), x))


def yn(n, x):
    """``scipy.special.yn(n, x)``: ``yv`` of an integer order (float64 results, as SciPy's).

    >>> bool(np.isclose(yn(0, np.float64(1.0)), 0.08825696421567697))
    True
    """
    n = static_order(n, "scipy.special.yn", integer=True)
    return yv(n, in_scipy_dtype("yn", n, x))


__all__ = ["j0", "j1", "jv", "jn", "y0", "y1", "yv", "yn", "i0", "i1", "iv", "ive", "i0e", "i1e", "k0", "k1", "kv",
           "kve", "k0e", "k1e", "static_order"]
