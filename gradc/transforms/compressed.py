"""Compressed Jacobians: ``J @ S`` (forward sweeps, one per seed column) or ``W @ J`` (reverse sweeps, one per
seed row) as one graph, batched over the seeds (``vmap`` of ``jvp`` / ``vjp``), the seed matrix an input.

``compressed_graph(graph, wrt, n_colours, "fwd")`` takes ``graph``'s inputs and a seed matrix ``seed`` of
shape ``(n_colours, n)`` (``n`` the wrt entries, flattened and concatenated; row ``c`` is colour ``c``'s
indicator) and returns ``(n_colours, m)``: row ``c`` is ``J @ seed[c]`` over the outputs' entries,
flattened and concatenated. ``"rev"``: a seed of shape ``(n_colours, m)`` and a result ``(n_colours, n)``,
row ``c`` being ``seed[c] @ J``. The seed is an input, not a constant: the emitted module keeps it as data.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.ir.interpret import evaluate
>>> g = trace(lambda x: x ** 2, np.ones(3))
>>> evaluate(compressed_graph(g, ["x"], 1, "fwd"), np.arange(3.0), np.ones((1, 3)))[0]
array([[0., 2., 4.]])
"""
from __future__ import annotations

import inspect

import numpy as np

from gradc.ir.graph import Graph
from gradc.ir.interpret import evaluate
from gradc.trace import trace
from gradc.transforms import batching, forward, reverse


def seed_name(graph: Graph) -> str:
    """``seed``, or with underscores until no input of ``graph`` is so named."""
    taken = {v.name for v in graph.inputs}
    name = "seed"
    while name in taken:
        name += "_"
    return name


def compressed_graph(graph: Graph, wrt: list, n_colours: int, mode: str, name: str | None = None) -> Graph:
    """The compressed Jacobian of ``graph``'s outputs in ``wrt`` (see the module docstring)."""
    wrt_vars = [next(v for v in graph.inputs if v.name == w) for w in wrt]
    sizes_in = [int(v.type.size) for v in wrt_vars]
    sizes_out = [int(o.type.size) for o in graph.outputs]
    k_in, k_out = len(graph.inputs), len(graph.outputs)
    if mode == "fwd":
        swept = forward.jvp_graph(graph, list(wrt))
        seeded = [(v.type.shape, s) for v, s in zip(wrt_vars, sizes_in)]
        axes = [None] * k_in + [0] * len(wrt)
    else:
        swept = reverse.vjp_graph(graph, list(wrt))
        seeded = [(o.type.shape, s) for o, s in zip(graph.outputs, sizes_out)]
        axes = [None] * k_in + [0] * k_out
    batched = batching.vmap_graph(swept, axes, n_colours)

    def compressed(*values):
        *inputs, seed = values
        parts, start = [], 0
        for shape, size in seeded:
            parts.append(seed[:, start:start + size].reshape((n_colours,) + tuple(shape)))
            start += size
        outs = evaluate(batched, *inputs, *parts)[k_out:]
        flat = [o.reshape((n_colours, -1)) for o in outs]
        return flat[0] if len(flat) == 1 else np.concatenate(flat, axis=1)

    params = [inspect.Parameter(v.name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for v in graph.inputs]
    params.append(inspect.Parameter(seed_name(graph), inspect.Parameter.POSITIONAL_OR_KEYWORD))
    compressed.__signature__ = inspect.Signature(params)
    compressed.__name__ = name or f"{graph.name}_compressed"
    examples = [np.zeros(v.type.shape, v.type.np_dtype) for v in graph.inputs]
    width = sum(s for _, s in seeded)
    traced = trace(compressed, *examples, np.zeros((n_colours, width)))
    return traced.replace(origin=graph.origin)
