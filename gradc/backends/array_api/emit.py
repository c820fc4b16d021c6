"""Emit a module in the array API standard: the NumPy target's module, re-spelled.

The NumPy emitter writes the module (names, inlining, sections, argument checks);
this module parses it back and rewrites every NumPy word through the table of
``spellings``, so the two targets cannot drift apart in anything but spelling.
Each function takes its namespace from its array arguments
(``xp = _namespace(...)``, array_api_compat's ``array_namespace``), checks their
shapes and dtypes without asking for a type, holds scalar arguments as 0-d arrays
of that namespace and builds its constants in it. An op whose NumPy spelling has
no standard equivalent is reported before anything is emitted, with all the others.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.backends.numpy.emit import Function
>>> print(emit_module([Function("f", trace(lambda x: np.sum(np.arctan(x)), np.ones(3)), "f of x.")]))
from array_api_compat import array_namespace
<BLANKLINE>
<BLANKLINE>
def f(x):
    \"\"\"f of x.\"\"\"
    xp = _namespace('f', x)
    if x.shape != (3,) or x.dtype != xp.float64:
        _check_array('f', 'x', x, (3,), xp.float64)
    t1 = xp.sum(xp.atan(x), axis=None)
    return t1
...
"""
from __future__ import annotations

import ast
import dataclasses
import re

from gradc.backends.array_api import spellings
from gradc.backends.array_api.spellings import HELPERS, REFUSED, Rewriter
from gradc.backends.escape import python_comment
from gradc.backends.numpy.emit import emit_module as emit_numpy_module
from gradc.errors import EmitError
from gradc.ir.graph import Graph
from gradc.ir.registry import OPS
from gradc.transforms.inline_calls import flatten_calls

_COMMENT = "__gradc_comment__"
_RUNTIME = {
    "namespace": '''
def _namespace(function, *arrays):
    """The array-API namespace of the array arguments, or a clear ValueError."""
    if not arrays:  # only scalar arguments: NumPy's namespace
        import array_api_compat.numpy
        return array_api_compat.numpy
    try:
        return array_namespace(*arrays)
    except TypeError as error:
        raise ValueError(f"{function}: the array arguments must be arrays of one array-API library ({error})") from None
''',
    "_check_array": '''
def _check_array(function, name, value, shape, dtype):
    """Raise a clear ValueError unless value (an array of any array-API library) has this shape and dtype."""
    if tuple(value.shape) != shape or value.dtype != dtype:
        _bad_argument(function, name, value, f"{dtype} array of shape {shape}")
''',
    "_scalar_argument": '''
def _scalar_argument(xp, function, name, value, dtype):
    """A scalar argument as a 0-d array of the compiled dtype in namespace xp."""
    if getattr(value, "shape", ()) != () or isinstance(value, (bool, str)):
        _bad_argument(function, name, value, "a scalar")
    try:
        return xp.asarray(value, dtype=dtype)
    except (TypeError, ValueError):
        _bad_argument(function, name, value, "a real scalar")
''',
}


def _graphs(graph):
    """``graph`` and the sub-graphs in its equations' params (control flow), depth first."""
    stack = [graph]
    while stack:
        g = stack.pop()
        yield g
        for e in g.eqns:
            for value in e.params.values():
                items = value if isinstance(value, (tuple, list)) else (value,)
                stack.extend(v for v in items if isinstance(v, Graph))


def unsupported_ops(graphs) -> dict:
    """``{op: sorted NumPy words}`` for the ops of ``graphs`` without an array-API spelling.

    Each equation's NumPy spelling is built on placeholder operands and rewritten;
    whatever the table lacks (``np.einsum``, ``np.add.at``, ``scipy.linalg...``) marks the op.

    >>> import numpy as np
    >>> from gradc.trace import trace
    >>> from gradc.transforms.reverse import grad_graph
    >>> unsupported_ops([grad_graph(trace(lambda a: a[[0, 0, 1]].sum(), np.ones(3)), ["a"])])
    {'gather_grad': ['np.add.at']}
    """
    bad: dict = {}
    for graph in graphs:
        for g in _graphs(graph):
            for e in g.eqns:
                words = _missing_words(e)
                if words:
                    bad.setdefault(e.op, set()).update(words)
    return {op: sorted(words) for op, words in sorted(bad.items())}


