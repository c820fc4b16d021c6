"""NumPy's other elementwise math: inverse trigonometric and hyperbolic functions, ``log2``/``log10``/``exp2``,
``hypot``, ``arctan2``, ``fmax``/``fmin``, ``copysign``, ``mod``/``fmod``, rounding and the float tests.

Rounding, ``floor_divide`` and the tests (``isnan``, ``signbit``, ...) are piecewise constant: declared
``nondiff``. ``mod`` and ``fmod`` are not: their derivative is 1 in ``x`` and ``-floor(x / y)`` (``-trunc``)
in ``y`` almost everywhere. C spellings are C99's ``<math.h>`` functions; NumPy's own algorithm where it
is not one (``mod`` and ``floor_divide`` are fmod-based with NumPy's sign fix-ups). SciPy's special
functions are in ``special_scipy`` (``gradc.ops.special`` imports both).

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> import numpy as np
>>> float(arcsin(np.float64(1.0)) * 2.0 / np.pi)
1.0
"""
from __future__ import annotations

import functools
import math

import numpy as np

from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.elementwise import _bool_result, _same_types
from gradc.ops.promote import apply_elementwise, zeros_like
from gradc.ops.values import aval

_LN2, _LN10 = math.log(2.0), math.log(10.0)


# ---------------------------------------------------------------- C spellings
def c_call(name: str, args, *, boolean=False, template=None):
    """A SymPy node printed as the C call ``name`` (``namef`` in float code), or as ``template``
    (``{0}``, ``{1}``: the arguments, ``{f}``: the float suffix); for the C99 functions SymPy's printer lacks.

    >>> s = c_spell.sym(); from gradc.backends.c.values import printer
    >>> printer("f32").doprint(c_call("rint", [s.sp.Symbol("x", real=True)]))
    'rintf(x)'
    """
    return _c_class(name, template or name + "{f}(" + ", ".join(f"{{{i}}}" for i in range(len(args))) + ")",
                    len(args), boolean, template is not None)(*args)


@functools.lru_cache(maxsize=None)
def _c_class(name, template, nargs, boolean, bracket):
    sp = c_spell.sym().sp

    def _ccode(self, printer):
        from sympy.codegen.ast import real  # the printer's float type: 'f' suffix when it is float32
        # in a template, each argument bracketed unless it is an atom or a call: it may stand next to an operator
        args = [printer._print(a) if not bracket or a.is_Atom or isinstance(a, sp.Function)
                else f"({printer._print(a)})" for a in self.args]
        return template.format(*args, f=printer._get_func_suffix(real))

    if boolean:
        return type(f"c_{name}", (sp.logic.boolalg.BooleanFunction,), {"nargs": nargs, "_ccode": _ccode})
    # real-valued as C's values are (so SymPy compares and subtracts them)
    return type(f"c_{name}", (sp.Function,), {"nargs": nargs, "_ccode": _ccode, "is_real": True,
                                               "_eval_is_extended_real": lambda self: True})


def _libm(name):
    """The C spelling of an elementwise op that is C99's function ``name`` (not SymPy's own function, whose
    rewrites such as acos(-x) = pi - acos(x) would not round as NumPy does)."""
    return c_spell.scalar(lambda a, p, ti, to: c_call(name, a))


# ---------------------------------------------------------------- differentiable unary ops
def _unary(name, impl, vjp, doc, *, math_name=None, c, nondiff=False, infer=_same_types):
    defop(name, infer=infer, impl=impl, vjp=vjp, nondiff=nondiff, elementwise=True, doc=doc,
          np=spell.fn(f"np.{name}"), math=spell.fn(math_name) if math_name else None, c=c)


def _one_minus_square(x):
    return ew.mul(ew.sub(1.0, x), ew.add(x, 1.0))  # (1 - x)(1 + x): no cancellation near |x| = 1


_unary("arcsin", np.arcsin, lambda ct, out, x, needs: (ew.div(ct, ew.sqrt(_one_minus_square(x))),),
       "x_bar = ct / sqrt(1 - x**2)", math_name="math.asin", c=_libm("asin"))
