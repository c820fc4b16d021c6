"""Cache keys of a call's arguments, for ``vmap`` and ``jit``: one per leaf, and a fast one for the common call.

The arguments are flattened by :mod:`gradc.derivatives.flat_function` (pytrees as leaves
named by their paths); a key is the structures and one :func:`leaf_key` per leaf. A call by
position whose every argument is an ndarray or a Python float (each parameter one leaf)
skips the flattening: :func:`fast_key` and one dict lookup.

>>> import numpy as np
>>> fast_key((np.ones(2), 1.0), 2)
(((2,), dtype('float64')), <class 'float'>)
"""
from __future__ import annotations

import numpy as np

from gradc.ir.builder import Traced
from gradc.trace.signature import callable_signature


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
        params = list(callable_signature(f).parameters.values())
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


def call_key(defs: tuple, leaves) -> tuple | None:
    """The cache key of a flattened call: the arguments' structures and a key per leaf; None when a leaf is traced.

    >>> from gradc.tree_util import tree_structure
    >>> call_key((tree_structure(1.0),), [2.0])
    ((PyTreeDef(*),), (<class 'float'>,))
    """
    keys = tuple(leaf_key(v) for v in leaves)
    if any(k is None for k in keys):
        return None
    return defs, keys