def _missing_words(eqn) -> set:
    op = OPS[eqn.op]
    if eqn.op in REFUSED:
        return {REFUSED[eqn.op]}
    if op.np is None:  # control flow: the NumPy emitter writes Python statements, not re-spelled yet
        return {"control flow (not yet)"}
    names = [f"_a{i}" for i in range(len(eqn.inputs))]
    try:
        node = op.np([ast.Name(n, ast.Load()) for n in names], eqn.params, eqn.out.type, "_out")
    except Exception:  # a spelling that needs the emitter's context: judged on the emitted module instead
        return set()
    types = {n: a.type for n, a in zip(names, eqn.inputs)}
    types["_out"] = eqn.out.type  # a store's target (its lengths place a negative-step store)
    rewriter = Rewriter("xp", "math", types=types)
    for item in node if isinstance(node, list) else [ast.Expr(node)]:
        rewriter.visit(item)
    return rewriter.missing


def emit_module(functions: list, header: list | None = None) -> str:
    """Source text of an array-API module defining ``functions`` (a list of NumPy-target ``Function``).

    Helpers (``call`` equations) are inlined: each function is one straight-line body of standard calls.
    """
    functions = [dataclasses.replace(f, graph=flatten_calls(f.graph)) for f in functions]
    bad = unsupported_ops([f.graph for f in functions])
    if bad:
        names = ", ".join(bad)
        words = ", ".join(sorted({w for ws in bad.values() for w in ws}))
        where = functions[0].graph
        raise EmitError(f"no array-API spelling for op{'s' if len(bad) > 1 else ''} {names} in {where.name} "
                        f"(not in the array API standard: {words})",
                        where=where.origin or None,
                        hint="use target='numpy' for this function, or write it with standard functions")
    # all-scalar code stays on Python floats and math, as before NumPy twins (which read numpy) were added
    return rewrite(emit_numpy_module(functions, header, numpy_twins=False), functions)


def rewrite(text: str, functions: list) -> str:
    """The NumPy module ``text`` (emitted for ``functions``) re-spelled in the array API standard."""
    lines = text.split("\n")
    header = [line[2:] for line in lines[:next(i for i, s in enumerate(lines) if not s.startswith("#"))]]
    body = "\n".join(re.sub(r"^(\s+)# (.*)$", lambda m: f"{m[1]}{repr(_COMMENT + ' ' + m[2])}", line)
                     for line in lines[len(header):])
    module = ast.parse(body)
    numpy = next((a.asname or a.name for s in module.body if isinstance(s, ast.Import) for a in s.names
                  if a.name == "numpy"), None)
    if numpy is None:  # all-scalar code on Python floats (math): it runs as it is on any scalars
        return text
    taken = {n.id for n in ast.walk(module) if isinstance(n, ast.Name)} | {
        n.arg for n in ast.walk(module) if isinstance(n, ast.arg)}
    xp = _fresh("xp", taken)
    math = next((a.asname or a.name for s in module.body if isinstance(s, ast.Import) for a in s.names
                 if a.name == "math"), None) or _fresh("math", taken)
    state = _State(xp, math, numpy)
    by_name = {f.name: f for f in functions}
    out: list = []
    for stmt in module.body:
        if isinstance(stmt, ast.Import) and any(a.name == "numpy" for a in stmt.names):
            continue
        if isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name) and _is_dtype(stmt.value, numpy):
            state.dtypes[stmt.targets[0].id] = stmt.value.args[0].value
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name):
            state.constants[stmt.targets[0].id] = stmt.value
        elif isinstance(stmt, ast.FunctionDef) and stmt.name in by_name:
            out.append(state.function(stmt, by_name[stmt.name]))
        elif isinstance(stmt, ast.FunctionDef) and stmt.name in _RUNTIME:
            out.extend(ast.parse(_RUNTIME[stmt.name]).body)
        else:
            out.append(stmt)
    if state.missing:  # the op table's probe missed these: the emitter's own words
        raise EmitError(f"no array-API spelling for {', '.join(sorted(state.missing))} in the emitted module",
                        hint="use target='numpy' for this function")
    for name in ["namespace"] + sorted(state.helpers):
        out.extend(ast.parse(_RUNTIME.get(name) or HELPERS[name]).body)
    imports = ["from array_api_compat import array_namespace"]
    if state.uses_math and not any(isinstance(s, ast.Import) and any(a.name == "math" for a in s.names)
                                   for s in out):
        imports.insert(0, "import math" if math == "math" else f"import math as {math}")
    code = ast.unparse(ast.fix_missing_locations(ast.Module(out, [])))
    return "\n".join([python_comment(h) for h in header] + imports) + "\n\n\n" + _format(code) + "\n"


def _fresh(name: str, taken: set) -> str:
    while name in taken:
        name += "_"
    return name


