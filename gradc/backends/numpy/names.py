"""Generated names that never collide with the user's.

The emitter writes the user's names (function and parameter names, and the IR
names derived from them) as ``user(name)``: the name behind a marker no
identifier can contain. Every other name in the module is generated: ``np``,
``math``, the argument-checking helpers, ``_float64``, ``C0``, builtins such as
``type`` and ``float``. :func:`finish` removes the markers and renames each
generated name the user also uses (``np`` -> ``np_``), so a parameter called
``np``, ``float`` or ``_check_array`` is kept as written and the module still
works. With ordinary names nothing changes.

>>> import ast
>>> m = ast.parse("def f(x):\\n    return np.sin(x)")
>>> m.body[0].name = user("f"); m.body[0].args.args[0].arg = user("np")
>>> m.body[0].body[0].value.args[0].id = user("np")
>>> aliases = finish(m, always=("np",))
>>> aliases["np"], ast.unparse(m)
('np_', 'def f(np):\\n    return np_.sin(np)')
"""
from __future__ import annotations

import ast
import builtins
import functools
import keyword

from gradc.ops.spell import USER_MARK as _MARK  # noqa: E402  (cannot occur in an identifier)


def user(name: str) -> str:
    """``name`` marked as the user's (kept as written by :func:`finish`).

    >>> unmark(user("x") + " = 1")
    'x = 1'
    """
    return _MARK + name


def _is_user(name: str) -> bool:
    return name.startswith(_MARK)


def _helper_locals(fn: ast.FunctionDef) -> set:
    """Names local to a generated helper: its parameters and what it assigns."""
    names = {a.arg for a in fn.args.args}
    names |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return names


@functools.lru_cache(maxsize=None)
def _helper_globals(text: str) -> frozenset:
    """The global names a helper's source defines or reads (computed once per helper)."""
    names: set = set()
    for fn in ast.parse(text).body:
        local = _helper_locals(fn)
        names.add(fn.name)
        names |= {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and n.id not in local}
    return frozenset(names)


def _nodes(statements, helper: bool = False) -> list:
    """``(node, locals)``: every node once (the emitter shares nodes) and the generated locals of its scope."""
    seen: set = set()
    out = []
    for stmt in statements:
        scope = _helper_locals(stmt) if helper else set()
        for node in ast.walk(stmt):
            if id(node) not in seen:
                seen.add(id(node))
                out.append((node, scope))
    return out


def _rename(nodes, renamed: dict) -> None:
    for node, scope in nodes:
        if isinstance(node, ast.Name):
            if _is_user(node.id):
                node.id = node.id[1:]
            elif node.id not in scope:
                node.id = renamed.get(node.id, node.id)
        elif isinstance(node, ast.arg):
            node.arg = node.arg[1:] if _is_user(node.arg) else node.arg
        elif isinstance(node, ast.FunctionDef):
            node.name = node.name[1:] if _is_user(node.name) else renamed.get(node.name, node.name)


_BUILTINS = frozenset(dir(builtins))


def unmark(text: str) -> str:
    """Source text unparsed from a module :func:`finish` left marked (no collision): the user's names as written.

    >>> unmark("def " + user("f") + "():")
    'def f():'
    """
    return text.replace(_MARK, "")


def collides(user_names, always=(), helpers=(), generated_names=()) -> bool:
    """Whether a name the module generates (``always``, builtins, the helpers' globals,
    ``generated_names``) is also one of ``user_names``: then :func:`finish` must rename.

    >>> collides({"x", "w"}, ("np",)), collides({"x", "np"}, ("np",)), collides({"len"})
    (False, True, True)
    """
    candidates = set(always) | _BUILTINS | set(generated_names)
    for text in helpers:
        candidates |= _helper_globals(text)
    return bool(candidates & set(user_names))


@functools.lru_cache(maxsize=None)
def helper_source(text: str) -> str:
    """A helper's source as ``ast.unparse`` writes it after a module's last definition."""
    return "\n" + ast.unparse(ast.parse(text))


