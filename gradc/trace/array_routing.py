"""``np.array``, ``np.asarray``, ``np.r_`` and ``np.c_`` on traced values, routed by name.

NumPy does not dispatch these to ``__array_function__``: ``np.array([a, b])`` asks each
element for a concrete array, which a traced value cannot give. So, like SciPy's
functions (``gradc.trace.scipy_dispatch.rebind``), they are routed before they run:
when the traced function's own code names ``array``, ``asarray``, ``asanyarray``, ``r_``
or ``c_``, its module's ``numpy`` (``np``) is seen through ``NUMPY``, a module whose
attributes are numpy's own except those five, which build the traced result (a stack
of the elements) when a traced value is inside and are numpy's functions otherwise.
A from-import (``from numpy import array``) is routed the same way.

Limits: a helper function that uses ``np.array`` on traced values while the traced
function itself does not is not routed; it gets the clear error of ``Tracer.__array__``,
which names the rewrite (``np.stack([...])``).

>>> from gradc.trace import trace
>>> print(trace(lambda x: NUMPY.array([x, 2.0 * x]), np.float64(1.0)).eqns[-1].op)
concatenate
"""
from __future__ import annotations

import types

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.ir.types import dtype_name
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops.values import aval, first_traced, lift
from gradc.trace.numpy_dispatch import _concatenate, _expand_dims

ROUTED_NAMES = frozenset({"array", "asarray", "asanyarray", "r_", "c_"})


def _has_tracer(x) -> bool:
    if isinstance(x, Traced):
        return True
    return isinstance(x, (list, tuple)) and any(_has_tracer(v) for v in x)


def _build(obj):
    """A nested list or tuple of traced and concrete values as one traced array (NumPy's coercion)."""
    if isinstance(obj, Traced):
        return obj
    stacked = obj.stacked_array() if hasattr(type(obj), "stacked_array") else None  # a list a traced loop collected
    if stacked is not None:
        return stacked
    if not isinstance(obj, (list, tuple)) or not _has_tracer(obj):
        return np.asarray(obj)  # Python floats count as float64 here, as np.array makes them
    parts = [_build(v) for v in obj]
    shapes = {aval(p).shape for p in parts}
    if len(shapes) != 1:
        raise TraceError(f"np.array of a list whose elements have different shapes {sorted(shapes)}",
                         hint="give every element the same shape (np.concatenate joins unequal parts)")
    return _concatenate([_expand_dims(p, 0) if isinstance(p, Traced) else p[None] for p in parts], 0)


def _finish(out, dtype, ndmin):
    if dtype is not None:
        out = ew.astype(out, dtype_name(np.dtype(dtype)))
    t = aval(out)
    if ndmin > t.ndim:
        out = sh.reshape(out, (1,) * (ndmin - t.ndim) + t.shape)
    return out


def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, like=None):
    """``np.array``: numpy's on concrete values; a traced stack when a traced value is inside.

    >>> array([[1, 2]], ndmin=3).shape
    (1, 1, 2)
    """
    if not _has_tracer(object):
        return np.array(object, dtype=dtype, copy=copy, order=order, subok=subok, ndmin=ndmin)
    out = _finish(_build(object), dtype, ndmin)
    return out.copy() if out is object else out


def asarray(a, dtype=None, order=None, *, like=None, **kw):
    """``np.asarray``: numpy's on concrete values; the traced value itself (or the traced stack).

    >>> asarray([1.0, 2.0])
    array([1., 2.])
    """
    if not _has_tracer(a):
        return np.asarray(a, dtype=dtype, order=order, **kw)
    return _finish(_build(a), dtype, 0)


class _Concatenator:
    """``np.r_`` / ``np.c_`` with traced items: items joined along the first (``r_``) or last (``c_``) axis."""

    def __init__(self, real, columns):
        self.real, self.columns = real, columns

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        if not _has_tracer(list(items)):
            return self.real[key]
        parts = []
        for item in items:
            if isinstance(item, str):
                raise TraceError(f"np.{'c_' if self.columns else 'r_'}[{item!r}, ...] with traced values",
                                 hint="use np.concatenate or np.stack with axis= instead of a string directive")
            if isinstance(item, slice):
                item = self.real[item]  # a range of numbers
            part = _build(item) if _has_tracer(item) else np.array(item, ndmin=1)
            nd = aval(part).ndim
            if self.columns and nd < 2:
                part = sh.reshape(part, (aval(part).size, 1)) if isinstance(part, Traced) else part.reshape(-1, 1)
            elif nd == 0:
                part = sh.reshape(part, (1,))
            parts.append(part)
        return _concatenate(parts, -1 if self.columns else 0)


