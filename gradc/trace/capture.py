"""Capture: the user's ``for``, ``while`` and ``if`` on traced values become gradc's structured control flow.

When gradc traces a function (and the functions of its module it calls), it reads the
function's source and rewrites it, in the spirit of TensorFlow's AutoGraph:

* ``if``/``elif``/``else``, ``for`` and ``while`` keep the user's statement for concrete
  values (Python ints, floats, lists, NumPy arrays: exactly Python's semantics, unrolled
  while tracing as before) and gain a functional form used when a traced value is
  involved: ``if`` on a traced scalar becomes ``gradc.trace.control.cond``; ``for`` over
  ``range(...)`` (static or traced bounds) whose carried or read values are traced becomes
  ``fori_loop``; ``for`` over a traced array's first axis (or ``zip`` of such arrays, or
  a float NumPy array when the body reads traced values) becomes ``scan``, ``enumerate``
  of a traced array a ``fori_loop``; ``while`` on traced values
  becomes ``while_loop``. A loop that indexes or calls a method of a Python list, tuple
  or dict (``ws[i]``, ``d.update(...)``) stays a Python loop: a traced index cannot pick
  from a list. A list a ``for`` loop appends to (``ys.append(y)``) becomes the stacked
  per-step outputs of its scan (``gradc.trace.capture_lists``); so do the items of a list
  comprehension with one ``for`` over ``range``/``enumerate``/``zip``/``reversed`` or a
  name, and no ``if`` (``gradc.trace.capture_comprehensions``).
* ``break``/``continue`` become flags in the carry; the statements after a possible jump
  run under ``if not flag``. A ``return`` inside a loop becomes a flag and a ``break``;
  after the loop, ``if flag: return <its value>`` reads the carried variables, which hold
  what they held at the ``return`` (a ``return`` in a nested loop first becomes a flag and
  a ``break`` of that loop, then a ``return`` after it).
* The carry of a loop, and the results of an ``if``, are the variables the statement
  assigns that are live afterwards (liveness on the AST), passed with ``names=`` (the
  user's names) and ``where=`` (the statement's ``file:line``).
* ``a if p else b``, ``and``, ``or``, ``not`` and chained comparisons (``0 < x < 1``)
  become run-time helpers that keep Python's meaning on concrete values and build
  ``cond`` / ``np.logical_and`` / ... on traced scalars.
* ``assert test, message`` on a traced ``test``, and a ``raise`` in a branch of an ``if`` on a
  traced value, become run-time checks of the compiled code (``gradc.trace.checks``).
* ``x[k] = v``, ``x[k] += v``, ``x[k1][k2] = v`` and ``np.add.at(x, k, v)`` on a local name
  ``x``, and such targets among others (``s[i], s[i + 1] = a, b``, ``a[0] = b[0] = v``),
  rebind ``x`` through ``gradc.trace.inplace`` (when it provides ``setitem``, ``setitem_op``
  and ``ufunc_at``), so an updated array is carried like any other variable.

The rewritten code keeps the user's file and line numbers (tracebacks and errors point
at the user's lines); generated names start with a prefix no name of the function starts
with. A lambda is rewritten as a ``def`` of the same parameters and body (gradc.trace.lambda_source), so that
its call sites reach helpers through the hook. Left as they are: functions without source (builtins, exec'd
code without a linecache entry, a lambda that cannot be told from another on its line) or without control
flow; nested functions, lambdas, set/dict/generator
comprehensions and list comprehensions other than those above;
``try``/``with``/``match`` blocks (a traced condition in them gets the tracer's error); a
method using private names (``self.__x``, which only the class body mangles) or
``super()``; a function so deeply nested that its rewrite would pass ``MAX_NAMES``
generated names (each level holds two versions of what it contains). Refused with a
TraceError at the user's line, and only when traced values reach them: a ``return``
inside a ``try``/``with`` block of a traced loop; a variable assigned in only one branch of a traced ``if``
(or first inside a traced loop) and used after it; ``global``/``nonlocal`` assignments
inside traced control flow; ``break``/``continue``/``return`` under a traced condition
in a loop that stays a Python loop; an ``if``, ``while`` or conditional expression on a
traced array (np.where is the elementwise choice).

>>> def clip(x, hi):
...     if x > hi:
...         x = hi
...     return x
>>> print(converted_source(clip).splitlines()[2])
    if _gc_rt.traced(_gc_p1):
"""
from __future__ import annotations
import __future__

import ast
import builtins
import functools
import inspect
import textwrap
import types
import warnings

