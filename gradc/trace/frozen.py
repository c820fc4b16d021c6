"""What a traced function reads or changes besides its arguments: state frozen at trace time.

The rule (JAX's): a function's arguments are the only values that vary between calls
of the compiled code. Everything else it reads (module globals, closure cells,
attributes of ``self`` or of a module, random draws) is read once, while tracing,
and baked into the graph as a constant; Python-side effects (a global counter, a
list it appends to) happen once, while tracing. :func:`scan` finds these in the
function's bytecode (and in the helpers it calls by name), so that each can be
reported at the user's line instead of being silently frozen.

>>> import numpy as np
>>> W = np.ones(3)
>>> found = scan(lambda x: np.sum(W * x))
>>> [(r.label, r.warn) for r in found.reads]
[('W', True)]
"""
from __future__ import annotations

import collections
import dis
import functools
import inspect
import os
import random
import sys
import types
import warnings
from dataclasses import dataclass, field

import numpy as np

from gradc.errors import GradcWarning, _display_path
from gradc.ir.types import type_of_array
from gradc.trace.signature import unwrap

_SCALARS = (bool, int, float, complex, str, bytes, np.generic)
_RANDOM_OBJECTS = (np.random.Generator, np.random.RandomState, random.Random)
_CONTAINERS = (list, dict, set, bytearray, collections.deque)
_MUTATORS = frozenset("append extend insert pop remove clear update setdefault popitem add discard "
                      "appendleft extendleft popleft rotate sort reverse".split())
_LIBRARY_PREFIXES = ("numpy", "gradc", "scipy")
_LOAD_FAST = frozenset({"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_BORROW", "LOAD_FAST_LOAD_FAST",
                        "LOAD_FAST_BORROW_LOAD_FAST_BORROW"})
_MISSING = object()
_KIND_TEXT = {"global": "global array", "cell": "closure array", "self": "array attribute", "partial": "array"}


@dataclass
class Read:
    """A value the function reads that is not an argument; ``get()`` reads it again now."""

    label: str
    kind: str  # "global", "cell" (a closure variable), "self" (an attribute of self) or "partial"
    filename: str
    line: int
    get: object
    value: object
    warn: bool  # arrays are reported at trace time; scalars and partial-bound arrays only guarded
    source: tuple | None = None  # (module globals, name) for a plain global: read without a call

    @property
    def where(self) -> str:
        return f"{_display_path(self.filename)}:{self.line}"


@dataclass
class Findings:
    """Everything :func:`scan` found: reads, random calls and Python-side state changes."""

    reads: list = field(default_factory=list)
    randoms: list = field(default_factory=list)  # (label, filename, line)
    stores: list = field(default_factory=list)  # (description, filename, line, label of what is changed)


def scan(f) -> Findings:
    """The globals, closure cells and attributes ``f`` reads, its random calls and its state changes."""
    found = Findings()
    _scan_callable(f, found, set(), depth=0)
    changed = {store[3] for store in found.stores}
    found.reads = [r for r in found.reads if r.label not in changed]  # a counter: reported as a store
    return found


def warn_frozen(found: Findings, fname: str, reads=True) -> None:
    """One GradcWarning per finding, at the user's line (``reads=False``: not for the reads); none for gradc's
    own wrappers (``hessian`` traces a closure of gradc's that records the output layout)."""
    for r in found.reads if reads else ():
        if r.warn and not _in_gradc(r.filename):
            kind = _KIND_TEXT[r.kind]
            _warn(f"{fname} reads the {kind} {r.label} ({type_of_array(np.asarray(r.value))}) at {r.where}: "
                  "its value at trace time is baked into the compiled code; pass it as an argument to let it vary "
                  "(or, with gradc.grad, use static_globals=False to re-trace when it changes)", r.filename, r.line)
    for label, filename, line in found.randoms:
        if _in_gradc(filename):
            continue
        _warn(f"{fname} calls {label} at {_display_path(filename)}:{line}: the random numbers are drawn once, "
              "while tracing, and become constants in the compiled code; draw them outside the function and "
              "pass them in as an argument", filename, line)
    for what, filename, line, _ in found.stores:
        if _in_gradc(filename):
            continue
        _warn(f"{fname} {what} at {_display_path(filename)}:{line}: this runs once, while tracing, not on each "
              "call of the compiled code; keep such state outside the differentiated function", filename, line)


_GRADC_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _in_gradc(filename) -> bool:
    return bool(filename) and os.path.abspath(filename).startswith(_GRADC_DIR)


def _warn(message, filename, line):
    warnings.warn_explicit(message, GradcWarning, filename, line)


