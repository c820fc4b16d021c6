"""Indices at evenly stepping positions read and written as slices (views, not gathers).

A loop vectorised by ``gradc.passes.vectorise_loops`` indexes with its counters, ``np.arange(1, n)``
and arithmetic on them (``i - 1``). This computes that integer arithmetic on constants and writes a
single index array of evenly stepping non-negative positions as a slice: ``x[1:1000]`` instead of
``x[C1]``, ``acc[0:999] += v`` instead of a scatter.

>>> from gradc.ir.graph import Const
>>> _progression(np.arange(1, 10, 2))
('slice', 1, 10, 2)
"""
from __future__ import annotations

import numpy as np

from gradc.ir.graph import Const, Eqn, Graph, Var

_FULL = ("slice", None, None, None)

_INDEX_ARITHMETIC = ("add", "sub", "broadcast_to")


def _progression(values):
    """``("slice", start, stop, step)`` picking ``values`` (non-negative ints stepping evenly), or None."""
    flat = np.asarray(values).reshape(-1)
    if flat.ndim != 1 or flat.size == 0 or np.asarray(values).ndim != 1 or flat.min() < 0:
        return None
    first = int(flat[0])
    step = int(flat[1]) - first if flat.size > 1 else 1
    if step == 0 or not np.array_equal(flat, first + step * np.arange(flat.size)):
        return None
    last = first + step * (flat.size - 1)
    stop = last + 1 if step > 0 else (last - 1 if last >= 1 else None)
    return ("slice", first, stop, None if step == 1 else step)


def strided(graph: Graph) -> Graph:
    """Counter arithmetic computed (``positions - 1``), and an index at evenly stepping positions read and written
    as a slice (a view, not a gather): ``x[1:1000]``, ``acc[1:1000] += v``."""
    env: dict = {}
    eqns = []

    def read(atom):
        return env.get(id(atom), atom) if isinstance(atom, Var) else atom
    for eqn in graph.eqns:
        inputs = tuple(read(a) for a in eqn.inputs)
        integer = getattr(eqn.out.type, "dtype", "") in ("i64", "i32")
        if eqn.op in _INDEX_ARITHMETIC and integer and all(isinstance(a, Const) for a in inputs):
            values = [np.asarray(a.value) for a in inputs]
            if eqn.op == "broadcast_to":
                value = np.broadcast_to(values[0], eqn.params["shape"])
            else:
                value = values[0] + values[1] if eqn.op == "add" else values[0] - values[1]
            env[id(eqn.out)] = Const(np.array(value, dtype=eqn.out.type.np_dtype))
            continue
        eqns.append(_as_slice(eqn, inputs))
    return graph.replace(eqns=eqns, outputs=[read(o) for o in graph.outputs])


def _as_slice(eqn: Eqn, inputs: tuple) -> Eqn:
    first = {"gather": 1, "index_update": 2, "index_add": 2}.get(eqn.op)
    spec = eqn.params.get("spec", ())
    if (first is None or len(inputs) != first + 1 or not isinstance(inputs[first], Const) or not spec
            or tuple(spec[0]) != ("array", 0) or not all(tuple(item) == _FULL for item in spec[1:])):
        return eqn if inputs == eqn.inputs else Eqn(eqn.op, inputs, eqn.params, eqn.out)
    item = _progression(inputs[first].value)
    if item is None:
        return eqn if inputs == eqn.inputs else Eqn(eqn.op, inputs, eqn.params, eqn.out)
    params = dict(eqn.params, spec=(item,) + tuple(spec[1:]))
    if eqn.op == "gather":
        return Eqn("index", inputs[:1], params, eqn.out)
    if eqn.op == "index_add":
        params["unique"] = True
    return Eqn(eqn.op, inputs[:first], params, eqn.out)
