"""``scipy.special``'s functions: error functions, the normal distribution's, gamma and its relatives, the
logistic function, entropies, ``logsumexp`` and ``softmax``.

Each primitive computes with SciPy (imported on first use) and is spelled ``scipy.special.NAME(...)``
in emitted code; its derivative is written with gradc ops, so it differentiates again: ``gammaln``'s is
``digamma``, whose is ``polygamma(1, .)``, and so on (the order ``n`` is a static parameter). C has
``erf``, ``erfc``, ``lgamma`` and ``tgamma``, gradc's C math library ``digamma``, ``erfinv``, ``erfcinv``,
``ndtri``, ``log_ndtr``, ``polygamma``, ``betaln`` and ``beta`` (gradc/backends/c/mathlib). ``entr``,
``kl_div``, ``loggamma``, ``logsumexp``, ``softmax``, ``log_softmax`` and ``multigammaln`` are compositions of these
and NumPy's ops.

>>> import numpy as np
>>> round(float(gammaln(np.float64(5.0))), 12) == round(float(np.log(24.0)), 12)
True
"""
from __future__ import annotations

import math

import numpy as np

from gradc.errors import TraceError
from gradc.ir.registry import defop
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops import reduce as red
from gradc.ops import shape as sh
from gradc.ops.autodiff import stop_gradient
from gradc.ops.elementwise import _same_types
from gradc.ops.promote import apply_elementwise, zeros_like
from gradc.ops.special_numpy import c_call, isfinite, isnan
from gradc.ops.values import aval, broadcast_shapes, first_traced

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)


def _scipy_special():
    import scipy.special  # on first use: importing gradc does not import SciPy
    return scipy.special


def _like(x, result):
    """SciPy's result in ``x``'s dtype (``polygamma`` and others compute float32 in float64)."""
    result = np.asarray(result)
    dtype = np.asarray(x).dtype
    if result.dtype != dtype:
        result = result.astype(dtype)
    return result[()] if result.ndim == 0 else result


def _impl(name):
    return lambda *xs: _like(xs[0], getattr(_scipy_special(), name)(*xs))


def scipy_spelling(name):
    """``scipy.special.NAME(*args)``, with ``dtype=np.float32`` for a float32 result of several operands: SciPy's
    ufuncs pick the float64 loop when an operand is a Python float literal (NumPy's weak scalars are not theirs)."""
    def build(args, params, out, target):
        if len(args) > 1 and out.dtype == "f32":
            return spell.call(f"scipy.special.{name}", *args, dtype=spell.dotted("np.float32"))
        return spell.call(f"scipy.special.{name}", *args)
    return build


def scipy_operands(name, xs):
    """``xs`` in the dtype SciPy's ufunc ``name`` computes in: it picks its first loop that fits, so a Python
    float next to float32 arrays gives float64 where the ``dd->d`` loop comes first (``gammainc``), float32
    where ``ff->f`` does (``betainc``, ``jv``). The answer is SciPy's own, on one-element stand-ins."""
    if not any(isinstance(x, (int, float)) for x in xs):
        return xs
    stand_ins = [x if isinstance(x, (int, float)) else np.ones((), aval(x).np_dtype) for x in xs]
    with np.errstate(all="ignore"):
        dtype = np.asarray(getattr(_scipy_special(), name)(*stand_ins)).dtype
    if dtype != np.float64:
        return xs
    return [x if isinstance(x, (int, float)) or aval(x).dtype != "f32" else ew.astype(x, "f64") for x in xs]


def _defop(name, vjp, doc, *, c, math_name=None):
    defop(name, infer=_same_types, impl=_impl(name), vjp=vjp, elementwise=True, doc=doc,
          np=scipy_spelling(name), math=spell.fn(math_name) if math_name else None, c=c)


def _c(fn):
    return c_spell.scalar(lambda a, p, ti, to: fn(c_spell.sym(), *a))


def _mathlib(name):
    """The C spelling calling gradc's C math library (gradc/backends/c/mathlib/special.py)."""
    return _c(lambda s, x: c_call(f"gradc_{name}", [x], template=f"gradc_{name}{{f}}({{0}})"))


