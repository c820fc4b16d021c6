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
from gradc.derivatives.closures import own_inputs, tracing
from gradc.derivatives.flat_function import flat_call
from gradc.derivatives.static_args import check_not_chosen, specialise_call, static_parameters
from gradc.errors import ArgumentError, user_facing
from gradc.ir.builder import Traced
from gradc.ir.interpret import evaluate
from gradc.passes import optimize
from gradc.trace import check_function, def_location
from gradc.trace.selection import ALL, Selection, float_inputs, select_arguments
from gradc.trace.signature import callable_signature
from gradc.trace.variadic import with_arguments
from gradc.transforms import forward, reverse
from gradc.tree_util import keystr, tree_map, treedef_is_leaf

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


def cached_plain(f, kind, args):
    """The Emitted already built for ``args`` when each is an array or a float (the per-call fast path), or None."""
    for a in args:
        if type(a) is not np.ndarray and type(a) is not float:
            return None
    try:
        table = _CACHE.get(f)
    except TypeError:
        return None
    return None if table is None else table.get((kind, signature_key(args)))


def _as_tuple(values, what):
    if not isinstance(values, (tuple, list)):
        raise ArgumentError(f"{what} must be a tuple (one entry per argument of the function)",
                            hint=f"write {what}=(x,) for a single argument")
    return tuple(values)


def _float_inputs(graph):
    """Names of the float tensor inputs: the ones a derivative is taken with respect to."""
    return [v.name for v in graph.inputs if v.type.is_inexact]


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
        names.append(graph.params[a])
    float_inputs(Selection(tuple(names), as_tuple), graph, def_location(f))  # each a float array, or a clear error
    return names, as_tuple


def _selected(f, graph, argnums, n_params=None):
    """The float inputs ``argnums`` picks (None: all of the function's own), in parameter order, and whether to
    return a tuple."""
    if argnums is None:
        names = own_inputs(graph, len(graph.params) if n_params is None else n_params)
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


def _tangent_leaves(plan, primals, tangents, what="tangent"):
    """The leaves of ``tangents``, each of which has its primal's structure (a clear error when not)."""
    if len(tangents) != len(primals):
        raise ArgumentError(f"got {len(primals)} primals and {len(tangents)} {what}s", where=def_location(plan.f),
                            hint=f"give one {what} per primal")
    out = []
    for k, (d, t) in enumerate(zip(plan.defs, tangents)):
        out.extend([t] if treedef_is_leaf(d) else d.flatten_up_to(t, f"the {what} of {plan.params[k]}"))
    for d in plan.defs[len(tangents):]:  # parameters left to their defaults: static, no tangent
        out.extend([None] * d.num_leaves)
    return out


def _split_jvp(outs, layout):
    """``(out, tangent_out[, aux])`` from the emitted ``(primal outputs, tangents of the output's leaves)``."""
    if layout.direct:
        return outs
    primal, dots = outs
    primal = [primal] if layout.n_flat == 1 else list(primal)
    dots = [dots] if layout.n_out == 1 else list(dots)
    out, dot = layout.out_def.unflatten(primal[:layout.n_out]), layout.out_def.unflatten(dots)
    return (out, dot, layout.aux(primal)) if layout.aux_def is not None else (out, dot)


def _jvp_returns(layout):
    n_flat, n_out = layout.n_flat, layout.n_out
    return (0 if n_flat == 1 else tuple(range(n_flat)), n_flat if n_out == 1 else tuple(range(n_flat, n_flat + n_out)))


