"""Shared pieces of the capture rewriter: the context of a block, AST node builders, limits.

>>> import ast
>>> ast.unparse(names_tuple(["a", "b"]))
'(a, b)'
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from gradc.trace import capture_analysis as an

LEAVE_ALONE = (ast.Try, ast.With, ast.AsyncWith, ast.AsyncFor, ast.Match, ast.FunctionDef, ast.AsyncFunctionDef,
                ast.ClassDef) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())
RETURN_IN_LOOP = ("a `return` inside a loop that runs on traced values",
                   "assign the result to a variable (initialised before the loop), leave the loop with `break` "
                   "and return it after the loop")


MAX_NAMES = 2000  # generated names per function: beyond, the rewrite is abandoned (nested versions double in size)


class TooLarge(Exception):
    """The rewritten function would be too large (each nesting level doubles the statements it holds)."""


@dataclass(frozen=True)
class Ctx:
    tail: bool = False  # a `return` here ends the function: function body, branches of an `if` in tail position
    loop: bool = False  # `break`/`continue` here belong to a Python loop of the concrete version
    brk: frozenset | None = None  # liveness after a `break` / before a `continue`
    cont: frozenset | None = None


def var(n, store=False):
    return ast.Name(id=n, ctx=ast.Store() if store else ast.Load())


def names_tuple(names, store=False):
    return ast.Tuple(elts=[var(n, store) for n in names], ctx=ast.Store() if store else ast.Load())


def strings(names):
    return ast.Tuple(elts=[ast.Constant(n) for n in names], ctx=ast.Load())


def thunk(expr):
    return ast.Lambda(args=arguments([]), body=expr)


def arguments(names):
    return ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in names], vararg=None, kwonlyargs=[],
                         kw_defaults=[], kwarg=None, defaults=[])


def make_def(name, params, body, at):
    node = ast.FunctionDef(name=name, args=arguments(params), body=body, decorator_list=[], returns=None,
                           type_comment=None)
    if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
        node.type_params = []
    return ast.copy_location(node, at)


def not_flag(name):
    return ast.UnaryOp(op=ast.Not(), operand=var(name))


def guard(test, body, at):
    """``if test: body``, generated for a flag: converted to its functional form only."""
    node = ast.copy_location(ast.If(test=test, body=body, orelse=[]), at)
    node.gc_guard = True
    return node


def unsafe_in_thunk(node) -> bool:
    return any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(node))


def indexed_names(loop) -> tuple:
    """``(containers, tables)``: the names the loop subscripts or calls a method of (``xs[i]``,
    ``ys.append(v)``), and those among them it only reads items of (``coef[i]``, never ``coef[i] = v``,
    ``coef.append(v)`` or ``coef = ...``). When a container holds a Python list, tuple, dict or set the loop
    stays a Python loop (a traced index cannot pick from a list, and an append in a traced body would be
    lost); a table that is a list of numbers is read as an array instead."""
    body = loop.body + getattr(loop, "orelse", [])
    out, written = set(), set(an.stores(body))
    for n in an.walk_scope(body):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
            out.add(n.value.id)
            if not isinstance(n.ctx, ast.Load):
                written.add(n.value.id)
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and isinstance(n.func.value, ast.Name):
            out.add(n.func.value.id)
            written.add(n.func.value.id)
    return out, out - written


def returns_to_flags(loop) -> bool:
    """Whether loop's `return`s can become flags: none in a nested loop, its `else` or a `try`/`with` block."""
    shallow = [n for n in an.walk_scope(loop.body, into_loops=False) if isinstance(n, ast.Return)]
    return bool(shallow) and len(shallow) == sum(isinstance(n, ast.Return) for n in an.walk_scope(loop.body)) and \
        not an.contains(loop.orelse, ast.Return) and \
        not any(isinstance(n, LEAVE_ALONE[:5]) and an.contains([n], ast.Return)
                for n in an.walk_scope(loop.body, into_loops=False))