_unary("arccos", np.arccos, lambda ct, out, x, needs: (ew.neg(ew.div(ct, ew.sqrt(_one_minus_square(x)))),),
       "x_bar = -ct / sqrt(1 - x**2)", math_name="math.acos", c=_libm("acos"))
_unary("arcsinh", np.arcsinh, lambda ct, out, x, needs: (ew.div(ct, ew.sqrt(ew.add(ew.mul(x, x), 1.0))),),
       "x_bar = ct / sqrt(x**2 + 1)", math_name="math.asinh", c=_libm("asinh"))
_unary("arccosh", np.arccosh,
       lambda ct, out, x, needs: (ew.div(ct, ew.sqrt(ew.mul(ew.sub(x, 1.0), ew.add(x, 1.0)))),),
       "x_bar = ct / sqrt(x**2 - 1)", math_name="math.acosh", c=_libm("acosh"))
_unary("arctanh", np.arctanh, lambda ct, out, x, needs: (ew.div(ct, _one_minus_square(x)),),
       "x_bar = ct / (1 - x**2)", math_name="math.atanh", c=_libm("atanh"))
_unary("log2", np.log2, lambda ct, out, x, needs: (ew.div(ct, ew.mul(x, _LN2)),),
       "x_bar = ct / (x log 2)", math_name="math.log2", c=_libm("log2"))
_unary("log10", np.log10, lambda ct, out, x, needs: (ew.div(ct, ew.mul(x, _LN10)),),
       "x_bar = ct / (x log 10)", math_name="math.log10", c=_libm("log10"))
_unary("exp2", np.exp2, lambda ct, out, x, needs: (ew.mul(ct, ew.mul(out, _LN2)),),
       "x_bar = ct * out * log 2", c=_libm("exp2"))  # math.exp2 is Python 3.11+
_unary("cbrt", np.cbrt, lambda ct, out, x, needs: (ew.div(ct, ew.mul(ew.mul(out, out), 3.0)),),
       "x_bar = ct / (3 out**2)", c=_libm("cbrt"))


def _sinc_vjp(ct, out, x, needs):
    # (cos(pi x) - sinc(x)) / x; near 0, where that cancels, its series -pi^2 x / 3 + pi^4 x^3 / 30, so higher
    # derivatives are right at 0 too (the inner where keeps 0/0 out of them)
    small = ew.less(ew.abs_(x), 1e-3)
    safe_x = ew.where(small, 1.0, x)
    slope = ew.div(ew.sub(ew.cos(ew.mul(safe_x, math.pi)), ew.where(small, 1.0, out)), safe_x)
    series = ew.mul(x, ew.add(ew.mul(ew.mul(x, x), math.pi ** 4 / 30.0), -math.pi ** 2 / 3.0))
    return (ew.mul(ct, ew.where(small, series, slope)),)


def _sinc_c(a, p, ti, to):
    s = c_spell.sym()
    y = s.sp.Float(math.pi) * s.ite(s.sp.Eq(a[0], 0), s.sp.Float(1e-20), a[0])  # NumPy's formula, so the same rounding
    return s.sin(y) / y


_unary("sinc", np.sinc, _sinc_vjp, "x_bar = ct * (cos(pi x) - out) / x (its series near 0)", c=c_spell.scalar(_sinc_c))


# ---------------------------------------------------------------- differentiable binary ops
def _binary(name, impl, vjp, doc, *, math_name=None, c):
    defop(name, infer=_same_types, impl=impl, vjp=vjp, elementwise=True, doc=doc, np=spell.fn(f"np.{name}"),
          math=spell.fn(math_name) if math_name else None, c=c)


def _arctan2_vjp(ct, out, y, x, needs):
    scaled = ew.div(ct, ew.add(ew.mul(x, x), ew.mul(y, y)))
    return (ew.mul(scaled, x) if needs[0] else None, ew.neg(ew.mul(scaled, y)) if needs[1] else None)


def _hypot_vjp(ct, out, x, y, needs):
    scaled = ew.div(ct, out)
    return (ew.mul(scaled, x) if needs[0] else None, ew.mul(scaled, y) if needs[1] else None)