@user_facing
@with_arguments(lambda primals, *rest, **options: (len(primals), ()))
def jvp(f: Callable, primals: tuple, tangents: tuple, has_aux: bool = False, *, argnums: int | tuple | None = None,
        wrt: Any = None, static_argnums: int | tuple | None = None,
        static_argnames: str | tuple | None = None) -> tuple:
    """``(f(*primals), J tangents)``: forward mode, one sweep computing the value and its tangent.

    ``tangents`` has one entry per primal. ``argnums`` or ``wrt`` (``gradc.trace.selection``; default:
    every float argument, as JAX's ``jvp``) restrict the sweep to the arguments chosen: the others are
    held fixed and their tangents may be None.

    Primals and tangents may be pytrees (each tangent with its primal's structure); the output
    and its tangent have the output's structure. With ``has_aux=True`` ``f`` returns
    ``(output, aux)`` and the result is ``(output, tangent, aux)``.

    >>> import numpy as np
    >>> jvp(lambda x, y: x * y, (2.0, 3.0), (1.0, 0.0))
    (6.0, 3.0)
    >>> jvp(lambda x, y: x * y, (2.0, 3.0), (None, 1.0), argnums=1)
    (6.0, 2.0)
    >>> jvp(lambda p: {"s": p["a"] * p["b"]}, ({"a": 2.0, "b": 3.0},), ({"a": 1.0, "b": 0.0},))
    ({'s': 6.0}, {'s': 3.0})
    """
    f = check_function(f, "gradc.jvp")
    selection = select_arguments(f, argnums, wrt, what="gradc.jvp", default=ALL)
    primals, tangents = _as_tuple(primals, "primals"), _as_tuple(tangents, "tangents")
    f, primals, tangents, selection = _static_call(f, primals, tangents, selection, static_argnums, static_argnames,
                                                   "gradc.jvp")
    if selection is not None:  # the arguments not chosen are held fixed: a zero tangent each
        chosen = _positions(f, selection)
        tangents = tuple(t if k in chosen else _zero_tangent(p) for k, (p, t) in enumerate(zip(primals, tangents)))
    entry = None if has_aux else cached_plain(f, ("jvp", None), primals)
    if entry is not None and entry.layout.direct:
        return entry(*primals, *_tangents_fast(entry, f, primals, tangents, entry.names))
    plan, leaves = flat_call(f, primals, has_aux=has_aux)
    dots = _tangent_leaves(plan, primals, tangents)
    n_given = given_leaves(plan, primals)  # a parameter left to its default is held fixed (no tangent)

    def build_graph(inline=False):
        graph, _, layout = plan.trace(leaves, inline=inline)
        jg = forward.jvp_graph(graph, own_inputs(graph, n_given), name=f"{graph.name}_jvp")
        n = len(graph.outputs)  # the tangents of the output's leaves only (not the aux's)
        return graph, jg.replace(outputs=jg.outputs[:n] + jg.outputs[n:n + layout.n_out]), layout

    if signature_key(leaves) is None or any(isinstance(t, Traced) for t in dots) or tracing():
        graph, jg, layout = build_graph(inline=True)
        own = own_inputs(graph, n_given)
        outs = evaluate(jg, *tensor_args(graph, leaves), *layout.captured,
                        *_check_tangents(plan.f, graph, leaves, dots, own))
        n = layout.n_flat
        return _split_jvp((outs[0] if n == 1 else outs[:n], outs[n] if layout.n_out == 1 else outs[n:]), layout)

    def build():
        graph, jg, layout = build_graph()
        entry = Emitted(jg, f"Value of {graph.name} and its tangent (forward mode).", _jvp_returns(layout),
                        _header(graph, "forward mode"))
        entry.names = own_inputs(graph, n_given)
        entry.primal_graph, entry.plan, entry.layout = graph, _tangent_plan(graph, entry.names), layout
        return entry

    entry = _cached(plan.f, ("jvp", None if plan.plain else plan), leaves, build)
    return _split_jvp(entry(*leaves, *_tangents_fast(entry, plan.f, leaves, dots, entry.names)), entry.layout)


def _check_holomorphic(f, graph, layout):
    """``holomorphic=True``: the function's float inputs and its outputs are complex (JAX's rule)."""
    kinds = [v for v in graph.inputs if v.type.is_inexact] + list(graph.outputs[:layout.n_out])
    real = [v for v in kinds if not v.type.is_complex]
    if real:
        raise ArgumentError(f"holomorphic=True needs complex inputs and outputs; {real[0].type} found",
                            where=def_location(f), hint="drop holomorphic=True, or pass complex arrays")