# ---------------------------------------------------------------- error functions and the normal distribution
_defop("erf", lambda ct, out, x, needs: (ew.mul(ct, ew.mul(ew.exp(ew.neg(ew.mul(x, x))), 2.0 / _SQRT_PI)),),
       "x_bar = ct * 2/sqrt(pi) * exp(-x**2)", math_name="math.erf", c=_c(lambda s, x: c_call("erf", [x])))
_defop("erfc", lambda ct, out, x, needs: (ew.mul(ct, ew.mul(ew.exp(ew.neg(ew.mul(x, x))), -2.0 / _SQRT_PI)),),
       "x_bar = -ct * 2/sqrt(pi) * exp(-x**2)", math_name="math.erfc", c=_c(lambda s, x: c_call("erfc", [x])))
_defop("erfinv", lambda ct, out, x, needs: (ew.mul(ct, ew.mul(ew.exp(ew.mul(out, out)), _SQRT_PI / 2.0)),),
       "x_bar = ct * sqrt(pi)/2 * exp(out**2)", c=_mathlib("erfinv"))
_defop("erfcinv", lambda ct, out, x, needs: (ew.mul(ct, ew.mul(ew.exp(ew.mul(out, out)), -_SQRT_PI / 2.0)),),
       "x_bar = -ct * sqrt(pi)/2 * exp(out**2)", c=_mathlib("erfcinv"))


def _normal_density(x):
    return ew.div(ew.exp(ew.mul(ew.mul(x, x), -0.5)), _SQRT_2PI)


_defop("ndtr", lambda ct, out, x, needs: (ew.mul(ct, _normal_density(x)),),
       "x_bar = ct * exp(-x**2/2) / sqrt(2 pi)",  # SciPy's value: erfc(-x / sqrt 2) / 2
       c=_c(lambda s, x: c_call("erfc", [x * s.sp.Float(-math.sqrt(0.5))]) * s.sp.Float(0.5)))
_defop("log_ndtr",
       lambda ct, out, x, needs: (ew.mul(ct, ew.div(ew.exp(ew.sub(ew.mul(ew.mul(x, x), -0.5), out)), _SQRT_2PI)),),
       "x_bar = ct * exp(-x**2/2 - out) / sqrt(2 pi)", c=_mathlib("log_ndtr"))
_defop("ndtri", lambda ct, out, x, needs: (ew.mul(ct, ew.mul(ew.exp(ew.mul(ew.mul(out, out), 0.5)), _SQRT_2PI)),),
       "x_bar = ct * sqrt(2 pi) * exp(out**2/2)", c=_mathlib("ndtri"))

# ---------------------------------------------------------------- gamma and its relatives
_defop("gammaln", lambda ct, out, x, needs: (ew.mul(ct, digamma(x)),), "x_bar = ct * digamma(x)",
       c=_c(lambda s, x: c_call("gammaln", [x], template="({0} == -HUGE_VAL ? -HUGE_VAL : lgamma{f}({0}))")))
# (SciPy's gammaln(-inf) is -inf, C's lgamma gives +inf)
_defop("gamma", lambda ct, out, x, needs: (ew.mul(ct, ew.mul(out, digamma(x))),), "x_bar = ct * out * digamma(x)",
       c=_c(lambda s, x: c_call("tgamma", [x])))


_defop("digamma", lambda ct, out, x, needs: (ew.mul(ct, polygamma(1, x)),), "x_bar = ct * polygamma(1, x)",
       c=_mathlib("digamma"))


def _polygamma_impl(x, n):
    return _like(x, _scipy_special().polygamma(n, x))


def _polygamma_spell(args, params, out, target):
    value = spell.call("scipy.special.polygamma", spell.literal(int(params["n"])), args[0])
    # SciPy's polygamma is Python: it gives 0-d arrays for scalars and computes float32 in float64
    if out.shape == ():
        return spell.call(f"np.{out.np_dtype.name}", value)
    return value if out.dtype == "f64" else spell.method_call(value, "astype", spell.dotted(f"np.{out.np_dtype.name}"))


