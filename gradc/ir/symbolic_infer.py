"""Type rules on symbolic sizes: run the op's own rule, on names where it can, on sample sizes where not.

Most type rules only copy and compare dimensions, and SymPy's names go through them unchanged
(``n == n``; ``n != 10`` is a mismatch, as it would be for most ``n``). A rule that needs numbers
(``range(d)``, ``np.broadcast_shapes``, ``slice.indices``) is run instead at sample sizes (each name
given several values) and each result dimension is read back as the multilinear expression those
samples determine (``n``, ``n - 1``, ``n*m``, ``3*n``). The expression is then checked at further
sizes, small ones included, so a size that is not such an expression of the names (``min(n, 5)``
for ``x[:5]``) is refused with a clear error instead of being guessed.

>>> import numpy as np
>>> from gradc.ir.dims import size_symbol
>>> from gradc.ir.types import TensorType
>>> n = size_symbol("n")
>>> rule = lambda types, params: types[0].with_shape((int(np.prod(types[0].shape)),))  # needs numbers
>>> infer_type(rule, [TensorType((n, 3), "f64")], {})
f64[3*n]
"""
from __future__ import annotations

import itertools

from gradc.errors import ShapeError, StaticValueNeeded
from gradc.ir.dims import is_dim_expr, substitute
from gradc.ir.types import TensorType

_FIT = (1009, 1013)  # two sample sizes per name determine a multilinear expression
_CHECK = ((2003,), (1,), (2,), (3,), (7,))  # sizes it is checked at (every name at once)


def infer_type(rule, types, params):
    """``rule(types, params)``, with names where the rule handles them, else fitted from sample sizes (the rule
    runs once first: types of fixed sizes, nearly all, cost nothing more)."""
    try:
        return rule(types, params)
    except ShapeError:
        raise
    except (TypeError, ValueError, AttributeError, IndexError, OverflowError, StaticValueNeeded):
        symbols = _symbols(types, params)
        if not symbols:
            raise  # not about named sizes: the rule's own error
    return _fitted(rule, types, params, symbols)


def _fitted(rule, types, params, symbols):
    import sympy as sp

    names = [s.name for s in symbols]
    corners = list(itertools.product(*[_FIT] * len(symbols)))
    results = [_at(rule, types, params, dict(zip(names, c)), raise_errors=True) for c in corners]
    template = results[0]
    leaves = [_flat_shapes(r) for r in results]
    fitted = []
    for dims in zip(*leaves):
        if any(d is None for d in dims):  # not a shape position (a dtype-only result)
            fitted.append(None)
            continue
        expr = 0
        for corner, value in zip(corners, dims):
            weight = 1
            for s, v in zip(symbols, corner):
                other = _FIT[1] if v == _FIT[0] else _FIT[0]
                weight = weight * (s - other) / (v - other)
            expr = expr + value * weight
        expr = sp.expand(expr)
        if any(not c.is_Integer for c in sp.Poly(expr, *symbols).coeffs()) if expr.free_symbols else \
                not sp.sympify(expr).is_Integer:
            raise _not_expressible(types, symbols)
        fitted.append(expr)
    for check in _CHECK:
        sizes = {name: check[0] + 2 * k for k, name in enumerate(names)}
        got = _at(rule, types, params, sizes, raise_errors=False)
        if got is None:
            continue  # the op is undefined at these sizes (x[5] of a length 3): NumPy says so at run time
        for expr, value in zip(fitted, _flat_shapes(got)):
            if expr is not None and substitute(expr, sizes) != value:
                raise _not_expressible(types, symbols)
    return _rebuild(template, iter(fitted))


def _at(rule, types, params, sizes, raise_errors):
    try:
        return rule([_sub_type(t, sizes) for t in types], _sub_value(params, sizes))
    except ShapeError as e:
        if not raise_errors:
            return None
        shown = ", ".join(f"{k} = {v}" for k, v in sizes.items())
        raise ShapeError(f"{e.args[0] if e.args else e} (at the sample sizes {shown})",
                         hint="the shapes of this operation must agree for every size: check the operands' "
                              "named sizes") from None
    except (TypeError, ValueError, IndexError):
        if raise_errors:
            raise
        return None


def _sub_type(t, sizes):
    shape = getattr(t, "shape", None)
    if shape is None:
        items = getattr(t, "items", None)
        return type(t)(tuple(_sub_type(i, sizes) for i in items)) if items is not None else t
    return t.with_shape(tuple(substitute(d, sizes) for d in shape))


def _sub_value(v, sizes):
    if is_dim_expr(v):
        return substitute(v, sizes)
    if isinstance(v, tuple):
        return tuple(_sub_value(x, sizes) for x in v)
    if isinstance(v, list):
        return [_sub_value(x, sizes) for x in v]
    if isinstance(v, dict):
        return {k: _sub_value(x, sizes) for k, x in v.items()}
    return v


def _flat_shapes(t):
    """Every dimension of a (tuple) type in order; None marks an item without a shape."""
    items = getattr(t, "items", None)
    if items is not None:
        return [d for i in items for d in _flat_shapes(i)]
    shape = getattr(t, "shape", None)
    return [None] if shape is None else list(shape)


def _rebuild(template, dims):
    items = getattr(template, "items", None)
    if items is not None:
        return type(template)(tuple(_rebuild(i, dims) for i in items))
    shape = getattr(template, "shape", None)
    if shape is None:
        next(dims)
        return template
    return template.with_shape(tuple(next(dims) for _ in shape))


def _symbols(types, params):
    found = set()
    stack = [getattr(t, "shape", None) for t in types] + [getattr(t, "items", None) for t in types]
    stack.append(tuple(params.values()))
    while stack:
        v = stack.pop()
        if v is None:
            continue
        if is_dim_expr(v):
            found |= v.free_symbols
        elif isinstance(v, (tuple, list)):
            stack.extend(v)
        elif isinstance(v, TensorType):
            stack.append(v.shape)  # an item of a tuple type
    return sorted(found, key=lambda s: s.name)


def _not_expressible(types, symbols):
    names = ", ".join(s.name for s in symbols)
    shown = ", ".join(str(t) for t in types)
    return ShapeError(f"the size of this result is not a fixed expression of {names} (operands {shown}); "
                      "gradc compiles it once for every size",
                      hint="slice with sizes written in the names (x[:n-1], not x[:5] of a named axis), or give "
                           "this axis a fixed size")

