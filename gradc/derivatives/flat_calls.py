"""Calling a user's function on pytrees through a function of flat leaves, for ``vmap`` and ``jit``.

Traces and emitted code take one value per parameter; users pass dicts, tuples and
NamedTuples of arrays. :class:`FlatCall` flattens the bound arguments into leaves, each
named by its path (``params["w"]`` is ``params_w``, :func:`gradc.tree_util.path_name`),
and :meth:`FlatCall.function` gives a function of those leaves that rebuilds the trees,
calls the user's function (its ``if``/``for``/``while`` captured as ``trace`` does) and
returns its output's leaves, recording the output's structure.

>>> import numpy as np
>>> call = FlatCall(lambda p, x: p["w"] * x, {"p": {"w": np.ones(2)}, "x": np.ones(2)})
>>> call.names
['p_w', 'x']
"""
from __future__ import annotations

import inspect

import numpy as np

from gradc.errors import ArgumentError, TraceError
from gradc.ir.builder import Traced
from gradc.trace import call_bound, def_location, function_name
from gradc.trace.capture import capture as capture_control_flow
from gradc.trace.scipy_dispatch import rebind
from gradc.tree_util import PyTreeError, tree_flatten, tree_leaf_names, tree_unflatten


def leaf_key(value):
    """The part of a cache key one leaf gives: shape and dtype of an array, the value of a static one.

    None for a traced value (the call is inside an outer trace: nothing to cache).

    >>> leaf_key(np.ones((2, 3))), leaf_key(3), leaf_key(2.5)
    (((2, 3), dtype('float64')), (<class 'int'>, 3), <class 'float'>)
    """
    if isinstance(value, Traced):
        return None
    if type(value) is np.ndarray:
        return (value.shape, value.dtype)
    if isinstance(value, (bool, int, str)) or value is None:
        return (type(value), value)
    if isinstance(value, np.generic):
        return (type(value), value.item()) if isinstance(value, np.integer) else type(value)
    return type(value)


def positional_count(f) -> int | None:
    """How many parameters ``f`` has when all of them can be passed by position (else None): the fast path's
    condition, where each positional argument is one leaf.

    >>> positional_count(lambda x, y=1: x), positional_count(lambda x, *, k: x)
    (2, None)
    """
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return None
    if all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        return len(params)
    return None


def fast_key(args: tuple, n_params: int | None):
    """The cache key of a call whose every argument is an ndarray or a Python float (the common call), or None.

    >>> fast_key((np.ones(2), 1.0), 2)
    (((2,), dtype('float64')), <class 'float'>)
    """
    if len(args) != n_params:
        return None
    key = []
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key.append((a.shape, a.dtype))
        elif t is float:
            key.append(float)
        else:
            return None
    return tuple(key)


def runner(emitted, out_def):
    """A function of the leaves calling ``emitted`` and rebuilding its output's structure."""
    if out_def.num_leaves == 1 and out_def.node_type is None:
        return emitted
    if out_def.num_leaves == 1:
        return lambda *leaves: out_def.unflatten([emitted(*leaves)])
    return lambda *leaves: out_def.unflatten(list(emitted(*leaves)))


class FlatCall:
    """The arguments of one call of ``f``, bound to its parameters and flattened into named leaves.

    ``names[i]`` names ``leaves[i]``; ``owner[i]`` is the parameter it belongs to and
    ``treedefs`` the structure of each parameter's value, in parameter order.
    """

    def __init__(self, f, values: dict):
        self.fun = f
        self.params = list(values)
        self.treedefs, self.leaves, self.names, self.owner = [], [], [], []
        taken: set = set()
        for param, value in values.items():
            try:
                leaves, treedef = tree_flatten(value)
            except PyTreeError as e:
                raise ArgumentError(f"argument {param!r}: {getattr(e, 'message', e)}") from None
            if len(leaves) == 1 and treedef.node_type is None:
                names = [param]
            else:
                names = tree_leaf_names(value, param)
            for leaf, name in zip(leaves, names):
                name = _distinct(name, taken)
                taken.add(name)
                self.leaves.append(leaf)
                self.names.append(name)
                self.owner.append(param)
            self.treedefs.append(treedef)

    def with_leaves(self, leaves) -> "FlatCall":
        """The same call with other leaves (of the same structure): the tracers of a trace, say."""
        other = object.__new__(FlatCall)
        other.fun, other.params, other.treedefs = self.fun, self.params, self.treedefs
        other.names, other.owner, other.leaves = self.names, self.owner, list(leaves)
        return other

    def key(self):
        """A hashable key of the structures and leaves, or None when a leaf is traced."""
        keys = tuple(leaf_key(v) for v in self.leaves)
        if any(k is None for k in keys):
            return None
        return tuple(self.treedefs), keys

    def traced(self) -> bool:
        return any(isinstance(v, Traced) for v in self.leaves)

    def unflatten(self, leaves) -> dict:
        """The parameters' values rebuilt from a list of leaves (one per name)."""
        values, k = {}, 0
        for param, treedef in zip(self.params, self.treedefs):
            n = treedef.num_leaves
            values[param] = tree_unflatten(treedef, leaves[k:k + n])
            k += n
        return values

    def function(self, inner, record: list, name: str | None = None):
        """A function of the leaves (parameters named ``names``) that rebuilds the trees, calls ``inner``
        (default: the user's function, control flow captured) and returns the output's leaves; the output's
        structure is appended to ``record``."""
        user = self.fun
        fname = name or function_name(user)
        if inner is None:
            inner = capture_control_flow(rebind(user))
        unflatten = self.unflatten

        def flat(*leaves):
            result = call_bound(inner, unflatten(list(leaves)))
            out_leaves, out_def = tree_flatten(result)
            if not out_leaves:
                raise TraceError(f"{function_name(user)} returned {result!r:.40}, no array", where=def_location(user),
                                 hint="return the value(s) computed (is a return statement missing?)")
            record.append(out_def)
            return tuple(out_leaves)

        flat.__signature__ = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                                for n in self.names])
        flat.__name__ = flat.__qualname__ = fname
        flat.__wrapped__ = user  # errors about the function point at the user's def
        return flat


def _distinct(name: str, taken: set) -> str:
    if name not in taken:
        return name
    k = 2
    while f"{name}_{k}" in taken:
        k += 1
    return f"{name}_{k}"


def bind_call(f, args: tuple, kwargs: dict) -> dict:
    """``f``'s parameters bound to ``args`` and ``kwargs`` (defaults filled in), or an ArgumentError at the
    user's line.

    >>> bind_call(lambda x, n=2: x, (1.0,), {})
    {'x': 1.0, 'n': 2}
    """
    try:
        signature = inspect.signature(f)
    except (TypeError, ValueError):
        raise ArgumentError(f"cannot read the parameters of {f!r}", hint="pass a Python function (def or lambda)") \
            from None
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            stars = "*" if p.kind is p.VAR_POSITIONAL else "**"
            raise ArgumentError(f"{function_name(f)} has {stars}{p.name}; gradc needs named parameters",
                                where=def_location(f), hint="list the parameters explicitly (a tuple or dict "
                                                            "argument holds any number of arrays)")
    try:
        bound = signature.bind(*args, **kwargs)
    except TypeError as e:
        raise ArgumentError(f"{function_name(f)}: {e}", hint="call it with the function's parameters") from None
    bound.apply_defaults()
    return dict(bound.arguments)
