"""Tracing: run the user's NumPy function on tracers and record a Graph.

``tracer`` (the traced array and its operators), ``numpy_dispatch`` (which NumPy
function or ufunc becomes which op), ``signature`` (binding the user's parameters
and classifying arguments), and ``trace`` here. Plain NumPy code reaches gradc
through ``__array_ufunc__``, ``__array_function__`` and Python operators. Shapes,
dtypes and Python ints are static, so Python control flow on them simply runs;
branching on a traced value is a TraceError that points at the user's line.

May import: ``gradc.ir``, ``gradc.ops``, ``gradc.errors``.

>>> import numpy as np
>>> g = trace(lambda x: np.sin(x) * 2.0, np.ones(3))
>>> print(g)
def lambda_(x: f64[3]) -> f64[3]:
  t0: f64[3] = sin x
  t1: f64[3] = broadcast_to 2.0 shape=(3,)
  t2: f64[3] = mul t0 t1
  return t2
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.ir.builder import Builder
from gradc.ir.graph import Const
from gradc.trace.signature import (  # noqa: F401  (re-exported for the layers above)
    bind_arguments,
    classify_argument,
    def_location,
    function_name,
    function_origin,
)
from gradc.trace.tracer import Tracer


def trace(f, *args, **kwargs):
    """Trace ``f`` on example arguments (only their shapes, dtypes and static values matter).

    >>> import numpy as np
    >>> print(trace(lambda x, n: x[:n].sum(), np.ones(4), 2))
    def lambda_(x: f64[4], n=2) -> f64[]:
      t0: f64[2] = index x spec=(:2,)
      t1: f64[] = sum t0 axes=(0,) keepdims=False
      return t1
    """
    bound = bind_arguments(f, args, kwargs)
    builder = Builder(taken=bound)  # intermediates never take a parameter's name
    call_args, static = {}, {}
    for name, value in bound.items():
        kind, info = classify_argument(name, value)
        if kind == "tensor":
            call_args[name] = Tracer(builder, builder.input(name, info))
        else:
            static[name] = call_args[name] = info
    result = f(**call_args)
    outputs = [_output_atom(r, builder) for r in (result if isinstance(result, (tuple, list)) else (result,))]
    return builder.graph(function_name(f), outputs, params=list(bound), static=static, origin=function_origin(f))


def _output_atom(value, builder):
    if isinstance(value, Tracer):
        if value.builder is not builder:
            raise TraceError("the function returned a value traced elsewhere",
                             hint="return values computed from this function's own arguments")
        return value.atom
    try:
        return Const(np.asarray(value, dtype=np.float64) if isinstance(value, (int, float)) else np.asarray(value))
    except Exception:
        raise TraceError(f"the function returned a {type(value).__name__}, not an array",
                         hint="return a NumPy value (e.g. a scalar loss)",
                         where=user_location()) from None
