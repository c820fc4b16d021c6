"""Numerically stable forms of expressions users write naively (as Theano's ``stabilize`` pass did).

* ``log(1 / (1 + exp(u)))`` (the log-sigmoid of ``-u``) becomes ``-logaddexp(0, u)``;
* ``log(1 + exp(u))`` (softplus) becomes ``logaddexp(0, u)``.

The naive forms overflow for large ``u`` (``exp(800)`` is inf: the value is ``-inf`` or ``inf`` and
the gradient NaN); the rewritten ones are exact there, and their adjoints are ``logaddexp``'s closed
form (``ct * exp(u - out)``, a sigmoid) instead of the chain through the reciprocal. Run before
reverse mode (``gradc.derivatives.gradients``) so that the adjoint is built from the stable form, and
in the pass pipeline for the value. Other readers of the intermediate values keep them.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = stabilise(trace(lambda x: np.sum(np.log(1.0 / (1.0 + np.exp(-x)))), np.ones(3)))
>>> [e.op for e in g.eqns if e.op in ("log", "logaddexp")]
['logaddexp']
"""
from __future__ import annotations

import numpy as np

from gradc.ir.builder import next_index
from gradc.ir.graph import Const, Eqn, Graph, Var


def stabilise(graph: Graph, memo: dict | None = None) -> Graph:
    """``graph`` with the naive forms above rewritten, at any depth (a helper's body once however often called)."""
    memo = {} if memo is None else memo
    done = memo.get(id(graph))
    if done is not None:
        return done[1]
    producers = {id(e.out): e for e in graph.eqns}
    counter = [next_index(graph)]
    taken = {v.name for v in graph.inputs} | {e.out.name for e in graph.eqns} | set(graph.params)
    eqns, changed = [], False
    for eqn in graph.eqns:
        new = _with_new_subgraphs(eqn, memo)
        changed = changed or new is not eqn
        rewritten = _rewrite(new, producers, counter, taken) if new.op == "log" else None
        if rewritten is None:
            eqns.append(new)
        else:
            eqns += rewritten
            changed = True
    result = graph.replace(eqns=eqns) if changed else graph
    memo[id(graph)] = (graph, result)
    return result


def _with_new_subgraphs(eqn: Eqn, memo: dict) -> Eqn:
    params, changed = dict(eqn.params), False
    for key, value in eqn.params.items():
        if isinstance(value, Graph):
            params[key] = stabilise(value, memo)
            changed = changed or params[key] is not value
        elif isinstance(value, tuple) and value and all(isinstance(v, Graph) for v in value):
            params[key] = tuple(stabilise(v, memo) for v in value)
            changed = changed or any(a is not b for a, b in zip(params[key], value))
    return Eqn(eqn.op, eqn.inputs, params, eqn.out) if changed else eqn


def _scalar(atom, producers):
    """The value of a uniform constant (a scalar literal, or one broadcast), else None."""
    if isinstance(atom, Const):
        value = np.asarray(atom.value)
        if value.ndim == 0 or (value.size and np.all(value == value.reshape(-1)[0])):
            return value.reshape(-1)[0].item()
        return None
    eqn = producers.get(id(atom))
    if eqn is not None and eqn.op == "broadcast_to":
        return _scalar(eqn.inputs[0], producers)
    return None


def _one_plus_exp(atom, producers):
    """``u`` when ``atom`` is ``1 + exp(u)`` (either order), else None."""
    eqn = producers.get(id(atom))
    if eqn is None or eqn.op != "add":
        return None
    for k in (0, 1):
        if _scalar(eqn.inputs[k], producers) == 1:
            exp = producers.get(id(eqn.inputs[1 - k]))
            if exp is not None and exp.op == "exp" and exp.inputs[0].type.shape == eqn.out.type.shape:
                return exp.inputs[0]
    return None


def _rewrite(log: Eqn, producers, counter, taken):
    out = log.out
    if not getattr(out.type, "is_float", False) or getattr(out.type, "is_complex", False):
        return None
    arg = log.inputs[0]
    u = _one_plus_exp(arg, producers)
    negated = False
    if u is None:  # log(1 / (1 + exp(u))) = -softplus(u)
        div = producers.get(id(arg))
        if div is None or div.op != "div" or _scalar(div.inputs[0], producers) != 1:
            return None
        u = _one_plus_exp(div.inputs[1], producers)
        if u is None or div.out.type.shape != out.type.shape:
            return None
        negated = True
    if u.type != out.type:
        return None
    eqns = []
    zero = Const(np.zeros((), out.type.np_dtype))
    if out.type.shape != ():  # elementwise operands have one shape in the IR
        broadcast = Var(_fresh(counter, taken), out.type)
        eqns.append(Eqn("broadcast_to", (zero,), {"shape": out.type.shape}, broadcast))
        zero = broadcast
    softplus = Var(_fresh(counter, taken), out.type) if negated else out
    eqns.append(Eqn("logaddexp", (zero, u), {}, softplus))
    if negated:
        eqns.append(Eqn("neg", (softplus,), {}, out))
    return eqns


def _fresh(counter, taken) -> str:
    while f"t{counter[0]}" in taken:
        counter[0] += 1
    name = f"t{counter[0]}"
    taken.add(name)
    counter[0] += 1
    return name
