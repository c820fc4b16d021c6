"""Helpers stay functions: a user function called with traced arguments becomes one ``call`` equation.

Captured code calls helpers through ``call(f, *args, **kwargs)`` (``gradc.trace.capture_calls``
rewrites the call sites). The hook looks at the callee when it runs:

* Not a user's Python function (a builtin, a ufunc, NumPy, SciPy, gradc, the standard library,
  an installed package): called as it is.
* A user function (reached however: global name, closure, attribute, method, import,
  ``functools.partial``, a ``functools.wraps`` wrapper, defined inside the traced function,
  recursion): its control flow is captured (``gradc.trace.capture``), and when traced values
  reach it through its arguments it is traced **once per signature** into a sub-graph, its
  body, and each call is a ``call`` equation (``gradc.ops.call``) reusing that body.

The signature is the callee's code, its closure's and defaults' values (a traced value by
identity), the arguments' structure, the traced arguments' types (and tracer kinds), and the
static arguments' values: Python ints, bools, floats and strings by value, integer arrays and other
objects by identity. Float NumPy arrays are inputs of the body like traced arguments (their values
passed by each call), so a helper called in a loop with a new array each time is still one body.

A recursion that ends on static values (shapes, Python ints) gives one body per distinct signature
(GradBench's ``det`` of size n: n bodies); a helper calling itself with the same signature
on traced values never ends, and is a TraceError at the recursive call.

Inlined instead (the documented rule, listed by ``gradc show`` under "helpers inlined"):

* a body of at most ``INLINE_MAX_EQNS`` equations holding no loop, branch or call
  (a call costs more than such a body);
* a helper whose closure, defaults or bound object hold traced values (it reads the enclosing
  trace's values: it is traced in place, as written);
* lambdas, generators, and helpers whose traced values escape (stored in a list or an attribute
  outside the helper).

>>> import numpy as np, gradc
>>> def sq_norm(v):
...     s = 0.0
...     for k in range(v.shape[0]):
...         s = s + v[k] * v[k] * (k + 1)
...     return s
>>> def f(x):
...     return sq_norm(x) + sq_norm(np.sin(x))
>>> g = gradc.trace(f, np.ones(3))
>>> [e.op for e in g.eqns].count("call")
2
>>> len({id(e.params["body"]) for e in g.eqns if e.op == "call"})
1
"""
from __future__ import annotations

import collections
import functools
import os
import sys
import types
import weakref

import numpy as np

from gradc.errors import _SKIP_DIRS, _STDLIB_DIR, TraceError, _display_path
from gradc.ir.builder import Builder, Traced
from gradc.ir.graph import Graph, subgraphs

INLINE_MAX_EQNS = 3
# (where, helper, why) of the helpers traced in place rather than kept as functions, for ``gradc show``
INLINED: collections.deque = collections.deque(maxlen=64)
_USER_CODE: dict = {}  # file name -> whether it is user code
_CAPTURED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # function -> its captured version
_IN_PROGRESS = object()


def is_user_code(filename: str) -> bool:
    """Whether a function defined in ``filename`` is the user's (not gradc, NumPy, the standard library or an
    installed package).

    >>> is_user_code(np.__file__), is_user_code("/home/me/model.py")
    (False, True)
    """
    found = _USER_CODE.get(filename)
    if found is None:
        path = os.path.abspath(filename) if filename and not filename.startswith("<") else filename or ""
        found = bool(path) and not path.startswith(_SKIP_DIRS) and not path.startswith(_STDLIB_DIR + os.sep) and \
            not any(part in ("site-packages", "dist-packages") for part in path.split(os.sep)) and \
            not path.startswith("<frozen")
        _USER_CODE[filename] = found
    return found