def given_leaves(plan, primals) -> int:
    """How many leaves the primals given have (the parameters after them are left to their defaults)."""
    return plan.ranges[len(primals) - 1][1] if primals else 0


def tensor_args(graph, args):
    """The arguments that are graph inputs (the static ones are not)."""
    return [a for a, p in zip(args, graph.params) if p not in graph.static]


@user_facing
@with_arguments(lambda *primals, **options: (len(primals), ()))
def vjp(f: Callable, *primals: Any, has_aux: bool = False, argnums: int | tuple | None = None,
        wrt: Any = None, static_argnums: int | tuple | None = None,
        static_argnames: str | tuple | None = None, holomorphic: bool = False) -> tuple:
    """``(f(*primals), vjp_fn)``; ``vjp_fn(ct)`` is a tuple with ``ct``'s pull-back onto each primal.

    Complex values need no option here (JAX's convention: the pull-back is the transpose of the
    tangent map, ``ct * f'(z)`` for a holomorphic ``f``; ``docs/complex.md``); ``holomorphic=True``
    only checks that the differentiated inputs and the outputs are complex, as the other transforms do.

    ``ct`` has the output's structure (a tuple for a function returning a tuple, a dict for
    a dict, ...); each entry of the result has its primal's structure. Entries for leaves
    that are not floats (static ints, int arrays) are None. With ``argnums`` or ``wrt``
    (``gradc.trace.selection``), ``vjp_fn`` returns the pull-backs onto the arguments chosen
    only: bare for an int or a name, a tuple in the order asked for a tuple. With
    ``has_aux=True`` ``f`` returns ``(output, aux)`` and the result is ``(output, vjp_fn, aux)``.

    >>> import numpy as np
    >>> out, pullback = vjp(lambda x: x ** 2, np.array([1.0, 3.0]))
    >>> pullback(np.array([1.0, 0.5]))
    (array([2., 3.]),)
    >>> vjp(lambda x, y: x * y, 2.0, 3.0, wrt="y")[1](1.0)
    2.0
    >>> out, pullback = vjp(lambda p: p["w"] * 3.0, {"w": 2.0})
    >>> pullback(1.0)
    ({'w': 3.0},)
    """
    f = check_function(f, "gradc.vjp")
    selection = select_arguments(f, argnums, wrt, what="gradc.vjp", default=ALL)
    if not primals:
        raise ArgumentError("gradc.vjp needs the point to differentiate at: vjp(f, *primals)",
                            hint="pass f's arguments after f: gradc.vjp(f, x)")
    n_primals = len(primals)
    f, primals, _, selection_in_f, static_at = _static_call(f, primals, None, selection, static_argnums,
                                                            static_argnames, "gradc.vjp", positions=True)
    selection = selection_in_f
    positions = None if selection is None else _positions(f, selection)
    plan, leaves = flat_call(f, primals, has_aux=has_aux)
    inline = signature_key(leaves) is None or tracing()
    graph, _, layout = plan.trace(leaves, inline=inline)
    if holomorphic:
        _check_holomorphic(f, graph, layout)
    names = own_inputs(graph, len(leaves))
    n_out, n_flat = layout.n_out, layout.n_flat
    main = graph.replace(outputs=graph.outputs[:n_out])  # the aux is passed through, never differentiated
    vg = reverse.vjp_graph(main, names, name=f"{graph.name}_vjp")
    vg = vg.replace(outputs=vg.outputs + graph.outputs[n_out:])
    if inline:
        captured = layout.captured
        run = lambda *args: evaluate(vg, *tensor_args(graph, leaves), *captured, *args)  # noqa: E731
        outs = evaluate(graph, *tensor_args(graph, leaves), *captured)
    else:
        def build():
            return Emitted(vg, f"Value of {graph.name} and the pull-back of the output cotangents.",
                           tuple(range(len(vg.outputs))), _header(graph, "reverse mode"))

        entry = _cached(plan.f, ("vjp", None if plan.plain else plan), leaves, build)
        run = lambda *args: entry(*leaves, *args)  # noqa: E731
        outs = None
    n_grads = len(names)

    @user_facing
    def pullback(ct):
        if layout.out_def.node_type is tuple and isinstance(ct, (tuple, list)):
            if len(ct) != n_out and layout.out_def.num_nodes == n_out + 1:  # a tuple of arrays
                raise ArgumentError(f"the cotangent has {len(ct)} parts, the output {n_out}",
                                    hint="give one cotangent per output of the function")
            ct = tuple(ct)  # a list for a tuple, as before pytrees
        cts = layout.out_def.flatten_up_to(ct, "the cotangent")
        for k, (c, o) in enumerate(zip(cts, main.outputs)):
            if not isinstance(c, Traced) and np.shape(c) != o.type.shape:
                part = f" {keystr(layout.out_def.key_paths()[k])}" if n_out > 1 else ""
                raise ArgumentError(f"the cotangent{part} has shape {np.shape(c)}, the output{part} of {graph.name} "
                                    f"{o.type.shape}", hint="a cotangent has its output's shape")
        results = run(*cts)
        grads = dict(zip(names, results[n_out:n_out + n_grads]))
        every = plan.nest(grads, range(len(primals)), True)
        if static_at:  # a static argument's entry is None, as an int's is
            rest = iter(every)
            every = tuple(None if k in static_at else next(rest) for k in range(n_primals))
        if selection is None:
            return every
        return _picked(plan.f, every, positions, selection)

    if outs is None:
        zero_cts = [np.zeros(o.type.shape, o.type.np_dtype) if o.type.shape else o.type.np_dtype.type(0)
                    for o in main.outputs]
        results = run(*zero_cts)
        outs = list(results[:n_out]) + list(results[n_out + n_grads:])
    out = layout.out_def.unflatten(list(outs[:n_out]))
    if has_aux:
        return out, pullback, layout.aux(list(outs[:n_flat]))
    return out, pullback


