"""``np.array``, ``np.asarray``, ``np.r_``, ``np.c_`` and every NumPy function gradc dispatches, on lists of
traced values, routed by name.

NumPy does not dispatch these to ``__array_function__``: ``np.array([a, b])`` asks each
element for a concrete array, which a traced value cannot give, and ``np.mean([a, b])``
converts its list before any dispatch. So, like SciPy's functions
(``gradc.trace.scipy_dispatch.rebind``), they are routed before they run: when the traced
function's code names NumPy (a module, a function gradc dispatches, a scalar type such as
``np.int64``) or ``int``/``float``, its module's ``numpy`` (``np``) is seen through
``NUMPY`` (``np.linalg`` through ``LINALG``, ``np.fft`` through ``FFT``): modules whose attributes are numpy's
own except that ``array``, ``asarray``, ``asanyarray``, ``r_`` and ``c_`` build the
traced result (a stack of the elements) when a traced value is inside, every dispatched
function and ufunc takes lists of traced values as array-likes
(``gradc.trace.array_like_dispatch.routed``), and the scalar types (and the builtins
``int``/``float``) cast traced values (``Cast``); on concrete values all are numpy's.
A from-import (``from numpy import array``) is routed the same way, and so are the
other functions of the module (they see the same globals).

Limits: a function that assigns module globals (``global``) is routed only when it names
``array``/``asarray``/``r_``/``c_`` (a routed copy would assign into the copy's globals);
helpers of other modules are not routed: they get the clear error of
``Tracer.__array__``, which names the rewrite (``np.stack([...])``).

>>> from gradc.trace import trace
>>> print(trace(lambda x: NUMPY.array([x, 2.0 * x]), np.float64(1.0)).eqns[-1].op)
concatenate
"""
from __future__ import annotations

import dis
import types

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.ir.types import dtype_name
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops.values import aval, first_traced, lift
from gradc.trace import array_like_dispatch as array_likes
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


def _module(module=np, name="numpy"):
    proxy = types.ModuleType(name, module.__doc__)
    proxy.__dict__.update({k: v for k, v in vars(module).items() if k not in ("__name__", "__doc__")})
    proxy.__getattr__ = lambda attr: getattr(module, attr)  # numpy's lazily loaded attributes (PEP 562)
    return proxy


NUMPY = _module()
NUMPY.array, NUMPY.asarray, NUMPY.asanyarray = array, asarray, asarray
NUMPY.r_, NUMPY.c_ = _Concatenator(np.r_, False), _Concatenator(np.c_, True)
LINALG = _module(np.linalg, "numpy.linalg")
NUMPY.linalg = LINALG
FFT = _module(np.fft, "numpy.fft")
NUMPY.fft = FFT
FUNCTIONS = {np.array: array, np.asarray: asarray, np.asanyarray: asarray}  # for from-imports, by identity
_STAND_INS: dict = {}  # id(real) -> (real, stand-in): every routed NumPy function, type and module
_EXTRA_STAND_INS: list = []  # (real, stand-in) pairs other modules add (numpy.polynomial, np.vectorize)


_STAND_IN_MAKERS: list = []  # value -> a stand-in or None, for NumPy objects made outside (an np.vectorize)


def add_stand_in_maker(make) -> None:
    """``make(value)`` gives a stand-in for a NumPy object a traced function sees (None: not one of them)."""
    _STAND_IN_MAKERS.append(make)


def _made(value):
    for make in _STAND_IN_MAKERS:
        sub = make(value)
        if sub is not None:
            return sub
    return None


def add_stand_in(real, ours) -> None:
    """Route ``real`` (a NumPy module, class or function) to ``ours`` in traced functions that name it."""
    _EXTRA_STAND_INS.append((real, ours))
    if _STAND_INS:
        _STAND_INS[id(real)] = (real, ours)


def _stand_ins() -> dict:
    """The stand-ins, made on first use (the dispatch tables are complete only once gradc.trace is imported):
    each NumPy function or ufunc gradc dispatches, routed (``array_like_dispatch.routed``), each scalar type a
    ``Cast``, in the proxies ``NUMPY`` and ``LINALG`` and by identity for from-imports."""
    if _STAND_INS:
        return _STAND_INS
    from gradc.trace.numpy_dispatch import FUNCTIONS as TABLE  # complete: gradc.trace.dispatch merged the families
    from gradc.trace.numpy_dispatch import UFUNCS
    for real, ours in FUNCTIONS.items():
        _STAND_INS[id(real)] = (real, ours)
    for proxy, module in ((NUMPY, np), (LINALG, np.linalg), (FFT, np.fft)):
        _STAND_INS[id(module)] = (module, proxy)
        for attr, real in vars(module).items():
            if attr.startswith("_") or attr in ROUTED_NAMES:
                continue
            try:
                known = real in TABLE or real in UFUNCS
            except TypeError:  # unhashable
                continue
            if known:
                ours = array_likes.ROUTED.setdefault(real, array_likes.routed(real))
            elif isinstance(real, type) and real in array_likes.NUMPY_CASTS:
                ours = array_likes.NUMPY_CASTS[real]
            else:
                continue
            setattr(proxy, attr, ours)
            _STAND_INS[id(real)] = (real, ours)
    for real, ours in _EXTRA_STAND_INS:
        _STAND_INS[id(real)] = (real, ours)
    return _STAND_INS


def uses_routed_names(fn) -> bool:
    """Whether ``fn``'s code (nested functions and comprehensions included) names one of ``ROUTED_NAMES``, a
    NumPy module or function gradc routes (``np.mean`` of a list of traced values), ``int``/``float``, or a
    global bound to one of those (``from numpy import array as arr``).

    >>> uses_routed_names(lambda x: np.array([x])), uses_routed_names(lambda x: x + 1)
    (True, False)
    """
    table = _stand_ins()
    codes, stack = [], [fn.__code__]
    while stack:
        codes.append(stack.pop())
        stack.extend(c for c in codes[-1].co_consts if isinstance(c, types.CodeType))
    if any(ROUTED_NAMES.intersection(code.co_names) for code in codes):
        return True
    if any(_assigns_globals(code) for code in codes):  # a traced copy would assign into the copy's globals
        return False
    for code in codes:
        for name in code.co_names:
            if name in array_likes.BUILTIN_CASTS and name not in fn.__globals__:
                return True
            value = fn.__globals__.get(name)
            known = table.get(id(value))
            if (known is not None and known[0] is value) or _made(value) is not None:
                return True
    for cell in fn.__closure__ or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        known = table.get(id(value))
        if (known is not None and known[0] is value) or _made(value) is not None:
            return True
    return False


def _assigns_globals(code) -> bool:
    return any(ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL") for ins in dis.get_instructions(code))


def substitute(value):
    """The stand-in for a global or closure value of a function that uses the routed names, or None.

    >>> substitute(np) is NUMPY, substitute(np.array) is array, substitute(np.sum).__wrapped__ is np.sum
    (True, True, True)
    """
    known = _stand_ins().get(id(value))
    return known[1] if known is not None and known[0] is value else _made(value)


def builtin_casts(fn) -> dict:
    """``int``/``float`` as ``Cast`` stand-ins, for the names ``fn``'s code uses that its module does not define.

    >>> sorted(builtin_casts(lambda x: int(x)))
    ['int']
    """
    names, stack = set(), [fn.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return {name: cast for name, cast in array_likes.BUILTIN_CASTS.items()
            if name in names and name not in fn.__globals__}
