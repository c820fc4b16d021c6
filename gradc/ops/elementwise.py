"""Elementwise ops: arithmetic, math functions, comparisons, where, clip, astype.

Operands of an elementwise equation have the output's shape: the functions
here promote dtypes and insert ``broadcast_to`` first (explicit broadcasting).

>>> import numpy as np
>>> mul(np.ones(3), 2.0)
array([2., 2., 2.])
"""
from __future__ import annotations

import ast

import numpy as np

from gradc.errors import ShapeError
from gradc.ir.registry import bind, defop
from gradc.ir.types import NP_DTYPES, REAL_OF_COMPLEX
from gradc.ops import c_spell, spell
from gradc.ops.promote import FAST_DTYPES, apply_elementwise, coerce, full_like, zeros_like  # noqa: F401
from gradc.ops.values import aval, broadcast_shapes, first_traced, result_dtype


# ---------------------------------------------------------------- type rules and coercion
def _same_types(types, params):
    first = types[0]
    for t in types[1:]:
        if t.shape != first.shape or t.dtype != first.dtype:
            raise ShapeError(f"elementwise operands {first} and {t} differ (internal: broadcast first)")
    return first


def _bool_result(types, params):
    return _same_types(types, params).with_dtype("bool")


# ---------------------------------------------------------------- definitions
def _unary(name, impl, vjp, *, np_name, math_name=None, doc="", nondiff=False, c=None):
    defop(name, infer=_same_types, impl=impl, vjp=vjp, nondiff=nondiff, elementwise=True, doc=doc,
          np=spell.fn(np_name), math=spell.fn(math_name) if math_name else None, c=c or c_spell.unary(name))


def _binary(name, impl, vjp, *, c, symbol=None, np_name=None, math_name=None, math_spell=None, doc="",
            linear=False):
    np_spell = spell.binop(symbol) if symbol else spell.fn(np_name)
    math_spell = math_spell or (np_spell if symbol else (spell.fn(math_name) if math_name else None))
    defop(name, infer=_same_types, impl=impl, vjp=vjp, elementwise=True, doc=doc, linear=linear,
          np=np_spell, math=math_spell, c=c)


_binary("add", np.add, lambda ct, out, x, y, needs: (ct, ct), symbol="+", linear=True,
        doc="x_bar = ct; y_bar = ct", c=c_spell.binary(lambda s, x, y: x + y))
_binary("sub", np.subtract, lambda ct, out, x, y, needs: (ct, neg(ct) if needs[1] else None),
        symbol="-", linear=True, doc="x_bar = ct; y_bar = -ct", c=c_spell.binary(lambda s, x, y: x - y))
_binary("mul", np.multiply,
        lambda ct, out, x, y, needs: (mul(ct, y) if needs[0] else None, mul(ct, x) if needs[1] else None),
        symbol="*", doc="x_bar = ct * y; y_bar = ct * x", c=c_spell.binary(lambda s, x, y: x * y))


def _div_vjp(ct, out, x, y, needs):
    x_bar = div(ct, y) if needs[0] else None
    y_bar = neg(div(mul(ct, out), y)) if needs[1] else None
    return x_bar, y_bar


_binary("div", np.true_divide, _div_vjp, symbol="/", doc="x_bar = ct / y; y_bar = -ct * out / y",
        c=c_spell.binary(lambda s, x, y: c_spell.quotient(x, y)))


def _pow_vjp(ct, out, x, y, needs):
    x_bar = y_bar = None
    if needs[0]:
        # x**0 is constant: its slope is 0 also at x == 0, where y * x**(y-1) would be 0 * inf (torch masks
        # the same way); a constant exponent folds the choice away
        slope = mul(y, power(x, sub(y, 1.0)))
        x_bar = mul(ct, where(equal(y, 0.0), 0.0, slope))
    if needs[1]:
        # d/dy x**y = log(x) * x**y; defined as 0 where x == 0 (the limit for y > 0)
        safe_log = where(equal(x, 0.0), 0.0, log(where(equal(x, 0.0), 1.0, x)))
        y_bar = mul(ct, mul(out, safe_log))
    return x_bar, y_bar


