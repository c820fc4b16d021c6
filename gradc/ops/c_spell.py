"""C spellings: the ``c=`` facet of an op, as its ``defop`` gives it.

A C spelling is either

* ``scalar(fn)``: an elementwise op. ``fn(args, params, in_types, out_type)``
  returns a SymPy expression of SymPy operands (booleans are SymPy relations).
  The C emitter fuses runs of such ops into one loop, runs ``sympy.cse`` and
  prints the result with SymPy's C99 printer.
* ``loop(kind)``: a tensor op the C emitter writes as plain loops of that kind
  (``view``, ``reshape``, ``reduce``, ``matmul``, ...).
* ``None`` (spelled ``c=NONE`` at the op): the op has no C lowering, and the
  emitter lists every such op of a graph at once.

SymPy is imported on first use, not when ``gradc`` is imported: ``sym()`` gives
the namespace the scalar spellings build with (SymPy plus ``ite``, ``isnan``,
``log1p``, ``expm1``, ``trunc`` and NumPy-faithful ``maximum``/``minimum``).

>>> kind, fn = unary("sin")
>>> kind, fn([sym().sp.Symbol("x")], {}, None, None)
('scalar', sin(x))
>>> loop("matmul")
('matmul',)
"""
from __future__ import annotations

import functools
import math

NONE = None  # "this op has no C lowering", said at the op (the emitter reports it)
MISSING = "missing"  # the default of ``defop(c=...)``: the completeness test rejects it


def scalar(fn):
    """The spelling of an elementwise op whose scalar formula ``fn`` builds (see the module docstring).

    >>> scalar(lambda a, p, ti, to: a[0])[0]
    'scalar'
    """
    return ("scalar", fn)


def loop(kind: str):
    """The spelling of a tensor op the C emitter lowers as loops of ``kind``.

    >>> loop("reduce")
    ('reduce',)
    """
    return (kind,)


def unary(name: str):
    """``name(x)`` with the SymPy function of that name in ``sym()`` (printed as C99's function).

    >>> unary("exp")[1]([sym().sp.Symbol("x")], {}, None, None)
    exp(x)
    """
    return scalar(lambda a, p, ti, to: getattr(sym(), name)(a[0]))


def binary(fn):
    """An elementwise op of two operands: ``fn(x, y)`` on SymPy operands (see ``sym()`` for its names).

    >>> binary(lambda s, x, y: x + y)[1]([sym().sp.Symbol("x"), sym().sp.Symbol("y")], {}, None, None)
    x + y
    """
    return scalar(lambda a, p, ti, to: fn(sym(), a[0], a[1]))


@functools.lru_cache(maxsize=None)
def _complex_function(name: str, is_real: bool):
    sp = sym().sp

    def _ccode(self, printer):
        return f"{name}({printer._print(self.args[0])})"

    extra = {"is_real": True, "_eval_is_extended_real": lambda self: True} if is_real else {}
    return type(f"c99_{name}", (sp.Function,), {"nargs": 1, "_ccode": _ccode, **extra})


def complex_call(name: str, x, is_real: bool = True):
    """The C99 call ``name(x)`` of complex.h (``creal``, ``cimag``, ``cabs``, ``carg``: real; ``conj``: complex).

    >>> complex_call("cabs", sym().sp.Symbol("z")).is_real
    True
    """
    return _complex_function(name, is_real)(x)


@functools.lru_cache(maxsize=None)
def _quotient_class():
    sp = sym().sp

    class Quotient(sp.Function):  # an unevaluated x / c: SymPy would turn it into x * (1/c), an ulp off
        nargs = 2

        @classmethod
        def eval(cls, x, y):
            if x.is_Number and y.is_Number and y != 0:
                return sp.Float(float(x) / float(y))  # Python's float division: IEEE's, as C's
            return None

        def _eval_is_extended_real(self):
            return self.args[0].is_extended_real

        def _ccode(self, printer):
            return f"({printer._print(self.args[0])}/{printer._print(self.args[1])})"
    return Quotient