from gradc.errors import GradcWarning, _display_path
from gradc.trace import capture_analysis as an
from gradc.trace import capture_runtime
from gradc.trace.calls import CAPTURE, captured, is_user_code, remember_captured
from gradc.trace.capture_calls import CallSites
from gradc.trace.capture_comprehensions import kept_as_loop
from gradc.trace.capture_convert import CHOICE_BUILTINS, MAX_NAMES, REWRITTEN_BUILTINS, Converter, Ctx, TooLarge
from gradc.trace.lambda_source import lambda_def

_CACHE: dict = {}  # (code object, its file) -> (code of the rewritten function, its source) or None
_FUTURE_FLAGS = 0
for _feature in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _feature).compiler_flag


def capture(f):
    """``f`` with its control flow captured (and the same-module functions it calls, when any of them needs it);
    ``f`` itself when nothing needs rewriting.

    >>> def f(x):
    ...     return x + 1
    >>> capture(f) is f
    True
    """
    if isinstance(f, functools.partial):
        inner = capture(f.func)
        return f if inner is f.func else functools.partial(inner, *f.args, **f.keywords)
    fn = getattr(f, "__func__", f)
    if not isinstance(fn, types.FunctionType):
        return f
    module_globals = fn.__globals__
    helpers, imported = _reachable(fn, module_globals)
    imported.update(_choice_builtins(fn, module_globals))
    cells = _captured_cells(fn)
    if imported or any(_conversion(h) is not None for h in helpers.values()):
        new_globals = dict(module_globals)
        new_globals.update(imported)
        for name, h in helpers.items():
            new_globals[name] = _rebuild(h, new_globals)
        out = _rebuild(fn, new_globals, cells)
    elif _conversion(fn) is not None or cells is not None:
        out = _rebuild(fn, module_globals, cells)
    else:
        return f
    return types.MethodType(out, f.__self__) if fn is not f else out


def converted_source(f) -> str | None:
    """The rewritten source of ``f`` (for debugging and ``gradc show``), or None when gradc traces ``f`` as it is.

    >>> converted_source(len) is None
    True
    """
    fn = getattr(f, "__func__", f)
    if not isinstance(fn, types.FunctionType):
        return None
    found = _conversion(fn)
    return found[1] if found is not None else None


# ---------------------------------------------------------------- the functions a traced function reaches
def _reachable(fn, module_globals) -> tuple:
    """The same-module functions ``fn`` names as globals, directly or through each other (name -> function), and
    the user functions of other modules it names, captured (name -> captured function; only those the capture
    rewrote): reached from code that is not rewritten itself (a lambda, exec'd code), they are captured here."""
    found: dict = {}
    imported: dict = {}
    todo = [fn]
    while todo:
        code_stack = [todo.pop().__code__]
        while code_stack:
            code = code_stack.pop()
            code_stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
            for name in code.co_names:
                value = module_globals.get(name)
                if isinstance(value, types.FunctionType) and value.__globals__ is module_globals and \
                        value is not fn and name not in found:
                    found[name] = value
                    todo.append(value)
                elif isinstance(value, types.FunctionType) and value.__globals__ is not module_globals and \
                        name not in imported and is_user_code(value.__code__.co_filename):
                    imported[name] = captured(value)
                elif isinstance(value, types.ModuleType) and name not in imported and _conversion(fn) is None and \
                        is_user_code(getattr(value, "__file__", None) or ""):
                    imported[name] = _CapturedModule(value)  # `model.helper(...)` from a lambda: the hook is not there
    return dict(sorted(found.items())), {k: v for k, v in sorted(imported.items()) if v is not module_globals[k]}


