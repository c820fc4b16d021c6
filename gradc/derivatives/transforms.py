"""``jvp``, ``vjp`` and ``hvp``, each emitted as one NumPy function per signature.

Each traces the user's function once per signature (shapes, dtypes, static
values), builds the derivative graph with the transforms (``forward``,
``reverse``), optimises it, emits one NumPy function and caches it. Called on
traced values (inside a function gradc is tracing), they inline the derivative
graph instead, so they compose: ``grad`` of a ``jvp``, ``jvp`` of a ``vjp``, ...

Conventions are JAX's: ``jvp(f, primals, tangents) -> (out, out_dot)``,
``vjp(f, *primals) -> (out, vjp_fn)`` with ``vjp_fn(ct)`` a tuple (one entry per
primal), ``hvp(f, primals, tangents)`` the Hessian of scalar ``f`` times the tangents.

>>> import numpy as np
>>> out, out_dot = jvp(lambda x: np.sin(x) * x, (np.array([0.0, 1.0]),), (np.ones(2),))
>>> out_dot.round(6)
array([0.      , 1.381773])
"""
from __future__ import annotations

import weakref
from typing import Any, Callable

import numpy as np

from gradc.backends.numpy.emit import Function, emit_module
from gradc.backends.numpy.load import load_source
from gradc.errors import ArgumentError, user_facing
from gradc.ir.builder import Traced
from gradc.ir.interpret import evaluate
from gradc.passes import optimize
from gradc.trace import check_function, check_wrt, def_location, trace
from gradc.transforms import forward, reverse

_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # user function -> {key: Emitted}


class Emitted:
    """One derivative graph, optimised, emitted as a function and loaded; ``source`` is its module.

    ``graph`` keeps the un-emitted graph so that calls on traced values can inline it.
    """

    def __init__(self, graph, doc, returns, header):
        self.graph = optimize(graph)
        self.source = emit_module([Function(self.graph.name, self.graph, doc, returns=returns)], header)
        self.fn = load_source(self.source, self.graph.name)[self.graph.name]

    def __call__(self, *args):
        return self.fn(*args)


def signature_key(args) -> tuple | None:
    """A hashable key of the arguments' shapes, dtypes and static values; None when any is traced."""
    key = []
    for a in args:
        if isinstance(a, Traced):
            return None
        if isinstance(a, np.ndarray):
            key.append((a.shape, a.dtype))
        elif isinstance(a, (bool, int, str)) or a is None:
            key.append((type(a), a))
        else:
            key.append(type(a))
    return tuple(key)


def _cached(f, kind, args, build):
    """The Emitted for ``(f, kind, signature of args)``, built by ``build()`` on a miss."""
    key = signature_key(args)
    try:
        table = _CACHE.setdefault(f, {})
    except TypeError:  # not weak-referenceable (a builtin): no caching
        return build()
    entry = table.get((kind, key))
    if entry is None:
        entry = table[(kind, key)] = build()
    return entry


def _as_tuple(values, what):
    if not isinstance(values, (tuple, list)):
        raise ArgumentError(f"{what} must be a tuple (one entry per argument of the function)",
                            hint=f"write {what}=(x,) for a single argument")
    return tuple(values)


def _float_inputs(graph):
    """Names of the float tensor inputs: the ones a derivative is taken with respect to."""
    return [v.name for v in graph.inputs if v.type.is_float]


def _check_tangents(f, graph, primals, tangents, names=None):
    """The tangents of the inputs ``names`` (default: every float tensor input), each checked against its primal."""
    if len(tangents) != len(primals):
        raise ArgumentError(f"got {len(primals)} primals and {len(tangents)} tangents",
                            where=def_location(f), hint="give one tangent per primal")
    inputs = {v.name: v for v in graph.inputs}
    names = _float_inputs(graph) if names is None else names
    chosen = []
    for name, tangent in zip(graph.params, tangents):
        v = inputs.get(name)
        if v is None or name not in names:
            continue
        if tangent is None:
            raise ArgumentError(f"the tangent of {name!r} is None", where=def_location(f),
                                hint="give an array shaped like the primal")
        shape = tuple(np.shape(tangent)) if not isinstance(tangent, Traced) else tangent.aval.shape
        if shape != v.type.shape:
            raise ArgumentError(f"the tangent of {name!r} has shape {shape}, its primal {v.type.shape}",
                                where=def_location(f), hint="a tangent has its primal's shape and dtype")
        if not isinstance(tangent, Traced):
            tangent = np.asarray(tangent, dtype=v.type.np_dtype)
            if v.type.shape == () and v.type.dtype == "f64":
                tangent = float(tangent)
        chosen.append(tangent)
    return chosen