def quotient(x, y):
    """``x / y`` that C computes as a division, as NumPy does: a constant ``y`` that is not a power of two is not
    turned into a multiplication by its rounded reciprocal (``x / 6.0`` is not ``0.16666666666666666 * x``).

    >>> s = sym().sp; x = s.Symbol("x", real=True)
    >>> s.ccode(quotient(x, s.Float(6.0))), s.ccode(quotient(x, s.Float(4.0))), s.ccode(quotient(x, s.Symbol("y")))
    ('(x/6.0)', '0.25*x', 'x/y')
    """
    sp = sym().sp
    if (isinstance(y, sp.Number) and y.is_extended_real) or isinstance(y, (int, float)):
        value = float(y)
        if value != 0.0 and math.isfinite(value) and abs(math.frexp(value)[0]) != 0.5:  # not a power of two
            return _quotient_class()(x, sp.Float(value))
    return x / y


@functools.lru_cache(maxsize=None)
def sym():
    """The SymPy namespace for scalar spellings (built once, on first use).

    >>> s = sym(); x = s.sp.Symbol("x", real=True)
    >>> s.ite(s.sp.true, x, 0)
    x
    """
    import sympy as sp
    from sympy.codegen.cfunctions import expm1, log1p
    from sympy.core.logic import fuzzy_and

    class isnan(sp.logic.boolalg.BooleanFunction):  # noqa: N801 (printed as C99's isnan)
        """C99's ``isnan`` as a SymPy boolean (SymPy's real symbols are never NaN, so it cannot say this itself)."""

        nargs = 1

        @classmethod
        def eval(cls, x):
            if x.is_number:
                return sp.true if x is sp.nan else sp.false
            if x.is_integer:  # an int is never NaN (and C's isnan takes no int)
                return sp.false
            return None

    class ite(sp.Function):  # noqa: N801 (printed as C's ternary)
        """``cond ? a : b``. Not SymPy's Piecewise, which reasons about conditions (and drops a NaN branch)."""

        nargs = 3

        @classmethod
        def eval(cls, cond, a, b):
            if cond is sp.true:
                return a
            if cond is sp.false:
                return b
            return None

        # real unless a branch is known not to be (C's values are): where SymPy cannot tell (x**2.0 is
        # "maybe complex" to it) it called ``t0 - ite(...)`` non-real and refused to compare it
        # (``np.maximum(s, np.where(...))`` raised "Invalid comparison of non-real")
        def _eval_is_extended_real(self):
            return not any(getattr(a, "is_extended_real", None) is False for a in self.args[1:])

        def _eval_is_real(self):
            return fuzzy_and(getattr(a, "is_real", None) for a in self.args[1:])

        def _eval_is_integer(self):  # integer branches give an integer (the C emitter types its temporaries so)
            return fuzzy_and(getattr(a, "is_integer", None) for a in self.args[1:])

    def maximum(x, y, is_float=True):
        """NumPy's ``maximum``: NaN if either is NaN (C's ``fmax`` would drop the NaN)."""
        return ite(sp.Or(x > y, isnan(x)) if is_float else x > y, x, y)

    def minimum(x, y, is_float=True):
        return ite(sp.Or(x < y, isnan(x)) if is_float else x < y, x, y)

    @functools.lru_cache(maxsize=None)
    def _int_function(name, nargs):
        def _ccode(self, printer):
            return f"{name}({', '.join(printer._print(a) for a in self.args)})"
        return type(name, (sp.Function,), {"nargs": nargs, "_ccode": _ccode, "is_integer": True, "is_real": True})

    def int_call(name, *args):
        """The call ``name(args...)`` of an int64 function (``gradc_mod_i64``...): an integer to SymPy."""
        return _int_function(name, len(args))(*args)

    class Namespace:
        pass

    ns = Namespace()
    ns.sp, ns.isnan, ns.ite, ns.maximum, ns.minimum = sp, isnan, ite, maximum, minimum
    ns.log1p, ns.expm1, ns.int_call = log1p, expm1, int_call
    ns.trunc = sp.Function("trunc")
    ns.to_float32 = sp.Function("to_float32")  # printed as the cast (float)(x): rounds to float32
    for name, fn in [("exp", sp.exp), ("log", sp.log), ("sqrt", sp.sqrt), ("sin", sp.sin), ("cos", sp.cos),
                     ("tan", sp.tan), ("tanh", sp.tanh), ("arctan", sp.atan), ("sinh", sp.sinh),
                     ("cosh", sp.cosh), ("abs", sp.Abs), ("floor", sp.floor)]:
        setattr(ns, name, fn)
    return ns
