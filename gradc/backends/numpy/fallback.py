"""Float scalars as Python floats, and the way back to NumPy's semantics.

A float64 scalar argument is a Python float in the emitted function, and where every
value is one the function computes with ``math`` (several times faster than NumPy's
scalars). Python raises where NumPy gives inf or nan with a RuntimeWarning (``1.0 / 0.0``,
``math.sqrt(-1.0)``, ``math.exp(1000.0)``), so all-scalar code, and code where such a
scalar meets ``/``, ``**``, ``%`` or ``//``, computes in a ``try``: on ``ArithmeticError``
or ``ValueError`` (a domain error) it returns what its NumPy twin returns instead: the
same graph emitted with NumPy's functions on ``np.float64`` scalars. Finite results of
finite arithmetic are the same correctly rounded numbers either way, and Python's ``+``,
``-`` and ``*`` give IEEE's inf and nan as NumPy does, without NumPy's overflow or
invalid-value warning.

>>> import ast
>>> body = [ast.parse("t0 = 1.0 / x").body[0]]
>>> print(ast.unparse(ast.Module(guard(body, ast.parse("_f_numpy(x)").body[0].value), [])))
try:
    t0 = 1.0 / x
except (ArithmeticError, ValueError):
    return _f_numpy(x)
"""
from __future__ import annotations

import ast

from gradc.ops import spell


def twin_name(name: str) -> str:
    """The module-level name of the NumPy twin of the function ``name`` (renamed if the user took it)."""
    return f"_{name}_numpy"


def guard(statements: list, twin_call: ast.expr) -> list:
    """``statements`` in a ``try`` that returns ``twin_call`` where Python raises.

    No test of the results: Python's ``+``, ``-`` and ``*`` already give NumPy's inf and nan
    (a test of every output for them, for NumPy's overflow warning alone, cost a tenth of a
    small function's time).
    """
    if not statements:
        return []
    handler = ast.ExceptHandler(ast.Tuple([ast.Name("ArithmeticError", ast.Load()),
                                           ast.Name("ValueError", ast.Load())], ast.Load()),
                                None, [ast.Return(twin_call)])
    return [ast.Try(statements, [handler], [], [])]


def twin_call(name: str, params: list, flag: str | None) -> ast.expr:
    """``_f_numpy(x, y)``, with ``flag=flag`` for a function with a keyword flag (names as the caller marks them)."""
    call = spell.call(name, *(ast.Name(p, ast.Load()) for p in params))
    if flag is not None:
        call.keywords.append(ast.keyword(flag, ast.Name(flag, ast.Load())))
    return call
