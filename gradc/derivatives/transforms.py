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
from gradc.trace import check_function, def_location, trace
from gradc.trace.selection import ALL, float_inputs, select_arguments
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


def chosen_inputs(f, graph, selection):
    """The float inputs ``selection`` chooses (None: every one), checked against ``graph`` with errors at
    ``f``'s def, in the order asked."""
    return float_inputs(selection, graph, def_location(f))


def _in_parameter_order(graph, names):
    """``names`` in ``graph``'s parameter order (the order the tangents of jvp and hvp are taken in)."""
    return [p for p in graph.params if p in names]


def outputs_then_derivatives(graph):
    """``returns`` for outputs followed by their derivatives: ``(0, 1)`` or ``((0, 1), (2, 3))``."""
    n = len(graph.outputs) // 2
    if n == 1:
        return (0, 1)
    return (tuple(range(n)), tuple(range(n, 2 * n)))


def _header(graph, mode):
    return [f"Generated by gradc from {graph.origin} ({mode}). Do not edit."]


@user_facing
def jvp(f: Callable, primals: tuple, tangents: tuple, *, argnums: int | tuple | None = None,
        wrt: Any = None) -> tuple:
    """``(f(*primals), J tangents)``: forward mode, one sweep computing the value and its tangent.

    ``tangents`` has one entry per primal. ``argnums`` or ``wrt`` (``gradc.trace.selection``; default:
    every float argument, as JAX's ``jvp``) restrict the sweep to the arguments chosen: the others are
    held fixed and their tangents may be None.

    >>> import numpy as np
    >>> jvp(lambda x, y: x * y, (2.0, 3.0), (1.0, 0.0))
    (6.0, 3.0)
    >>> jvp(lambda x, y: x * y, (2.0, 3.0), (None, 1.0), argnums=1)
    (6.0, 2.0)
    """
    f = check_function(f, "gradc.jvp")
    selection = select_arguments(f, argnums, wrt, what="gradc.jvp", default=ALL)
    primals, tangents = _as_tuple(primals, "primals"), _as_tuple(tangents, "tangents")

    def build_graph():
        graph = trace(f, *primals)
        names = _in_parameter_order(graph, chosen_inputs(f, graph, selection))
        return graph, forward.jvp_graph(graph, names, name=f"{graph.name}_jvp"), names

    if signature_key(primals) is None or any(isinstance(t, Traced) for t in tangents):
        graph, jg, names = build_graph()
        outs = evaluate(jg, *tensor_args(graph, primals), *_check_tangents(f, graph, primals, tangents, names))
        n = len(outs) // 2
        return (outs[0], outs[1]) if n == 1 else (tuple(outs[:n]), tuple(outs[n:]))

    def build():
        graph, jg, names = build_graph()
        entry = Emitted(jg, f"Value of {graph.name} and its tangent (forward mode).", outputs_then_derivatives(jg),
                        _header(graph, "forward mode"))
        entry.primal_graph, entry.names, entry.plan = graph, names, _tangent_plan(graph, names)
        return entry

    entry = _cached(f, ("jvp", selection), primals, build)
    return entry(*primals, *_tangents_fast(entry, f, primals, tangents, entry.names))


def tensor_args(graph, args):
    """The arguments that are graph inputs (the static ones are not)."""
    return [a for a, p in zip(args, graph.params) if p not in graph.static]