class _CapturedModule:
    """A user's module as code gradc does not rewrite (a lambda) sees it: its functions captured."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        value = getattr(self._module, name)
        if isinstance(value, types.FunctionType) and is_user_code(value.__code__.co_filename):
            return captured(value)
        return value

    def __repr__(self):
        return repr(self._module)


def _choice_builtins(fn, module_globals) -> dict:
    """``max``/``min`` for code gradc does not rewrite (a lambda), where the function uses the builtins: they choose
    among traced scalars (``capture_runtime.CHOICES``) as the rewritten ``max(a, b)`` does."""
    if _conversion(fn) is not None:
        return {}
    names: set = set()
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        names.update(code.co_names)
    return {name: capture_runtime.CHOICES[name] for name in sorted(names & set(capture_runtime.CHOICES))
            if name not in module_globals}


def _captured_cells(fn):
    """The closure cells of ``fn`` with each user function it closes over captured, or None when none changes
    (``lambda p: objective(p, *rest)``, ``objective`` a local of the enclosing function: the call hook is not in
    a lambda, so the function is captured here)."""
    if not fn.__closure__:
        return None
    out, changed = [], False
    for cell in fn.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell (a name assigned later in the enclosing function)
            out.append(cell)
            continue
        if isinstance(value, types.FunctionType) and value is not fn and is_user_code(value.__code__.co_filename):
            found = captured(value)
            if found is not value:
                out.append(types.CellType(found))
                changed = True
                continue
        out.append(cell)
    return tuple(out) if changed else None


def _rebuild(fn, new_globals, closure=None):
    found = _conversion(fn)
    code = found[0] if found is not None else fn.__code__
    cells = dict(zip(fn.__code__.co_freevars, closure or fn.__closure__ or ()))
    closure = tuple(types.CellType(capture_runtime) if name not in cells else cells[name] for name in code.co_freevars)
    out = types.FunctionType(code, new_globals, fn.__name__, fn.__defaults__, closure or None)
    out.__kwdefaults__ = fn.__kwdefaults__
    out.__dict__.update(fn.__dict__)
    out.__qualname__, out.__module__, out.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    out.__annotations__ = fn.__annotations__
    out._gradc_original = getattr(fn, "_gradc_original", fn)  # the call hook keys helpers by the original
    return remember_captured(out)


# ---------------------------------------------------------------- conversion, once per code object
def _conversion(fn):
    code = fn.__code__
    # code objects compare equal without their file: the same function text in two files is two conversions,
    # each naming its own file in errors
    key = (code, code.co_filename)
    if key not in _CACHE:
        _CACHE[key] = _convert(fn)
    return _CACHE[key]


def _source_def(fn):
    """The ``def`` node of ``fn``, with the file's line numbers, or None when its source cannot be read (a lambda:
    as a ``def`` of a name it does not use, gradc.trace.lambda_source)."""
    if fn.__code__.co_name == "<lambda>":
        return lambda_def(fn, _prefix(set(fn.__code__.co_names) | set(fn.__code__.co_varnames)) + "lambda")
    try:
        lines, start = inspect.getsourcelines(fn.__code__)  # the code: a functools.wraps wrapper is not its __wrapped__
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef) or \
            tree.body[0].name != fn.__code__.co_name:
        return None
    ast.increment_lineno(tree, start - 1)
    return tree.body[0]


def _identifiers(node) -> set:
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.arg):
            out.add(n.arg)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
        elif isinstance(n, ast.alias):
            out.add((n.asname or n.name).split(".")[0])
    return out


def _prefix(idents) -> str:
    prefix, k = "_gc_", 0
    while any(i.startswith(prefix) for i in idents):
        k += 1
        prefix = f"_gc{k}_"
    return prefix


def _needs_capture(body) -> bool:
    return an.contains(body, (ast.If, ast.For, ast.While, ast.IfExp, ast.BoolOp, ast.Assert)) or any(
        kept_as_loop(n) for n in an.walk_scope(body)) or any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in CHOICE_BUILTINS
        or _computed_index(n) or _method_call(n) for s in body for n in ast.walk(s))


# module names a call's receiver usually is: `np.sum(x)` needs no hook (a user module's function is captured where
# it is named, see _reachable)
_LIBRARY_NAMES = frozenset({"np", "numpy", "math", "scipy", "sp", "special", "stats", "linalg", "la", "signal",
                            "functools", "operator", "itertools", "builtins", "random", "gradc"})


def _method_call(node) -> bool:
    """``obj.method(...)`` on an object (``Filler().fill(x)``, ``self.step(x)``, ``model.forward(x)``): the method is
    reached through the call hook only in rewritten code."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
        return False
    receiver = node.func.value
    return isinstance(receiver, ast.Call) or isinstance(receiver, ast.Name) and receiver.id not in _LIBRARY_NAMES


def _computed_index(node) -> bool:
    """``a[b[i]]`` or ``a[int(k)]``: an index computed by a read or a call, maybe traced (``rt.item`` reads a Python
    list there as a traced choice)."""
    return isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and any(
        isinstance(n, (ast.Subscript, ast.Call)) for n in ast.walk(node.slice))