def _pow_spell(args, params, out, target):
    """``x ** y``; a square as ``x * x`` (the same correctly rounded value, and much cheaper)."""
    base, exponent = args
    if isinstance(exponent, ast.Constant) and exponent.value == 2 and isinstance(base, ast.Name):
        return ast.BinOp(base, ast.Mult(), base)
    return ast.BinOp(base, ast.Pow(), exponent)


def _pow_math_spell(args, params, out, target):
    """Python floats: ``x ** y`` for a whole-number constant ``y``, else ``math.pow(x, y)``.

    Python's ``**`` makes a complex number of a negative base and a fractional exponent
    where NumPy gives nan; ``math.pow`` raises, and the emitted code then computes as NumPy.
    """
    exponent = args[1].operand if isinstance(args[1], ast.UnaryOp) else args[1]
    if isinstance(exponent, ast.Constant) and float(exponent.value).is_integer():
        return _pow_spell(args, params, out, target)
    return spell.call("math.pow", *args)


defop("pow", infer=_same_types, impl=np.power, vjp=_pow_vjp, elementwise=True,
      doc="x_bar = ct * y * x**(y-1); y_bar = ct * out * log(x)", np=_pow_spell, math=_pow_math_spell,
      c=c_spell.binary(lambda s, x, y: x ** y))


def split_cotangent(ct, x_takes, y_takes, needs):
    """``ct`` to the operand the output took, half to each where neither did (a tie), 0 to the other,
    selecting, not multiplying: the operand not taken gets exactly 0 even where ``ct`` is inf or NaN, as
    in torch (``ct * 0`` would be NaN there, and NumPy would warn of it)."""
    half, zero = mul(ct, 0.5), zeros_like(ct)
    x_bar = where(x_takes, ct, where(y_takes, zero, half)) if needs[0] else None
    y_bar = where(y_takes, ct, where(x_takes, zero, half)) if needs[1] else None
    return x_bar, y_bar


def _max_vjp(ct, out, x, y, needs):
    # ties split the cotangent evenly, as in JAX and torch.maximum
    return split_cotangent(ct, greater(x, y), less(x, y), needs)


def _min_vjp(ct, out, x, y, needs):
    return split_cotangent(ct, less(x, y), greater(x, y), needs)


def _extremum_math_spell(builtin):
    """Python floats: ``max(x, y)``, NaN-propagating as NumPy's (``max(1.0, nan)`` is 1.0: a NaN ``y`` is
    tested first unless ``y`` is a number written in the source; a NaN ``x`` already wins)."""
    def spelled(args, params, out, target):
        x, y = args
        extremum = spell.call(builtin, x, y)
        number = y.operand if isinstance(y, ast.UnaryOp) else y
        if isinstance(number, ast.Constant):  # not NaN (written math.nan)
            return extremum
        return ast.IfExp(ast.Compare(y, [ast.NotEq()], [y]), y, extremum)
    return spelled


_binary("maximum", np.maximum, _max_vjp, np_name="np.maximum", math_spell=_extremum_math_spell("max"),
        doc="x_bar = ct where x > y (half at ties), else 0; y_bar = the rest",
        c=c_spell.scalar(lambda a, p, ti, to: c_spell.sym().maximum(a[0], a[1], ti[0].is_float)))
_binary("minimum", np.minimum, _min_vjp, np_name="np.minimum", math_spell=_extremum_math_spell("min"),
        doc="x_bar = ct where x < y (half at ties), else 0; y_bar = the rest",
        c=c_spell.scalar(lambda a, p, ti, to: c_spell.sym().minimum(a[0], a[1], ti[0].is_float)))


def _logaddexp_vjp(ct, out, x, y, needs):
    return (mul(ct, exp(sub(x, out))) if needs[0] else None,
            mul(ct, exp(sub(y, out))) if needs[1] else None)


def _logaddexp_c(s, x, y):  # as NumPy: equal arguments (also infinities) give x + log(2)
    return s.ite(s.sp.Eq(x, y), x + s.sp.Float(float(np.log(2.0))),
                 s.maximum(x, y) + s.log1p(s.exp(-s.abs(x - y))))