@user_facing
def vjp(f: Callable, *primals: Any, argnums: int | tuple | None = None, wrt: Any = None) -> tuple[Any, Callable]:
    """``(f(*primals), vjp_fn)``; ``vjp_fn(ct)`` is a tuple with ``ct``'s pull-back onto each primal.

    ``ct`` has the output's structure (a tuple for a function returning a tuple).
    Entries for inputs that are not floats (static ints, int arrays) are None. With ``argnums``
    or ``wrt`` (``gradc.trace.selection``), ``vjp_fn`` returns the pull-backs onto the arguments
    chosen only: bare for an int or a name, a tuple in the order asked for a tuple.

    >>> import numpy as np
    >>> out, pullback = vjp(lambda x: x ** 2, np.array([1.0, 3.0]))
    >>> pullback(np.array([1.0, 0.5]))
    (array([2., 3.]),)
    >>> vjp(lambda x, y: x * y, 2.0, 3.0, wrt="y")[1](1.0)
    2.0
    """
    f = check_function(f, "gradc.vjp")
    selection = select_arguments(f, argnums, wrt, what="gradc.vjp", default=ALL)
    if not primals:
        raise ArgumentError("gradc.vjp needs the point to differentiate at: vjp(f, *primals)",
                            hint="pass f's arguments after f: gradc.vjp(f, x)")
    graph = trace(f, *primals)
    names = chosen_inputs(f, graph, selection)
    vg = reverse.vjp_graph(graph, names, name=f"{graph.name}_vjp")
    n_out = len(graph.outputs)
    if signature_key(primals) is None:
        run = lambda *args: evaluate(vg, *tensor_args(graph, primals), *args)  # noqa: E731
        outs = evaluate(graph, *tensor_args(graph, primals))
    else:
        def build():
            return Emitted(vg, f"Value of {graph.name} and the pull-back of the output cotangents.",
                           tuple(range(len(vg.outputs))), _header(graph, "reverse mode"))

        entry = _cached(f, ("vjp", selection), primals, build)
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
        if selection is not None:
            return tuple(grads[p] for p in names) if selection.as_tuple else grads[names[0]]
        return tuple(grads.get(p) if p in positions else None for p in graph.params)

    if outs is None:
        zero_cts = [np.zeros(o.type.shape, o.type.np_dtype) if o.type.shape else o.type.np_dtype.type(0)
                    for o in graph.outputs]
        outs = run(*zero_cts)[:n_out]
    out = outs[0] if n_out == 1 else tuple(outs[:n_out])
    return out, pullback


@user_facing
def hvp(f: Callable, primals: tuple, tangents: tuple, argnums: int | tuple | None = None, *,
        wrt: Any = None) -> Any:
    """The Hessian of scalar ``f`` at ``primals`` times ``tangents`` (forward over reverse), without forming it.

    ``tangents`` has one entry per primal (None for those ``argnums`` leaves out).
    ``argnums`` or ``wrt`` (``gradc.trace.selection``; default: every float argument) choose the
    arguments the Hessian is taken over; the result is one array per chosen argument (an array
    for an int or a name, a tuple in the order asked for a tuple, a tuple for several floats
    chosen by the default).

    >>> import numpy as np
    >>> hvp(lambda x: np.sum(x ** 3), (np.array([1.0, 2.0]),), (np.array([1.0, 1.0]),))
    array([ 6., 12.])
    >>> hvp(lambda w, X: np.sum((X @ w) ** 2), (np.ones(2), np.eye(2)), (np.array([1.0, 0.0]), None), argnums=0)
    array([2., 0.])
    """
    f = check_function(f, "gradc.hvp")
    selection = select_arguments(f, argnums, wrt, what="gradc.hvp", default=ALL)
    primals, tangents = _as_tuple(primals, "primals"), _as_tuple(tangents, "tangents")

    def build_graph():
        graph = trace(f, *primals)
        reverse.check_differentiable_output(graph, what="hvp", where=def_location(f))
        asked = chosen_inputs(f, graph, selection)
        names = _in_parameter_order(graph, asked)  # the tangents' order
        as_tuple = len(names) > 1 if selection is None else selection.as_tuple
        order = tuple(names.index(name) for name in asked)  # the results' order: as asked
        return graph, forward.hvp_graph(graph, names), names, order if as_tuple else order[0]

    if signature_key(primals) is None or any(isinstance(t, Traced) for t in tangents):
        graph, hg, names, returns = build_graph()
        outs = evaluate(hg, *tensor_args(graph, primals), *_check_tangents(f, graph, primals, tangents, names))
        return tuple(outs[k] for k in returns) if isinstance(returns, tuple) else outs[returns]

    def build():
        graph, hg, names, returns = build_graph()
        entry = Emitted(hg, f"Hessian of {graph.name} times the tangents (forward over reverse).", returns,
                        _header(graph, "forward over reverse mode"))
        entry.primal_graph, entry.names, entry.plan = graph, names, _tangent_plan(graph, names)
        return entry

    entry = _cached(f, ("hvp", selection), primals, build)
    return entry(*primals, *_tangents_fast(entry, f, primals, tangents, entry.names))