# ---------------------------------------------------------------- what to scan
def _scan_callable(f, found, seen, depth, self_obj=_MISSING):
    """Unwrap partials, methods and callable objects down to Python functions, and scan those."""
    if depth > 8:
        return
    if isinstance(f, functools.partial):
        code = getattr(unwrap(f), "__code__", None)
        filename, line = (code.co_filename, code.co_firstlineno) if code else ("<partial>", 0)
        names = [f"partial argument {k}" for k in range(len(f.args))] + [f"partial argument {n}" for n in f.keywords]
        for label, value in zip(names, list(f.args) + list(f.keywords.values())):
            if isinstance(value, np.ndarray):  # bound by the user on purpose: guarded, not reported
                found.reads.append(Read(label, "partial", filename, line, lambda v=value: v, value, False))
        _scan_callable(f.func, found, seen, depth + 1)
    elif isinstance(f, types.MethodType):
        _scan_callable(f.__func__, found, seen, depth + 1, self_obj=f.__self__)
    elif isinstance(f, types.FunctionType):
        _scan_function(f, found, seen, depth, self_obj)
    elif isinstance(inspect.getattr_static(type(f), "__call__", None), types.FunctionType):  # a callable object
        _scan_function(inspect.getattr_static(type(f), "__call__"), found, seen, depth, self_obj=f)


def _is_library(obj) -> bool:
    """Objects of NumPy, gradc or the standard library: never scanned, their constants never reported."""
    module = obj.__name__ if isinstance(obj, types.ModuleType) else getattr(obj, "__module__", None)
    if not isinstance(module, str):
        return False
    top = module.partition(".")[0]
    return top in _LIBRARY_PREFIXES or top in sys.stdlib_module_names or top == "builtins"


def _scan_function(fn, found, seen, depth, self_obj):
    code = fn.__code__
    if (code, id(self_obj)) in seen or (depth and _is_library(fn)):  # the function itself is always scanned
        return
    seen.add((code, id(self_obj)))
    cells = dict(zip(code.co_freevars, [c for c in (fn.__closure__ or ())]))
    self_name = code.co_varnames[0] if self_obj is not _MISSING and code.co_argcount else None
    scope = _Scope(fn.__globals__, cells, self_name, self_obj)
    for sub in _code_objects(code):
        _scan_code(sub, scope, found, seen, depth)


def _code_objects(code):
    """``code`` and the code of the lambdas, inner functions and comprehensions it defines."""
    stack, out = [code], []
    while stack:
        c = stack.pop()
        out.append(c)
        stack.extend(k for k in reversed(c.co_consts) if isinstance(k, types.CodeType))
    return out


@dataclass
class _Scope:
    globals: dict
    cells: dict
    self_name: str | None
    self_obj: object


# ---------------------------------------------------------------- the bytecode walk
def _scan_code(code, scope, found, seen, depth):
    lines = _line_table(code)
    instrs = list(dis.get_instructions(code))
    resolved = []  # per instruction: (object, label, root) the instruction leaves on top, or None
    for i, ins in enumerate(instrs):
        line = lines.get(ins.offset, code.co_firstlineno)
        cur = _resolve(ins, resolved[-1] if resolved else None, scope)
        resolved.append(cur)
        if cur is not None:
            cur = _classify(cur, code.co_filename, line, scope, found, seen, depth)
            resolved[-1] = cur
        op = ins.opname
        if op == "STORE_GLOBAL":
            found.stores.append((f"assigns the global {ins.argval}", code.co_filename, line, ins.argval))
        elif op == "STORE_DEREF" and ins.argval in scope.cells:
            found.stores.append((f"assigns the nonlocal {ins.argval}", code.co_filename, line, ins.argval))
        elif op == "STORE_ATTR":
            base = _store_base(instrs, resolved, i)
            if base is not None:
                label = f"{base[1]}.{ins.argval}"
                found.stores.append((f"assigns the attribute {label}", code.co_filename, line, label))
        elif op == "STORE_SUBSCR" and i >= 2 and resolved[i - 2] is not None:
            label = resolved[i - 2][1]
            found.stores.append((f"writes into {label}[...]", code.co_filename, line, label))


def _line_table(code):
    table = {}
    for start, end, line in code.co_lines():
        if line is not None:
            for offset in range(start, end, 2):
                table[offset] = line
    return table


