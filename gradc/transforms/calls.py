"""Derivative and batching rules of ``call`` (``gradc.ops.call``): each transforms the helper's body once.

* **Reverse mode, split.** The adjoint of ``outs = call(*args, body=f)`` reads the values it needs
  from the helper's forward: reverse mode calls ``f_forward`` (the body returning those residuals
  beside its results) where the program called ``f``, and ``args_bar = call(*args, *residuals,
  *outs_bar, body=f_adjoint)`` in the reverse sweep (``gradc.transforms.call_residuals``); a loop
  tapes the residuals of the calls in its body. So no helper's forward runs twice, at any depth of
  helpers calling helpers. Joint mode (the adjoint recomputing the forward inside, Tapenade's
  default for calls) remains where a residual is not an array, and with
  ``call_residuals.SPLIT = False`` (the tests compare the two).
* **Forward mode.** ``outs_dot = call(*args, *args_dot, body=f_jvp)``: the body's JVP graph
  cut to the tangents (it recomputes the primal values it needs).
* **Batching.** ``call(*args, body=f_vmap)``: the body batched over the batched arguments.

Each derived body is memoised per (body, which inputs): a helper called from many places,
or recursing, is differentiated once per signature. Memos live as long as the body.

>>> import numpy as np
>>> from gradc.ir.graph import Eqn, Graph, Var
>>> from gradc.ir.types import TensorType
>>> x = Var("x", TensorType((), "f64")); y = Var("t0", TensorType((), "f64"))
>>> body = Graph("square", [x], [Eqn("mul", (x, x), {}, y)], [y])
>>> adjoint_body(body, (True,)).name
'square_adjoint'
>>> adjoint_body(body, (True,)) is adjoint_body(body, (True,))
True
"""
from __future__ import annotations

import weakref

from gradc.ir.builder import Traced
from gradc.ir.graph import Graph, without_dead_code
from gradc.ops.control import SUBGRAPH_RULES
from gradc.transforms import call_residuals
from gradc.transforms.call_residuals import RESIDUALS
from gradc.transforms.inlining import zeros_of

_MEMO: dict = {}  # id(body) -> {(kind, flags): derived body}, dropped when the body is collected


def _memo(body: Graph) -> dict:
    found = _MEMO.get(id(body))
    if found is None:
        found = _MEMO[id(body)] = {}
        weakref.finalize(body, _MEMO.pop, id(body), None)
    return found


def adjoint_body(body: Graph, need: tuple) -> Graph:
    """``(*inputs, *output cotangents) -> cotangents of the inputs flagged in need`` (joint mode: the body's
    forward is recomputed inside)."""
    memo = _memo(body)
    key = ("vjp", need)
    if key not in memo:
        from gradc.transforms.reverse import vjp_graph
        wrt = [v.name for v, n in zip(body.inputs, need) if n]
        g = vjp_graph(body, wrt, name=f"{body.name}_adjoint")
        memo[key] = without_dead_code(g.replace(outputs=g.outputs[len(body.outputs):]))
    return memo[key]


def tangent_body(body: Graph, need: tuple) -> Graph:
    """``(*inputs, *tangents of the inputs flagged in need) -> tangents of the float outputs``."""
    memo = _memo(body)
    key = ("jvp", need)
    if key not in memo:
        from gradc.transforms.forward import jvp_graph
        wrt = [v.name for v, n in zip(body.inputs, need) if n]
        g = jvp_graph(body, wrt, name=f"{body.name}_jvp")
        dots = [d for d, o in zip(g.outputs[len(body.outputs):], body.outputs) if o.type.is_inexact]
        memo[key] = without_dead_code(g.replace(outputs=dots))
    return memo[key]


def batched_body(body: Graph, flags: tuple, n: int):
    """``(body batched over the inputs flagged, which outputs carry the batch axis)``."""
    memo = _memo(body)
    key = ("batch", flags, n)
    if key not in memo:
        from gradc.transforms.batching import batched_outputs, vmap_graph
        out_flags = batched_outputs(body, list(flags))
        g = vmap_graph(body, [0 if f else None for f in flags], n, name=f"{body.name}_vmap", out_batched=out_flags)
        memo[key] = (g, out_flags)
    return memo[key]


def _call(builder, inputs, body: Graph, **marks) -> list:
    from gradc.transforms.control import call
    return call(builder, "call", list(inputs), dict(dict(body=body, helper=body.name), **marks))


def call_vjp(ct, out, *inputs, needs, body, helper, **_):
    need = tuple(bool(n) and v.type.is_inexact for n, v in zip(needs, body.inputs))
    if not any(need):
        return (None,) * len(inputs)
    builder = out.builder
    n_out = len(body.outputs)
    cts = [c if c is not None else zeros_of(builder, t) for c, t in zip(ct[:n_out], out.atom.type.items)]
    given = RESIDUALS.get(id(out.atom))
    n_base = len(given[2].inputs) - len(inputs) - len(given[1]) if given is not None else 0
    if given is not None and given[0] is out.atom and given[3] == need and all(c is None for c in ct[n_base:]):
        # a split forward (``split_calls``): its adjoint reads the residual items taken out after it
        cts = [c if c is not None else zeros_of(builder, t) for c, t in zip(ct[:n_base], out.atom.type.items)]
        residuals = [Traced(builder, v) for v in given[1]]
        results = iter(_call(builder, list(inputs) + residuals + cts, given[2], adjoint=True))
        return tuple(next(results) if n else None for n in need)
    from gradc.transforms.reverse import vjp_graph
    split = call_residuals.split_bodies(body, need, vjp_graph) if call_residuals.SPLIT else None
    if split is None:
        results = iter(_call(builder, list(inputs) + cts, adjoint_body(body, need), adjoint=True))
    else:
        forward, adjoint, positions = split
        residuals = []
        if positions:  # the forward again, returning the residuals too: the passes merge it with the first
            values = _call(builder, list(inputs), forward, helper=f"{helper}_forward")
            residuals = [values[k] for k in positions]
        results = iter(_call(builder, list(inputs) + residuals + cts, adjoint, adjoint=True))
    return tuple(next(results) if n else None for n in need)


def call_jvp(tangents, out, *inputs, body, helper, **_):
    need = tuple(t is not None and v.type.is_inexact for t, v in zip(tangents, body.inputs))
    if not any(need):
        return None
    builder = out.builder
    dots = iter(_call(builder, list(inputs) + [t for t, n in zip(tangents, need) if n], tangent_body(body, need)))
    return [next(dots) if o.type.is_inexact else None for o in body.outputs]


def call_batch(*inputs, batched, body, helper, **_):
    n = next(x.aval.shape[0] for x, b in zip(inputs, batched) if b)
    new, out_flags = batched_body(body, tuple(bool(b) for b in batched), n)
    builder = next(x.builder for x in inputs if isinstance(x, Traced))
    return list(zip(_call(builder, inputs, new), out_flags))


SUBGRAPH_RULES.update({("call", "vjp"): call_vjp, ("call", "jvp"): call_jvp, ("call", "batch"): call_batch})
