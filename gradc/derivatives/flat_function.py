"""The one flattening layer: a function of pytrees seen as a function of their leaves.

Every run-time transform goes through :func:`flat_function`: the arguments (bound to the
parameters, defaults filled in) are flattened one by one; a :class:`FlatFunction` per
structure (the arguments' ``PyTreeDef`` s and ``has_aux``) is a function of the leaves, named by
:func:`gradc.tree_util.path_name` (``params["w"]`` is the parameter ``params_w``; a parameter
that is a leaf keeps its name), which rebuilds the pytrees, calls the user's function and
returns its output's leaves. Tracing that function gives an ordinary graph, so the caches per
signature and the emitted code are those of plain arrays; the results are nested again here.

With ``has_aux=True`` the function returns ``(output, aux)``: the aux leaves computed from the
inputs (traced values) become extra outputs of the graph, never differentiated; the other aux
leaves (strings, Python numbers, arrays not computed from the inputs) are constants of the trace,
returned as the trace saw them (static, as in JAX): a value that would differ on a later call
with the same signature is not recomputed.

Leaves that are not floats: in an argument that is not differentiated they are static (an
int, a string, a bool: part of the signature, a new value re-traces). In an argument that is
differentiated, ``grad``, ``value_and_grad``, the Jacobians and the Hessian refuse them with an
error naming the leaf (``params['n']``; JAX would ask for ``allow_int`` and give float0 zeros);
``vjp`` gives None for them, and ``hvp`` with every argument (``argnums=None``) skips them (None).
``None`` is an empty subtree: no leaves, given back as None.

>>> import numpy as np
>>> flat = flat_function(lambda p, x: p["w"] * x, {"p": {"w": 2.0}, "x": 3.0})
>>> flat.leaf_names, flat.plain
(['p_w', 'x'], False)
"""
from __future__ import annotations

import inspect
import weakref

import numpy as np

from gradc.derivatives.closures import inlined
from gradc.derivatives.static_args import suggest_static, user_function
from gradc.errors import ArgumentError, StaticValueNeeded, TraceError
from gradc.ir.builder import Traced
from gradc.trace import _check_function_kind as check_function_kind  # generators and coroutines, at their def
from gradc.trace import bind_arguments, call_bound, def_location, function_name, function_origin, trace_bound
from gradc.trace.capture import capture
from gradc.trace.frozen import scan, warn_frozen
from gradc.trace.scipy_dispatch import rebind
from gradc.trace.signature import callable_signature
from gradc.trace.state import CapturedState
from gradc.tree_util import keystr, tree_flatten, tree_structure, treedef_is_leaf

_FLATS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # user function -> {structure: FlatFunction}


