"""``flatten_calls``: a graph with every ``call`` equation replaced by its body (for targets that emit no functions).

A target that does not (yet) write helpers as functions of its own emits the flattened graph:
the same values, computed inline. Names of the inlined values are fresh in the whole graph
(loop bodies and branches included), so the result prints and emits like any traced graph.

>>> import numpy as np
>>> from gradc.ir.graph import Eqn, Graph, Var
>>> from gradc.ir.types import TensorType, TupleType
>>> x = Var("x", TensorType((), "f64")); y = Var("t0", TensorType((), "f64"))
>>> body = Graph("square", [x], [Eqn("mul", (x, x), {}, y)], [y])
>>> a = Var("a", TensorType((), "f64")); r = Var("t0", TupleType((TensorType((), "f64"),)))
>>> e = Var("t1", TensorType((), "f64"))
>>> g = Graph("f", [a], [Eqn("call", (a,), {"body": body, "helper": "square"}, r),
...                      Eqn("element", (r,), {"index": 0}, e)], [e])
>>> print(flatten_calls(g))
def f(a: f64[]) -> f64[]:
  t2: f64[] = mul a a
  return t2
"""
from __future__ import annotations

from gradc.ir.builder import Builder, Traced
from gradc.ir.graph import Eqn, Graph, Var, subgraphs
from gradc.transforms.inlining import inline


def has_calls(graph: Graph) -> bool:
    """Whether ``graph`` (or a loop body or branch in it) holds a ``call`` equation."""
    pending = [graph]
    while pending:
        g = pending.pop()
        for e in g.eqns:
            if e.op == "call":
                return True
            pending.extend(subgraphs(e))
    return False


def flatten_calls(graph: Graph) -> Graph:
    """``graph`` with its ``call`` equations inlined (recursively); ``graph`` itself when it has none."""
    if not has_calls(graph):
        return graph
    namer = Builder(taken=_names(graph))
    return _flatten(graph, namer, {})


def _names(graph: Graph) -> set:
    taken, pending = set(), [graph]
    while pending:
        g = pending.pop()
        taken.update(v.name for v in g.inputs)
        taken.update(g.params)
        for e in g.eqns:
            taken.add(e.out.name)
            if e.op != "call":
                pending.extend(subgraphs(e))
    return taken


def _flatten(graph: Graph, namer: Builder, memo: dict) -> Graph:
    builder = Builder(parent=namer)
    builder.inputs = list(graph.inputs)
    env: dict = {}

    def read(atom):
        found = env.get(id(atom))
        return found.atom if isinstance(found, Traced) else (atom if found is None else found)
    for eqn in graph.eqns:
        if eqn.op == "call":
            body = _flat_body(eqn.params["body"], memo)
            args = [Traced(builder, read(a)) for a in eqn.inputs]
            env[id(eqn.out)] = inline(body, *args) if args else _constant_call(body, builder)
            continue
        if eqn.op == "element" and isinstance(env.get(id(eqn.inputs[0])), list):
            env[id(eqn.out)] = env[id(eqn.inputs[0])][eqn.params["index"]]
            continue
        params = dict(eqn.params)
        for k, v in eqn.params.items():
            if isinstance(v, Graph):
                params[k] = _flatten(v, namer, memo)
            elif isinstance(v, tuple) and v and all(isinstance(g, Graph) for g in v):
                params[k] = tuple(_flatten(g, namer, memo) for g in v)
        builder.eqns.append(Eqn(eqn.op, tuple(read(a) for a in eqn.inputs), params, eqn.out))
    outputs = [read(o) for o in graph.outputs]
    return graph.replace(eqns=list(builder.eqns), outputs=outputs)


def _flat_body(body: Graph, memo: dict) -> Graph:
    """A call's body with its own calls inlined (once per body)."""
    found = memo.get(id(body))
    if found is None:
        found = memo[id(body)] = (flatten_calls(body), body)  # the body keeps its own names: inline renames
    return found[0]


def _constant_call(body: Graph, builder: Builder) -> list:
    """A helper of no traced inputs (its arguments all folded to constants): its equations recorded as they are."""
    env: dict = {}
    for e in body.eqns:
        out = Var(builder.fresh_name(), e.out.type)
        builder.eqns.append(Eqn(e.op, tuple(env.get(id(a), a) for a in e.inputs), dict(e.params), out))
        env[id(e.out)] = out
    return [Traced(builder, env.get(id(o), o)) for o in body.outputs]