def _convert(fn):
    """``(code, source)`` of ``fn`` rewritten, or None when it is traced as it is."""
    code = fn.__code__
    if "__class__" in code.co_freevars or code.co_flags & (inspect.CO_GENERATOR | inspect.CO_COROUTINE |
                                                           inspect.CO_ASYNC_GENERATOR):
        return None
    node = _source_def(fn)
    if node is None:
        return None
    idents = _identifiers(node)
    if any(i.startswith("__") and not i.endswith("__") for i in idents):  # private names: mangled in a class only
        return None
    declared = an.declared(node)
    params = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
    params += [a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None]
    local_names = (set(params) | set(an.stores(node.body))) - declared
    path = _display_path(code.co_filename)
    prefix = _prefix(idents)
    sites = CallSites(prefix + "rt", fn.__globals__, local_names | declared)
    node.body = [sites.visit(s) for s in node.body]  # helper calls through the run-time hook (gradc.trace.calls)
    # a parameter the function returns may be written (the caller assigns the result); one it never returns is
    # written for the caller to see
    returned = {n.id for r in ast.walk(node) if isinstance(r, ast.Return) and r.value is not None
                for n in ast.walk(r.value) if isinstance(n, ast.Name)}
    items = _ItemAssignments(prefix + "rt", path, local_names, set(params) - returned)
    if items.available:
        node.body = [out for s in node.body for out in _as_list(items.visit(s))]
        local_names |= items.generated
    if not items.count and not sites.count and not _needs_capture(node.body):
        return None
    kept = [n for n in REWRITTEN_BUILTINS
            if fn.__globals__.get(n, getattr(builtins, n)) is getattr(builtins, n) and n not in local_names]
    conv = Converter(prefix, path, local_names, declared, kept)
    an.clear_cache()
    try:
        node.body = conv.block(conv.lift_nested_returns(node.body), set(), Ctx(tail=True))
    except TooLarge:  # deeply nested: traced as written (Python loops unroll; traced conditions are errors)
        warnings.warn_explicit(f"the loops and branches of {fn.__name__} are not captured: its rewrite would "
                               f"take more than {MAX_NAMES} generated names (each nested level holds two versions "
                               "of what it contains); split it into smaller functions", GradcWarning,
                               code.co_filename, code.co_firstlineno)
        return None
    finally:
        an.clear_cache()
    node.decorator_list = []
    return _compile(node, code, prefix + "rt")


def _compile(node, code, rt_name):
    """Compile ``node`` inside a factory binding ``rt_name`` and the original free variables, so the rewritten
    function's free variables are exactly those cells (the factory itself is never run)."""
    binds = [] if node.name in code.co_freevars else [ast.Global(names=[node.name])]  # recursion: the global
    binds += [ast.Assign(targets=[ast.Name(id=n, ctx=ast.Store())], value=ast.Constant(None))
             for n in (rt_name, *code.co_freevars)]
    factory = ast.FunctionDef(name=rt_name + "factory", args=ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=binds + [node, ast.Return(value=ast.Name(id=node.name, ctx=ast.Load()))], decorator_list=[],
        returns=None, type_comment=None)
    if "type_params" in ast.FunctionDef._fields:
        factory.type_params = []
    for n in [factory, *binds, factory.body[-1]]:
        ast.copy_location(n, node)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec", flags=code.co_flags & _FUTURE_FLAGS, dont_inherit=True)
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    return inner, ast.unparse(node)