def finish(module: ast.Module, always=(), helpers=(), user_names=None, generated_names=()) -> dict:
    """Rename colliding generated names and append ``helpers`` (source texts), in place.

    Returns ``{generated name: name used}`` for every name in ``always`` (the
    imports, which the caller writes as text) and every renamed one. A renamed
    builtin gets a module-level alias (``float_ = float``) before anything can shadow it.
    With ``user_names`` (every name the emitter marked) and ``generated_names`` (the module-level
    ones it made) nothing can collide in most modules: the tree is then left marked, without a
    walk (the caller passes the text through :func:`unmark`); else the user's names are unmarked here.
    """
    if user_names is not None and not collides(user_names, always, helpers, generated_names):
        for text in helpers:
            module.body += ast.parse(text).body
        return {name: name for name in always}
    taken: set = set()
    generated: set = set(always)
    for text in helpers:
        generated |= _helper_globals(text)
    nodes = _nodes(module.body)
    for node, _ in nodes:
        name = node.id if isinstance(node, ast.Name) else node.arg if isinstance(node, ast.arg) else \
            node.name if isinstance(node, ast.FunctionDef) else None
        if name is not None:
            (taken if _is_user(name) else generated).add(name[1:] if _is_user(name) else name)
    every = taken | generated
    renamed = {}
    for name in sorted(generated & taken):
        fresh = name + "_"
        while fresh in every or keyword.iskeyword(fresh):
            fresh += "_"
        every.add(fresh)
        renamed[name] = fresh
    _rename(nodes, renamed)
    for text in helpers:
        defs = ast.parse(text).body
        if renamed.keys() & _helper_globals(text):  # rare: only then are the helpers walked
            _rename(_nodes(defs, helper=True), renamed)
        module.body += defs
    defined = {n.id for s in module.body if isinstance(s, ast.Assign) for n in s.targets if isinstance(n, ast.Name)}
    defined |= {s.name for s in module.body if isinstance(s, ast.FunctionDef)}
    aliases = [ast.Assign([ast.Name(new, ast.Store())], ast.Name(old, ast.Load()), lineno=0)
               for old, new in renamed.items() if hasattr(builtins, old) and new not in defined]
    module.body[:0] = aliases
    return {**{name: name for name in always}, **renamed}


def import_line(module: str, alias: str) -> str:
    """``import math``, ``import numpy as np`` (``as np_`` when the user took ``np``).

    >>> import_line("numpy", "np_")
    'import numpy as np_'
    """
    return f"import {module}" if alias == module else f"import {module} as {alias}"


def import_math_functions(module: ast.Module, math_name: str = "math", users=()) -> list:
    """Call ``math`` functions by bare name (``sin(x)``, imported with ``from math import``).

    A global name is one dictionary lookup cheaper than ``math.sin``, which shows in
    all-scalar code. A function whose name is taken in the module (or by ``users``) keeps ``math.``.

    >>> m = ast.parse("def f(x):\\n    return math.sin(x) + math.cos(x)")
    >>> import_math_functions(m, users={"cos"}), ast.unparse(m).splitlines()[1]
    (['sin'], '    return sin(x) + math.cos(x)')
    """
    taken = set(users)
    calls = []
    for node in ast.walk(module):  # one walk: this runs on every all-scalar module
        if isinstance(node, ast.Name):
            taken.add(node.id)
        elif isinstance(node, ast.arg):
            taken.add(node.arg)
        elif isinstance(node, ast.FunctionDef):
            taken.add(node.name)
        elif _is_math_call(node, (), math_name):
            calls.append(node)
    taken = {name[1:] if _is_user(name) else name for name in taken}  # the user's names may still be marked
    names: set = set()
    for call in calls:
        if isinstance(call.func, ast.Attribute) and call.func.attr not in taken:  # a shared node comes twice
            names.add(call.func.attr)
            call.func = ast.Name(call.func.attr, ast.Load())
    return sorted(names)


def _is_math_call(node, taken, math_name) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == math_name
            and node.func.attr not in taken)