def _logaddexp2_vjp(ct, out, x, y, needs):
    return (ew.mul(ct, exp2(ew.sub(x, out))) if needs[0] else None,
            ew.mul(ct, exp2(ew.sub(y, out))) if needs[1] else None)


def _logaddexp2_c(a, p, ti, to):  # NumPy's: equal arguments (also infinities) give x + 1
    s, (x, y) = c_spell.sym(), a
    return s.ite(s.sp.Eq(x, y), x + 1, s.maximum(x, y) + s.log1p(c_call("exp2", [-s.abs(x - y)])) / _LN2)


def _fextremum_vjp(first_wins):
    def vjp(ct, out, x, y, needs):
        # as maximum/minimum (ties split evenly), and a NaN operand passes everything to the other
        x_wins, y_wins = (ew.greater(x, y), ew.less(x, y)) if first_wins else (ew.less(x, y), ew.greater(x, y))
        return ew.split_cotangent(ct, ew.logical_or(x_wins, isnan(y)), ew.logical_or(y_wins, isnan(x)), needs)
    return vjp


def _fextremum_c(name):
    def build(a, p, ti, to):
        s = c_spell.sym()
        if ti[0].is_float:
            return c_call(name, a)  # C99's fmax/fmin ignore a NaN, like NumPy's
        return s.maximum(a[0], a[1], False) if name == "fmax" else s.minimum(a[0], a[1], False)
    return c_spell.scalar(build)


def _copysign_vjp(ct, out, x, y, needs):
    flips = ew.not_equal(signbit(x), signbit(y))
    x_bar = ew.where(flips, ew.neg(ct), ct) if needs[0] else None
    return x_bar, (zeros_like(ct) if needs[1] else None)  # y only gives the sign: zero almost everywhere


_binary("arctan2", np.arctan2, _arctan2_vjp, "y_bar = ct * x / (x**2 + y**2); x_bar = -ct * y / (x**2 + y**2)",
        math_name="math.atan2", c=_libm("atan2"))
_binary("hypot", np.hypot, _hypot_vjp, "x_bar = ct * x / out; y_bar = ct * y / out", math_name="math.hypot",
        c=_libm("hypot"))
_binary("logaddexp2", np.logaddexp2, _logaddexp2_vjp, "x_bar = ct * 2**(x - out); y_bar = ct * 2**(y - out)",
        c=c_spell.scalar(_logaddexp2_c))
_binary("fmax", np.fmax, _fextremum_vjp(True),
        "x_bar = ct where x > y or y is NaN (half at ties), else 0; y_bar = the rest",
        c=_fextremum_c("fmax"))
_binary("fmin", np.fmin, _fextremum_vjp(False),
        "x_bar = ct where x < y or y is NaN (half at ties), else 0; y_bar = the rest",
        c=_fextremum_c("fmin"))
_binary("copysign", np.copysign, _copysign_vjp, "x_bar = ct * (-1 if signbit(x) != signbit(y) else 1); y_bar = 0",
        math_name="math.copysign", c=_libm("copysign"))


# mod and floor_divide as NumPy computes them (npy_divmod): from fmod, with the sign fixed towards y
def _divmod_c(x, y, want_mod):
    s = c_spell.sym()
    sp = s.sp
    m = c_call("fmod", [x, y])
    fix = sp.And(sp.Ne(m, 0), sp.Xor(y < 0, m < 0))
    if want_mod:
        return s.ite(sp.Eq(y, 0), m, s.ite(fix, m + y, s.ite(sp.Eq(m, 0), c_call("copysign", [sp.Integer(0), y]), m)))
    div = s.ite(fix, (x - m) / y - 1, (x - m) / y)
    low = sp.floor(div)
    rounded = s.ite(div - low > sp.Float(0.5), low + 1, low)
    return s.ite(sp.Eq(y, 0), x / y, s.ite(sp.Eq(div, 0), c_call("copysign", [sp.Integer(0), x / y]), rounded))


def _int_divmod_c(x, y, want_mod):  # NumPy's floor semantics (and 0 for a zero divisor): see c mathlib.integer
    return c_spell.sym().int_call("gradc_mod_i64" if want_mod else "gradc_floor_divide_i64", x, y)


