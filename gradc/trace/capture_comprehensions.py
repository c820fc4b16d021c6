"""List comprehensions kept as loops: ``[f(x[i]) for i in range(n)]`` or ``[f(row) for row in X]`` on traced
values is one ``scan`` whose stacked outputs are the list's items (``gradc.trace.capture_lists``), not ``n``
unrolled copies of ``f``'s body: the graph, the derivative and the emitted code grow with the body, not with ``n``.

The capture rewrites such a comprehension as ``rt.comprehension(lambda i: <item>, <iterable>, ...)``
with what the ``for`` statement ``for i in <iterable>: ys.append(<item>)`` would be given to decide
whether it runs as a loop (the values it reads, the containers it indexes; the iterable through the
same ``range_``/``enumerate_``/``zip_``/``reversed_`` helpers): on concrete values, or when the item
indexes a Python list (a traced counter cannot pick from one), or when the items cannot be stacked
(their shapes differ), it is Python's own comprehension. Kept as written: comprehensions with ``if``
clauses, several ``for`` clauses, a target other than a name or a flat tuple of names, an iterable other
than a name or a call of ``range``/``enumerate``/``zip``/``reversed`` (the builtins), an ``await``/``yield``
or a walrus in the item, and an item that subscripts a name that is not the function's own local (a
global or enclosing function's list or dict is not seen when the choice is made).

>>> import ast
>>> from gradc.trace.capture_convert import Converter
>>> conv = Converter("_gc_", "f.py", {"x", "n"}, set())
>>> node = ast.parse("[x[i] * 2 for i in range(n)]").body[0].value
>>> print(ast.unparse(comprehension_call(conv, node, node)))  # doctest: +NORMALIZE_WHITESPACE
_gc_rt.comprehension(lambda i: x[i] * 2, _gc_rt.range_(n, where='f.py:1'), _gc_rt.values(lambda: (x,), ('x',)),
    (), _gc_rt.values(lambda: (x,), ('x',)), 'f.py:1')
"""
from __future__ import annotations

import ast

from gradc.trace import capture_analysis as an
from gradc.trace.capture_nodes import arguments, indexed_names

_ITERABLES = ("range", "enumerate", "zip", "reversed")


def _names(target) -> list | None:
    """The names a comprehension's target binds (a name or a flat tuple of names), else None."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple) and target.elts and all(isinstance(e, ast.Name) for e in target.elts):
        names = [e.id for e in target.elts]
        return names if len(set(names)) == len(names) else None
    return None


def kept_as_loop(node) -> bool:
    """Whether ``node`` is a list comprehension the capture keeps as a loop (see the module's docstring).

    >>> kept_as_loop(ast.parse("[a for a in range(3)]").body[0].value)
    True
    >>> kept_as_loop(ast.parse("[a for a in range(3) if a]").body[0].value)
    False
    """
    if not isinstance(node, ast.ListComp) or len(node.generators) != 1:
        return False
    gen = node.generators[0]
    it = gen.iter
    iterable = isinstance(it, ast.Name) or isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and \
        it.func.id in _ITERABLES and not it.keywords and not any(isinstance(a, ast.Starred) for a in it.args)
    return iterable and not gen.ifs and not gen.is_async and _names(gen.target) is not None and \
        not any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(node.elt))


def comprehension_call(conv, original, rewritten):
    """``rewritten`` (the list comprehension ``original`` with its parts rewritten by the converter) as the run-time
    call that keeps it a loop on traced values, or None when it stays Python's comprehension."""
    if not kept_as_loop(original):
        return None
    gen = original.generators[0]
    it = gen.iter
    if isinstance(it, ast.Call) and it.func.id not in conv.builtins:  # the function's own `range`: not the builtin
        return None
    targets = _names(gen.target)
    # what the equivalent `for` statement reads and indexes decides, as for that statement, whether it is a loop
    loop = ast.For(target=gen.target, iter=it, body=[ast.Expr(value=original.elt)], orelse=[])
    reads = sorted((an.loads(loop.body) - set(targets)) & conv.locals)
    # (the capture's own helpers, `rt.call(helper, ...)` of the call sites, are not the user's containers)
    containers, tables = ({n for n in names - set(targets) if not n.startswith(conv.prefix)} for names in
                          indexed_names(loop))
    subscripted = {n.value.id for n in ast.walk(original.elt) if isinstance(n, ast.Subscript) and
                   isinstance(n.value, ast.Name)} - set(targets)
    if subscripted - conv.locals:  # a global's or an enclosing function's table: what it holds is not seen here
        return None
    containers &= conv.locals  # (`np.sin(...)`: a module's function, not a container's method)
    tables &= conv.locals
    if isinstance(gen.target, ast.Name):
        item = ast.Lambda(args=arguments(targets), body=rewritten.elt)
    else:  # lambda item: (lambda a, b: <item>)(*item)
        whole = conv.fresh("item")
        inner = ast.Lambda(args=arguments(targets), body=rewritten.elt)
        unpacked = ast.Call(func=inner, args=[ast.Starred(value=ast.Name(id=whole, ctx=ast.Load()), ctx=ast.Load())],
                            keywords=[])
        item = ast.Lambda(args=arguments([whole]), body=unpacked)
    iterable = conv._iterable(original.generators[0].iter)  # range_/enumerate_/zip_/reversed_, as a `for` gets
    call = conv.call("comprehension", item, iterable, conv.values(reads), conv.values(sorted(containers - tables)),
                     conv.values(sorted(tables)), conv.where(original))
    return ast.copy_location(call, original)