defop("polygamma", infer=_same_types, impl=_polygamma_impl, elementwise=True,
      vjp=lambda ct, out, x, needs, n: (ew.mul(ct, polygamma(n + 1, x)),),
      doc="x_bar = ct * polygamma(n + 1, x) (n >= 1; n = 0 is digamma)", np=_polygamma_spell,
      c=c_spell.scalar(lambda a, p, ti, to: c_call("gradc_polygamma", [c_spell.sym().sp.Integer(int(p["n"])), a[0]],
                                                   template="gradc_polygamma{f}({0}, {1})")))


def _digamma_pair(a, b, ct, out=None):
    """Cotangents of f(a, b) whose partials are (psi(a) - psi(a + b)) (times ``out``) and its mirror."""
    both = digamma(ew.add(a, b))
    scale = ct if out is None else ew.mul(ct, out)
    return lambda x: ew.mul(scale, ew.sub(digamma(x), both))


def _betaln_vjp(ct, out, a, b, needs):
    part = _digamma_pair(a, b, ct)
    return (part(a) if needs[0] else None, part(b) if needs[1] else None)


def _beta_vjp(ct, out, a, b, needs):
    part = _digamma_pair(a, b, ct, out)
    return (part(a) if needs[0] else None, part(b) if needs[1] else None)


_defop("betaln", _betaln_vjp, "a_bar = ct * (digamma(a) - digamma(a + b)); b_bar likewise",
       c=_c(lambda s, a, b: c_call("gradc_betaln", [a, b], template="gradc_betaln{f}({0}, {1})")))
_defop("beta", _beta_vjp, "a_bar = ct * out * (digamma(a) - digamma(a + b)); b_bar likewise",
       c=_c(lambda s, a, b: c_call("gradc_beta", [a, b], template="gradc_beta{f}({0}, {1})")))


def _rgamma_vjp(ct, out, x, needs):
    """-out * digamma(x); at the poles of Gamma (x = -n), where 1/Gamma is 0, its limit (-1)^n n!."""
    pole = ew.logical_and(ew.less_equal(x, 0.0), ew.equal(x, ew.floor(x)))
    at = ew.where(pole, x, 0.0)  # each branch finite everywhere: its derivative is masked, not multiplied by NaN
    # (-1)^n n! = cos(pi x) Gamma(1 - x) at x = -n; the factor 1 - psi(1 - x0) (x - x0), x0 = x held constant, is
    # 1 there and makes the slope of this expression (-2 (-1)^n n! psi(n + 1)) that of the exact derivative
    held = stop_gradient(at)
    at_pole = ew.mul(ew.mul(ew.cos(ew.mul(at, math.pi)), gamma(ew.sub(1.0, at))),
                     ew.sub(1.0, ew.mul(digamma(ew.sub(1.0, held)), ew.sub(at, held))))
    return (ew.mul(ct, ew.where(pole, at_pole, ew.neg(ew.mul(out, digamma(ew.where(pole, 1.0, x)))))),)


def _rgamma_c(s, x):  # SciPy's 0 at the poles and at -inf (C's tgamma: a pole error, NaN)
    sp = s.sp
    pole = sp.Or(sp.And(x <= 0, sp.Eq(x, c_call("floor", [x]))), sp.Eq(x, -sp.oo))
    return s.ite(pole, x * 0, 1 / c_call("tgamma", [x]))


def _gammasgn_c(s, x):  # SciPy's: NaN at the poles, -inf and NaN; the sign of zero at 0
    sp = s.sp
    below = s.ite(sp.Eq(x, c_call("floor", [x])), sp.nan,
                  s.ite(sp.Eq(c_call("fmod", [c_call("floor", [x]), sp.Integer(2)]), 0), sp.Integer(1), sp.Integer(-1)))
    return s.ite(sp.Or(x > 0, s.isnan(x)), s.ite(s.isnan(x), sp.nan, sp.Integer(1)),
                 s.ite(sp.Eq(x, 0), c_call("copysign", [sp.Integer(1), x]), below))


