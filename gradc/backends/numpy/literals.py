"""Constants in emitted NumPy source: scalars as literals, arrays as module-level definitions.

>>> import ast
>>> ast.unparse(scalar_literal(float("inf"), math_mode=False))
'np.inf'
"""
from __future__ import annotations

import ast
import math

import numpy as np

from gradc.ir.graph import Const
from gradc.ops import spell


def scalar_literal(value, math_mode: bool) -> ast.expr:
    """A NumPy or Python scalar as a source literal (``np.inf`` / ``math.inf`` for infinities)."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float):
        if math.isnan(value):
            return spell.dotted("math.nan" if math_mode else "np.nan")
        if math.isinf(value):
            inf = spell.dotted("math.inf" if math_mode else "np.inf")
            return inf if value > 0 else ast.UnaryOp(ast.USub(), inf)
    return spell.literal(value)


def const_value_for_literal(const: Const):
    v = const.value[()]
    if const.type.dtype == "f32":
        return float(str(v))  # shortest text that rounds back to the same float32
    return v.item()


def array_constant_expr(const: Const) -> ast.expr:
    """Module-level definition of an array constant; aranges read as ``np.arange(n)``."""
    arr = const.value
    if arr.dtype.kind == "i" and arr.size:
        flat = arr.reshape(-1)
        n = flat.size
        if np.array_equal(flat, np.arange(n)):
            expr = spell.call("np.arange", ast.Constant(n))
            if arr.dtype != np.int64:
                expr = spell.call("np.arange", ast.Constant(n), dtype=spell.dotted(f"np.{arr.dtype.name}"))
            return expr if arr.ndim == 1 else spell.method_call(expr, "reshape", spell.literal(arr.shape))
    dtype = spell.dotted(f"np.{arr.dtype.name}")
    if arr.size == 0:  # [] would lose the shape, e.g. (0, 1)
        return spell.call("np.zeros", spell.literal(arr.shape), dtype=dtype)
    data = _NonFinite().visit(ast.parse(repr(arr.tolist()), mode="eval").body)
    return spell.call("np.array", data, dtype=dtype)


class _NonFinite(ast.NodeTransformer):
    """``repr`` writes NaN and infinity as the bare names ``nan`` and ``inf``: read them as ``np.nan``, ``np.inf``."""

    def visit_Name(self, node):
        return spell.dotted(f"np.{node.id}") if node.id in ("nan", "inf") else node