def _resolve(ins, previous, scope):
    """The object an instruction loads, when it is a global, a closure cell or an attribute of one."""
    op, name = ins.opname, ins.argval
    if op == "LOAD_GLOBAL":
        value = scope.globals.get(name, _MISSING)
        if value is _MISSING:
            return None
        return value, name, ("global", name)
    if op in ("LOAD_DEREF", "LOAD_CLASSDEREF") and name in scope.cells:
        try:
            return scope.cells[name].cell_contents, name, ("cell", name)
        except ValueError:  # an empty cell
            return None
    if op in _LOAD_FAST and scope.self_name is not None:
        last = name[-1] if isinstance(name, tuple) else name
        if last == scope.self_name:
            return scope.self_obj, "self", ("self",)
        return None
    if op in ("LOAD_ATTR", "LOAD_METHOD") and previous is not None:
        obj, label, root = previous
        value = _static_attribute(obj, name)
        if value is _MISSING:
            return None
        return value, f"{label}.{name}", root + (name,)
    return None


def _static_attribute(obj, name):
    """``obj.name`` without running properties or ``__getattr__`` of user classes."""
    if isinstance(obj, types.ModuleType):
        return vars(obj).get(name, _MISSING)
    try:
        value = inspect.getattr_static(obj, name)
    except AttributeError:
        return _MISSING
    if isinstance(value, (types.FunctionType, staticmethod, classmethod)) or callable(value):
        return getattr(obj, name, _MISSING)  # a method: bind it (no user code runs)
    if isinstance(value, (property, types.GetSetDescriptorType, types.MemberDescriptorType)):
        return _MISSING
    return value


def _classify(cur, filename, line, scope, found, seen, depth):
    """Record what ``cur`` is (array read, random call, helper to scan); what to keep resolving, or None."""
    obj, label, root = cur
    if root[0] == "global" and isinstance(scope.globals.get(root[1]), types.ModuleType) and \
            _is_library(scope.globals[root[1]]):
        if _is_random(obj):
            _add_random(found, label, filename, line)
            return None
        return cur if isinstance(obj, types.ModuleType) else None
    if isinstance(obj, np.ndarray):
        found.reads.append(Read(label, root[0], filename, line, _getter(root, scope), obj, True, _source(root, scope)))
        return None
    if isinstance(obj, _SCALARS):
        found.reads.append(Read(label, root[0], filename, line, _getter(root, scope), obj, False,
                                _source(root, scope)))
        return None
    if _is_random(obj):
        _add_random(found, label, filename, line)
        return None
    parent = getattr(obj, "__self__", None)
    if isinstance(parent, _CONTAINERS) and label.rpartition(".")[2] in _MUTATORS:
        owner, _, method = label.rpartition(".")
        found.stores.append((f"changes {owner} (.{method}())", filename, line, owner))
        return None
    if isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)) and not _is_library(obj):
        _scan_callable(obj, found, seen, depth + 1)
    return cur


def _is_random(obj) -> bool:
    if isinstance(obj, types.ModuleType) or isinstance(obj, type):
        return False
    if isinstance(getattr(obj, "__self__", None), _RANDOM_OBJECTS):
        return True
    module = getattr(obj, "__module__", None)
    return callable(obj) and isinstance(module, str) and (module.startswith("numpy.random") or module == "random")


def _add_random(found, label, filename, line):
    if (label, filename, line) not in found.randoms:
        found.randoms.append((label, filename, line))


def _store_base(instrs, resolved, i):
    """What a STORE_ATTR at ``i`` stores into: ``x.a = v`` or the augmented ``x.a += v``, if resolvable."""
    if resolved[i - 1] is not None and instrs[i - 1].opname not in ("SWAP", "ROT_TWO"):
        return resolved[i - 1]
    name = instrs[i].argval
    for k in range(i - 1, 1, -1):
        if instrs[k].opname == "LOAD_ATTR" and instrs[k].argval == name and \
                instrs[k - 1].opname in ("COPY", "DUP_TOP"):
            return resolved[k - 2]
    return None


def _source(root, scope):
    return (scope.globals, root[1]) if root[0] == "global" and len(root) == 2 else None


def _getter(root, scope):
    """A function reading the value again through the same path (for the call-time check)."""
    kind, *path = root
    if kind == "global":
        head, rest = scope.globals, path[1:]

        def start():
            return head.get(path[0], _MISSING)
    elif kind == "cell":
        cell, rest = scope.cells[path[0]], path[1:]

        def start():
            try:
                return cell.cell_contents
            except ValueError:
                return _MISSING
    else:
        obj, rest = scope.self_obj, path

        def start():
            return obj
    if not rest:
        return start

    def get():
        value = start()
        for name in rest:
            value = getattr(value, name, _MISSING)
        return value
    return get


__all__ = ["Findings", "Read", "scan", "warn_frozen"]
