"""How each op is lowered to C: one table keyed by op name (the ``C_LOWERING`` dict).

Elementwise ops are ``("scalar", fn)``: ``fn(args, params, in_types, out_type)``
builds a SymPy expression from SymPy operands (booleans are SymPy relations);
the emitter fuses runs of them into one loop, runs ``sympy.cse`` and prints
with SymPy's C99 printer. Every other op names a loop kind the emitter knows
(``view``, ``reduce``, ``matmul``, ...). An op absent from the table, or mapped
to ``None``, has no C lowering; the emitter lists all such ops of a graph at once.

The table lives here rather than as a ``c=`` facet in ``gradc/ops/*.py`` so the
C backend does not touch the op files while other work goes on there; moving
each entry next to its op is mechanical.

>>> sorted(k for k, v in C_LOWERING.items() if v is None)
[]
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from sympy.codegen.cfunctions import expm1, log1p


def _trunc(x):
    return sp.Function("trunc")(x)


class isnan(sp.logic.boolalg.BooleanFunction):  # noqa: N801 (printed as C99's isnan)
    """C99's ``isnan`` as a SymPy boolean (SymPy's real symbols are never NaN, so it cannot say this itself)."""

    nargs = 1

    @classmethod
    def eval(cls, x):
        if x.is_number:
            return sp.true if x is sp.nan else sp.false
        return None


class ite(sp.Function):  # noqa: N801 (printed as C's ternary)
    """``cond ? a : b``. Not SymPy's piecewise type, which reasons about conditions (and drops a NaN branch)."""

    nargs = 3

    @classmethod
    def eval(cls, cond, a, b):
        if cond is sp.true:
            return a
        if cond is sp.false:
            return b
        return None


def maximum(x, y, is_float=True):
    """NumPy's ``maximum``: NaN if either is NaN (C's ``fmax`` would drop the NaN)."""
    return ite(sp.Or(x > y, isnan(x)) if is_float else x > y, x, y)


def minimum(x, y, is_float=True):
    return ite(sp.Or(x < y, isnan(x)) if is_float else x < y, x, y)


def _logaddexp(a, p, ti, to):
    x, y = a  # as NumPy: equal arguments (also infinities) give x + log(2)
    return ite(sp.Eq(x, y), x + sp.Float(float(np.log(2.0))), maximum(x, y) + log1p(sp.exp(-sp.Abs(x - y))))


def _heaviside(a, p, ti, to):
    x = a[0]  # NaN stays NaN
    return ite(isnan(x), x, ite(x > 0, sp.Float(1.0), ite(x < 0, sp.Float(0.0), sp.Float(p["at_zero"]))))


def _sign(a, p, ti, to):
    x = a[0]
    signs = ite(x > 0, sp.Integer(1), ite(x < 0, sp.Integer(-1), sp.Integer(0)))
    return ite(isnan(x), x, signs) if ti[0].is_float else signs


def _clip(a, p, ti, to):
    x = a[0]
    if p["lo"] is not None:
        x = maximum(x, sp.Float(p["lo"]))
    if p["hi"] is not None:
        x = minimum(x, sp.Float(p["hi"]))
    return x


def _astype(a, p, ti, to):
    x = a[0]
    src, dst = ti[0].dtype, to.dtype
    if dst == "bool":
        return x if src == "bool" else sp.Ne(x, 0)
    if src == "bool":
        return ite(x, sp.Integer(1), sp.Integer(0))
    if dst.startswith("i") and src.startswith("f"):
        return _trunc(x)  # C's conversion truncates too; explicit so fused uses see it
    return x


def _scalar(fn):
    return ("scalar", fn)


def _s1(f):
    return _scalar(lambda a, p, ti, to: f(a[0]))


def _s2(f):
    return _scalar(lambda a, p, ti, to: f(a[0], a[1]))


C_LOWERING: dict = {
    "add": _s2(lambda x, y: x + y),
    "sub": _s2(lambda x, y: x - y),
    "mul": _s2(lambda x, y: x * y),
    "div": _s2(lambda x, y: x / y),
    "pow": _s2(lambda x, y: x ** y),
    "maximum": _scalar(lambda a, p, ti, to: maximum(a[0], a[1], ti[0].is_float)),
    "minimum": _scalar(lambda a, p, ti, to: minimum(a[0], a[1], ti[0].is_float)),
    "logaddexp": _scalar(_logaddexp),
    "neg": _s1(lambda x: -x),
    "abs": _s1(sp.Abs),
    "exp": _s1(sp.exp),
    "log": _s1(sp.log),
    "log1p": _s1(log1p),
    "expm1": _s1(expm1),
    "sqrt": _s1(sp.sqrt),
    "sin": _s1(sp.sin),
    "cos": _s1(sp.cos),
    "tan": _s1(sp.tan),
    "tanh": _s1(sp.tanh),
    "arctan": _s1(sp.atan),
    "sinh": _s1(sp.sinh),
    "cosh": _s1(sp.cosh),
    "sign": _scalar(_sign),
    "floor": _s1(sp.floor),
    "heaviside": _scalar(_heaviside),
    "less": _s2(lambda x, y: sp.Lt(x, y)),
    "less_equal": _s2(lambda x, y: sp.Le(x, y)),
    "greater": _s2(lambda x, y: sp.Gt(x, y)),
    "greater_equal": _s2(lambda x, y: sp.Ge(x, y)),
    "equal": _s2(lambda x, y: sp.Eq(x, y)),
    "not_equal": _s2(lambda x, y: sp.Ne(x, y)),
    "logical_and": _s2(sp.And),
    "logical_or": _s2(sp.Or),
    "logical_not": _s1(sp.Not),
    "where": _scalar(lambda a, p, ti, to: ite(a[0], a[1], a[2])),
    "clip": _scalar(_clip),
    "astype": _scalar(_astype),
    # loops
    "broadcast_to": ("view",),
    "transpose": ("view",),
    "index": ("view",),
    "reshape": ("reshape",),
    "sum": ("reduce",),
    "mean": ("reduce",),
    "max": ("reduce",),
    "min": ("reduce",),
    "prod": ("reduce",),
    "argmax": ("argreduce",),
    "argmin": ("argreduce",),
    "matmul": ("matmul",),
    "outer": ("outer",),
    "concatenate": ("concatenate",),
    "index_grad": ("index_grad",),
    "gather": ("gather",),
    "gather_grad": ("gather_grad",),
}


def unsupported_ops(graph) -> list:
    """Sorted names of the ops of ``graph`` that have no C lowering."""
    return sorted({e.op for e in graph.eqns if C_LOWERING.get(e.op) is None})
