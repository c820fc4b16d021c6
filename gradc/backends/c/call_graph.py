"""The call graph of a C unit: which helper bodies a graph calls, in what order they are emitted, their names
and statuses (no import of the emitter: ``control.loop_limits`` reads it, ``calls`` emits from it).

>>> body_names(["det", "det", "λ"])
['gradc_call_det', 'gradc_call2_det', 'gradc_call_h6bb5604c']
"""
from __future__ import annotations

import hashlib
import weakref
from dataclasses import replace

import numpy as np

from gradc.backends.c.names import SYMBOL_PREFIX, symbol
from gradc.errors import EmitError
from gradc.ir.graph import subgraphs

CALL_PREFIX = "gradc_call"


def call_body(eqn):
    """The sub-graph a ``call`` equation runs (its only graph param)."""
    body = eqn.params.get("body")
    if body is None:
        (body,) = subgraphs(eqn)
    return body


def call_name(eqn) -> str:
    """The helper's name (the equation's ``helper`` param, else its body's)."""
    return eqn.params.get("helper") or call_body(eqn).name


def calls_in(graph) -> list:
    """The call equations of ``graph`` and of its loop bodies and branches (not inside other calls' bodies),
    in program order (no recursion: sub-graphs nest as deep as the user's loops).

    >>> from gradc.ir.graph import Graph
    >>> calls_in(Graph("f", [], [], []))
    []
    """
    found, pending = [], [iter(graph.eqns)]
    while pending:
        eqn = next(pending[-1], None)
        if eqn is None:
            pending.pop()
            continue
        if eqn.op == "call":
            found.append(eqn)
            continue
        pending.extend(iter(sub.eqns) for sub in reversed(subgraphs(eqn)))
    return found


def callees(graph) -> list:
    """The distinct bodies ``graph`` calls (``calls_in``), in order of first call."""
    return [body for body, _ in _callees(graph)]


def _callees(graph) -> list:
    """``(body, helper's name)`` of each distinct body ``graph`` calls, in order of first call."""
    known = _remembered(_CALLEES, graph, None)
    if known is not None:
        return [(body(), helper) for body, helper in known]  # alive: graph holds them
    seen, out = set(), []
    for eqn in calls_in(graph):
        body = call_body(eqn)
        if id(body) not in seen:
            seen.add(id(body))
            out.append((body, call_name(eqn)))
    _remember(_CALLEES, graph, None, [(weakref.ref(body), helper) for body, helper in out])
    return out


# what was found of a graph, by id: each body is looked at once however many calls and callers it has (a
# recursion by shapes calls each body n times). Entries hold graphs weakly (a graph compiled once is not kept
# alive) and are checked by identity (an id may be reused once its graph is gone).
_CALLEES: dict = {}
_LIMITS: dict = {}
_MEMO_SIZE = 4096


def _remembered(memo: dict, graph, key):
    entry = memo.get((id(graph), key))
    return entry[1] if entry is not None and entry[0]() is graph else None


def _remember(memo: dict, graph, key, value):
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[(id(graph), key)] = (weakref.ref(graph), value)
    return value


def ordered_bodies(graphs) -> list:
    """``(body, helper's name)`` of every body ``graphs`` reach through calls, each once: callees before their
    callers (depth first, in order of first call). A body reaching itself is refused (its work and statuses
    would have no bound)."""
    order, state = [], {}  # id(body) -> "open" (on the path) or "done"
    for top in graphs:
        stack = [(top, "", iter(_callees(top)))]
        while stack:
            node, helper, rest = stack[-1]
            child, child_helper = next(rest, (None, ""))
            if child is None:
                stack.pop()
                if node is not top:
                    state[id(node)] = "done"
                    order.append((node, helper))
                continue
            seen = state.get(id(child))
            if seen is None:
                state[id(child)] = "open"
                stack.append((child, child_helper, iter(_callees(child))))
            elif seen == "open":
                path = " -> ".join(h for _, h, _ in stack[1:]) + f" -> {child_helper}"
                raise EmitError(f"target c cannot emit the helper {child_helper} calling itself with the same "
                                f"argument types ({path})", where=child.origin or None,
                                hint="recursion whose depth depends on traced values: use target='numpy', or "
                                     "recurse on shapes (each level a new signature)")
    return order


def body_names(helpers) -> list:
    """C names of bodies of ``helpers`` (in order): ``gradc_call_NAME``, then ``gradc_call2_NAME``, ... for
    another body of the same helper (another signature, or a derivative)."""
    count: dict = {}
    return [next_name(helper, count) for helper in helpers]