_binary("logaddexp", np.logaddexp, _logaddexp_vjp, np_name="np.logaddexp",
        doc="x_bar = ct * exp(x - out); y_bar = ct * exp(y - out)", c=c_spell.binary(_logaddexp_c))

defop("neg", infer=_same_types, impl=np.negative, vjp=lambda ct, out, x, needs: (neg(ct),), elementwise=True,
      doc="x_bar = -ct", np=spell.unary_minus, math=spell.unary_minus, c=c_spell.scalar(lambda a, p, ti, to: -a[0]))
def _abs_infer(types, params):
    t = _same_types(types, params)
    return t.with_dtype(REAL_OF_COMPLEX[t.dtype]) if t.is_complex else t


def _abs_vjp(ct, out, x, needs):
    if not aval(x).is_complex:
        return (mul(ct, sign(x)),)
    # JAX's convention (gradc.ops.complex_numbers, which registers conj): ct * conj(x) / |x|, 0 at x == 0
    cdt = aval(x).dtype
    safe = where(equal(out, 0.0), 1.0, out)
    return (mul(astype(div(ct, safe), cdt), bind("conj", x)),)


def _abs_c(a, p, ti, to):
    if ti[0].is_complex:
        return c_spell.complex_call("cabs", a[0])  # C99's (complex.h)
    return c_spell.sym().abs(a[0])


defop("abs", infer=_abs_infer, impl=np.abs, vjp=_abs_vjp, elementwise=True,
      doc="x_bar = ct * sign(x); of complex x, ct * conj(x) / |x|", np=spell.fn("np.abs"), math=spell.fn("abs"),
      c=c_spell.scalar(_abs_c))
_unary("exp", np.exp, lambda ct, out, x, needs: (mul(ct, out),), np_name="np.exp", math_name="math.exp",
       doc="x_bar = ct * out")
_unary("log", np.log, lambda ct, out, x, needs: (div(ct, x),), np_name="np.log", math_name="math.log",
       doc="x_bar = ct / x")
_unary("log1p", np.log1p, lambda ct, out, x, needs: (div(ct, add(x, 1.0)),), np_name="np.log1p",
       math_name="math.log1p", doc="x_bar = ct / (1 + x)")
_unary("expm1", np.expm1, lambda ct, out, x, needs: (mul(ct, add(out, 1.0)),), np_name="np.expm1",
       math_name="math.expm1", doc="x_bar = ct * (out + 1)")
_unary("sqrt", np.sqrt, lambda ct, out, x, needs: (div(mul(ct, 0.5), out),), np_name="np.sqrt",
       math_name="math.sqrt", doc="x_bar = ct * 0.5 / out")
_unary("sin", np.sin, lambda ct, out, x, needs: (mul(ct, cos(x)),), np_name="np.sin", math_name="math.sin",
       doc="x_bar = ct * cos(x)")
_unary("cos", np.cos, lambda ct, out, x, needs: (neg(mul(ct, sin(x))),), np_name="np.cos",
       math_name="math.cos", doc="x_bar = -ct * sin(x)")
_unary("tan", np.tan, lambda ct, out, x, needs: (mul(ct, add(mul(out, out), 1.0)),), np_name="np.tan",
       math_name="math.tan", doc="x_bar = ct * (1 + out**2)")
_unary("tanh", np.tanh, lambda ct, out, x, needs: (mul(ct, sub(1.0, mul(out, out))),), np_name="np.tanh",
       math_name="math.tanh", doc="x_bar = ct * (1 - out**2)")
_unary("arctan", np.arctan, lambda ct, out, x, needs: (div(ct, add(mul(x, x), 1.0)),), np_name="np.arctan",
       math_name="math.atan", doc="x_bar = ct / (1 + x**2)")
_unary("sinh", np.sinh, lambda ct, out, x, needs: (mul(ct, cosh(x)),), np_name="np.sinh",
       math_name="math.sinh", doc="x_bar = ct * cosh(x)")