class FlatFunction:
    """``f`` as a function of its arguments' leaves, for one structure of the arguments.

    ``fn`` is that function (its parameters are ``leaf_names``); ``ranges[k]`` the leaves of
    parameter ``k``; after each trace, ``layout`` is how that trace's outputs nest (a
    :class:`Layout`: one signature's, kept with what was built from the trace).
    """

    def __init__(self, f, params: list, defs: tuple, has_aux: bool):
        try:  # weakly: the caches are weak on the user's function, and this is in them
            self._f = weakref.ref(f)
        except TypeError:  # not weak-referenceable: then this is not cached either
            self._f = lambda: f
        self.params, self.defs, self.has_aux = list(params), defs, has_aux
        self.plain = not has_aux and all(treedef_is_leaf(d) for d in defs)
        self.key = (defs, has_aux)  # with the user's function, names this structure in the caches
        self.leaf_names, self.ranges = _leaf_names(self.params, defs)
        self.layout: Layout | None = None
        self.fn = _make_flat(self, f)

    @property
    def f(self):
        """The user's function."""
        return self._f()

    # ---- arguments
    def leaves(self, args) -> list:
        """The leaves of ``args`` (in parameter order), the arguments of ``fn``."""
        out = []
        for a, d in zip(args, self.defs):
            if treedef_is_leaf(d):
                out.append(a)
            else:
                out.extend(d.flatten_up_to(a))
        return out

    def chosen(self, wrt, what: str) -> tuple:
        """``(positions, as_tuple)``: the parameters ``wrt`` (a position, a name or a tuple of them) picks."""
        as_tuple = isinstance(wrt, (tuple, list))
        positions = []
        for item in (wrt if as_tuple else (wrt,)):
            k = self.params.index(item) if isinstance(item, str) and item in self.params else item
            if not isinstance(k, int) or isinstance(k, bool) or not 0 <= k < len(self.params):
                raise ArgumentError(f"{what}: {item!r} is not a parameter of {function_name(self.f)}",
                                    where=def_location(self.f), hint=f"parameters are: {', '.join(self.params)}")
            if k in positions:
                raise ArgumentError(f"{what} names {self.params[k]!r} twice", where=def_location(self.f),
                                    hint="list each parameter once")
            positions.append(k)
        return positions, as_tuple

    def leaf_names_of(self, positions, graph, what: str = "differentiate", skip_static: bool = False) -> list:
        """The leaf names of the parameters at ``positions``; each must be a float leaf of ``graph`` (with
        ``skip_static``, the others are left out)."""
        inputs = {v.name: v for v in graph.inputs}
        names = []
        for k in positions:
            a, b = self.ranges[k]
            paths = self.defs[k].key_paths()
            for name, path in zip(self.leaf_names[a:b], paths):
                v = inputs.get(name)
                if (v is None or not v.type.is_inexact) and skip_static:
                    continue
                if v is None or not v.type.is_inexact:
                    kind = f"a static {type(graph.static.get(name)).__name__}" if v is None else \
                        f"of dtype {v.type.dtype}"
                    raise ArgumentError(f"cannot {what} with respect to {self.params[k]}{keystr(path)}: it is {kind}",
                                        where=def_location(self.f),
                                        hint="only float leaves are differentiated: pass it as a float array, or "
                                             "in an argument that is not differentiated")
                names.append(name)
        return names

    def nest(self, by_name: dict, positions, as_tuple: bool):
        """Values of leaves (by leaf name; None for a leaf not there) nested as the parameters at ``positions``."""
        out = []
        for k in positions:
            a, b = self.ranges[k]
            out.append(self.defs[k].unflatten([by_name.get(n) for n in self.leaf_names[a:b]]))
        return tuple(out) if as_tuple else out[0]

    def group(self, values, positions, as_tuple: bool):
        """Per-leaf ``values`` of the parameters at ``positions`` nested as those parameters are."""
        out, i = [], 0
        for k in positions:
            n = self.defs[k].num_leaves
            out.append(self.defs[k].unflatten(values[i:i + n]))
            i += n
        return tuple(out) if as_tuple else out[0]

    # ---- tracing
    def call_leaves(self, leaves):
        """What ``fn`` does when traced: rebuild the pytrees, call the user's function, flatten its result."""
        fn = self.f
        inner = capture(rebind(fn))  # SciPy names and if/for/while, as trace_bound does for the function
        values = {p: leaves[a] if treedef_is_leaf(d) else d.unflatten(leaves[a:b])
                  for p, d, (a, b) in zip(self.params, self.defs, self.ranges)}
        result = call_bound(inner, values)
        if self.has_aux:
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                got = f"a {type(result).__name__} of {len(result)}" if isinstance(result, (tuple, list)) else \
                    f"a {type(result).__name__}"
                raise TraceError(f"{function_name(fn)} must return a pair (output, aux) under has_aux=True; it "
                                 f"returned {got}", where=def_location(fn),
                                 hint="return `loss, aux` (aux: any pytree of extra results), or drop has_aux")
            result, aux = result
        if result is None:  # most likely a missing return: trace_bound says so at the def
            return None
        out_leaves, out_def = tree_flatten(result)
        extra, slots, aux_def = [], [], None
        if self.has_aux:
            aux_leaves, aux_def = tree_flatten(aux)
            for leaf in aux_leaves:
                if isinstance(leaf, Traced):
                    slots.append(("out", len(out_leaves) + len(extra)))
                    extra.append(leaf)
                else:
                    slots.append(("const", leaf))
        self.layout = Layout(out_def, len(out_leaves), aux_def, tuple(slots), len(out_leaves) + len(extra))
        return tuple(out_leaves + extra)

    def trace(self, leaves, warn_reads: bool = True, inline: bool = False):
        """``(graph, state, layout)`` of ``fn`` on these leaves (``gradc.trace.trace_bound``), named as the user's.

        ``inline``: the derivative is inlined into the trace in progress (``gradc.derivatives.closures``): the
        enclosing trace's values the function reads become trailing inputs of the graph, and
        ``layout.captured`` holds those values (to pass after the leaves)."""
        check_function_kind(self.f)
        outer = self.fn.__dict__.get("__wrapped__")  # a trace of this function inside its own trace
        self.fn.__wrapped__ = self.f  # errors raised while tracing point at the user's def; not kept (weakly cached)
        try:
            graph = self._trace_inlined(leaves, warn_reads, inline)
        except StaticValueNeeded as e:
            better = self._sequence_used_as_array(e)
            if better is None:
                suggest_static(e, zip(self.leaf_names, leaves))
                raise
            raise better from None
        finally:
            if outer is None:
                del self.fn.__wrapped__
            else:
                self.fn.__wrapped__ = outer
        # what the user's function reads besides its arguments: warned about and guarded as trace_bound does
        found = scan(user_function(self.f))
        warn_frozen(found, function_name(self.f), reads=warn_reads)
        return graph.replace(origin=function_origin(self.f)), CapturedState(found.reads), self.layout


    def _trace_inlined(self, leaves, warn_reads, inline):
        """The graph, traced on its own first (its names, hence the emitted code, as when no trace encloses it);
        when inlined and it reads a value of the enclosing trace (a closure), traced again as a child of that
        trace, the values read becoming trailing inputs (``layout.captured``)."""
        values = dict(zip(self.leaf_names, leaves))
        try:
            graph, _ = trace_bound(self.fn, values, warn_reads=warn_reads)
            if self.layout is not None:
                self.layout.captured = []
            return graph
        except TraceError as e:
            if not inline or not any(text in e.message for text in _READS_ENCLOSING):
                raise
        with inlined(leaves) as nest:
            graph, _ = trace_bound(self.fn, values, warn_reads=warn_reads)
        if self.layout is not None:
            self.layout.captured = nest.captured if nest is not None else []
        return graph

    def _sequence_used_as_array(self, error):
        """A list or tuple of numbers is a pytree (a leaf per entry): the error of a function that takes it for
        one array says so, or None when no argument is such a sequence."""
        for p, d in zip(self.params, self.defs):
            if d.node_type in (list, tuple) and d.num_leaves and all(treedef_is_leaf(c) for c in d.children_defs):
                kind = d.node_type.__name__
                return ArgumentError(f"argument {p!r} is a {kind} of {d.num_leaves} values: gradc takes a {kind} as "
                                     f"a pytree (a value per entry), and {function_name(self.f)} uses it as one array "
                                     f"({error.message})", where=error.where,
                                     hint=f"pass np.asarray({p}) to differentiate it as one array")
        return None


