"""Spellings: how an op is written in emitted Python, as ``ast`` builders.

A spelling is a callable ``spell(args, params, out_type, target)`` returning an
``ast.expr`` (or a list of statements assigning ``target``); ``args`` are the
inputs already as ``ast`` expressions.

>>> import ast
>>> ast.unparse(binop("+")([ast.Name("a"), ast.Name("b")], {}, None, None))
'a + b'
"""
from __future__ import annotations

import ast

from gradc.ir.dims import dim_ast, is_dim_expr

# The emitters' mark of a user's name (``gradc.backends.numpy.names.user``): a named size (``n`` of
# ``f64[n,10]``) is written as the user wrote it, and generated names step aside for it.
USER_MARK = "\x00"

# name -> source of a module-level function an op's spelling calls (an algorithm with no NumPy/SciPy function,
# such as ``_gammainc_da``): the NumPy emitter appends the source to every module whose code calls the name
HELPERS: dict = {}

_BINOPS = {"+": ast.Add, "-": ast.Sub, "*": ast.Mult, "/": ast.Div, "**": ast.Pow, "@": ast.MatMult}
_CMPOPS = {"<": ast.Lt, "<=": ast.LtE, ">": ast.Gt, ">=": ast.GtE, "==": ast.Eq, "!=": ast.NotEq}


def dotted(path: str) -> ast.expr:
    """``"np.add.reduce"`` as an attribute chain."""
    head, *rest = path.split(".")
    node: ast.expr = ast.Name(head, ast.Load())
    for part in rest:
        node = ast.Attribute(node, part, ast.Load())
    return node


def literal(value) -> ast.expr:
    """A Python literal; negatives as unary minus so ``ast.unparse`` brackets them in ``**``."""
    if isinstance(value, (tuple, list)):
        return ast.Tuple([literal(v) for v in value], ast.Load())
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value < 0:
        return ast.UnaryOp(ast.USub(), ast.Constant(-value))
    if is_dim_expr(value):  # a named size: its Python expression (``n - 1``)
        return dim_ast(value, lambda s: USER_MARK + s.name)
    return ast.Constant(value)


def call(fn: str, *args: ast.expr, **kwargs: ast.expr) -> ast.Call:
    return ast.Call(dotted(fn), list(args), [ast.keyword(k, v) for k, v in kwargs.items()])


def method_call(obj: ast.expr, name: str, *args: ast.expr, **kwargs: ast.expr) -> ast.Call:
    return ast.Call(ast.Attribute(obj, name, ast.Load()), list(args),
                    [ast.keyword(k, v) for k, v in kwargs.items()])


def fn(path: str):
    """Spelled as a call: ``path(arg0, arg1, ...)``."""
    return lambda args, params, out, target: call(path, *args)


def binop(symbol: str):
    """Spelled with an infix operator."""
    return lambda args, params, out, target: ast.BinOp(args[0], _BINOPS[symbol](), args[1])


def compare(symbol: str):
    return lambda args, params, out, target: ast.Compare(args[0], [_CMPOPS[symbol]()], [args[1]])


def unary_minus(args, params, out, target):
    return ast.UnaryOp(ast.USub(), args[0])


def assign(target: str, value: ast.expr) -> ast.stmt:
    return ast.Assign([ast.Name(target, ast.Store())], value, lineno=0)


def _is_literal(node: ast.expr) -> bool:
    """A number written in the source (``2.0``, ``-0.5``, ``np.inf``): NumPy treats it as float64/int64."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return (isinstance(node, ast.Constant) and isinstance(node.value, (int, float))) or (
        isinstance(node, ast.Attribute) and node.attr in ("inf", "nan"))


def typed(node: ast.expr, dtype) -> ast.expr:
    """``node`` as a scalar of ``dtype`` (a NumPy dtype) when it is a bare literal whose own
    dtype would win, e.g. ``np.where(c, 1.0, 0.0)`` or ``np.broadcast_to(3.0, s)`` for float32."""
    if dtype.name in ("float64", "int64", "bool") or not _is_literal(node):
        return node
    return call(f"np.{dtype.name}", node)