def _user_function(fn):
    """``(function, bound object or None, extra positional args, extra keyword args)`` for a user helper, else
    None (cheap for the common callees: ufuncs, builtins, NumPy functions)."""
    self, args, kwargs = None, (), {}
    while isinstance(fn, functools.partial):
        args, kwargs = fn.args + args, {**fn.keywords, **kwargs}
        fn = fn.func
    if isinstance(fn, types.MethodType):
        self, fn = fn.__self__, fn.__func__
    if not isinstance(fn, types.FunctionType) or not is_user_code(fn.__code__.co_filename):
        return None
    return fn, self, args, kwargs


CAPTURE: list = []  # gradc.trace.capture.capture, installed by that module (it imports this one)


_SAME = object()  # a function that is its own captured version (a value of _CAPTURED must not hold its key alive)


def captured(fn):
    """``fn`` with its control flow captured (cached per function object)."""
    found = _CAPTURED.get(fn)
    if found is _SAME:
        return fn
    if found is None:
        capture = CAPTURE[0]
        from gradc.trace.scipy_dispatch import rebind  # here: it needs the dispatch tables loaded
        _CAPTURED[fn] = _SAME  # meanwhile (modules naming each other's functions): as it is
        try:
            found = capture(rebind(fn))  # a helper of any module sees gradc's SciPy and np.array, as its caller
        finally:
            del _CAPTURED[fn]
        _CAPTURED[fn] = _SAME if found is fn else found
        if found is not fn:
            _CAPTURED.setdefault(found, _SAME)
    return found


def remember_captured(fn):
    """Note that ``fn`` is already captured (the hook will not convert it again); returns ``fn``."""
    _CAPTURED[fn] = _SAME
    return fn