# what a trace of its own says when the function reads a value of an enclosing trace (gradc.ir.builder, gradc.trace)
_READS_ENCLOSING = ("is used outside it", "returned a value traced elsewhere")


class Layout:
    """How one trace's flat outputs nest: the output's leaves first, then the aux leaves that were traced.

    ``n_flat`` counts the graph's outputs.
    """

    def __init__(self, out_def, n_out: int, aux_def, aux_slots: tuple, n_flat: int):
        self.out_def, self.n_out, self.aux_def, self.aux_slots, self.n_flat = out_def, n_out, aux_def, aux_slots, n_flat
        self.captured: list = []  # the enclosing trace's values read, when inlined (gradc.derivatives.closures)
        # an array, or a tuple of arrays, and no aux: the emitted functions return the results as they are
        self.direct = aux_def is None and (treedef_is_leaf(out_def) or out_def.node_type is tuple and n_out > 1 and
                                           all(treedef_is_leaf(c) for c in out_def.children_defs))

    def aux(self, outs):
        """The aux pytree from the flat outputs (a sequence): its traced leaves from there, the others as the
        trace saw them."""
        return self.aux_def.unflatten([outs[v] if kind == "out" else v for kind, v in self.aux_slots])


def _leaf_names(params, defs):
    """A distinct identifier per leaf; a parameter that is a leaf keeps its own name."""
    taken = {p for p, d in zip(params, defs) if treedef_is_leaf(d)}
    names, ranges = [], []
    for p, d in zip(params, defs):
        start = len(names)
        if treedef_is_leaf(d):
            names.append(p)
        else:
            for name in d.leaf_names(p):
                unique, k = name, 1
                while unique in taken:
                    k += 1
                    unique = f"{name}_{k}"
                taken.add(unique)
                names.append(unique)
        ranges.append((start, len(names)))
    return names, ranges