@user_facing
@with_arguments(lambda primals, *rest, **options: (len(primals), ()))
def hvp(f: Callable, primals: tuple, tangents: tuple, argnums: int | tuple | None = None, *,
        wrt: Any = None, static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None) -> Any:
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
    f, primals, tangents, selection = _static_call(f, primals, tangents, selection, static_argnums, static_argnames,
                                                   "gradc.hvp")
    if selection is not None:  # positions, in the order asked (an int for a bare choice)
        argnums = _positions(f, selection)
        argnums = argnums if selection.as_tuple else argnums[0]
    plan, leaves = flat_call(f, primals)
    if plan.plain:
        return _hvp_leaves(plan, leaves, tangents, argnums, None, given_leaves(plan, primals))
    positions, as_tuple = (list(range(len(primals))), len(primals) > 1) if argnums is None else \
        plan.chosen(argnums, "argnums")
    dots = []
    for k, d in enumerate(plan.defs):
        t = tangents[k] if k < len(tangents) else None
        if k in positions:
            dots.extend([t] if treedef_is_leaf(d) else d.flatten_up_to(t, f"the tangent of {plan.params[k]}"))
        else:
            dots.extend([None] * d.num_leaves)  # not differentiated: its tangent is not read
    return _hvp_leaves(plan, leaves, dots, None, (positions, as_tuple))