def _is_dtype(node, numpy) -> bool:
    return isinstance(node, ast.Call) and spellings.chain(node.func) == f"{numpy}.dtype"


class _State:
    """What the rewritten functions of one module share."""

    def __init__(self, xp, math, numpy):
        self.xp, self.math, self.numpy = xp, math, numpy
        self.dtypes: dict = {}  # module-level dtype name (_float64) -> dtype name
        self.constants: dict = {}  # C0 -> its NumPy expression
        self.helpers: set = set()
        self.missing: set = set()
        self.uses_math = False

    def function(self, fn: ast.FunctionDef, function) -> ast.FunctionDef:
        graph = function.graph
        types = {v.name: v.type for g in _graphs(graph) for v in list(g.inputs) + [e.out for e in g.eqns]}
        stores = [n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
        for name in {n for n in stores if stores.count(n) > 1}:  # a spelling's temporary (a tuple, then the array)
            types.pop(name, None)
        rewriter = Rewriter(self.xp, self.math, self.numpy, types)
        doc, rest = fn.body[:1], fn.body[1:]
        arrays = [ast.Name(v.name, ast.Load()) for v in graph.inputs if v.type.shape != ()]
        first = [_assign(self.xp, ast.Call(ast.Name("_namespace", ast.Load()),
                                           [ast.Constant(fn.name)] + arrays, []))]
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        for name, expr in self.constants.items():
            if name in used:
                first.append(_assign(name, rewriter.visit(_copy(expr))))
        body = []
        for stmt in rest:
            body.extend(self.statement(stmt))
        body = [rewriter.visit(s) for s in body]
        fn.body = doc + first + body
        self.helpers |= rewriter.helpers
        self.missing |= rewriter.missing
        self.uses_math |= rewriter.uses_math
        return fn

    def statement(self, stmt) -> list:
        """An argument check re-spelled; any other statement as it is (dtype names as ``xp.float64``)."""
        if isinstance(stmt, ast.If) and isinstance(stmt.test, ast.BoolOp) and _is_type_test(
                stmt.test.values[0], self.numpy):
            values = stmt.test.values[1:]
            stmt.test = values[0] if len(values) == 1 else ast.BoolOp(ast.Or(), values)
        elif isinstance(stmt, ast.If) and all(_scalar_call(s) for s in stmt.body) and not stmt.orelse:
            return [self.statement(s)[0] for s in stmt.body]  # ``if type(x) is not float``: converted always
        for node in ast.walk(stmt):
            if isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.IsNot) and self._dtype(
                    node.comparators[0]) is not None:
                node.ops = [ast.NotEq()]
            if _scalar_call(ast.Expr(node)) if isinstance(node, ast.Call) else False:
                dtype = node.args[3]
                node.args = [ast.Name(self.xp, ast.Load())] + node.args[:3] + [
                    self._x("float64") if isinstance(dtype, ast.Constant) else dtype]
        return [_DtypeNames(self).visit(stmt)]

    def _dtype(self, node):
        return self.dtypes.get(node.id) if isinstance(node, ast.Name) else None

    def _x(self, name):
        return ast.Attribute(ast.Name(self.xp, ast.Load()), name, ast.Load())


class _DtypeNames(ast.NodeTransformer):
    """``_float64`` (the NumPy module's dtype object) -> ``xp.float64``."""

    def __init__(self, state):
        self.state = state

    def visit_Name(self, node):
        dtype = self.state._dtype(node)
        return node if dtype is None else self.state._x(dtype)


def _is_type_test(node, numpy) -> bool:
    """``type(x) is not np.ndarray``."""
    return (isinstance(node, ast.Compare) and isinstance(node.left, ast.Call)
            and isinstance(node.left.func, ast.Name) and node.left.func.id == "type"
            and spellings.chain(node.comparators[0]) == f"{numpy}.ndarray")


def _scalar_call(stmt) -> bool:
    value = getattr(stmt, "value", None)
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "_scalar_argument"


def _assign(name, value):
    return ast.Assign([ast.Name(name, ast.Store())], value, lineno=0)


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body


def _format(text: str) -> str:
    """Comments back from markers; two blank lines before each top-level definition."""
    out: list = []
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(f"'{_COMMENT} ") or stripped.startswith(f'"{_COMMENT} '):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# {ast.literal_eval(stripped)[len(_COMMENT) + 1:]}")
            continue
        if line.startswith("def ") and out:
            while out[-1] == "":
                out.pop()
            out += ["", ""]
        out.append(line)
    return "\n".join(out)
