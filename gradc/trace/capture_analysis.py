"""What the capture transform needs to know about a function's AST: names bound, names read, liveness.

All of it is scope-aware: a nested ``def``, ``lambda``, class or comprehension binds
its own names (only a walrus inside a comprehension binds in the enclosing function),
while the names it reads count as reads of the enclosing function (an over-approximation,
which only ever makes a value look live when it is not).

>>> import ast
>>> tree = ast.parse("a = b + 1\\nfor i in range(a):\\n    c = c + i")
>>> stores(tree.body)
['a', 'i', 'c']
>>> sorted(block_live(tree.body, set()))
['b', 'c', 'range']
"""
from __future__ import annotations

import ast

SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef,
          ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
LOOPS = (ast.For, ast.While, ast.AsyncFor)


def walk_scope(node, *, into_loops: bool = True):
    """The nodes of ``node`` (a node or a list) in the same scope: nested defs, lambdas, classes and
    comprehensions are yielded but not entered; with ``into_loops=False`` neither are loops' bodies.

    >>> import ast
    >>> [type(n).__name__ for n in walk_scope(ast.parse("f = lambda: y").body)]
    ['Assign', 'Name', 'Store', 'Lambda']
    """
    stack = list(reversed(node)) if isinstance(node, list) else [node]
    while stack:
        n = stack.pop()
        yield n
        if isinstance(n, SCOPES) or (not into_loops and isinstance(n, LOOPS)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(n))))


def _comprehension_walrus(node):
    for n in ast.walk(node):
        if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            yield n.target.id


def stores(node) -> list:
    """Names bound in the enclosing scope by ``node`` (a node or a list), in order of appearance.

    >>> import ast
    >>> stores(ast.parse("x, (y, *z) = 1, (2, 3)\\ndef g(): w = 1\\nimport a.b as c").body)
    ['x', 'y', 'z', 'g', 'c']
    """
    out: dict = {}
    for n in walk_scope(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            out[n.id] = None
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[n.name] = None
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                out[(alias.asname or alias.name).split(".")[0]] = None
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out[n.name] = None
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            out[n.name] = None
        elif isinstance(n, ast.MatchMapping) and n.rest:
            out[n.rest] = None
        elif isinstance(n, _COMPREHENSIONS):
            for name in _comprehension_walrus(n):
                out[name] = None
    return list(out)


def loads(node) -> set:
    """Every name read in ``node`` (a node or a list), nested scopes included; an augmented assignment's
    target is read too.

    >>> import ast
    >>> sorted(loads(ast.parse("x += f(lambda: y)").body))
    ['f', 'x', 'y']
    """
    out = set()
    for n in (ast.walk(node) if not isinstance(node, list) else (m for s in node for m in ast.walk(s))):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.add(n.id)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            out.add(n.target.id)
    return out


def declared(fn_node) -> set:
    """Names declared ``global`` or ``nonlocal`` in the function itself.

    >>> import ast
    >>> sorted(declared(ast.parse("def f():\\n    global g\\n    def h():\\n        nonlocal k").body[0]))
    ['g']
    """
    out = set()
    for n in walk_scope(fn_node.body):
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            out.update(n.names)
    return out


def contains(node, kinds, *, into_loops: bool = True) -> bool:
    """Whether ``node`` (a node or a list) holds a node of ``kinds`` in its own scope.

    >>> import ast
    >>> body = ast.parse("for i in x:\\n    break").body
    >>> contains(body, ast.Break), contains(body, ast.Break, into_loops=False)
    (True, False)
    """
    return any(isinstance(n, kinds) for n in walk_scope(node, into_loops=into_loops))


def always_exits(block) -> bool:
    """Whether every path through ``block`` ends in ``return`` or ``raise``.

    >>> import ast
    >>> always_exits(ast.parse("if p:\\n    return 1\\nelse:\\n    raise E").body)
    True
    """
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return always_exits(last.body) and always_exits(last.orelse)
    return False


# ---------------------------------------------------------------- liveness (backward, on the structured AST)
def block_live(stmts, live_out: set, brk: set | None = None, cont: set | None = None) -> set:
    """Names live before ``stmts`` given those live after; ``brk``/``cont``: live after a ``break`` /
    before the next iteration, inside a loop.

    >>> import ast
    >>> sorted(block_live(ast.parse("t = a\\nb = t").body, {"b"}))
    ['a']
    """
    live = set(live_out)
    for s in reversed(stmts):
        live = stmt_live(s, live, brk, cont)
    return live


def loop_head_live(s, live_after: set) -> set:
    """Names live at the top of loop ``s`` (before its test or its next item), given those live after it.

    >>> import ast
    >>> sorted(loop_head_live(ast.parse("while k < n:\\n    t = k * 2\\n    k = t").body[0], set()))
    ['k', 'n']
    """
    after = block_live(s.orelse, live_after, None, None)
    head = set(after)
    if isinstance(s, ast.While):
        head |= loads(s.test)
    target = set(stores(s.target)) if not isinstance(s, ast.While) else set()
    for _ in range(20):  # a fixed point; each round can only grow the set
        body_in = block_live(s.body, head, live_after, head) - target
        new = head | body_in
        if new == head:
            break
        head = new
    return head


_LIVE_CACHE: dict = {}  # (id(statement), live after, brk, cont) -> (statement, live before); see clear_cache


def clear_cache() -> None:
    """Forget the liveness results of the statements analysed so far (call before analysing a new function)."""
    _LIVE_CACHE.clear()


def stmt_live(s, out: set, brk: set | None, cont: set | None) -> set:
    """Names live before statement ``s`` given those live after it (memoised: nested loops would otherwise
    repeat their fixed points once per enclosing round).

    >>> import ast
    >>> sorted(stmt_live(ast.parse("if p:\\n    y = x").body[0], {"y"}, None, None))
    ['p', 'x', 'y']
    """
    key = (id(s), frozenset(out), None if brk is None else frozenset(brk), None if cont is None else frozenset(cont))
    found = _LIVE_CACHE.get(key)
    if found is not None and found[0] is s:
        return set(found[1])
    live = _stmt_live(s, out, brk, cont)
    _LIVE_CACHE[key] = (s, frozenset(live))
    return live


def _stmt_live(s, out, brk, cont):
    if isinstance(s, ast.If):
        return loads(s.test) | block_live(s.body, out, brk, cont) | block_live(s.orelse, out, brk, cont)
    if isinstance(s, (ast.For, ast.AsyncFor)):
        return loop_head_live(s, out) | loads(s.iter)
    if isinstance(s, ast.While):
        return loop_head_live(s, out)
    if isinstance(s, ast.Return):
        return loads(s.value) if s.value is not None else set()
    if isinstance(s, ast.Raise):
        return loads(s)
    if isinstance(s, ast.Break):
        return set(brk if brk is not None else out)
    if isinstance(s, ast.Continue):
        return set(cont if cont is not None else out)
    if isinstance(s, (ast.Try, ast.With, ast.AsyncWith, ast.Match)) or \
            (hasattr(ast, "TryStar") and isinstance(s, ast.TryStar)):
        return set(out) | loads(s) | (set(brk or ()) | set(cont or ()))  # kills nothing: conservative
    return (set(out) - set(stores(s))) | loads(s)