def _hvp_leaves(plan, leaves, tangents, argnums, nesting, n_given=None):
    """hvp of the flat function: ``argnums`` as given (all leaves), or ``nesting = (positions, as_tuple)``."""
    captured: list = []  # the enclosing trace's values the function reads, when inlined
    n_given = len(leaves) if n_given is None else n_given

    def build_graph(inline=False):
        graph, _, layout = plan.trace(leaves, inline=inline)
        captured[:] = layout.captured
        reverse.check_differentiable_output(graph, what="hvp", where=def_location(plan.f))
        if nesting is None:
            names, as_tuple = _selected(plan.f, graph, argnums, n_given)
        else:
            names, as_tuple = plan.leaf_names_of(nesting[0], graph, skip_static=argnums is None), True
        return graph, forward.hvp_graph(graph, names), names, as_tuple

    def finish(outs, names, as_tuple):
        if nesting is not None:
            return plan.nest(dict(zip(names, outs)), *nesting)
        if as_tuple and isinstance(argnums, tuple):  # in the order asked, not the parameters' order
            by_name = dict(zip(names, outs))
            return tuple(by_name[plan.params[a]] for a in argnums)
        return tuple(outs) if as_tuple else outs[0]

    if signature_key(leaves) is None or any(isinstance(t, Traced) for t in tangents) or tracing():
        graph, hg, names, as_tuple = build_graph(inline=True)
        outs = evaluate(hg, *tensor_args(graph, leaves), *captured,
                        *_check_tangents(plan.f, graph, leaves[:n_given], tangents, names))
        return finish(outs, names, as_tuple)

    def build():
        graph, hg, names, as_tuple = build_graph()
        returns = tuple(range(len(hg.outputs))) if as_tuple else 0
        entry = Emitted(hg, f"Hessian of {graph.name} times the tangents (forward over reverse).", returns,
                        _header(graph, "forward over reverse mode"))
        entry.primal_graph, entry.names, entry.plan = graph, names, _tangent_plan(graph, names)
        entry.as_tuple = as_tuple
        return entry

    entry = _cached(plan.f, ("hvp", None if plan.plain else plan, hashable(argnums)), leaves, build)
    outs = entry(*leaves, *_tangents_fast(entry, plan.f, leaves[:n_given], tangents, entry.names))
    return finish(outs if entry.as_tuple else [outs], entry.names, entry.as_tuple)


def hashable(argnums):
    return tuple(argnums) if isinstance(argnums, (list, tuple)) else argnums


def _positions(f, selection) -> tuple:
    """The parameter positions ``selection`` chooses, in the order asked."""
    params = list(callable_signature(f).parameters)
    return tuple(params.index(name) for name in selection.names)


def _zero_tangent(primal):
    """A zero tangent shaped like ``primal`` (a pytree: zeros for its leaves): the argument is held fixed."""
    return tree_map(lambda leaf: np.zeros_like(leaf) if isinstance(leaf, (np.ndarray, np.generic, float)) else leaf,
                    primal)


def _picked(f, every, positions, selection):
    """The pull-backs onto the arguments chosen, from those onto every argument; a clear error for one that
    cannot be differentiated (a static int, an int array)."""
    picked = []
    for k, name in zip(positions, selection.names):
        if every[k] is None:
            raise ArgumentError(f"cannot differentiate with respect to {name!r}: it is not a float array",
                                where=def_location(f), hint="pass it as a float array, or choose another argument")
        picked.append(every[k])
    return tuple(picked) if selection.as_tuple else picked[0]


def _static_call(f, primals, tangents, selection, static_argnums, static_argnames, what, positions=False):
    """``f``, the primals and tangents, and the selection for a call with static arguments (declared, or opaque
    values such as functions): ``f`` specialised to them, their primals and tangents taken out, the selection
    by name (positions shift). With ``positions``, also the positions the static primals had."""
    declared = static_parameters(f, static_argnums, static_argnames, what)
    if selection is not None:
        check_not_chosen(f, selection.names, declared, what)
    g, rest, _, at = specialise_call(f, tuple(primals), {}, declared)
    if g is not f:
        if tangents is not None:
            tangents = tuple(t for k, t in enumerate(tangents) if k not in at)
        f, primals = g, rest
    return (f, primals, tangents, selection, at) if positions else (f, primals, tangents, selection)