def _make_flat(plan: FlatFunction, fn):
    def flat(*leaves):
        return plan.call_leaves(leaves)  # nothing of the user's in a cell: FlatFunction.trace scans ``fn`` itself

    flat.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in plan.leaf_names])
    flat.__name__ = flat.__qualname__ = function_name(fn)
    return flat


_LEAF = tree_structure(0.0)
_ndarray = np.ndarray


def flat_function(f, values: dict, has_aux: bool = False) -> FlatFunction:
    """The :class:`FlatFunction` of ``f`` for arguments of these structures (``values``: parameter -> argument)."""
    # an array or a float is a leaf: asked first, as this runs on every call of a transform
    defs = tuple([_LEAF if type(v) is _ndarray or type(v) is float else tree_structure(v) for v in values.values()])
    key = (defs, has_aux)
    try:
        table = _FLATS.setdefault(f, {})
    except TypeError:  # not weak-referenceable: a new one each time
        return FlatFunction(f, list(values), defs, has_aux)
    plan = table.get(key)
    if plan is None:
        plan = table[key] = FlatFunction(f, list(values), defs, has_aux)
    return plan


_PARAMS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()  # function -> its parameter names, when plain


def _parameter_names(f):
    """The names of ``f``'s parameters when all are positional without defaults (a call binds by zipping)."""
    try:
        return _PARAMS[f]
    except (KeyError, TypeError):
        pass
    try:
        params = list(callable_signature(f).parameters.values())
        names = [p.name for p in params] if all(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) else None
    except (TypeError, ValueError):
        names = None
    try:
        _PARAMS[f] = names
    except TypeError:
        pass
    return names


def flat_call(f, args, kwargs=None, has_aux: bool = False):
    """``(FlatFunction, leaves)`` for calling ``f`` with ``args`` (and ``kwargs``)."""
    names = None if kwargs else _parameter_names(f)
    if names is not None and len(names) == len(args):
        values = dict(zip(names, args))
    else:
        values = bind_arguments(f, args, kwargs)
    plan = flat_function(f, values, has_aux)
    return plan, plan.leaves(list(values.values()))


def has_traced_leaf(args) -> bool:
    """Whether any leaf of ``args`` is a traced value (a transform called inside a function being traced)."""
    from gradc.tree_util import tree_leaves

    return any(isinstance(x, Traced) for x in tree_leaves(list(args)))