_defop("rgamma", _rgamma_vjp, "x_bar = -ct * out * digamma(x) ((-1)^n n! at x = -n)", c=_c(_rgamma_c))
defop("gammasgn", infer=_same_types, impl=_impl("gammasgn"), nondiff=True, elementwise=True,
      doc="the sign of Gamma(x): derivative zero (piecewise constant)", np=scipy_spelling("gammasgn"),
      c=_c(_gammasgn_c))
_defop("erfcx", lambda ct, out, x, needs: (ew.mul(ct, ew.sub(ew.mul(ew.mul(x, out), 2.0), 2.0 / _SQRT_PI)),),
       "x_bar = ct * (2 x out - 2/sqrt(pi))", c=_mathlib("erfcx"))


# ---------------------------------------------------------------- the logistic function
def _logit_c(s, x):  # SciPy's: log1p differences near 1/2, where x / (1 - x) loses digits
    sp = s.sp
    near_half = sp.And(x > sp.Float(0.3), x < sp.Float(0.65))
    return s.ite(near_half, s.log1p(2 * x - 1) - s.log1p(1 - 2 * x), c_call("log", [x / (1 - x)]))


def _log_expit_c(s, x):
    return s.ite(x < 0, x - s.log1p(s.exp(x)), -s.log1p(s.exp(-x)))


_defop("expit", lambda ct, out, x, needs: (ew.mul(ct, ew.mul(out, ew.sub(1.0, out))),), "x_bar = ct * out * (1 - out)",
       c=_c(lambda s, x: 1 / (1 + s.exp(-x))))
_defop("logit", lambda ct, out, x, needs: (ew.div(ct, ew.mul(x, ew.sub(1.0, x))),), "x_bar = ct / (x (1 - x))",
       c=_c(_logit_c))
_defop("log_expit", lambda ct, out, x, needs: (ew.mul(ct, expit(ew.neg(x))),), "x_bar = ct * expit(-x)",
       c=_c(_log_expit_c))


# ---------------------------------------------------------------- x log y and the entropies
def _safe_ratio(x, y):
    """x / y, and 0 where x is 0 (also where y is: the limit of x log y as x -> 0)."""
    x_zero = ew.equal(x, 0.0)
    return ew.where(x_zero, 0.0, ew.div(x, ew.where(x_zero, 1.0, y)))


def _xlogy_vjp(ct, out, x, y, needs):
    return (ew.mul(ct, ew.log(y)) if needs[0] else None, ew.mul(ct, _safe_ratio(x, y)) if needs[1] else None)


def _xlog1py_vjp(ct, out, x, y, needs):
    return (ew.mul(ct, ew.log1p(y)) if needs[0] else None,
            ew.mul(ct, _safe_ratio(x, ew.add(y, 1.0))) if needs[1] else None)


def _xlogy_c(log):
    def build(s, x, y):  # SciPy's: 0 where x == 0 unless y is NaN
        return s.ite(s.sp.And(s.sp.Eq(x, 0), s.sp.Not(s.isnan(y))), s.sp.Integer(0), x * log(s, y))
    return build


def _rel_entr_vjp(ct, out, x, y, needs):
    x_bar = ew.mul(ct, ew.add(ew.log(ew.div(x, y)), 1.0)) if needs[0] else None
    return x_bar, (ew.neg(ew.mul(ct, ew.div(x, y))) if needs[1] else None)


def _rel_entr_c(s, x, y):  # SciPy's cases: NaN, x log(x/y) inside, 0 at x = 0, inf elsewhere
    sp = s.sp
    inside = s.ite(sp.And(sp.Eq(x, 0), y >= 0), sp.Integer(0), sp.oo)
    inside = s.ite(sp.And(x > 0, y > 0), x * c_call("log", [x / y]), inside)
    return s.ite(sp.Or(s.isnan(x), s.isnan(y)), sp.nan, inside)


