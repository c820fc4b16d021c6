"""Helper calls without the results nobody reads: each call's body returns only the items its caller takes.

A derivative often calls a helper for some of its results: a Hessian-vector product calls the forward's
tangent for the gradient's tangent alone, and the tangent of a distance matrix (a whole matrix product) is
computed, written and never read. Before emitting C, each ``call`` whose tuple only ``element`` equations read
gets a body returning just the items read (dead code removed from it, checks kept), and its ``element`` indices
renumbered. Calls taking the same items of one body share one pruned body (one C helper). Loop bodies,
branches and helpers' bodies are rewritten the same way, each once.

>>> import numpy as np
>>> from gradc.trace import trace
>>> prune_call_outputs(trace(lambda x: np.sin(x), np.ones(2))).eqns[0].op
'sin'
"""
from __future__ import annotations

from gradc.ir.graph import Eqn, Graph, Var, subgraphs
from gradc.ir.types import TupleType
from gradc.passes.dce import dce


def prune_call_outputs(graph: Graph, memo: dict | None = None) -> Graph:
    """``graph`` with every call (at any depth) returning only the items read from it (see the module)."""
    memo = {} if memo is None else memo
    return _rewritten(graph, None, memo)


def _rewritten(graph: Graph, kept: tuple | None, memo: dict) -> Graph:
    """``graph`` returning only its outputs at ``kept`` (all when None), its own calls and sub-graphs rewritten;
    the same object for the same ``(graph, kept)``, and ``graph`` itself when nothing changes."""
    key = (id(graph), kept)
    found = memo.get(key)
    if found is not None and found[0] is graph:
        return found[1]
    memo[key] = (graph, graph)  # a body reaching itself meets itself unchanged (the emitter refuses it, clearly)
    new = graph
    if kept is not None:
        new = dce(graph.replace(outputs=[graph.outputs[k] for k in kept]))
    new = _calls_pruned(new, memo)
    memo[key] = (graph, new)  # the graph kept alive with its result: its id cannot be reused meanwhile
    return new


def _items_read(graph: Graph) -> dict:
    """For each call's result read only by ``element`` equations of ``graph``: the sorted item indices read."""
    read: dict = {}
    others = {id(o) for o in graph.outputs if isinstance(o, Var)}
    for eqn in graph.eqns:
        for k, atom in enumerate(eqn.inputs):
            if eqn.op == "element" and k == 0:
                read.setdefault(id(atom), set()).add(eqn.params["index"])
            elif isinstance(atom, Var):
                others.add(id(atom))
    return {key: tuple(sorted(items)) for key, items in read.items() if key not in others}


def _calls_pruned(graph: Graph, memo: dict) -> Graph:
    read = _items_read(graph)
    eqns, renamed, changed = [], {}, False  # renamed: id(old call result) -> (new result, old index -> new)
    for eqn in graph.eqns:
        if eqn.op == "element" and id(eqn.inputs[0]) in renamed:
            result, position = renamed[id(eqn.inputs[0])]
            eqns.append(Eqn("element", (result,) + tuple(eqn.inputs[1:]),
                            dict(eqn.params, index=position[eqn.params["index"]]), eqn.out))
            changed = True
            continue
        new = _eqn_rewritten(eqn, read, renamed, memo)
        changed |= new is not eqn
        eqns.append(new)
    return graph.replace(eqns=eqns) if changed else graph


def _eqn_rewritten(eqn: Eqn, read: dict, renamed: dict, memo: dict) -> Eqn:
    if not subgraphs(eqn):
        return eqn
    kept = read.get(id(eqn.out)) if eqn.op == "call" and isinstance(eqn.out.type, TupleType) else None
    if kept is not None and (not kept or len(kept) == len(eqn.out.type.items)):
        kept = None  # every item read (or none: a call kept for its checks): the body as it is
    params = {}
    for key, value in eqn.params.items():
        if isinstance(value, Graph):
            value = _rewritten(value, kept if key == "body" else None, memo)
        elif isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
            value = tuple(_rewritten(v, None, memo) for v in value)
        params[key] = value
    out = eqn.out
    if kept is not None:
        out = Var(eqn.out.name, TupleType(tuple(eqn.out.type.items[k] for k in kept)))
        renamed[id(eqn.out)] = (out, {old: new for new, old in enumerate(kept)})
    if out is eqn.out and all(params[k] is eqn.params[k] for k in params):
        return eqn
    return Eqn(eqn.op, eqn.inputs, params, out)


__all__ = ["prune_call_outputs"]
