"""All-scalar code on Python floats, and its way back to NumPy's semantics.

Where every value is a float64 scalar, the emitted function computes with Python
floats and ``math`` (several times faster than NumPy's scalars). Python raises where
NumPy gives inf or nan with a RuntimeWarning (``1.0 / 0.0``, ``math.sqrt(-1.0)``,
``math.exp(1000.0)``), so the function computes in a ``try``: on ``ArithmeticError``
or ``ValueError`` (a domain error), or when a result is inf or nan (NumPy would have
warned), it returns what its NumPy twin returns instead: the same graph emitted with
NumPy's functions on ``np.float64`` scalars. Finite results of finite arithmetic are
the same correctly rounded numbers either way.

>>> import ast
>>> body = [ast.parse("t0 = 1.0 / x").body[0]]
>>> print(ast.unparse(ast.Module(guard(body, [ast.Name("t0")], ast.parse("_f_numpy(x)").body[0].value), [])))
try:
    t0 = 1.0 / x
except (ArithmeticError, ValueError):
    return _f_numpy(x)
if t0 * 0.0 != 0.0:
    return _f_numpy(x)
"""
from __future__ import annotations

import ast

from gradc.ops import spell


def twin_name(name: str) -> str:
    """The module-level name of the NumPy twin of the function ``name`` (renamed if the user took it)."""
    return f"_{name}_numpy"


def guard(statements: list, outputs: list, twin_call: ast.expr) -> list:
    """``statements`` in a ``try`` that returns ``twin_call`` where Python raises or an output is not finite.

    ``x * 0.0`` is 0.0 for every finite ``x`` and nan for inf and nan: one multiplication
    and one comparison per output, the cheapest test of all of them at once.
    """
    if not statements:
        return []
    handler = ast.ExceptHandler(ast.Tuple([ast.Name("ArithmeticError", ast.Load()),
                                           ast.Name("ValueError", ast.Load())], ast.Load()),
                                None, [ast.Return(twin_call)])
    out = [ast.Try(statements, [handler], [], [])]
    terms = [ast.BinOp(o, ast.Mult(), ast.Constant(0.0)) for o in outputs]
    if terms:
        total = terms[0]
        for term in terms[1:]:
            total = ast.BinOp(total, ast.Add(), term)
        out.append(ast.If(ast.Compare(total, [ast.NotEq()], [ast.Constant(0.0)]), [ast.Return(twin_call)], []))
    return out


def twin_call(name: str, params: list, flag: str | None) -> ast.expr:
    """``_f_numpy(x, y)``, with ``flag=flag`` for a function with a keyword flag (names as the caller marks them)."""
    call = spell.call(name, *(ast.Name(p, ast.Load()) for p in params))
    if flag is not None:
        call.keywords.append(ast.keyword(flag, ast.Name(flag, ast.Load())))
    return call