_defop("xlogy", _xlogy_vjp, "x_bar = ct * log(y); y_bar = ct * x / y (0 where x = 0)",
       c=_c(_xlogy_c(lambda s, y: c_call("log", [y]))))
_defop("xlog1py", _xlog1py_vjp, "x_bar = ct * log1p(y); y_bar = ct * x / (1 + y) (0 where x = 0)",
       c=_c(_xlogy_c(lambda s, y: s.log1p(y))))
_defop("rel_entr", _rel_entr_vjp, "x_bar = ct * (log(x / y) + 1); y_bar = -ct * x / y", c=_c(_rel_entr_c))


# ---------------------------------------------------------------- the functions tracers and rules call
def _make(name):
    def apply(*xs):
        return apply_elementwise(name, *xs, float_only=True)
    apply.__name__ = name
    apply.__doc__ = f"``scipy.special.{name}`` on gradc values (op ``{name}``)."
    return apply


erf, erfc, erfinv, erfcinv, ndtr, log_ndtr, ndtri = (_make(n) for n in (
    "erf", "erfc", "erfinv", "erfcinv", "ndtr", "log_ndtr", "ndtri"))
gammaln, gamma, digamma, betaln, beta, rgamma, gammasgn, erfcx = (_make(n) for n in (
    "gammaln", "gamma", "digamma", "betaln", "beta", "rgamma", "gammasgn", "erfcx"))
expit, logit, log_expit, xlogy, xlog1py, rel_entr = (_make(n) for n in (
    "expit", "logit", "log_expit", "xlogy", "xlog1py", "rel_entr"))


def _static_int(value, what, name):
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= 0:
        return int(value)
    if first_traced([value]) is not None:
        raise TraceError(f"{what}: {name} must be a Python int known when tracing, not a traced value",
                         hint=f"pass {name} as a Python int (it selects the function: it has no derivative)")
    raise TraceError(f"{what}: {name} must be a non-negative int, not {value!r}",
                     hint=f"pass {name} as a Python int >= 0")


def polygamma(n, x):
    """``scipy.special.polygamma(n, x)``: the n-th derivative of digamma; ``n`` is a static int.

    >>> round(float(polygamma(1, np.float64(1.0))), 12) == round(np.pi ** 2 / 6, 12)
    True
    """
    n = _static_int(n, "scipy.special.polygamma", "the order n")
    if n == 0:
        return digamma(x)
    return apply_elementwise("polygamma", x, float_only=True, n=n)


def loggamma(x):
    """``scipy.special.loggamma`` on real arguments: ``gammaln`` for ``x >= 0``, NaN below.

    >>> float(loggamma(np.float64(3.0))) == float(np.log(2.0))
    True
    """
    below = ew.less(x, 0.0)
    return ew.where(below, np.nan, gammaln(ew.where(below, 1.0, x)))


def entr(x):
    """``scipy.special.entr``: ``-x log x`` (0 at 0, -inf below); it is ``-rel_entr(x, 1)``.

    >>> bool(entr(np.float64(0.5)) == 0.5 * np.log(2.0))
    True
    """
    return ew.neg(rel_entr(x, 1.0))


def kl_div(x, y):
    """``scipy.special.kl_div``: ``x log(x/y) - x + y``; it is ``rel_entr(x, y) - x + y`` (inf where that is).

    >>> float(kl_div(np.float64(1.0), np.float64(1.0)))
    0.0
    """
    inside = ew.logical_and(ew.greater(x, 0.0), ew.greater(y, 0.0))
    at_zero = ew.logical_and(ew.equal(x, 0.0), ew.greater_equal(y, 0.0))
    outside = ew.logical_not(ew.logical_or(ew.logical_or(inside, at_zero), ew.logical_or(isnan(x), isnan(y))))
    return ew.where(outside, np.inf, ew.add(ew.sub(rel_entr(x, y), x), y))  # SciPy's inf outside, not inf - inf