def _divmod_spelling(want_mod):
    def build(a, p, ti, to):
        return (_divmod_c if ti[0].is_float else _int_divmod_c)(a[0], a[1], want_mod)
    return c_spell.scalar(build)


def _fmod_c(a, p, ti, to):
    if ti[0].is_float:
        return c_call("fmod", a)
    return c_spell.sym().int_call("gradc_fmod_i64", *a)


defop("mod", infer=_same_types, impl=np.mod, elementwise=True,
      vjp=lambda ct, out, x, y, needs: (ct if needs[0] else None,
                                        ew.neg(ew.mul(ct, floor_divide(x, y))) if needs[1] else None),
      doc="x_bar = ct; y_bar = -ct * floor(x / y) (almost everywhere)", np=spell.fn("np.mod"),
      c=_divmod_spelling(True))
defop("fmod", infer=_same_types, impl=np.fmod, elementwise=True,
      vjp=lambda ct, out, x, y, needs: (ct if needs[0] else None,
                                        ew.neg(ew.mul(ct, trunc(ew.div(x, y)))) if needs[1] else None),
      doc="x_bar = ct; y_bar = -ct * trunc(x / y) (almost everywhere)", np=spell.fn("np.fmod"),
      c=c_spell.scalar(_fmod_c))
defop("floor_divide", infer=_same_types, impl=np.floor_divide, nondiff=True, elementwise=True,
      doc="floor(x / y); zero derivative", np=spell.fn("np.floor_divide"),
      c=_divmod_spelling(False))


# ---------------------------------------------------------------- rounding and tests: zero derivative
_unary("ceil", np.ceil, None, "zero almost everywhere", nondiff=True, c=_libm("ceil"))
_unary("trunc", np.trunc, None, "zero almost everywhere", nondiff=True,
       c=c_spell.scalar(lambda a, p, ti, to: c_spell.sym().trunc(a[0])))
_unary("rint", np.rint, None, "round half to even; zero almost everywhere", nondiff=True, c=_libm("rint"))


def _round_impl(x, decimals):
    return np.round(x, decimals)


def _round_spell(args, params, out, target):
    if params["decimals"] == 0:
        return spell.call("np.round", args[0])
    return spell.call("np.round", args[0], spell.literal(params["decimals"]))


def _round_c(a, p, ti, to):  # NumPy's: scale by 10**decimals, round half to even, scale back
    x, d = a[0], p["decimals"]
    if d == 0:
        return c_call("rint", [x])
    scale = c_spell.sym().sp.Float(10.0 ** abs(d))
    return c_call("rint", [x * scale]) / scale if d > 0 else c_call("rint", [x / scale]) * scale


defop("round", infer=_same_types, impl=_round_impl, nondiff=True, elementwise=True,
      doc="round half to even at `decimals` digits; zero almost everywhere", np=_round_spell,
      c=c_spell.scalar(_round_c))

def _float_test_c(name, template):
    def build(a, p, ti, to):
        sp = c_spell.sym().sp
        if not ti[0].is_float:  # C's tests take floats only; an integer is finite, and its sign is its sign
            return {"isinf": sp.false, "isfinite": sp.true, "signbit": sp.Lt(a[0], 0)}[name]
        return c_call(name, a, boolean=True, template=template)
    return c_spell.scalar(build)


for _name, _template in [("isinf", "(isinf({0}) != 0)"), ("isfinite", "(isfinite({0}) != 0)"),
                         ("signbit", "(signbit({0}) != 0)")]:
    _unary(_name, getattr(np, _name), None, "a float test; zero derivative", nondiff=True, infer=_bool_result,
           c=_float_test_c(_name, _template))
_unary("isnan", np.isnan, None, "a float test; zero derivative", nondiff=True, infer=_bool_result,
       c=c_spell.scalar(lambda a, p, ti, to: c_spell.sym().isnan(a[0])))


# ---------------------------------------------------------------- the functions tracers and rules call
def _make(name, float_only=True):
    def apply(*xs):
        return apply_elementwise(name, *xs, float_only=float_only)
    apply.__name__ = name
    apply.__doc__ = f"NumPy's ``np.{name}`` on gradc values (op ``{name}``)."
    return apply


