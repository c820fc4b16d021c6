"""The source of a lambda, as a ``def`` the capture can rewrite.

A lambda that gradc traces, or reaches as a helper, is rewritten like a ``def`` so that its call
sites go through the call hook (``gradc.trace.calls.call``): a helper it reaches through an
object's attribute (``case.fn(x)``), an alias or a ``functools.partial`` is then captured and sees
gradc's SciPy functions, as it would from a ``def``. The lambda is found in its file's syntax tree
by its first line and, where Python records them (3.11+), its instructions' columns; when several
lambdas of that line could be it, none is chosen (the lambda is traced as written).

>>> f = lambda x, k=2: x * k  # noqa: E731
>>> print(ast.unparse(lambda_def(f, "_gc_lambda")))
def _gc_lambda(x, k=2):
    return x * k
"""
from __future__ import annotations

import ast
import copy
import linecache
import types

_TREES: dict = {}  # (file name, its text's hash) -> the file's syntax tree, or None when it does not parse


def _tree(filename: str):
    lines = linecache.getlines(filename)
    if not lines:
        return None
    text = "".join(lines)
    key = (filename, hash(text))
    if key not in _TREES:
        try:
            _TREES[key] = ast.parse(text)
        except (SyntaxError, ValueError):
            _TREES[key] = None
    return _TREES[key]


def _parameters(args: ast.arguments) -> list:
    names = [a.arg for a in args.posonlyargs + args.args]
    names += [args.vararg.arg] if args.vararg is not None else []
    names += [a.arg for a in args.kwonlyargs]
    return names + ([args.kwarg.arg] if args.kwarg is not None else [])


def _code_parameters(code: types.CodeType) -> list:
    n = code.co_argcount + code.co_kwonlyargcount
    n += bool(code.co_flags & 0x04) + bool(code.co_flags & 0x08)  # CO_VARARGS, CO_VARKEYWORDS
    names = list(code.co_varnames[:n])
    if code.co_flags & 0x04:  # Python lists *args after the keyword-only parameters; the syntax before them
        star = names.pop(code.co_argcount + code.co_kwonlyargcount)
        names.insert(code.co_argcount, star)
    return names


def _within(code: types.CodeType, body: ast.expr) -> bool:
    """Whether every source position of ``code``'s instructions lies inside ``body`` (True without positions)."""
    positions = getattr(code, "co_positions", None)
    if positions is None:
        return True
    start, end = (body.lineno, body.col_offset), (body.end_lineno, body.end_col_offset)
    for line, end_line, col, end_col in positions():
        if line is None or col is None or end_line is None or end_col is None or (line, col) == (end_line, end_col):
            continue  # no position, or an empty span (the frame's RESUME at column 0)
        if (line, col) < start or (end_line, end_col) > end:
            return False
    return True


def lambda_def(fn: types.FunctionType, name: str) -> ast.FunctionDef | None:
    """``def name(<fn's parameters>): return <fn's body>`` with the file's line numbers, or None when ``fn`` is
    not a lambda or its source cannot be told apart from another lambda's."""
    code = fn.__code__
    if code.co_name != "<lambda>":
        return None
    tree = _tree(code.co_filename)
    if tree is None:
        return None
    params = _code_parameters(code)
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno
             and _parameters(n.args) == params and _within(code, n.body)]
    if len(found) != 1:
        return None
    node = copy.deepcopy(found[0])  # the rewrite changes the nodes it is given; the file's tree is cached
    out = ast.FunctionDef(name=name, args=node.args, body=[ast.Return(value=node.body)], decorator_list=[],
                          returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:
        out.type_params = []
    ast.copy_location(out, node)
    ast.copy_location(out.body[0], node.body)
    return ast.fix_missing_locations(out)