_unary("cosh", np.cosh, lambda ct, out, x, needs: (mul(ct, sinh(x)),), np_name="np.cosh",
       math_name="math.cosh", doc="x_bar = ct * sinh(x)")
def _sign_c(a, p, ti, to):
    s, x = c_spell.sym(), a[0]
    signs = s.ite(x > 0, s.sp.Integer(1), s.ite(x < 0, s.sp.Integer(-1), s.sp.Integer(0)))
    return s.ite(s.isnan(x), x, signs) if ti[0].is_float else signs  # NaN stays NaN


_unary("sign", np.sign, None, np_name="np.sign", nondiff=True, doc="zero almost everywhere",
       c=c_spell.scalar(_sign_c))
_unary("floor", np.floor, None, np_name="np.floor", math_name="math.floor", nondiff=True,
       doc="zero almost everywhere")
def _heaviside_c(a, p, ti, to):
    s, x, f = c_spell.sym(), a[0], c_spell.sym().sp.Float  # NaN stays NaN
    return s.ite(s.isnan(x), x, s.ite(x > 0, f(1.0), s.ite(x < 0, f(0.0), f(p["at_zero"]))))


defop("heaviside", infer=_same_types, impl=lambda x, at_zero: np.heaviside(x, at_zero), nondiff=True,
      elementwise=True, doc="step function (1 above 0, at_zero at 0); zero derivative",
      np=lambda args, params, out, target: spell.call("np.heaviside", args[0], spell.literal(params["at_zero"])),
      c=c_spell.scalar(_heaviside_c))

for _name, _impl, _sym, _rel in [("less", np.less, "<", "Lt"), ("less_equal", np.less_equal, "<=", "Le"),
                                 ("greater", np.greater, ">", "Gt"), ("greater_equal", np.greater_equal, ">=", "Ge"),
                                 ("equal", np.equal, "==", "Eq"), ("not_equal", np.not_equal, "!=", "Ne")]:
    defop(_name, infer=_bool_result, impl=_impl, nondiff=True, elementwise=True, doc="comparison",
          np=spell.compare(_sym), math=spell.compare(_sym),
          c=c_spell.binary(lambda s, x, y, rel=_rel: getattr(s.sp, rel)(x, y)))
for _name, _impl, _logic in [("logical_and", np.logical_and, "And"), ("logical_or", np.logical_or, "Or")]:
    defop(_name, infer=_same_types, impl=_impl, nondiff=True, elementwise=True, doc="boolean logic",
          np=spell.fn(f"np.{_name}"), c=c_spell.binary(lambda s, x, y, logic=_logic: getattr(s.sp, logic)(x, y)))
defop("logical_not", infer=_same_types, impl=np.logical_not, nondiff=True, elementwise=True,
      doc="boolean logic", np=spell.fn("np.logical_not"),
      c=c_spell.scalar(lambda a, p, ti, to: c_spell.sym().sp.Not(a[0])))


def _where_infer(types, params):
    cond, x, y = types
    if cond.dtype != "bool" or cond.shape != x.shape:
        raise ShapeError(f"where condition {cond} does not fit {x}")
    return _same_types([x, y], params)


def _where_vjp(ct, out, cond, x, y, needs):
    zero = zeros_like(ct)
    return (None, where(cond, ct, zero) if needs[1] else None, where(cond, zero, ct) if needs[2] else None)


def _where_spell(args, params, out, target):
    cond, x, y = args
    return spell.call("np.where", cond, spell.typed(x, out.np_dtype), spell.typed(y, out.np_dtype))


defop("where", infer=_where_infer, impl=np.where, vjp=_where_vjp, elementwise=True,
      doc="x_bar = where(cond, ct, 0); y_bar = where(cond, 0, ct)", np=_where_spell,
      c=c_spell.scalar(lambda a, p, ti, to: c_spell.sym().ite(a[0], a[1], a[2])))


def _clip_vjp(ct, out, x, needs, lo, hi):
    inside = None
    if lo is not None:
        inside = greater_equal(x, lo)
    if hi is not None:
        upper = less_equal(x, hi)
        inside = upper if inside is None else logical_and(inside, upper)
    return (ct if inside is None else where(inside, ct, zeros_like(ct)),)