class _ItemAssignments(ast.NodeTransformer):
    """Item assignments to a local array ``x`` rebind ``x``, so that a traced loop or branch carries it:

    * ``x[k] = v`` -> ``x = rt.setitem(v, x, k, where)``; ``x[k1][k2] = v`` (a write through the view ``x[k1]``)
      -> ``x = rt.setitem(v, x, k2, where, through=(k1,))``;
    * ``x[k] op= v`` -> ``x = rt.setitem_op(x, k, "op", v, where)`` (``through=`` likewise);
    * ``E.at(x, k[, v])`` -> ``x = rt.ufunc_at(E, x, k[, v], where=...)``;
    * targets holding item assignments among others (``s[i], s[i + 1] = a, b``, ``a[0] = b[0] = v``,
      ``(x[0], y), z = ...``, starred) -> the value into a generated name, unpacked into generated names as
      Python unpacks it, then each target assigned in order (its index evaluated then, as Python does);
    * ``x[k]: T = v`` as ``x[k] = v``."""

    def __init__(self, rt_name, path, local_names, params=()):
        from gradc.trace import inplace
        self.available = all(hasattr(inplace, n) for n in ("setitem", "setitem_op", "ufunc_at"))
        self.rt_name, self.path, self.locals = rt_name, path, local_names
        self.params = set(params)  # a write into a parameter's array must reach the caller's
        self.count = 0
        self.temporaries = 0
        self.generated: set = set()  # the names of the generated temporaries

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _skip

    def _call(self, helper, node, args, keywords=()):
        self.count += 1
        func = ast.Attribute(value=ast.Name(id=self.rt_name, ctx=ast.Load()), attr=helper, ctx=ast.Load())
        where = ast.Constant(f"{self.path}:{node.lineno}")
        return ast.Call(func=func, args=args, keywords=[*keywords, ast.keyword(arg="where", value=where)])

    def _chain(self, t):
        """``(name, [outer keys], last key)`` of a target ``name[k1]...[kn]`` on a local name, else None."""
        keys = []
        while isinstance(t, ast.Subscript):
            keys.append(t.slice)
            t = t.value
        if not keys or not isinstance(t, ast.Name) or t.id not in self.locals:
            return None
        keys.reverse()
        return t.id, keys[:-1], keys[-1]

    def _through(self, outer):
        if not outer:
            return []
        return [ast.keyword(arg="through", value=ast.Tuple(elts=list(outer), ctx=ast.Load()))]

    def _param(self, name):
        return [ast.keyword(arg="param", value=ast.Constant(name))] if name in self.params else []

    def _assign(self, name, value, node):
        return ast.copy_location(ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=value), node)

    def _temporary(self):
        self.temporaries += 1
        name = f"{self.rt_name[:-2]}unpacked{self.temporaries}"
        self.generated.add(name)
        return name

    def _has_item_target(self, t) -> bool:
        if isinstance(t, (ast.Tuple, ast.List)):
            return any(self._has_item_target(e) for e in t.elts)
        if isinstance(t, ast.Starred):
            return self._has_item_target(t.value)
        return self._chain(t) is not None

    def _store(self, target, value, node) -> list:
        """Statements assigning the expression ``value`` (a name read once, or the user's value) to ``target``."""
        found = self._chain(target)
        if found is not None:
            name, outer, last = found
            call = self._call("setitem", node, [value, ast.Name(id=name, ctx=ast.Load()), last],
                              self._through(outer) + self._param(name))
            return [self._assign(name, call, node)]
        if isinstance(target, (ast.Tuple, ast.List)) and self._has_item_target(target):
            parts, names = [], []
            for e in target.elts:
                n = self._temporary()
                names.append(n)
                inner = ast.Name(id=n, ctx=ast.Store())
                parts.append(ast.Starred(value=inner, ctx=ast.Store()) if isinstance(e, ast.Starred) else inner)
            unpack = ast.copy_location(ast.Assign(targets=[ast.Tuple(elts=parts, ctx=ast.Store())], value=value),
                                       node)
            out = [unpack]
            for e, n in zip(target.elts, names):
                inner_target = e.value if isinstance(e, ast.Starred) else e
                out += self._store(inner_target, ast.Name(id=n, ctx=ast.Load()), node)
            return out
        return [ast.copy_location(ast.Assign(targets=[target], value=value), node)]

    def visit_Assign(self, node):
        if not any(self._has_item_target(t) for t in node.targets):
            return node
        if len(node.targets) == 1 and self._chain(node.targets[0]) is not None:
            return self._store(node.targets[0], node.value, node)[0]
        held = self._temporary()  # the value, evaluated once before any target is assigned
        out = [self._assign(held, node.value, node)]
        for t in node.targets:
            out += self._store(t, ast.Name(id=held, ctx=ast.Load()), node)
        return out

    def visit_AnnAssign(self, node):
        if node.value is not None and self._chain(node.target) is not None:
            return self._store(node.target, node.value, node)[0]
        return node

    def visit_AugAssign(self, node):
        found = self._chain(node.target)
        if found is None:
            return node
        symbol = _SYMBOLS.get(type(node.op))
        if symbol is None:
            return node
        name, outer, last = found
        args = [ast.Name(id=name, ctx=ast.Load()), last, ast.Constant(symbol), node.value]
        return self._assign(name, self._call("setitem_op", node, args, self._through(outer) + self._param(name)),
                            node)

    def visit_Expr(self, node):
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "at" and \
                not call.keywords and len(call.args) in (2, 3) and \
                not any(isinstance(a, ast.Starred) for a in call.args) and \
                isinstance(call.args[0], ast.Name) and call.args[0].id in self.locals:
            name = call.args[0].id
            return self._assign(name, self._call("ufunc_at", node, [call.func.value, *call.args]), node)
        return node


def _as_list(node) -> list:
    return node if isinstance(node, list) else [node]


_SYMBOLS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
            ast.Pow: "**", ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
            ast.LShift: "<<", ast.RShift: ">>"}


CAPTURE.append(capture)  # the helper hook (gradc.trace.calls) captures the helpers it meets with it