arcsin, arccos, arcsinh, arccosh, arctanh = (_make(n) for n in ("arcsin", "arccos", "arcsinh", "arccosh", "arctanh"))
log2, log10, exp2, cbrt, sinc = (_make(n) for n in ("log2", "log10", "exp2", "cbrt", "sinc"))
arctan2, hypot, logaddexp2, copysign = (_make(n) for n in ("arctan2", "hypot", "logaddexp2", "copysign"))
fmax, fmin, mod, fmod, floor_divide = (_make(n, float_only=False) for n in ("fmax", "fmin", "mod", "fmod",
                                                                             "floor_divide"))
rint = _make("rint")
# NumPy 2.3 returns integer arrays unchanged from ceil, trunc (and floor, fix); older NumPy 2 gives float64
_ROUNDING_KEEPS_INTEGERS = np.ceil(np.arange(1)).dtype.kind == "i"


def _integer_rounding(name):
    op = _make(name)

    def apply(x):
        if _ROUNDING_KEEPS_INTEGERS and aval(x).dtype in ("i64", "i32"):
            return x
        return op(x)
    apply.__name__, apply.__doc__ = name, op.__doc__
    return apply


ceil, trunc, floor = _integer_rounding("ceil"), _integer_rounding("trunc"), _integer_rounding("floor")
isnan, isinf, isfinite, signbit = (_make(n, float_only=False) for n in ("isnan", "isinf", "isfinite", "signbit"))


def round_(x, decimals=0):
    """``np.round(x, decimals)`` (half to even); integers are unchanged unless ``decimals`` is negative.

    >>> round_(np.array([0.5, 1.5, 2.5, 0.125]))
    array([0., 2., 2., 0.])
    """
    if aval(x).dtype in ("i64", "i32", "bool") and decimals >= 0:
        return x
    return apply_elementwise("round", x, float_only=True, decimals=int(decimals))


def divmod_(x, y):
    """``np.divmod(x, y)``: ``(floor_divide(x, y), mod(x, y))``.

    >>> divmod_(np.array([7.0, -7.0]), 2.0)
    (array([ 3., -4.]), array([1., 1.]))
    """
    return floor_divide(x, y), mod(x, y)


def float_power(x, y):
    """``np.float_power``: ``x ** y`` computed in float64.

    >>> float_power(np.array([4.0], np.float32), 0.5).dtype
    dtype('float64')
    """
    return ew.power(ew.astype(_operand(x), "f64"), ew.astype(_operand(y), "f64"))


def deg2rad(x):
    """``np.deg2rad`` (``np.radians``): ``x * (pi / 180)``, as NumPy computes it.

    >>> float(deg2rad(np.float64(180.0)))
    3.141592653589793
    """
    return ew.mul(x, math.pi / 180.0)


def rad2deg(x):
    """``np.rad2deg`` (``np.degrees``): ``x * (180 / pi)``.

    >>> float(rad2deg(np.float64(math.pi)))
    180.0
    """
    return ew.mul(x, 180.0 / math.pi)


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``np.nan_to_num``: NaN, +inf and -inf replaced (by 0 and the dtype's largest finite values); the
    derivative is 1 where ``x`` is finite and 0 elsewhere.

    >>> nan_to_num(np.array([np.nan, -np.inf, 2.0]))
    array([ 0.00000000e+000, -1.79769313e+308,  2.00000000e+000])
    """
    t = aval(x)
    if t.dtype not in ("f32", "f64"):
        return x
    big = float(np.finfo(t.np_dtype).max)
    posinf = big if posinf is None else float(posinf)
    neginf = -big if neginf is None else float(neginf)
    out = ew.where(isnan(x), float(nan), x)  # typed replacements: float32 stays float32
    infinite = ew.where(signbit(x), np.asarray(neginf, t.np_dtype), np.asarray(posinf, t.np_dtype))
    return ew.where(isinf(x), infinite, out)


def _operand(x):
    return x if aval(x).dtype is not None else np.asarray(x)
