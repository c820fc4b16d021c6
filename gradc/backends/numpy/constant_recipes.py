"""Large constant arrays computed when the emitted module loads, from a recipe, instead of written out.

A table the traced function computed from static values (``np.arange(n)``, ``np.linspace``, ``np.eye``,
a power table such as llsq's Vandermonde matrix built by ``np.cumprod``, a row broadcast to many rows)
would otherwise be written into the module as its bytes, so the module's text and the compile time would
grow with ``n``. Past :data:`RECIPE_LIMIT` elements, :func:`recipe_expr` looks for a short NumPy
expression of small operands that computes the table, and keeps it only when evaluating that very
expression gives the same dtype, shape and bytes (bit for bit: NaN payloads, signed zeros); else None
and the caller writes the bytes. Every recipe yields a C-contiguous, writable array, as a literal does.

>>> import ast
>>> ts = -1 + np.arange(3000) * 2 / 2999
>>> table = np.cumprod(np.concatenate([np.ones((3000, 1)), np.repeat(ts[:, None], 7, axis=1)], axis=1), axis=1)
>>> from gradc.backends.numpy.literals import array_constant_expr
>>> from gradc.ir.graph import Const
>>> ast.unparse(recipe_expr(table, lambda a: ast.Name(f"<{a.size} values>"), lambda a: array_constant_expr(Const(a))))
'np.cumprod(np.concatenate([np.ones((3000, 1)), np.repeat(<3000 values>[:, None], 7, axis=1)], axis=1), axis=1)'
"""
from __future__ import annotations

import ast
from typing import Callable

import numpy as np

from gradc.ops import spell

RECIPE_LIMIT = 1024  # elements: a larger constant array is looked at for a recipe before its bytes are written
MAX_RUNS = 64  # a table of at most this many runs of equal entries is written as np.repeat(values, counts)


def recipe_expr(arr: np.ndarray, operand: Callable[[np.ndarray], ast.expr],
                plain: Callable[[np.ndarray], ast.expr] | None = None) -> ast.expr | None:
    """An expression computing ``arr`` exactly from smaller arrays (each written by ``operand``), or None.

    ``plain`` writes an operand as an evaluable expression (default ``operand``): each recipe is checked by
    evaluating its text built with ``plain``, then built again with ``operand``.
    """
    if arr.size <= RECIPE_LIMIT or arr.dtype.kind not in "biuf" or arr.ndim == 0:
        return None
    plain = plain or operand
    for recipe in _RECIPES:
        candidate = recipe(arr, plain)
        if candidate is not None and _computes(candidate, arr):
            return recipe(arr, operand)
    return None


def _computes(expr: ast.expr, arr: np.ndarray) -> bool:
    """Whether ``expr`` evaluates to ``arr``'s dtype, shape and bytes (operands written as plain literals)."""
    try:
        with np.errstate(all="ignore"):
            value = eval(compile(ast.fix_missing_locations(ast.Expression(expr)), "<recipe>", "eval"), {"np": np})  # noqa: S307 - our own
    except Exception:  # noqa: BLE001 - a recipe that does not evaluate is not taken
        return False
    return isinstance(value, np.ndarray) and value.dtype == arr.dtype and value.shape == arr.shape \
        and value.flags.c_contiguous and value.flags.writeable and value.tobytes() == arr.tobytes()


def _dtype(arr) -> ast.expr:
    return spell.dotted(f"np.{arr.dtype.name}")


def _linspace(arr, operand):
    if arr.ndim != 1 or arr.dtype.kind != "f":
        return None
    return spell.call("np.linspace", spell.literal(arr[0].item()), spell.literal(arr[-1].item()),
                      ast.Constant(arr.size), dtype=_dtype(arr))


def _stepped(arr, operand):
    """``np.arange(n, dtype) * step + first``."""
    if arr.ndim != 1 or arr.dtype.kind != "f":
        return None
    counts = spell.call("np.arange", ast.Constant(arr.size), dtype=_dtype(arr))
    step = arr[1].item() - arr[0].item()
    return ast.BinOp(ast.BinOp(counts, ast.Mult(), spell.literal(step)), ast.Add(), spell.literal(arr[0].item()))


