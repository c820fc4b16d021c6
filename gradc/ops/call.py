"""The ``call`` op: a helper function kept as a function (a sub-graph called by name, like JAX's nested ``jit``).

``call`` applies the closed graph ``body`` (param) to its inputs: one input per body input, of
the same types (the helper's traced arguments, flattened, then the traced values its closure
reads). The result is the tuple of the body's outputs; ``element`` reads each of them, as for
``cond``. ``helper`` (param) is the helper's name, a Python identifier: emitters derive their
function names from it (``gradc.backends.numpy.names`` keeps them apart from user names).

Params layout (read by every emitter)::

    call(*args, body=<Graph>, helper=<str>)   -> (out_0, out_1, ...)   # TupleType of body.outputs

The body is traced once per (helper, signature) by ``gradc.trace.calls`` and shared by every
equation calling it with that signature: the same ``Graph`` object, so passes, transforms and
emitters memoise per body (``id(body)``) and do each body's work once. Its derivative rules
(installed into ``SUBGRAPH_RULES`` by ``gradc.transforms.calls``) call the body's derivative graph,
itself a ``call``, so an adjoint keeps the source's function structure.

>>> import numpy as np
>>> from gradc.ir.graph import Eqn, Graph, Var
>>> from gradc.ir.types import TensorType
>>> x = Var("x", TensorType((), "f64")); y = Var("t0", TensorType((), "f64"))
>>> body = Graph("square", [x], [Eqn("mul", (x, x), {}, y)], [y])
>>> OPS["call"].infer([TensorType((), "f64")], {"body": body, "helper": "square"})
(f64[],)
>>> float(OPS["call"].impl(np.float64(3.0), body=body, helper="square")[0])
9.0
"""
from __future__ import annotations

from gradc.ir.interpret import evaluate
from gradc.ir.registry import OPS, defop  # noqa: F401  (OPS: the doctest)
from gradc.ir.types import TupleType
from gradc.ops.control import _rule, _same


def _call_infer(types, params):
    body = params["body"]
    if not str(params.get("helper", "")).isidentifier():
        raise TypeError(f"call: the helper's name {params.get('helper')!r} is not an identifier")
    _same([v.type for v in body.inputs], types, f"call {params['helper']} inputs")
    return TupleType(tuple(o.type for o in body.outputs))


def _call_impl(*args, body, helper, **_):
    return tuple(evaluate(body, *args))


defop("call", infer=_call_infer, impl=_call_impl, vjp=_rule("call", "vjp"), jvp=_rule("call", "jvp"),
      batch=_rule("call", "batch"), c=("call",),  # C: a function of the emitted file (gradc.backends.c)
      doc="a helper function kept as a function; its adjoint calls the body's adjoint function, which reads "
          "the values the helper's forward returns beside its results (split mode: the forward runs once)")

CALL_OPS = frozenset({"call"})