# ---------------------------------------------------------------- fills and copies the function owns (np.*_like)
def copyto(dst, src, casting="same_kind", where=True):
    """``np.copyto(dst, src)``: into a traced ``dst`` the function owns, as ``dst[...] = src``.

    >>> from gradc.trace import trace
    >>> def f(x):
    ...     y = x * 1.0
    ...     copyto(y, 2.0)
    ...     return y
    >>> print(trace(f, np.ones(2)).eqns[-1].op)
    index_update
    """
    from gradc.trace import inplace  # here: inplace builds on the dispatch tables
    if isinstance(where, Traced):
        raise TraceError("np.copyto with a traced where= mask", hint="assign `dst[...] = np.where(mask, src, dst)`")
    if not isinstance(dst, Traced):
        raise TraceError("np.copyto writes a traced value into a NumPy array in place",
                         hint="assign instead: `dst[...] = src` (or `dst = np.array(src)`)")
    if where is not True:
        mask = np.broadcast_to(np.asarray(where), aval(dst).shape)
        src = np.broadcast_to(src, aval(dst).shape) if not isinstance(src, Traced) else \
            sh.broadcast_to(src, aval(dst).shape)
        inplace.setitem(dst, mask, src[mask])
        return None
    inplace.setitem(dst, Ellipsis, src)
    return None


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """``np.full_like`` of a traced array (or with a traced fill value): a traced fill the function owns.

    >>> from gradc.trace import trace
    >>> print(trace(lambda x: full_like(x, 2.0) * x, np.ones(2)).eqns[0].op)
    broadcast_to
    """
    t = aval(a)
    shape = t.shape if shape is None else ((shape,) if isinstance(shape, (int, np.integer)) else tuple(shape))
    dtype = t.dtype if dtype is None else aval(np.empty(0, dtype)).dtype
    like = first_traced([a, fill_value])
    fill = ew.astype(lift(fill_value if isinstance(fill_value, Traced) else np.asarray(fill_value), like), dtype)
    return sh.broadcast_to(fill, shape).copy()


def _module():
    proxy = types.ModuleType("numpy", np.__doc__)
    proxy.__dict__.update({k: v for k, v in vars(np).items() if k not in ("__name__", "__doc__")})
    proxy.__getattr__ = lambda name: getattr(np, name)  # numpy's lazily loaded attributes (PEP 562)
    proxy.array, proxy.asarray, proxy.asanyarray = array, asarray, asarray
    proxy.r_, proxy.c_ = _Concatenator(np.r_, False), _Concatenator(np.c_, True)
    return proxy


NUMPY = _module()
FUNCTIONS = {np.array: array, np.asarray: asarray, np.asanyarray: asarray}  # for from-imports, by identity


def uses_routed_names(fn) -> bool:
    """Whether ``fn``'s code (nested functions and comprehensions included) names one of ``ROUTED_NAMES``, or a
    global bound to one of those NumPy functions (``from numpy import array as arr``).

    >>> uses_routed_names(lambda x: np.array([x])), uses_routed_names(lambda x: np.stack([x]))
    (True, False)
    """
    stack = [fn.__code__]
    while stack:
        code = stack.pop()
        if ROUTED_NAMES.intersection(code.co_names):
            return True
        for name in code.co_names:
            value = fn.__globals__.get(name)
            if isinstance(value, types.BuiltinFunctionType) and substitute(value) is not None:
                return True
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return False


def substitute(value):
    """The stand-in for a global or closure value of a function that uses the routed names, or None.

    >>> substitute(np) is NUMPY, substitute(np.array) is array, substitute(np.sum)
    (True, True, None)
    """
    if value is np:
        return NUMPY
    if isinstance(value, (types.BuiltinFunctionType, types.FunctionType)):
        for real, ours in FUNCTIONS.items():
            if value is real:
                return ours
    return None
