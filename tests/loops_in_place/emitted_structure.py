"""Reading emitted NumPy source: the statements inside loops that copy or allocate a whole array.

>>> src = "def f(x):\\n    for i in range(3):\\n        t = out.copy()\\n        t[i] = 1.0\\n"
>>> per_iteration_copies(src, 10)
['t = out.copy()']
"""
from __future__ import annotations

import ast


def per_iteration_copies(source: str, size: int) -> list:
    """Statements inside ``for``/``while`` bodies that copy an array (``.copy()``) or allocate one of at least
    ``size`` entries (``np.zeros``/``np.empty``/``np.ones`` of a literal shape): O(size) work per iteration.
    A copy of a row or entry (``X[i].copy()``, a subscript) copies a part, not the whole: not counted."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.For, ast.While)):
            continue
        for inner in ast.walk(node):
            if inner is node or not isinstance(inner, ast.Call) or not isinstance(inner.func, ast.Attribute):
                continue
            f = inner.func
            if f.attr == "copy" and not isinstance(f.value, ast.Subscript):
                found.append(_statement_text(node, inner))
            elif f.attr in ("zeros", "empty", "ones") and isinstance(f.value, ast.Name) and f.value.id == "np" and \
                    inner.args and _entries(inner.args[0]) >= size:
                found.append(_statement_text(node, inner))
    return sorted(set(found))


def _entries(shape) -> int:
    try:
        value = ast.literal_eval(shape)
    except ValueError:
        return 0
    dims = value if isinstance(value, tuple) else (value,)
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _statement_text(loop, call) -> str:
    for stmt in ast.walk(loop):
        if isinstance(stmt, ast.stmt) and not isinstance(stmt, (ast.For, ast.While, ast.If)) and any(
                n is call for n in ast.walk(stmt)):
            return ast.unparse(stmt)
    return ast.unparse(call)
