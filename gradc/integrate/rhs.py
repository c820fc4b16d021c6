"""An ODE's right-hand side as one closed sub-graph: the traced values it reads become explicit parameters.

The derivative of an ODE solve needs every traced value the user's ``f`` depends on as an input
of the solve, including those it reads from its closure (``lambda y, t: -k * y`` with ``k`` a
traced argument), or their gradient would be silently lost. So ``f`` is traced once, at the
state's and the time's types, into a graph whose inputs are ``(y, t, *parameters)``: the traced
leaves of ``args`` and then the enclosing values it read (a closure conversion). Each evaluation in
the integrator is a ``call`` of that graph, so the emitted code has the right-hand side as one
function, called by the forward solve and differentiated once for the adjoint.

>>> import numpy as np, gradc
>>> def f(k):
...     rhs = closed_rhs(lambda y, t: -k * y, np.ones(2), 0.0, ())  # k, read from the closure, is a parameter
...     return np.sum(rhs(0.0, np.ones(2), rhs.parameters))
>>> print(gradc.trace(f, 2.0))
def f(k: f64[]) -> f64[]:
  t0: f64[] = neg k
  t1: f64[2] = broadcast_to t0 shape=(2,)
  t3: (f64[2],) = call const(f64[2]) 0.0 t1 helper='rhs'
    def rhs(y: f64[2], t: f64[], t1_1: f64[2]) -> f64[2]:
      t2: f64[2] = mul t1_1 y
      return t2
  t4: f64[2] = element t3 index=0
  t5: f64[] = sum t4 axes=(0,) keepdims=False
  return t5
"""
from __future__ import annotations

import types

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.ir.builder import Builder, Traced
from gradc.ir.graph import Graph
from gradc.ir.types import TensorType
from gradc.trace import array_like_dispatch as array_likes
from gradc.trace.control_trace import _ACTIVE, _atom_in, _current, _record, _wrap, flatten
from gradc.trace.signature import function_name
from gradc.trace.tracer import Tracer


def _traced_leaves(*trees) -> list:
    return [leaf for tree in trees for leaf in flatten(tree)[0] if isinstance(leaf, Traced)]


def _closure_values(fn) -> list:
    """The values ``fn`` holds besides its globals: closure cells, defaults, a partial's or method's bindings."""
    found: list = []
    seen = set()
    pending = [fn]
    while pending:
        f = pending.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        if isinstance(f, types.MethodType):
            found.append(f.__self__)
            pending.append(f.__func__)
        elif hasattr(f, "func") and hasattr(f, "args"):  # functools.partial
            found.extend([*f.args, *(f.keywords or {}).values()])
            pending.append(f.func)
        elif isinstance(f, types.FunctionType):
            for cell in f.__closure__ or ():
                try:
                    value = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                found.append(value)
                if callable(value):
                    pending.append(value)
            found.extend(f.__defaults__ or ())
    return found


def as_state(value, like, what: str):
    """``f``'s result as a float64 value shaped like the state ``like`` (a list of entries is stacked)."""
    if isinstance(value, (list, tuple)):
        value = array_likes.build(list(value)) if array_likes.has_traced(value) else np.asarray(value)
    if not isinstance(value, Traced):
        value = np.asarray(value, dtype=np.float64)
    shape = tuple(value.shape)
    if shape != tuple(like.shape):
        if int(np.prod(shape, dtype=np.int64)) != int(np.prod(like.shape, dtype=np.int64)):
            raise TraceError(f"{what} returns shape {shape} for a state of shape {tuple(like.shape)}",
                             where=user_location(), hint="return the derivative of each state entry, shaped "
                                                         "like the state")
        value = value.reshape(like.shape)
    if not isinstance(value, Traced):
        return np.asarray(value, dtype=np.float64)
    return value.astype(np.float64) if value.dtype != np.float64 else value


class ClosedRhs:
    """``f(t, y, *args)`` as ``rhs(t, y, parameters)``; ``parameters`` are the traced values it depends on."""

    def __init__(self, graph: Graph | None, parameters: list, concrete=None):
        self.graph, self.parameters, self.concrete = graph, list(parameters), concrete

    def __call__(self, t, y, parameters):
        if self.graph is None:
            return self.concrete(t, y)
        values = [y, t, *parameters]
        builder = _current(*values)
        atoms = [_atom_in(builder, v, var.type) for v, var in zip(values, self.graph.inputs)]
        (out,) = _record(builder, "call", atoms, dict(body=self.graph, helper=self.graph.name), None)
        return out


def closed_rhs(user, y0, t0, args: tuple, what: str = "f") -> ClosedRhs:
    """Trace ``user(y, t, *args)`` once at the types of ``y0`` (float64) and a float64 time (see the module)."""
    candidates = _traced_leaves(y0, t0, args) + _traced_leaves(_closure_values(user))
    if not candidates:
        probe = user(np.asarray(y0, dtype=np.float64), float(np.asarray(t0)), *args)
        candidates = _traced_leaves(probe)
        if not candidates:  # nothing traced anywhere: the plain function
            return ClosedRhs(None, [], lambda t, y: as_state(user(y, t, *args), y, what))
    parent = _current(*candidates)
    sub = Builder(parent=parent)
    y_var = sub.input(sub.fresh_name("y"), TensorType(tuple(np.shape(y0)), "f64"))
    t_var = sub.input(sub.fresh_name("t"), TensorType((), "f64"))
    arg_leaves, rebuild = flatten(args)
    arg_vars, new_leaves = [], []
    for leaf in arg_leaves:
        if isinstance(leaf, Traced):
            var = sub.input(sub.fresh_name("p"), leaf.aval)
            arg_vars.append(var)
            new_leaves.append(_wrap(sub, var))
        else:
            new_leaves.append(leaf)
    y, t = _wrap(sub, y_var), _wrap(sub, t_var)
    _ACTIVE.append(sub)
    try:
        out = as_state(user(y, t, *rebuild(new_leaves)), y, what)
        if not isinstance(out, Traced):  # independent of the state and the parameters: a constant rate
            out = y * 0.0 + out
    finally:
        _ACTIVE.pop()
    sub.closed = True
    out_atom = _atom_in(sub, out, TensorType(tuple(np.shape(y0)), "f64"))
    name = sub.root.fresh_name(function_name(user) if function_name(user) != "lambda_" else "rhs")
    graph = Graph(name, [y_var, t_var, *arg_vars, *sub.capture_inputs], list(sub.eqns), [out_atom])
    closure = [Tracer(parent, atom) for atom in sub.captured]
    parameters = [leaf for leaf in arg_leaves if isinstance(leaf, Traced)] + closure
    return ClosedRhs(graph, parameters)