def _clip_spell(args, params, out, target):
    return spell.call("np.clip", args[0], spell.literal(params["lo"]), spell.literal(params["hi"]))


def _clip_c(a, p, ti, to):
    s, x, is_float = c_spell.sym(), a[0], ti[0].is_float
    bound = s.sp.Float if is_float else s.sp.Integer  # integers clip by integers (no isnan of an int in C)
    if p["lo"] is not None:
        x = s.maximum(x, bound(p["lo"]), is_float)
    if p["hi"] is not None:
        x = s.minimum(x, bound(p["hi"]), is_float)
    return x


defop("clip", infer=_same_types, impl=lambda x, lo, hi: np.clip(x, lo, hi), vjp=_clip_vjp, elementwise=True,
      doc="x_bar = ct where lo <= x <= hi, else 0", np=_clip_spell, c=c_spell.scalar(_clip_c))


def _astype_infer(types, params):
    return types[0].with_dtype(params["dtype"])


def _astype_vjp(ct, out, x, needs, dtype):
    src = aval(x).dtype
    if aval(ct).is_complex and src not in ("c64", "c128"):  # a real value promoted to complex: the real part
        ct = bind("real", ct)  # (the op of gradc.ops.complex_numbers)
    return (astype(ct, src, explicit=True),)


def _astype_spell(args, params, out, target):
    if out.shape == ():  # the operand may be a Python float; np.float32(x) converts any scalar
        return spell.call(f"np.{NP_DTYPES[params['dtype']].name}", args[0])
    return spell.method_call(args[0], "astype", spell.dotted(f"np.{NP_DTYPES[params['dtype']].name}"))


def _astype_c(a, p, ti, to):
    s, x = c_spell.sym(), a[0]
    src, dst = ti[0].dtype, to.dtype
    if dst == "bool":
        return x if src == "bool" else s.sp.Ne(x, 0)
    if src == "bool":  # a float result is a C float (C's signbit and isnan take no integer)
        one, zero = (s.sp.Float(1.0), s.sp.Float(0.0)) if to.is_float else (s.sp.Integer(1), s.sp.Integer(0))
        return s.ite(x, one, zero)
    if dst.startswith("i") and src.startswith("f"):
        return s.trunc(x)  # C's conversion truncates too; explicit so fused uses see it
    if dst == "f32" and src != "f32":
        return s.to_float32(x)  # rounds here, even where the fused loop computes in double
    return x


defop("astype", infer=_astype_infer, impl=lambda x, dtype: np.asarray(x).astype(NP_DTYPES[dtype]),
      vjp=_astype_vjp, elementwise=True, linear=True, doc="x_bar = ct converted back to x's dtype",
      np=_astype_spell, c=c_spell.scalar(_astype_c))


# ---------------------------------------------------------------- the functions rules and tracers call
def add(x, y):
    return apply_elementwise("add", x, y)


def sub(x, y):
    return apply_elementwise("sub", x, y)


def mul(x, y):
    return apply_elementwise("mul", x, y)


def div(x, y):
    return apply_elementwise("div", x, y, float_only=True)


def power(x, y):
    return apply_elementwise("pow", x, y)


def maximum(x, y):
    return apply_elementwise("maximum", x, y)


def minimum(x, y):
    return apply_elementwise("minimum", x, y)


def logaddexp(x, y):
    return apply_elementwise("logaddexp", x, y, float_only=True)


def heaviside(x, at_zero):
    return apply_elementwise("heaviside", x, at_zero=float(at_zero))


def where(cond, x, y):
    if (type(cond) is np.ndarray and type(x) is np.ndarray and type(y) is np.ndarray and cond.dtype == np.bool_
            and x.dtype == y.dtype and x.dtype in FAST_DTYPES and cond.shape == x.shape == y.shape):
        return bind("where", cond, x, y)
    dtype = result_dtype(x, y)
    shape = broadcast_shapes(aval(cond).shape, aval(x).shape, aval(y).shape, what="np.where operands")
    like = first_traced([cond, x, y])
    return bind("where", coerce(cond, "bool", shape, like), coerce(x, dtype, shape, like),
                coerce(y, dtype, shape, like))


