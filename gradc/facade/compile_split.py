"""A compiled VJP split in two: the forward (outputs and the values backward reads), then the backward.

``torch.compile`` of a function with a non-scalar output needs its backward later, when the
cotangent arrives. Running the emitted ``F_vjp`` then would compute the forward twice, so the
optimised VJP graph is cut where the cotangents enter: equations that do not depend on a
cotangent form the forward, which also returns the *residuals* (its values that the backward
equations read); the rest form the backward, a function of the residuals and the cotangents.
Both halves are emitted as NumPy by gradc's compiler (``gradc.api.compile`` of a function
that applies the half's equations through the registry: tracing it gives the same equations).

>>> import numpy as np, gradc
>>> unit = gradc.compile(lambda x: np.sin(x) * 2, np.ones(3), mode="vjp")
>>> fwd, bwd = split(unit.graphs["lambda__vjp"], n_inputs=1, n_outputs=1)
>>> out, *residuals = fwd(np.zeros(3))
>>> bwd(*residuals, np.ones(3))
array([2., 2., 2.])
"""
from __future__ import annotations

import inspect

import numpy as np

import gradc.api as gapi
from gradc.ir import registry
from gradc.ir.atoms import Var


def split(graph, n_inputs, n_outputs):
    """``(forward, backward)`` loaded functions for a VJP graph (inputs, then cotangents; outputs, then grads).

    ``forward(*inputs)`` returns the outputs then the residuals; ``backward(*residuals, *cotangents)``
    the gradients (one array, or a tuple of them).
    """
    bars = graph.inputs[n_inputs:]
    late = {id(v) for v in bars}
    fwd, bwd = [], []
    for eqn in graph.eqns:
        if any(isinstance(a, Var) and id(a) in late for a in eqn.inputs):
            late.add(id(eqn.out))
            bwd.append(eqn)
        else:
            fwd.append(eqn)
    grads = graph.outputs[n_outputs:]
    residuals, seen = [], set()
    for atom in [a for eqn in bwd for a in eqn.inputs] + list(grads):
        if isinstance(atom, Var) and id(atom) not in late and id(atom) not in seen:
            seen.add(id(atom))
            residuals.append(atom)
    name = graph.name[:-4] if graph.name.endswith("_vjp") else graph.name
    forward = _emit(f"{name}_forward", graph.inputs[:n_inputs], fwd, graph.outputs[:n_outputs] + residuals)
    backward = _emit(f"{name}_backward", residuals + bars, bwd, grads)
    return forward, backward


def _emit(name, inputs, eqns, outputs):
    """The loaded NumPy function computing ``outputs`` from ``inputs`` by ``eqns``."""
    swaps = _transposed_products(eqns, outputs)

    def run(*args):
        env = {id(v): a for v, a in zip(inputs, args)}
        for eqn in eqns:
            vals = [env[id(a)] if isinstance(a, Var) else a.value for a in eqn.inputs]
            swap = swaps.get(id(eqn))
            if swap is not None:  # (a @ b).T as b.T @ a.T: the same products, in C order (DCE drops a @ b)
                a, b = (env[id(v)] if id(v) in env else v.value for v in swap)
                env[id(eqn.out)] = registry.bind("matmul", _t(b), _t(a))
                continue
            env[id(eqn.out)] = registry.bind(eqn.op, *vals, **eqn.params)
        res = [env[id(a)] if isinstance(a, Var) else a.value for a in outputs]
        return tuple(res) if len(res) > 1 else res[0]
    names = [v.name for v in inputs]
    run.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                           for n in names])
    run.__name__ = run.__qualname__ = name
    examples = [np.zeros(v.type.shape, v.type.np_dtype) for v in inputs]
    floats = [n for n, v in zip(names, inputs) if v.type.np_dtype.kind == "f"]
    # any derivative mode emits the function itself; vjp needs only a float parameter to name
    return gapi.compile(run, *examples, wrt=floats[0], mode="vjp").forward


def _transposed_products(eqns, outputs):
    """``{id(eqn): (a, b)}`` for each ``transpose(matmul(a, b))`` of matrices whose product has no other use.

    Reverse mode writes a weight's gradient as ``(x.T @ ct).T``, a transposed (Fortran-order)
    array that every later step (accumulating ``.grad``, the optimiser) copies slowly;
    ``ct.T @ x`` computes the same sums straight into C order.
    """
    producer, uses = {}, {}
    for eqn in eqns:
        producer[id(eqn.out)] = eqn
        for a in eqn.inputs:
            uses[id(a)] = uses.get(id(a), 0) + 1
    for a in outputs:
        uses[id(a)] = uses.get(id(a), 0) + 1
    swaps = {}
    for eqn in eqns:
        if eqn.op != "transpose" or tuple(eqn.params.get("perm", ())) != (1, 0):
            continue
        src = eqn.inputs[0]
        prod = producer.get(id(src))
        if prod is None or prod.op != "matmul" or uses.get(id(src)) != 1 or len(src.type.shape) != 2:
            continue
        if all(isinstance(v, Var) and len(v.type.shape) == 2 for v in prod.inputs):
            swaps[id(eqn)] = tuple(prod.inputs)
    return swaps


def _t(x):
    return registry.bind("transpose", x, perm=(1, 0))
