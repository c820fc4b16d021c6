"""``vmap``: a function of one example made a function of a batch, emitted as vectorised NumPy.

JAX's semantics and names. ``in_axes`` is an int, None, or a tuple with one entry per
positional argument, each an int, None (not batched: shared by every example) or a
prefix tree of that argument (``{"w": None, "b": 0}``); negative axes count from the
end. ``out_axes`` places the batch axis in each output (an int, None for an output that
does not depend on the batch, or a prefix tree of the output). Keyword arguments are
batched along axis 0, except Python ints, bools, strings and None, which are static.
``axis_size`` gives the batch size when no argument is batched.

Per signature (shapes, dtypes, static values, tree structures) ``f`` is traced on one
example (the batch axis removed), the graph is batched by
:func:`gradc.transforms.batching.vmap_graph` (one batched equation per equation, never a
Python loop), optimised, emitted as one NumPy function and cached. Called on traced
values (inside ``grad``, ``jacfwd``, another ``vmap`` ...), it inlines the batched graph
into the trace in progress, so it composes with every transform in both orders.

>>> import numpy as np
>>> from gradc.api import grad
>>> loss = lambda w, x, y: (x @ w - y) ** 2
>>> per_example = vmap(grad(loss), in_axes=(None, 0, 0))
>>> per_example(np.array([1.0, 2.0]), np.eye(2), np.array([0.0, 1.0]))
array([[2., 0.],
       [0., 2.]])
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from gradc.derivatives.call_keys import call_key, fast_key, positional_count, runner
from gradc.derivatives.closures import tracing
from gradc.derivatives.flat_function import flat_function
from gradc.derivatives.pickling import reduce_transform
from gradc.derivatives.static_args import Specialising, needs_specialising, static_parameters
from gradc.derivatives.transforms import Emitted
from gradc.errors import ArgumentError, user_facing
from gradc.ir.builder import Traced
from gradc.ir.interpret import evaluate
from gradc.ir.types import TensorType
from gradc.trace import bind_arguments, check_function, def_location, function_name, function_origin, trace_bound
from gradc.trace.frozen import scan, warn_frozen
from gradc.trace.signature import callable_signature, classify_argument
from gradc.trace.variadic import on_call
from gradc.transforms.batching import batched_outputs, vmap_graph
from gradc.tree_util import PyTreeError, tree_flatten


def _is_axis(value) -> bool:
    return value is None or (isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)))


def _check_axes_tree(tree, what: str) -> None:
    """Every leaf of an ``in_axes``/``out_axes`` tree is an int or None."""
    leaves, _ = tree_flatten(tree, is_leaf=lambda x: x is None)
    for leaf in leaves:
        if not _is_axis(leaf):
            raise ArgumentError(f"{what} holds {type(leaf).__name__} {leaf!r:.40}; its entries are ints or None",
                                hint="use an int (the batch axis) or None (not batched)")


def broadcast_prefix(prefix, tree, what: str) -> list:
    """One entry of ``prefix`` per leaf of ``tree``: ``prefix`` is an int, None or a prefix tree of ``tree``.

    >>> broadcast_prefix({"a": 0, "b": None}, {"a": (1.0, 2.0), "b": 3.0}, "in_axes")
    [0, 0, None]
    """
    if _is_axis(prefix):
        return [prefix] * len(tree_flatten(tree)[0])
    entries, structure = tree_flatten(prefix, is_leaf=lambda x: x is None)
    try:
        subtrees = structure.flatten_up_to(tree, what)
    except PyTreeError as e:
        raise ArgumentError(f"{getattr(e, 'message', e)} (in_axes and out_axes are prefixes of the trees they "
                            "describe)",
                            hint="give an int or None for a whole subtree, or a tree of the value's structure") \
            from None
    return [entry for entry, sub in zip(entries, subtrees) for _ in tree_flatten(sub)[0]]


def _rank(value):
    """The number of axes of a leaf that can be batched, or None for a static one (Python int, str, ...)."""
    if isinstance(value, Traced):
        return len(value.aval.shape)
    if isinstance(value, (np.ndarray, np.generic, float)):
        return np.ndim(value)
    return None


class Vectorized:
    """The callable ``vmap`` returns: a cache from signatures to emitted batched functions."""

    COMPILED_STATE = ("cache", "fast")  # emptied when pickled (gradc.derivatives.pickling)

    def __init__(self, f, in_axes, out_axes, axis_size):
        functools.update_wrapper(self, f, updated=())  # not f.__dict__: a transform of a transform keeps its own state
        self.fun = f
        self.in_axes, self.out_axes, self.axis_size = in_axes, out_axes, axis_size
        self.cache: dict = {}  # signature -> a function of the leaves
        self.fast: dict = {}  # fast_key of a call by position -> the same function
        self.n_params = positional_count(f)

    def __reduce__(self) -> str | tuple:
        return reduce_transform(self)

    def __repr__(self):
        return f"<gradc.vmap of {function_name(self.fun)}, in_axes={self.in_axes!r}, out_axes={self.out_axes!r}>"

    def __call__(self, *args, **kwargs):
        if not kwargs:  # the common call (arrays and floats by position): one dict lookup
            run = self.fast.get(fast_key(args, self.n_params))
            if run is not None:
                return run(*args)
        return self._call(args, kwargs)

    @user_facing
    def _call(self, args, kwargs):
        plan, leaves, axes, size = self._plan(args, kwargs)
        key = call_key(plan.defs, leaves)
        if key is None or tracing():  # inside an outer trace: record the batched computation there
            outs, out_def = self._batched(plan, leaves, axes, size)
            return out_def.unflatten(outs)
        run = self._entry(plan, leaves, axes, size, key)[0]
        if not kwargs:
            key = fast_key(args, self.n_params)
            if key is not None:
                self.fast[key] = run
        return run(*leaves)

    def _entry(self, plan, leaves, axes, size, key):
        key = (key, tuple(axes), size)
        entry = self.cache.get(key)
        if entry is None:
            emitted, out_def = self._build(plan, leaves, axes, size)
            entry = self.cache[key] = (runner(emitted.fn, out_def), emitted)
        return entry

    @user_facing
    def lower(self, *args, **kwargs) -> Emitted:
        """The emitted batched function for these arguments (``.source`` is its module, ``.graph`` its graph)."""
        plan, leaves, axes, size = self._plan(args, kwargs)
        key = call_key(plan.defs, leaves)
        if key is None:
            raise ArgumentError("lower() needs concrete arrays, not values traced by an outer transform")
        return self._entry(plan, leaves, axes, size, key)[1]

    def _plan(self, args, kwargs):
        """The flattened call (its FlatFunction and leaves), each leaf's batch axis (None: not batched) and the
        batch size."""
        name = function_name(self.fun)
        values = bind_arguments(self.fun, args, kwargs)
        n_positional = len(args)
        if isinstance(self.in_axes, tuple) and len(self.in_axes) != n_positional:
            entries = _count(len(self.in_axes), "entry", "entries")
            given = _count(n_positional, "positional argument", "positional arguments")
            raise ArgumentError(f"in_axes has {entries} but {name} was called with {given}",
                                hint="give one in_axes entry per positional argument (None for an argument shared "
                                     "by the batch)")
        plan = flat_function(self.fun, values)
        leaves = plan.leaves(list(values.values()))
        axes: list = []
        for k, param in enumerate(plan.params):
            if k < n_positional:
                entry = self.in_axes[k] if isinstance(self.in_axes, tuple) else self.in_axes
                axes += broadcast_prefix(entry, values[param], f"in_axes for {param!r}")
            elif param in kwargs:  # keywords: axis 0, as in JAX; static ones stay static
                axes += [0 if _rank(v) is not None else None for v in tree_flatten(values[param])[0]]
            else:  # left to its default: shared
                axes += [None] * len(tree_flatten(values[param])[0])
        sizes = []
        for i, (leaf, leaf_name) in enumerate(zip(leaves, plan.leaf_names)):
            axis = axes[i]
            if axis is None:
                continue
            rank = _rank(leaf)
            if rank is None:
                raise ArgumentError(f"{name}'s argument {leaf_name} is {type(leaf).__name__} {leaf!r:.40}, not an "
                                    f"array, and in_axes asks to batch it along axis {axis}",
                                    hint="give it in_axes None (a static argument is shared by the batch), or pass "
                                         "an array")
            if not -rank <= axis < rank:
                raise ArgumentError(f"in_axes for {leaf_name} is {axis}, but {leaf_name} has {rank} "
                                    f"ax{'is' if rank == 1 else 'es'} (shape {_shape(leaf)})",
                                    hint=f"use an axis from {-rank} to {rank - 1}, or None to share it"
                                    if rank else "give it in_axes None (a scalar is shared by the batch)")
            axes[i] = axis % rank
            sizes.append((leaf_name, axes[i], _shape(leaf)[axes[i]]))
        return plan, leaves, axes, self._size(sizes, name)

    def _size(self, sizes, name):
        distinct = {s for _, _, s in sizes}
        if self.axis_size is not None:
            distinct.add(self.axis_size)
        if len(distinct) > 1:
            said = [f"{n} has size {s} along axis {a}" for n, a, s in sizes]
            said += [f"axis_size is {self.axis_size}"] if self.axis_size is not None else []
            raise ArgumentError(f"vmap of {name} got different batch sizes: {'; '.join(said)}",
                                hint="batched arguments need the same length along their in_axes")
        if not distinct:
            raise ArgumentError(f"vmap of {name}: no argument is batched (in_axes is None for all), so the batch "
                                "size is unknown", hint="pass axis_size=N to gradc.vmap, or batch an argument")
        size = distinct.pop()
        if not isinstance(size, (int, np.integer)):
            raise ArgumentError(f"vmap of {name}: the batch size is the named size {size}",
                                hint="batch along an axis of fixed size")
        return int(size)

    @staticmethod
    def _example(plan, leaves, axes) -> list:
        """Each leaf as one example sees it: a type without the batch axis, or the leaf itself."""
        example = []
        for leaf, leaf_name, axis in zip(leaves, plan.leaf_names, axes):
            if axis is None:
                example.append(leaf)
                continue
            t = classify_argument(leaf_name, leaf)[1]
            example.append(TensorType(t.shape[:axis] + t.shape[axis + 1:], t.dtype))
        return example

    def _batched(self, plan, leaves, axes, size):
        """The batched computation on the leaves (arrays or traced values): flat outputs and their structure."""
        graph, _, layout = plan.trace(self._example(plan, leaves, axes), warn_reads=False, inline=True)
        out_def = layout.out_def
        out_axes = broadcast_prefix(self.out_axes, out_def.unflatten(range(out_def.num_leaves)),
                                    "out_axes for the output")
        axis_of = dict(zip(plan.leaf_names, axes))
        flags = [axis_of.get(v.name) is not None for v in graph.inputs]  # an outer value closed over: shared
        depends = batched_outputs(graph, flags)
        for k, (axis, dep) in enumerate(zip(out_axes, depends)):
            if axis is None and dep:
                where = f" {k}" if len(out_axes) > 1 else ""
                raise ArgumentError(f"output{where} of {function_name(self.fun)} depends on the batch but out_axes "
                                    "is None for it", hint="give it an out_axes int (where the batch axis goes)")
        batched = vmap_graph(graph, [0 if f else None for f in flags], size, where=def_location(self.fun),
                             out_batched=[axis is not None for axis in out_axes])
        inputs = []
        for leaf, leaf_name, axis in zip(leaves, plan.leaf_names, axes):
            if leaf_name in graph.static:
                continue
            inputs.append(np.moveaxis(leaf, axis, 0) if axis else leaf)
        outs = []
        for value, axis, o in zip(evaluate(batched, *inputs, *layout.captured), out_axes, batched.outputs):
            if axis is not None:
                rank = len(o.type.shape)
                if not -rank <= axis < rank:
                    raise ArgumentError(f"out_axes {axis} is out of range for an output of {rank} axes "
                                        f"(shape {tuple(o.type.shape)}, the batch axis included)",
                                        hint=f"use an axis from {-rank} to {rank - 1}")
                if axis % rank:
                    value = np.moveaxis(value, 0, axis % rank)
            outs.append(value)
        return outs, out_def

    def _build(self, plan, leaves, axes, size):
        """Trace the whole batched computation once, emit it, and keep what a call needs."""
        record: list = []

        def whole(*traced: Any) -> tuple:
            outs, out_def = self._batched(plan, list(traced), axes, size)
            record.append(out_def)
            return tuple(outs)

        fname = function_name(self.fun)
        named: Any = whole  # the attributes tracing reads: its parameters, its name, the user's def
        named.__signature__ = plan.fn.__signature__
        named.__name__ = named.__qualname__ = f"{fname}_vmap"
        named.__wrapped__ = self.fun
        warn_frozen(scan(self.fun), fname)  # what f reads besides its arguments is baked in: say so once
        graph, _ = trace_bound(whole, dict(zip(plan.leaf_names, leaves)), warn_reads=False)
        graph = graph.replace(origin=function_origin(self.fun))
        n_out = len(graph.outputs)
        shown = ", ".join("None" if a is None else str(a) for a in axes)
        emitted = Emitted(graph, f"{fname} on a batch of {size} (in_axes per leaf: {shown}).",
                          0 if n_out == 1 else tuple(range(n_out)),
                          [f"Generated by gradc from {graph.origin} (vmap, batch of {size}). Do not edit."])
        return emitted, record[0]


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _shape(leaf) -> tuple:
    return tuple(leaf.aval.shape) if isinstance(leaf, Traced) else np.shape(leaf)


@user_facing
@on_call
def vmap(f: Callable, in_axes: Any = 0, out_axes: Any = 0, *, axis_size: int | None = None,
         static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None) -> Callable:
    """``f`` mapped over a batch axis of its arguments, computed as one vectorised function (JAX's ``vmap``).

    ``in_axes``: an int or None for every positional argument, or a tuple with an entry
    per positional argument (an int, None, or a prefix tree of that argument).
    ``out_axes``: where the batch axis goes in each output (int, None or prefix tree).
    ``axis_size``: the batch size when no argument is batched.
    ``static_argnums``/``static_argnames``: arguments baked into the trace, not mapped (their ``in_axes``
    entry, in a tuple, must be None); a new value traces again (``gradc.derivatives.static_args``).

    >>> import numpy as np
    >>> vmap(lambda x, w: x @ w, in_axes=(0, None))(np.ones((4, 3)), np.ones((3, 2))).shape
    (4, 2)
    >>> vmap(lambda p: p["a"] * p["b"], in_axes=({"a": 0, "b": None},))({"a": np.arange(3.0), "b": 2.0})
    array([0., 2., 4.])
    >>> vmap(lambda x: x.sum(), in_axes=1)(np.ones((2, 5)))
    array([2., 2., 2., 2., 2.])
    """
    f = check_function(f, "gradc.vmap")
    if isinstance(in_axes, list):
        raise ArgumentError(f"in_axes is the list {in_axes!r:.40}; gradc (as JAX) takes an int, None or a tuple "
                            "with one entry per positional argument", hint=f"write in_axes={tuple(in_axes)!r:.40}")
    if not _is_axis(in_axes) and not isinstance(in_axes, tuple):
        raise ArgumentError(f"in_axes is {type(in_axes).__name__} {in_axes!r:.40}; it is an int, None or a tuple "
                            "with one entry per positional argument", hint="e.g. in_axes=(None, 0, 0)")
    _check_axes_tree(in_axes, "in_axes")
    _check_axes_tree(out_axes, "out_axes")
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer)) or isinstance(axis_size, bool)
                                  or axis_size < 0):
        raise ArgumentError(f"axis_size is {axis_size!r:.40}, not an int >= 0", hint="e.g. axis_size=8")
    size = None if axis_size is None else int(axis_size)
    declared = static_parameters(f, static_argnums, static_argnames, "gradc.vmap")
    if not needs_specialising(f, declared):
        return Vectorized(f, in_axes, out_axes, size)
    positional = [p.name for p in callable_signature(f).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if isinstance(in_axes, tuple):
        for name, axis in zip(positional, in_axes):
            if name in declared and axis is not None:
                raise ArgumentError(f"gradc.vmap: {name!r} is static and has in_axes entry {axis!r}",
                                    hint="give a static argument the in_axes entry None")

    def make(g):
        if not isinstance(in_axes, tuple):
            return Vectorized(g, in_axes, out_axes, size)
        kept = set(callable_signature(g).parameters)
        return Vectorized(g, tuple(a for name, a in zip(positional, in_axes) if name in kept), out_axes, size)
    return Specialising(f, declared, make)


__all__ = ["vmap", "Vectorized", "broadcast_prefix"]