def multigammaln(a, d):
    """``scipy.special.multigammaln(a, d)``: the log of the multivariate gamma function; ``d`` is a static int.

    >>> from scipy.special import multigammaln as reference
    >>> bool(np.isclose(multigammaln(np.float64(3.5), 3), reference(3.5, 3)))
    True
    """
    d = _static_int(d, "scipy.special.multigammaln", "the dimension d")
    if d < 1:
        raise TraceError("scipy.special.multigammaln: the dimension d must be at least 1", hint="pass d >= 1")
    out = gammaln(a)
    for j in range(1, d):
        out = ew.add(out, gammaln(ew.sub(a, j / 2.0)))
    return ew.add(ew.astype(out, "f64"), d * (d - 1) / 4.0 * math.log(math.pi))  # float64, as SciPy's


def _shifted(a, axis):
    """``a`` minus its maximum along ``axis`` (kept), the maximum held constant (only the shift's value
    matters: the results do not depend on it); infinite maxima shift by 0, as in SciPy."""
    top = red.max_(a, axis, keepdims=True)
    top = stop_gradient(ew.where(isfinite(top), top, zeros_like(top)))
    return ew.sub(a, top), top


def _shifted_complex(a, axis):
    """``a`` minus the largest real part along ``axis`` (kept, constant), as SciPy shifts complex input."""
    from gradc.ops.complex_numbers import real
    top = red.max_(real(a), axis, keepdims=True)
    top = stop_gradient(ew.where(isfinite(top), top, zeros_like(top)))
    return ew.sub(a, top), top


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``scipy.special.logsumexp``: ``log(sum(b * exp(a)))`` along ``axis``, computed after shifting by the maximum.

    >>> float(logsumexp(np.log(np.array([1.0, 2.0, 3.0]))))
    1.791759469228055
    """
    if return_sign:
        raise TraceError("scipy.special.logsumexp with return_sign=True is not supported by gradc",
                         hint="drop return_sign= (the sign has no derivative); use b >= 0 or split the sum by sign")
    if aval(a).dtype is None or aval(a).dtype not in ("f32", "f64", "c64", "c128"):
        a = ew.astype(a if aval(a).dtype is not None else np.asarray(a, dtype=np.float64), "f64")
    if b is not None:  # a is broadcast against b, as in SciPy
        shape = broadcast_shapes(aval(a).shape, aval(b).shape, what="scipy.special.logsumexp's a and b")
        a = sh.broadcast_to(a, shape) if aval(a).shape != shape else a
    if aval(a).is_complex:  # complex: shifted by the largest real part (a real shift keeps log's principal branch)
        shifted, top = _shifted_complex(a, axis)
    else:
        shifted, top = _shifted(a, axis)
    terms = ew.exp(shifted)
    if b is not None:
        terms = ew.mul(terms, b)
    total = red.sum_(terms, axis, keepdims=keepdims)
    if not keepdims:
        top = sh.reshape(top, aval(total).shape)
    return ew.add(ew.log(total), top)


def softmax(x, axis=None):
    """``scipy.special.softmax``: ``exp(x) / sum(exp(x))`` along ``axis`` (all axes by default).

    >>> softmax(np.log(np.array([1.0, 3.0])))
    array([0.25, 0.75])
    """
    terms = ew.exp(_shifted(x, axis)[0])
    return ew.div(terms, red.sum_(terms, axis, keepdims=True))


def log_softmax(x, axis=None):
    """``scipy.special.log_softmax``: ``x - logsumexp(x)`` along ``axis``, computed after shifting by the maximum.

    >>> log_softmax(np.zeros(2))
    array([-0.69314718, -0.69314718])
    """
    shifted = _shifted(x, axis)[0]
    return ew.sub(shifted, ew.log(red.sum_(ew.exp(shifted), axis, keepdims=True)))


__all__ = ["rgamma", "gammasgn", "erfcx", "erf", "erfc", "erfinv", "erfcinv", "ndtr", "log_ndtr", "ndtri", "gammaln",
           "gamma", "betaln", "beta",
           "expit", "logit", "log_expit", "xlogy", "xlog1py", "rel_entr", "polygamma", "digamma", "loggamma", "entr",
           "kl_div", "multigammaln", "logsumexp", "softmax", "log_softmax"]