def call(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` from captured code: a ``call`` equation when ``fn`` is a user helper receiving
    traced values (see the module docstring), else the plain call."""
    found = _user_function(fn)
    if found is None:
        return fn(*args, **kwargs)
    func, self, pre_args, pre_kwargs = found
    func = getattr(func, "_gradc_original", func)  # a routed or captured copy (rebind, capture) is its original
    args, kwargs = pre_args + args, {**pre_kwargs, **kwargs}
    run = captured(func)
    if self is not None:
        args = (self,) + args
    from gradc.trace.control_trace import flatten
    leaves, rebuild = flatten((args, kwargs))
    if not any(isinstance(leaf, Traced) for leaf in leaves):
        return run(*args, **kwargs)
    where = _caller_location()
    why = _why_inline(func, self)
    if why is not None:
        return _inline_call(run, args, kwargs, where, func, why)
    return _traced_call(func, run, leaves, rebuild, where)


def _caller_location() -> str | None:
    frame = sys._getframe(2)
    return f"{_display_path(frame.f_code.co_filename)}:{frame.f_lineno}"


def _why_inline(func, self) -> str | None:
    from gradc.ir.builder import contains_traced
    if func.__name__ == "<lambda>" or func.__code__.co_flags & 0x20:  # CO_GENERATOR
        return "a lambda or generator"
    written = _parameters_written(func)
    if written:  # the caller's array changes (NumPy's meaning): a body's inputs are never written
        return f"it writes into its argument {written[0]!r} in place"
    cells = []
    for cell in func.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # an empty cell (a name assigned later)
            pass
    if contains_traced(*cells, *(func.__defaults__ or ()), *(func.__kwdefaults__ or {}).values()) or \
            (self is not None and contains_traced(*getattr(self, "__dict__", {}).values())):
        return "it reads traced values of the enclosing function (closure, defaults or attributes)"
    return None


_WRITTEN: dict = {}  # code object -> the parameters its function writes into by item assignment


def _parameters_written(func) -> list:
    """The parameters ``func`` writes into in place (``p[i] = v``, ``p[i] += v``, ``p[i][j] = v``, ``np.add.at(p,
    ...)``), read from its source once per code object; none when it has no source."""
    code = func.__code__
    if code not in _WRITTEN:
        import ast
        import inspect
        import textwrap
        params = set(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
        found: list = []
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
        except (OSError, TypeError, SyntaxError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            target = None
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                target = node.value
                while isinstance(target, ast.Subscript):
                    target = target.value
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "at" \
                    and node.args:
                target = node.args[0]
            if isinstance(target, ast.Name) and target.id in params and target.id not in found:
                found.append(target.id)
        _WRITTEN[code] = found
    return _WRITTEN[code]


def _inline_call(run, args, kwargs, where, func, why):
    INLINED.append((where, func.__name__, why))
    return run(*args, **kwargs)


def _static_key(value):
    if isinstance(value, (bool, int, float, complex, str, bytes, type(None))):
        return (type(value), value)
    if isinstance(value, np.generic):
        return (type(value), value.item())
    return ("id", id(value))


def _signature(func, leaves, rebuild, keep: list):
    """The call's key: what decides the body (see the module docstring). ``keep`` holds the objects keyed by id."""
    cells = []
    for cell in func.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:
            cells.append(_IN_PROGRESS)
    extra = cells + list(func.__defaults__ or ()) + sorted((func.__kwdefaults__ or {}).items())
    parts = []
    for leaf in leaves:
        if isinstance(leaf, Traced):
            parts.append((type(leaf), leaf.aval))
        else:
            parts.append(_static_key(leaf))
            keep.append(leaf)
    keep.extend(extra)
    structure = rebuild([None] * len(leaves))
    return (func.__code__, id(func.__globals__), tuple(_static_key(v) for v in extra), tuple(parts),
            _structure_key(structure))


def _structure_key(tree):
    if isinstance(tree, (tuple, list)):
        return (type(tree), tuple(_structure_key(t) for t in tree))
    if isinstance(tree, dict):
        return (dict, tuple((k, _structure_key(v)) for k, v in tree.items()))
    return None


class _Body:
    """One traced helper signature: its graph (None when inlined), how to rebuild its result, and its static leaves."""

    def __init__(self, graph, out_leaves, out_rebuild, inline_why=None):
        self.graph, self.out_leaves, self.out_rebuild, self.inline_why = graph, out_leaves, out_rebuild, inline_why


def _bodies(builder: Builder) -> dict:
    root = builder.root
    found = getattr(root, "call_bodies", None)
    if found is None:
        found = root.call_bodies = {}
        root.call_names = {}
    return found


def _traced_call(func, run, leaves, rebuild, where):
    from gradc.trace.control_trace import _atom_in, _current, _record
    outer = _current(*[leaf for leaf in leaves if isinstance(leaf, Traced)])
    leaves = [_lift(outer, leaf) for leaf in leaves]
    bodies = _bodies(outer)
    keep: list = []
    key = _signature(func, leaves, rebuild, keep)
    body = bodies.get(key)
    if body is _IN_PROGRESS:
        raise TraceError(f"{func.__name__} calls itself with the same argument types and static values it was "
                         "called with: the recursion never ends while tracing", where=where,
                         hint="end the recursion on a static value (a shape, a Python int argument), or write it "
                              "as a loop")
    if body is None:
        bodies[key] = _IN_PROGRESS
        try:
            body = _trace_body(func, run, leaves, rebuild, outer.root)
        finally:
            if bodies.get(key) is _IN_PROGRESS:
                del bodies[key]
        bodies[key] = body
        body.keep = keep
    traced = [leaf for leaf in leaves if isinstance(leaf, Traced)]
    if body.graph is None:  # inlined: trace in place, each time
        INLINED.append((where, func.__name__, body.inline_why))
        args, kwargs = rebuild(leaves)
        return run(*args, **kwargs)
    atoms = [_atom_in(outer, leaf, leaf.aval) for leaf in traced]
    results = iter(_record(outer, "call", atoms, dict(body=body.graph, helper=body.graph.name), None))
    out = [next(results) if isinstance(leaf, Traced) else leaf for leaf in body.out_leaves]
    return body.out_rebuild(out)


def _lift(builder: Builder, leaf):
    """A float NumPy array argument is an input of the body, its value passed by the call (as a traced argument
    is): a helper called in a loop with a different array each time is still one body."""
    if isinstance(leaf, (np.ndarray, np.floating)) and leaf.dtype in (np.float64, np.float32):
        from gradc.ir.atoms import Const
        from gradc.trace.control_trace import _wrap
        return _wrap(builder, Const(np.asarray(leaf)))
    return leaf


def _trace_body(func, run, leaves, rebuild, root: Builder) -> _Body:
    from gradc.trace.control_trace import _ACTIVE, flatten
    sub = Builder()
    sub.call_bodies, sub.call_names = root.call_bodies, root.call_names  # one table for the whole trace
    names = _parameter_names(func, leaves, rebuild)
    inputs = []
    new_leaves = []
    for leaf, name in zip(leaves, names):
        if isinstance(leaf, Traced):
            var = sub.input(sub.fresh_name(name), leaf.aval)
            inputs.append(var)
            new_leaves.append(leaf.wrap(var, sub))
        else:
            new_leaves.append(leaf)
    args, kwargs = rebuild(new_leaves)
    _ACTIVE.append(sub)
    try:
        result = run(*args, **kwargs)
    except TraceError as err:
        if "is used outside it" in str(err.args[0] if err.args else ""):
            return _Body(None, None, None, "its values mix with the enclosing function's")
        raise
    finally:
        _ACTIVE.pop()
    sub.closed = True
    out_leaves, out_rebuild = flatten(result)
    if any(callable(leaf) and not isinstance(leaf, (type, Traced, np.ufunc)) for leaf in out_leaves):
        # a function it made (a closure, a vjp's pullback) may read its traced values when called later
        return _Body(None, None, None, "it returns a function, which may read its traced values")
    outputs = []
    for leaf in out_leaves:
        if isinstance(leaf, Traced):
            if leaf.builder is not sub:
                return _Body(None, None, None, "it returns a value of the enclosing function")
            outputs.append(leaf.atom)
    if not outputs:
        return _Body(None, None, None, "it returns no traced value")
    graph = Graph(_body_name(root, func), inputs, list(sub.eqns), outputs, origin=_origin(func))
    why = _small(graph)
    if why is not None:
        return _Body(None, None, None, why)
    return _Body(graph, out_leaves, out_rebuild)


def _small(graph: Graph) -> str | None:
    if len(graph.eqns) <= INLINE_MAX_EQNS and not any(subgraphs(e) for e in graph.eqns):
        n = len(graph.eqns)
        return (f"its body has {n} operation{'' if n == 1 else 's'} (at most {INLINE_MAX_EQNS}, no loop or call: "
                "inlined)")
    return None


def _parameter_names(func, leaves, rebuild) -> list:
    """A readable name for each leaf: its parameter's name (``A``; ``xs_0``, ``xs_1`` for a list's items)."""
    code = func.__code__
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    marks = rebuild(list(range(len(leaves))))
    names = ["a"] * len(leaves)
    args, kwargs = marks

    def name_all(tree, base):
        from gradc.trace.control_trace import flatten
        found, _ = flatten(tree)
        for k, index in enumerate(found):
            names[index] = base if len(found) == 1 else f"{base}_{k}"
    for k, tree in enumerate(args):
        name_all(tree, params[k] if k < len(params) else f"arg{k}")
    for key, tree in kwargs.items():
        name_all(tree, key)
    return [n if n.isidentifier() else "a" for n in names]


def _body_name(root: Builder, func) -> str:
    """``det``, then ``det_1``, ``det_2`` for further signatures of the same helper in this trace."""
    from gradc.trace.signature import function_name
    base = function_name(func)
    count = root.call_names.get(base, 0)
    root.call_names[base] = count + 1
    return base if count == 0 else f"{base}_{count}"


def _origin(func) -> str:
    return f"{_display_path(func.__code__.co_filename)}:{func.__name__}"
