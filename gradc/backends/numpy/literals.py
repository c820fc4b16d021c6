"""Constants in emitted NumPy source: scalars as literals, arrays as module-level definitions.

An array constant of more than :data:`LITERAL_LIMIT` elements (a table the traced function computed
from Python values, such as a Vandermonde matrix of ``np.arange(n)``) is computed when the module loads
from a short recipe when one computes it bit for bit (``gradc.backends.numpy.constant_recipes``: grids,
step functions, identities, power tables, repeated rows), so the module does not grow with the data;
any other is written as the hex text of its
bytes, read back by ``np.frombuffer``: the same values bit for bit, in text a tenth the length of the
nested list, and written and compiled about a thousand times faster (a 1024 x 128 table took 4.7 s as a
list; compile time stays a small fraction of a second up to millions of elements).

>>> import ast
>>> ast.unparse(scalar_literal(float("inf"), math_mode=False))
'np.inf'
"""
from __future__ import annotations

import ast
import hashlib
import math

import numpy as np

from gradc.backends.numpy.constant_recipes import recipe_expr
from gradc.ir.graph import Const
from gradc.ops import spell


def scalar_literal(value, math_mode: bool) -> ast.expr:
    """A NumPy or Python scalar as a source literal (``np.inf`` / ``math.inf`` for infinities)."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, complex):
        return complex_literal(value, math_mode)
    if isinstance(value, float):
        if math.isnan(value):
            return spell.dotted("math.nan" if math_mode else "np.nan")
        if math.isinf(value):
            inf = spell.dotted("math.inf" if math_mode else "np.inf")
            return inf if value > 0 else ast.UnaryOp(ast.USub(), inf)
    return spell.literal(value)


def complex_literal(value: complex, math_mode: bool = False) -> ast.expr:
    """A complex scalar as source: ``2j`` for a plain imaginary number, else ``complex(re, im)`` (each part
    a float literal, so negative zeros, NaN and infinities survive: ``1-0j`` would lose the zero's sign).

    >>> [ast.unparse(complex_literal(v)) for v in (2j, complex(1, -2), complex(float("nan"), -0.0))]
    ['2j', 'complex(1.0, -2.0)', 'complex(np.nan, -0.0)']
    """
    re, im = value.real, value.imag
    if re == 0.0 and math.copysign(1.0, re) > 0 and math.isfinite(im) and math.copysign(1.0, im) > 0:
        return ast.Constant(value)
    return spell.call("complex", scalar_literal(re, math_mode), scalar_literal(im, math_mode))


def const_value_for_literal(const: Const):
    v = const.value[()]
    if const.type.dtype == "f32":
        return float(str(v))  # shortest text that rounds back to the same float32
    if const.type.dtype == "c64":
        return complex(float(str(v.real)), float(str(v.imag)))
    return v.item()


LITERAL_LIMIT = 1024  # elements: an array constant larger than this is written as the hex of its bytes


def array_constant_expr(const: Const, blobs: dict | None = None) -> ast.expr:
    """Module-level definition of an array constant; aranges read as ``np.arange(n)``, a large array as a recipe
    computing it at load time (``gradc.backends.numpy.constant_recipes``) when one is found, else as its bytes.

    With ``blobs`` (a dict), a large array's hex text is left out of the expression: a placeholder string
    stands for it, and ``blobs`` maps the placeholder's text to the hex (the emitter puts it back last, so
    that its scans of the module's text do not read megabytes of hex).

    >>> ast.unparse(array_constant_expr(Const(np.array([1.0, 2.0]))))
    'np.array([1.0, 2.0], dtype=np.float64)'
    >>> ast.unparse(array_constant_expr(Const(np.linspace(0.0, 1.0, 2000))))  # a recipe (constant_recipes)
    'np.linspace(0.0, 1.0, 2000, dtype=np.float64)'
    >>> text = ast.unparse(array_constant_expr(Const(np.random.default_rng(0).random(2000))))
    >>> text.startswith("np.frombuffer(bytes.fromhex('"), text.endswith("'), dtype='<f8').reshape(2000)")
    (True, True)
    """
    arr = const.value
    if arr.dtype.kind == "i" and arr.size:
        expr = _arange_expr(arr)
        if expr is not None:
            return expr
    if arr.size > 1 and arr.dtype.kind in "biuf":
        expr = _filled_expr(arr)
        if expr is not None:
            return expr
    if arr.size > LITERAL_LIMIT and arr.dtype.kind in "biufc":
        recipe = recipe_expr(arr, lambda part: array_constant_expr(Const(part), blobs),
                             lambda part: array_constant_expr(Const(part)))
        return _bytes_expr(arr, blobs) if recipe is None else recipe
    dtype = spell.dotted(f"np.{arr.dtype.name}")
    if arr.size == 0:  # [] would lose the shape, e.g. (0, 1)
        return spell.call("np.zeros", spell.literal(arr.shape), dtype=dtype)
    if arr.dtype.kind == "c":
        data = _complex_list(arr.tolist())
    else:
        data = _NonFinite().visit(ast.parse(repr(arr.tolist()), mode="eval").body)
    return spell.call("np.array", data, dtype=dtype)


def _arange_expr(arr: np.ndarray) -> ast.expr | None:
    """``np.arange(n)`` or ``np.arange(start, stop, step)`` (reshaped) when the entries step evenly; else None."""
    flat = arr.reshape(-1)
    n = flat.size
    start = int(flat[0])
    step = int(flat[1]) - start if n > 1 else 1
    if step == 0 or not np.array_equal(flat, start + step * np.arange(n, dtype=np.int64)):
        return None
    if n < 3 and start != 0:  # np.array([1]) reads better than np.arange(1, 2)
        return None
    if start == 0 and step == 1:
        bounds = [ast.Constant(n)]
    else:
        bounds = [spell.literal(start), spell.literal(start + step * n)] + ([spell.literal(step)] if step != 1 else [])
    kwargs = {} if arr.dtype == np.int64 else {"dtype": spell.dotted(f"np.{arr.dtype.name}")}
    expr = spell.call("np.arange", *bounds, **kwargs)
    return expr if arr.ndim == 1 else spell.method_call(expr, "reshape", spell.literal(arr.shape))


def _filled_expr(arr: np.ndarray) -> ast.expr | None:
    """``np.zeros(shape)`` or ``np.full(shape, value)`` when every entry has the same bits and is finite; else None.

    >>> ast.unparse(_filled_expr(np.zeros(3)))
    'np.zeros((3,), dtype=np.float64)'
    """
    flat = arr.reshape(-1)
    bits = flat.view(np.uint8).reshape(flat.size, -1)
    if not (bits == bits[0]).all():
        return None
    value = flat[0].item()
    if isinstance(value, float) and not np.isfinite(value):
        return None
    dtype = spell.dotted(f"np.{arr.dtype.name}")
    if not bits[0].any():  # all zero bits: 0, 0.0 or False
        return spell.call("np.zeros", spell.literal(arr.shape), dtype=dtype)
    return spell.call("np.full", spell.literal(arr.shape), spell.literal(value), dtype=dtype)


def _bytes_expr(arr: np.ndarray, blobs: dict | None) -> ast.expr:
    """``np.frombuffer(bytes.fromhex('...'), dtype='<f8').reshape(shape)``: little-endian, so the text is the same
    on every machine; the values are the array's own bits (negative zeros and NaN payloads included)."""
    little = arr.dtype.newbyteorder("<")  # ('|' for one-byte types)
    data = np.ascontiguousarray(arr, dtype=little)
    code = little.str
    text = data.tobytes().hex()
    if blobs is not None:
        placeholder = f"gradc-blob-{hashlib.sha256(text.encode()).hexdigest()}"
        blobs[repr(placeholder)] = repr(text)
        text = placeholder
    read = spell.call("np.frombuffer", spell.call("bytes.fromhex", ast.Constant(text)), dtype=ast.Constant(code))
    return spell.method_call(read, "reshape", *(ast.Constant(int(d)) for d in arr.shape))


def _complex_list(values) -> ast.expr:
    """Nested lists of complex numbers, each a literal of ``complex_literal``."""
    if isinstance(values, list):
        return ast.List([_complex_list(v) for v in values], ast.Load())
    return complex_literal(values)


class _NonFinite(ast.NodeTransformer):
    """``repr`` writes NaN and infinity as the bare names ``nan`` and ``inf``: read them as ``np.nan``, ``np.inf``."""

    def visit_Name(self, node):
        return spell.dotted(f"np.{node.id}") if node.id in ("nan", "inf") else node