def _spanned(arr, operand):
    """``first + np.arange(n) * (last - first) / (n - 1)``: an evenly spaced grid as it is often written."""
    if arr.ndim != 1 or arr.dtype != np.float64:
        return None
    first, span = arr[0].item(), arr[-1].item() - arr[0].item()
    scaled = ast.BinOp(ast.BinOp(spell.call("np.arange", ast.Constant(arr.size)), ast.Mult(), spell.literal(span)),
                       ast.Div(), ast.Constant(arr.size - 1))
    return ast.BinOp(spell.literal(first), ast.Add(), scaled)


def _runs(arr, operand):
    """``np.repeat(values, counts)`` (reshaped) for a table of few runs of equal entries (a step function)."""
    bits = arr.reshape(-1).view(f"u{arr.dtype.itemsize}")
    starts = np.concatenate([[0], np.flatnonzero(bits[1:] != bits[:-1]) + 1])
    if starts.size > MAX_RUNS:
        return None
    counts = np.diff(np.append(starts, bits.size))
    repeated = spell.call("np.repeat", operand(np.ascontiguousarray(arr.reshape(-1)[starts])), operand(counts))
    return repeated if arr.ndim == 1 else spell.method_call(repeated, "reshape", spell.literal(arr.shape))


def _eye(arr, operand):
    if arr.ndim != 2:
        return None
    return spell.call("np.eye", ast.Constant(arr.shape[0]), ast.Constant(arr.shape[1]), dtype=_dtype(arr))


def _broadcast(arr: np.ndarray, operand) -> ast.expr | None:
    """``np.broadcast_to(arr's first slice, shape).copy()`` when ``arr`` repeats along one or more axes."""
    bits = arr.view(f"u{arr.dtype.itemsize}")  # NaN == NaN and -0.0 != 0.0 here
    keep = []
    for axis in range(arr.ndim):
        first = bits[(slice(None),) * axis + (slice(0, 1),)]
        keep.append(slice(0, 1) if arr.shape[axis] > 1 and (bits == first).all() else slice(None))
    if all(k == slice(None) for k in keep):
        return None
    small = np.ascontiguousarray(arr[tuple(keep)])
    return spell.method_call(spell.call("np.broadcast_to", operand(small), spell.literal(arr.shape)), "copy")


def _powers_by_rows(arr, operand):
    return _transposed(_geometric(arr.T, operand)) if arr.ndim == 2 else None


def _geometric(arr: np.ndarray, operand) -> ast.expr | None:
    """A table whose columns start at ones and multiply by one fixed column each step (powers):
    ``np.cumprod(np.concatenate([ones, np.repeat(r[:, None], m - 1, axis=1)], axis=1), axis=1)``, or
    ``r[:, None] ** np.arange(m)``."""
    if arr.ndim != 2 or arr.shape[1] < 3 or arr.dtype.kind != "f" or not (arr[:, 0] == 1).all():
        return None
    n, m = arr.shape
    ratio = operand(np.ascontiguousarray(arr[:, 1]))
    column = ast.Subscript(ratio, ast.Tuple([ast.Slice(), ast.Constant(None)], ast.Load()), ast.Load())
    ones = spell.call("np.ones", spell.literal((n, 1)))
    if arr.dtype != np.float64:
        ones = spell.call("np.ones", spell.literal((n, 1)), dtype=_dtype(arr))
    repeated = spell.call("np.repeat", column, ast.Constant(m - 1), axis=ast.Constant(1))
    joined = spell.call("np.concatenate", ast.List([ones, repeated], ast.Load()), axis=ast.Constant(1))
    cumulative = spell.call("np.cumprod", joined, axis=ast.Constant(1))
    column_values = arr[:, 1:2]
    by_cumprod = np.cumprod(np.concatenate([np.ones((n, 1), arr.dtype), np.repeat(column_values, m - 1, axis=1)],
                                           axis=1), axis=1)
    if by_cumprod.tobytes() == arr.tobytes():  # (decided on the values, so that both builds choose alike)
        return cumulative
    return ast.BinOp(column, ast.Pow(), spell.call("np.arange", ast.Constant(m)))


def _transposed(expr: ast.expr | None) -> ast.expr | None:
    """``np.ascontiguousarray(expr.T)``: the transposed table laid out as a literal is (C order)."""
    if expr is None:
        return None
    return spell.call("np.ascontiguousarray", ast.Attribute(expr, "T", ast.Load()))


_RECIPES = (_broadcast, _runs, _linspace, _stepped, _spanned, _eye, _geometric, _powers_by_rows)