def clip(x, lo, hi):
    dtype = result_dtype(x, *(b for b in (lo, hi) if b is not None))  # NumPy's: ints clipped at 2.5 are floats
    if dtype != aval(x).dtype:
        x = astype(x, dtype)
    bound = int if np.dtype(aval(x).np_dtype).kind in "iub" else float  # an int array clipped stays an int array
    return apply_elementwise("clip", x, lo=None if lo is None else bound(lo), hi=None if hi is None else bound(hi))


def astype(x, dtype: str, explicit: bool = False):
    """``x`` converted to ``dtype``. From complex to real only when the user's code asks (``explicit``: NumPy's
    ``.astype(float)`` drops the imaginary part); a conversion gradc would make on its own is refused instead,
    as it would give a wrong value (a real-only function given complex values)."""
    src = aval(x).dtype
    if src == dtype:
        return x
    if src in ("c64", "c128") and dtype not in ("c64", "c128") and not explicit:
        from gradc.errors import TraceError
        raise TraceError(f"this function of complex values ({src}) would drop their imaginary parts: gradc computes "
                         "it on real values only", hint="apply it to np.real(z), np.imag(z) or np.abs(z), or convert "
                                                        "explicitly with z.real or z.astype(float)")
    return bind("astype", x, dtype=dtype)


def _make_unary(name, float_only=True):
    def apply(x):
        return apply_elementwise(name, x, float_only=float_only)
    apply.__name__ = name
    apply.__doc__ = f"Elementwise {name}."
    return apply


neg = _make_unary("neg", float_only=False)
abs_ = _make_unary("abs", float_only=False)
sign = _make_unary("sign", float_only=False)
floor = _make_unary("floor")
exp, log, log1p, expm1, sqrt = (_make_unary(n) for n in ("exp", "log", "log1p", "expm1", "sqrt"))
sin, cos, tan, tanh, arctan, sinh, cosh = (_make_unary(n) for n in
                                           ("sin", "cos", "tan", "tanh", "arctan", "sinh", "cosh"))


def _make_compare(name):
    def apply(x, y):
        return apply_elementwise(name, x, y)
    apply.__name__ = name
    return apply


less, less_equal, greater, greater_equal, equal, not_equal = (
    _make_compare(n) for n in ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal"))


def logical_and(x, y):
    return apply_elementwise("logical_and", astype(x, "bool"), astype(y, "bool"))


def logical_or(x, y):
    return apply_elementwise("logical_or", astype(x, "bool"), astype(y, "bool"))


def logical_not(x):
    return bind("logical_not", astype(x, "bool"))


def square(x):
    """``x ** 2`` (NumPy's ``np.square``; of integers an integer, ``x * x``)."""
    if np.dtype(aval(x).np_dtype).kind in "iu":
        return mul(x, x)
    return power(x, 2.0)


def root_of_squares(v):
    """``sqrt(v)`` of a sum of squares, whose derivative is 0 where ``v`` is 0 (not ``0 * inf = nan``).

    A spread or a length that is 0 is a minimum, often a constant (``np.std`` over an axis of
    length 1, of a scalar): 0 is its derivative (a subgradient at a kink), as torch gives for
    ``std`` and ``linalg.norm``; JAX differentiates ``sqrt`` there and gives nan. The square root
    is taken of 1 where ``v`` is 0 (no infinite derivative, no divide-by-zero warning) and that
    root multiplied by 0 (``v != 0`` in ``v``'s dtype): a product, so that a scalar result stays
    a NumPy scalar (``np.where`` makes a 0-d array).

    >>> root_of_squares(np.array([0.0, 4.0, np.nan]))
    array([ 0.,  2., nan])
    """
    nonzero = not_equal(v, 0.0)
    return mul(sqrt(where(nonzero, v, 1.0)), astype(nonzero, aval(v).dtype))