def _tangent_plan(graph, names=None):
    """``(position, shape, dtype)`` of each tangent the emitted function takes, for the per-call fast path."""
    inputs = {v.name: v for v in graph.inputs}
    names = _float_inputs(graph) if names is None else names
    return [(k, inputs[p].type.shape, inputs[p].type.np_dtype) for k, p in enumerate(graph.params) if p in names]


def _tangents_fast(entry, f, primals, tangents, names=None):
    """The tangents in the emitted function's order: a direct pass when each is an array of the right type."""
    if len(tangents) == len(primals):
        chosen = []
        for k, shape, dtype in entry.plan:
            t = tangents[k]
            if type(t) is not np.ndarray or t.shape != shape or t.dtype != dtype:
                break
            chosen.append(t)
        else:
            return chosen
    return _check_tangents(f, entry.primal_graph, primals, tangents, names)


def argnum_names(f, graph, argnums):
    """The names of the float inputs ``argnums`` (an int or a tuple) picks, in its order, and whether it was a tuple."""
    as_tuple = isinstance(argnums, (tuple, list))
    names = []
    for a in (argnums if as_tuple else (argnums,)):
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)) or not 0 <= a < len(graph.params):
            raise ArgumentError(f"argnums={a!r} is not a parameter position of {graph.name}", where=def_location(f),
                                hint=f"use 0 to {len(graph.params) - 1}")
        if graph.params[a] not in _float_inputs(graph):
            raise ArgumentError(f"cannot differentiate with respect to {graph.params[a]!r}: it is not a float array",
                                where=def_location(f), hint="pass it as a float array")
        names.append(graph.params[a])
    return names, as_tuple


def _selected(f, graph, argnums):
    """The float inputs ``argnums`` picks (None: all of them), in parameter order, and whether to return a tuple."""
    if argnums is None:
        names = _float_inputs(graph)
        return names, len(names) > 1
    names, as_tuple = argnum_names(f, graph, argnums)
    return [p for p in graph.params if p in names], as_tuple


def outputs_then_derivatives(graph):
    """``returns`` for outputs followed by their derivatives: ``(0, 1)`` or ``((0, 1), (2, 3))``."""
    n = len(graph.outputs) // 2
    if n == 1:
        return (0, 1)
    return (tuple(range(n)), tuple(range(n, 2 * n)))


def _header(graph, mode):
    return [f"Generated by gradc from {graph.origin} ({mode}). Do not edit."]


@user_facing
def jvp(f: Callable, primals: tuple, tangents: tuple) -> tuple:
    """``(f(*primals), J tangents)``: forward mode, one sweep computing the value and its tangent.

    >>> import numpy as np
    >>> jvp(lambda x, y: x * y, (2.0, 3.0), (1.0, 0.0))
    (6.0, 3.0)
    """
    f = check_function(f, "gradc.jvp")
    primals, tangents = _as_tuple(primals, "primals"), _as_tuple(tangents, "tangents")

    def build_graph():
        graph = trace(f, *primals)
        return graph, forward.jvp_graph(graph, _float_inputs(graph), name=f"{graph.name}_jvp")

    if signature_key(primals) is None or any(isinstance(t, Traced) for t in tangents):
        graph, jg = build_graph()
        outs = evaluate(jg, *tensor_args(graph, primals), *_check_tangents(f, graph, primals, tangents))
        n = len(outs) // 2
        return (outs[0], outs[1]) if n == 1 else (tuple(outs[:n]), tuple(outs[n:]))

    def build():
        graph, jg = build_graph()
        entry = Emitted(jg, f"Value of {graph.name} and its tangent (forward mode).", outputs_then_derivatives(jg),
                        _header(graph, "forward mode"))
        entry.primal_graph, entry.plan = graph, _tangent_plan(graph)
        return entry

    entry = _cached(f, "jvp", primals, build)
    return entry(*primals, *_tangents_fast(entry, f, primals, tangents))


def tensor_args(graph, args):
    """The arguments that are graph inputs (the static ones are not)."""
    return [a for a, p in zip(args, graph.params) if p not in graph.static]


