"""List comprehensions over a range, kept as loops: ``[f(x[i]) for i in range(n)]`` on traced values is one
``scan`` whose stacked outputs are the list's items (``gradc.trace.capture_lists``), not ``n`` unrolled copies
of ``f``'s body: the graph, the derivative and the emitted code grow with the body, not with ``n``.

The capture rewrites such a comprehension as ``rt.comprehension(lambda i: <item>, range(...), ...)``
with what the ``for`` statement ``for i in range(...): ys.append(<item>)`` would be given to decide
whether it runs as a loop (the values it reads, the containers it indexes): on concrete values, or
when the item indexes a Python list (a traced counter cannot pick from one), or when the items cannot
be stacked (their shapes differ), it is Python's own comprehension. Kept as written: comprehensions
with ``if`` clauses, several ``for`` clauses, a target that is not a plain name, an iterable other than
``range(...)`` (the builtin), an ``await``/``yield`` or a walrus in the item, and an item that indexes a name
that is not the function's own local (a global or enclosing function's list or dict is not seen when the
choice is made).

>>> import ast
>>> from gradc.trace.capture_convert import Converter
>>> conv = Converter("_gc_", "f.py", {"x", "n"}, set())
>>> node = ast.parse("[x[i] * 2 for i in range(n)]").body[0].value
>>> print(ast.unparse(comprehension_call(conv, node, node)))  # doctest: +NORMALIZE_WHITESPACE
_gc_rt.comprehension(lambda i: x[i] * 2, range(n), _gc_rt.values(lambda: (x,), ('x',)), (),
    _gc_rt.values(lambda: (x,), ('x',)), 'f.py:1')
"""
from __future__ import annotations

import ast

from gradc.trace import capture_analysis as an
from gradc.trace.capture_nodes import arguments, indexed_names


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
    return not gen.ifs and not gen.is_async and isinstance(gen.target, ast.Name) and \
        isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range" and \
        not it.keywords and 1 <= len(it.args) <= 3 and not any(isinstance(a, ast.Starred) for a in it.args) and \
        not any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await)) for n in ast.walk(node.elt))


def comprehension_call(conv, original, rewritten):
    """``rewritten`` (the list comprehension ``original`` with its parts rewritten by the converter) as the run-time
    call that keeps it a loop on traced values, or None when it stays Python's comprehension."""
    if not kept_as_loop(original) or "range" not in conv.builtins:
        return None
    gen = original.generators[0]
    target = gen.target.id
    # what the equivalent `for` statement reads and indexes decides, as for that statement, whether it is a loop
    loop = ast.For(target=gen.target, iter=gen.iter, body=[ast.Expr(value=original.elt)], orelse=[])
    reads = sorted((an.loads(loop.body) - {target}) & conv.locals)
    # (the capture's own helpers, `rt.call(helper, ...)` of the call sites, are not the user's containers)
    containers, tables = ({n for n in names - {target} if not n.startswith(conv.prefix)} for names in
                          indexed_names(loop))
    if containers - conv.locals:  # a global's or an enclosing function's container: what it holds is not seen here
        return None
    item = ast.Lambda(args=arguments([target]), body=rewritten.elt)
    call = conv.call("comprehension", item, rewritten.generators[0].iter, conv.values(reads),
                     conv.values(sorted(containers - tables)), conv.values(sorted(tables)), conv.where(original))
    return ast.copy_location(call, original)
