"""Common-subexpression elimination: one equation per distinct computation.

>>> import numpy as np
>>> from gradc.trace import trace
>>> print(cse(trace(lambda x: np.sin(x) + np.sin(x), np.ones(2))))
def lambda_(x: f64[2]) -> f64[2]:
  t0: f64[2] = sin x
  t2: f64[2] = add t0 t0
  return t2
"""
from __future__ import annotations

from gradc.ir.graph import Eqn, Graph, Var

COMMUTATIVE = {"add", "mul", "maximum", "minimum", "equal", "not_equal", "logical_and", "logical_or",
               "logaddexp"}


def _atom_key(atom):
    return ("v", id(atom)) if isinstance(atom, Var) else ("c",) + atom.key()


def _params_key(params):
    return tuple((k, _param_text(params[k])) for k in sorted(params))


def _param_text(value) -> str:
    """A param as text; a sub-graph by its printed form (two loops with the same body text are the same)."""
    if isinstance(value, Graph):
        return _graph_text(value)
    if isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
        return "|".join(map(_graph_text, value))
    return repr(value)


def _graph_text(graph: Graph) -> str:
    # printed once per graph object: passes never mutate a graph (they build new ones), and a helper's body,
    # shared by its calls at every level of a recursion, would otherwise be printed again at each level
    text = graph.__dict__.get("_cse_text")
    if text is None:
        text = graph.__dict__["_cse_text"] = str(graph) + _constants_digest(graph)
    return text


def _constants_digest(graph: Graph) -> str:
    """A digest of the array constants ``graph`` (and its sub-graphs) reads: the printed text shows an array
    constant as ``const(f64[3])`` only, so two bodies differing in one would otherwise print alike."""
    import hashlib

    from gradc.ir.atoms import Const
    from gradc.ir.graph import subgraphs
    digest = hashlib.sha256()
    pending, seen = [graph], set()
    while pending:
        g = pending.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        for e in g.eqns:
            for a in e.inputs:
                if isinstance(a, Const) and not a.is_scalar:
                    digest.update(repr(a.key()[0]).encode() + a.key()[1])
            pending.extend(subgraphs(e))
    return f"\n# constants {digest.hexdigest()[:16]}"


def cse(graph: Graph) -> Graph:
    """Replace each repeated equation by the first one that computes the same value."""
    subst: dict = {}
    seen: dict = {}
    eqns = []

    def read(atom):
        return subst.get(id(atom), atom) if isinstance(atom, Var) else atom

    for eqn in graph.eqns:
        inputs = tuple(read(a) for a in eqn.inputs)
        keys = [_atom_key(a) for a in inputs]
        if eqn.op in COMMUTATIVE:
            keys.sort(key=repr)
        # a helper's body is shared by its calls: the same object is the same function (printing it is costly)
        params_key = _params_key({k: v for k, v in eqn.params.items() if k != "body"}) + (
            ("body", id(eqn.params["body"])),) if eqn.op == "call" else _params_key(eqn.params)
        key = (eqn.op, tuple(keys), params_key)
        if key in seen:
            subst[id(eqn.out)] = seen[key]
            continue
        seen[key] = eqn.out
        eqns.append(eqn if inputs == eqn.inputs else Eqn(eqn.op, inputs, eqn.params, eqn.out))
    return graph.replace(eqns=eqns, outputs=[read(o) for o in graph.outputs])