@user_facing
def vjp(f: Callable, *primals: Any) -> tuple[Any, Callable]:
    """``(f(*primals), vjp_fn)``; ``vjp_fn(ct)`` is a tuple with ``ct``'s pull-back onto each primal.

    ``ct`` has the output's structure (a tuple for a function returning a tuple).
    Entries for inputs that are not floats (static ints, int arrays) are None.

    >>> import numpy as np
    >>> out, pullback = vjp(lambda x: x ** 2, np.array([1.0, 3.0]))
    >>> pullback(np.array([1.0, 0.5]))
    (array([2., 3.]),)
    """
    f = check_function(f, "gradc.vjp")
    if not primals:
        raise ArgumentError("gradc.vjp needs the point to differentiate at: vjp(f, *primals)",
                            hint="pass f's arguments after f: gradc.vjp(f, x)")
    graph = trace(f, *primals)
    names = _float_inputs(graph)
    vg = reverse.vjp_graph(graph, names, name=f"{graph.name}_vjp")
    n_out = len(graph.outputs)
    if signature_key(primals) is None:
        run = lambda *args: evaluate(vg, *tensor_args(graph, primals), *args)  # noqa: E731
        outs = evaluate(graph, *tensor_args(graph, primals))
    else:
        def build():
            return Emitted(vg, f"Value of {graph.name} and the pull-back of the output cotangents.",
                           tuple(range(len(vg.outputs))), _header(graph, "reverse mode"))

        entry = _cached(f, "vjp", primals, build)
        run = lambda *args: entry(*primals, *args)  # noqa: E731
        outs = None
    tensor_params = [p for p in graph.params if p not in graph.static]
    positions = {p: k for k, p in enumerate(tensor_params)}

    @user_facing
    def pullback(ct):
        cts = _as_tuple(ct, "the cotangent") if n_out > 1 else (ct,)
        if len(cts) != n_out:
            raise ArgumentError(f"the cotangent has {len(cts)} parts, the output {n_out}",
                                hint="give one cotangent per output of the function")
        for k, (c, o) in enumerate(zip(cts, graph.outputs)):
            if not isinstance(c, Traced) and np.shape(c) != o.type.shape:
                part = f" {k}" if n_out > 1 else ""
                raise ArgumentError(f"the cotangent{part} has shape {np.shape(c)}, the output{part} of {graph.name} "
                                    f"{o.type.shape}", hint="a cotangent has its output's shape")
        results = run(*cts)
        grads = dict(zip(names, results[n_out:]))
        return tuple(grads.get(p) if p in positions else None for p in graph.params)

    if outs is None:
        zero_cts = [np.zeros(o.type.shape, o.type.np_dtype) if o.type.shape else o.type.np_dtype.type(0)
                    for o in graph.outputs]
        outs = run(*zero_cts)[:n_out]
    out = outs[0] if n_out == 1 else tuple(outs[:n_out])
    return out, pullback


@user_facing
def hvp(f: Callable, primals: tuple, tangents: tuple, argnums: int | tuple | None = None) -> Any:
    """The Hessian of scalar ``f`` at ``primals`` times ``tangents`` (forward over reverse), without forming it.

    ``tangents`` has one entry per primal (None for those ``argnums`` leaves out).
    ``argnums`` (an int or a tuple; default: every float argument) picks the
    arguments the Hessian is taken over; the result is one array per picked
    argument (an array for an int, a tuple for a tuple or for several picked).

    >>> import numpy as np
    >>> hvp(lambda x: np.sum(x ** 3), (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    array([ 6., 12.])
    >>> hvp(lambda w, X: np.sum((X @ w) ** 2), (np.ones(2), np.eye(2)), (np.array([1.0, 0.0]), None), argnums=0)
    array([2., 0.])
    """
    f = check_function(f, "gradc.hvp")
    if argnums is not None:
        check_wrt(f, argnums, "gradc.hvp", "argnums")  # hvp is user_facing: the error shows no gradc frame
    primals, tangents = _as_tuple(primals, "primals"), _as_tuple(tangents, "tangents")

    def build_graph():
        graph = trace(f, *primals)
        reverse.check_differentiable_output(graph, what="hvp", where=def_location(f))
        names, as_tuple = _selected(f, graph, argnums)
        return graph, forward.hvp_graph(graph, names), names, as_tuple

    if signature_key(primals) is None or any(isinstance(t, Traced) for t in tangents):
        graph, hg, names, as_tuple = build_graph()
        outs = evaluate(hg, *tensor_args(graph, primals), *_check_tangents(f, graph, primals, tangents, names))
        return tuple(outs) if as_tuple else outs[0]

    def build():
        graph, hg, names, as_tuple = build_graph()
        returns = tuple(range(len(hg.outputs))) if as_tuple else 0
        entry = Emitted(hg, f"Hessian of {graph.name} times the tangents (forward over reverse).", returns,
                        _header(graph, "forward over reverse mode"))
        entry.primal_graph, entry.names, entry.plan = graph, names, _tangent_plan(graph, names)
        return entry

    entry = _cached(f, ("hvp", hashable(argnums)), primals, build)
    return entry(*primals, *_tangents_fast(entry, f, primals, tangents, entry.names))


def hashable(argnums):
    return tuple(argnums) if isinstance(argnums, (list, tuple)) else argnums