def next_name(helper: str, count: dict) -> str:
    """The C name of a body of ``helper``, the next of that name (``count``: helper words -> bodies named so far)."""
    words = symbol(helper)[len(SYMBOL_PREFIX):]
    k = count[words] = count.get(words, 0) + 1
    return f"{CALL_PREFIX}{k if k > 1 else ''}_{words}"


def call_limits(graph, max_trips, own, loop_limits) -> list:
    """``own`` (the limits of ``graph`` itself, ``control.loop_limits``) and then, for each distinct body it calls,
    that body's limits (``loop_limits(body, max_trips)``) renumbered after them, ``eqn_id`` the body's id (its
    calls find their range by it). A body's statuses run 1..m; its caller returns ``status + first - 1``."""
    found = list(own)
    bodies = callees(graph)
    if bodies:
        ordered_bodies([graph])  # a helper calling itself is refused before its statuses are counted
    for body in bodies:
        limits = _remembered(_LIMITS, body, max_trips)
        if limits is None:
            limits = _remember(_LIMITS, body, max_trips, loop_limits(body, max_trips))
        for lim in limits:
            found.append(replace(lim, eqn_id=id(body), code=len(found) + 1))
    return found


def fingerprint(body, callee_key) -> str | None:
    """A digest of what ``body`` computes, the same for bodies that differ only in names: input types, each
    equation's op, params, operands (by position of definition; a constant by its value) and result type,
    loop bodies and branches within it, and each helper it calls by ``callee_key(body)``. None when a param
    is of a kind it cannot read for sure (such a body is never taken for another).

    >>> from gradc.ir.graph import Eqn, Graph, Var
    >>> from gradc.ir.types import TensorType
    >>> def square(name):
    ...     x, y = Var(name, TensorType((), "f64")), Var(name + "2", TensorType((), "f64"))
    ...     return Graph(name, [x], [Eqn("mul", (x, x), {}, y)], [y])
    >>> fingerprint(square("a"), None) == fingerprint(square("b"), None)
    True
    """
    numbers: dict = {}
    parts: list = []
    try:
        _describe(body, callee_key, numbers, parts)
    except _Unreadable:
        return None
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class _Unreadable(Exception):
    """A param whose text would not say all it holds (an object printed with its address)."""


def _describe(graph, callee_key, numbers: dict, parts: list):
    """Append the lines of ``graph`` to ``parts`` (values numbered in ``numbers`` as they are defined)."""
    for v in graph.inputs:
        numbers[id(v)] = len(numbers)
    parts.append("in " + " ".join(str(v.type) for v in graph.inputs))
    for e in graph.eqns:
        params = []
        for key in sorted(e.params):
            value = e.params[key]
            if e.op == "call" and value is call_body(e):
                params.append(f"{key}=call:{callee_key(value)}")
            elif key == "helper" and e.op == "call":
                continue  # the callee's name: its body is what counts
            elif _graphs(value):
                for sub in _graphs(value):
                    parts.append(f"sub {key} {{")
                    _describe(sub, callee_key, numbers, parts)
                    parts.append("}")
                params.append(f"{key}=<{len(_graphs(value))} graphs>")
            else:
                params.append(f"{key}={_param_text(value)}")
        operands = [f"v{numbers[id(a)]}" if id(a) in numbers else _const_text(a) for a in e.inputs]
        numbers[id(e.out)] = len(numbers)
        parts.append(f"{e.op} {' '.join(operands)} {' '.join(params)} -> {e.out.type}")
    parts.append("out " + " ".join(f"v{numbers[id(o)]}" if id(o) in numbers else _const_text(o)
                                   for o in graph.outputs))


def _graphs(value) -> list:
    from gradc.ir.graph import Graph

    if isinstance(value, Graph):
        return [value]
    if isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
        return list(value)
    return []


def _const_text(atom) -> str:
    value = np.asarray(atom.value)
    return f"c{value.dtype.str}{value.shape}:{hashlib.sha256(value.tobytes()).hexdigest()[:16]}"


def _param_text(value) -> str:
    if isinstance(value, np.ndarray):
        return f"a{value.dtype.str}{value.shape}:{hashlib.sha256(value.tobytes()).hexdigest()}"
    if isinstance(value, (tuple, list)):
        return ("(" if isinstance(value, tuple) else "[") + ",".join(_param_text(v) for v in value) + ")"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_param_text(k)}:{_param_text(v)}" for k, v in sorted(value.items(), key=repr)) + "}"
    text = repr(value)
    if " at 0x" in text or "..." in text:
        raise _Unreadable(text)
    return f"{type(value).__name__}:{text}"


__all__ = ["CALL_PREFIX", "body_names", "call_body", "call_limits", "call_name", "callees", "calls_in",
           "fingerprint", "next_name", "ordered_bodies"]
