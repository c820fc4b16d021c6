"""The C type of each value in a fused elementwise expression: integers stay integers.

The C emitter prints each op of a fused loop from its SymPy spelling (``fused.template``) with SymPy's
C99 printer, which writes whatever arithmetic the expression holds. So the expression carries the types:
a value of an int64 or int32 array is an integer symbol (``symbol``), an equation's expression is
converted to its result's type where it would not be (``typed``: ``to_int64``, ``to_float64``, printed
as casts), and a temporary holding an integer value is declared ``int64_t`` (``c_type`` says which
type SymPy proves an expression to have).
Integer operations themselves are calls of ``gradc.backends.c.mathlib.integer`` (NumPy's floor
division, modulo and shifts), so C's operators never see a type or an operand they treat otherwise.

>>> from gradc.backends.c.values import PRINTER
>>> k = symbol("k[i]", "i64")
>>> PRINTER.doprint(typed(k, "f64") / 2), c_type(k + 1, "f64")
('(1.0/2.0)*((double)(k[i]))', 'int64_t')
"""
from __future__ import annotations

import sympy as sp

from gradc.backends.c.values import C_TYPES

INT_DTYPES = frozenset({"i64", "i32"})


class to_int64(sp.Function):  # noqa: N801 (printed as the cast)
    """``(int64_t)(x)``: an integer value computed by a float expression (C truncates, as NumPy's astype).

    >>> from gradc.backends.c.values import PRINTER
    >>> x = sp.Symbol("x", real=True)
    >>> PRINTER.doprint(to_int64(x + 1)), to_int64(sp.Float(-2.5)), to_int64(sp.Symbol("k", integer=True))
    ('((int64_t)(x + 1))', -2, k)
    """

    nargs = 1
    is_integer = True
    is_real = True

    @classmethod
    def eval(cls, x):
        if x.is_integer:
            return x
        if x.is_Number and x.is_finite:
            return sp.Integer(int(x))
        return None

    def _ccode(self, printer):
        return f"((int64_t)({printer._print(self.args[0])}))"


class to_float64(sp.Function):  # noqa: N801 (printed as the cast)
    """``(double)(k)``: an integer value in a float expression, so ``/`` divides as floats do.

    >>> from gradc.backends.c.values import PRINTER
    >>> PRINTER.doprint(to_float64(sp.Symbol("k", integer=True)) / 2), to_float64(sp.Integer(3))
    ('(1.0/2.0)*((double)(k))', 3.00000000000000)
    """

    nargs = 1
    is_real = True

    @classmethod
    def eval(cls, x):
        if x.is_Number:
            return sp.Float(x)
        return None

    def _ccode(self, printer):
        return f"((double)({printer._print(self.args[0])}))"


def symbol(text: str, dtype: str):
    """The SymPy operand reading the C ``text`` of a value of ``dtype``: an integer symbol for int64 and int32
    (so integer arithmetic stays integer), a test ``text != 0`` for a boolean, else a real symbol.

    >>> symbol("k[i]", "i64").is_integer, symbol("x", "f64").is_integer, symbol("b", "bool")
    (True, None, Ne(b, 0))
    """
    if dtype in INT_DTYPES:
        return sp.Symbol(text, integer=True)
    if dtype in ("c64", "c128"):
        return sp.Symbol(text, complex=True)
    s = sp.Symbol(text, real=True)
    return sp.Ne(s, 0) if dtype == "bool" else s


def typed(expr, dtype: str):
    """``expr``, the value of an equation whose result has ``dtype``, made to compute in that C type: an integer
    result not provably integer is converted (``to_int64``), an integer expression giving a float is converted
    to double (``to_float64``).

    >>> k = symbol("k", "i64")
    >>> typed(k, "f64"), typed(sp.Symbol("x", real=True), "i64"), typed(k + 1, "i64")
    (to_float64(k), to_int64(x), k + 1)
    """
    if isinstance(expr, sp.logic.boolalg.Boolean) and not isinstance(expr, sp.Expr):
        return expr
    if dtype in INT_DTYPES:
        return expr if expr.is_integer else to_int64(expr)
    if dtype in ("f64", "f32") and expr.is_integer:
        return to_float64(expr)
    return expr


def c_type(expr, compute: str) -> str:
    """The C type of a temporary holding ``expr`` in a loop computing floats in ``compute``.

    >>> c_type(symbol("k", "i64") * 2, "f64"), c_type(sp.Symbol("x", real=True), "f32")
    ('int64_t', 'float')
    """
    if isinstance(expr, sp.logic.boolalg.Boolean) and not isinstance(expr, sp.Expr):
        return "int"
    return "int64_t" if expr.is_integer else C_TYPES[compute]
