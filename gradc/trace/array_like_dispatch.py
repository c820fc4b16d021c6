"""Lists and tuples of traced values wherever NumPy takes an array-like, and casts of traced values.

NumPy converts a list argument with ``np.asarray`` before anything else, and a traced
value cannot become a concrete array; which arguments are array-likes (``np.mean``'s
``a``) and which are sequences of arrays (``np.concatenate``'s ``arrays``) or plain
Python data (a shape, an axis tuple) only NumPy's own dispatcher of each function knows.
So gradc asks it: a list or tuple holding a traced value is handed to the NumPy function
wrapped in a :class:`Pending` of its own type. NumPy's dispatcher names the wrappers that
sit where array-likes go (their types come back in ``__array_function__``'s ``types``);
those become one traced array (NumPy's coercion: a stack of the elements, Python numbers
and NumPy arrays included); the others are given back as the plain list. One rule for the
whole dispatch table, no per-function code.

A list with traced values reaches NumPy two ways: beside a traced argument (``np.dot(x,
[a, b])``: ``Tracer.__array_function__`` wraps and dispatches again), or alone
(``np.mean([a, b])``: NumPy would convert it before any dispatch, so the traced
function's ``np`` routes its functions through :func:`routed`, see
``gradc.trace.array_routing``).

Casts: ``np.int64(t)``, ``np.float32(t)``, ``int(t)``, ``float(t)`` of a traced value in a
routed function are :class:`Cast` objects: the traced ``astype`` on traced values, the
real type for everything else (a dtype, ``isinstance``).

>>> from gradc.trace import trace
>>> print(trace(lambda x: routed(np.mean)([x, 2.0 * x]), np.float64(1.0)).eqns[-1].op)
mean
"""
from __future__ import annotations

import builtins

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.ir.types import DTYPE_NAMES
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops.values import aval, lift


# ---------------------------------------------------------------- NumPy's coercion of nested lists
def has_traced(x) -> bool:
    """Whether ``x`` is traced or a (nested) list or tuple holding a traced value.

    >>> has_traced([1.0, [2.0]])
    False
    """
    if isinstance(x, Traced):
        return True
    if isinstance(x, Pending):
        return True
    return isinstance(x, (list, tuple)) and any(has_traced(v) for v in x)


def build(obj):
    """A nested list or tuple of traced and concrete values as one traced array (NumPy's coercion: the
    elements stacked along a new first axis, their dtypes promoted); concrete values as ``np.asarray``.

    >>> build([1.0, 2.0])
    array([1., 2.])
    """
    obj = plain(obj)
    if isinstance(obj, Traced):
        return obj
    if not isinstance(obj, (list, tuple)) or not has_traced(obj):
        return np.asarray(obj)
    parts = [build(v) for v in obj]
    shapes = {aval(p).shape for p in parts}
    if len(shapes) != 1:
        raise TraceError(f"a list of values with different shapes {sorted(shapes, key=str)} used as one array",
                         hint="give every element the same shape (np.concatenate joins unequal parts)")
    dtype = ew.result_dtype(*parts)
    rows = [sh.reshape(ew.astype(p, dtype), (1,) + aval(p).shape) if isinstance(p, Traced)
            else np.asarray(p, dtype=DTYPE_TYPES[dtype])[None] for p in parts]
    return sh.concatenate(rows, 0)


DTYPE_TYPES = {name: dtype.type for dtype, name in DTYPE_NAMES.items()}


# ---------------------------------------------------------------- asking NumPy's dispatcher
class Pending:
    """A list or tuple holding traced values, passed where NumPy may want an array-like. Each instance has
    its own subclass, so ``__array_function__``'s ``types`` says whether NumPy took it as an array-like.
    It is also a sequence (a dispatcher of a sequence of arrays iterates it)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __iter__(self):
        return iter(self.value)

    def __len__(self):
        return len(self.value)

    def __getitem__(self, key):
        return self.value[key]

    def __array_function__(self, func, types, args, kwargs):
        return call_resolved(func, types, args, kwargs)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(build(x) if isinstance(x, Pending) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)


def _pending(value) -> Pending:
    kind = type("Pending", (Pending,), {"__slots__": ()})
    return kind(value)


def _wrap(value, depth=0):
    """``value`` with each list or tuple holding traced values wrapped (itself, and its elements one level down:
    the elements of a sequence of arrays may be array-likes)."""
    if isinstance(value, (list, tuple)) and not isinstance(value, Pending) and has_traced(value):
        inner = [_wrap(v, depth + 1) for v in value] if depth == 0 else list(value)
        return _pending(tuple(inner) if isinstance(value, tuple) else inner)
    return value


# functions whose dispatcher tells nested lists by ``type(x) is list`` (a wrapper would look like an array): their
# gradc entries take the nested lists of traced values themselves
NESTED_LISTS = frozenset({np.block})
# NumPy's aliases that are plain Python functions (no dispatch): routed as the function they stand for, whose
# sequence of arrays NumPy's dispatcher hands on as it is
_ALIASES = {np.row_stack: np.vstack} if hasattr(np, "row_stack") else {}


def needs_wrapping(args, kwargs, func=None) -> bool:
    """Whether an argument is a list or tuple holding a traced value (not yet wrapped) that NumPy's dispatcher of
    ``func`` should see wrapped."""
    return func not in NESTED_LISTS and any(
        isinstance(a, (list, tuple)) and has_traced(a) for a in (*args, *kwargs.values()))


def wrapped(args, kwargs):
    """``(args, kwargs)`` with their lists of traced values wrapped for NumPy's dispatcher."""
    return tuple(_wrap(a) for a in args), {k: _wrap(v) for k, v in kwargs.items()}


def has_pending(args, kwargs) -> bool:
    return any(isinstance(a, Pending) for a in (*args, *kwargs.values()))


def plain(value, types=()):
    """``value`` with its wrappers resolved: an array-like (its type in ``types``) built, the others given back as
    the list or tuple they wrap."""
    if isinstance(value, Pending):
        if type(value) in types:
            return build(plain(value.value))
        value = value.value
        inner = [plain(v, types) for v in value]
        return tuple(inner) if isinstance(value, tuple) else inner
    return value


def resolved(types, args, kwargs):
    return tuple(plain(a, types) for a in args), {k: plain(v, types) for k, v in kwargs.items()}


DISPATCH: list = []  # gradc's entry for a NumPy function: the tracer's dispatch_function (it builds on this module)


def call_resolved(func, types, args, kwargs):
    """NumPy's ``func`` on arguments holding wrappers: the arrays built, then gradc's entry for ``func``."""
    args, kwargs = resolved(types, args, kwargs)
    return DISPATCH[0](func, args, kwargs)


# ---------------------------------------------------------------- routed NumPy functions (lists without a tracer)
def routed(real):
    """``real`` (a NumPy function or ufunc gradc dispatches) taking lists of traced values as array-likes; the
    same function otherwise.

    >>> routed(np.mean)([1.0, 2.0])
    np.float64(1.5)
    """
    if isinstance(real, np.ufunc):
        return RoutedUfunc(real)
    real = _ALIASES.get(real, real)
    dispatched = hasattr(real, "_implementation")

    def call(*args, **kwargs):
        if any(_dispatches_itself(a) for a in list(args) + list(kwargs.values())):
            return real(*args, **kwargs)  # a collected list: NumPy's protocol gives its stacked rows (collected_list)
        if real in NESTED_LISTS and has_traced(list(args) + list(kwargs.values())):
            return DISPATCH[0](real, args, kwargs)
        if needs_wrapping(args, kwargs):
            if dispatched:
                args, kwargs = wrapped(args, kwargs)
            else:
                args = tuple(build(a) if has_traced(a) else a for a in args)
                kwargs = {k: build(v) if has_traced(v) else v for k, v in kwargs.items()}
        return real(*args, **kwargs)
    call.__name__ = getattr(real, "__name__", "numpy_function")
    call.__qualname__ = getattr(real, "__qualname__", call.__name__)
    call.__doc__ = getattr(real, "__doc__", None)
    call.__wrapped__ = real
    call.gradc_routes = real
    return call


def _dispatches_itself(value) -> bool:
    """A list that answers NumPy's ``__array_function__`` itself (a loop's collected list)."""
    return isinstance(value, list) and hasattr(type(value), "__array_function__")


class RoutedUfunc:
    """A NumPy ufunc whose call takes lists of traced values; its methods (``.at``, ``.reduce``) are the ufunc's."""

    def __init__(self, ufunc):
        self.gradc_routes = ufunc

    def __call__(self, *inputs, **kwargs):
        if any(isinstance(x, (list, tuple)) and has_traced(x) for x in inputs):
            inputs = tuple(build(x) if isinstance(x, (list, tuple)) else x for x in inputs)
        return self.gradc_routes(*inputs, **kwargs)

    def __getattr__(self, name):
        return getattr(self.gradc_routes, name)

    def __repr__(self):
        return repr(self.gradc_routes)

    # it stands for the ufunc: isinstance(np.add, np.ufunc), and a dict keyed by np.add finds it
    @property
    def __class__(self):
        return np.ufunc

    def __eq__(self, other):
        return other is self or other is self.gradc_routes

    def __hash__(self):
        return hash(self.gradc_routes)


ROUTED: dict = {}  # real NumPy function -> its routed stand-in (filled by gradc.trace.array_routing)


# ---------------------------------------------------------------- casts
class Cast:
    """A scalar type (``np.int64``, ``int``, ``float``) whose call on a traced value is the traced cast; for
    anything else it is the type itself (a dtype for NumPy, the class for ``isinstance``).

    >>> INT(2.7), isinstance(3, INT), np.dtype(FLOAT64)
    (2, True, dtype('float64'))
    """

    def __init__(self, real, dtype, python_scalar: bool):
        self.gradc_routes, self.dtype, self._python = real, np.dtype(dtype), python_scalar

    def __call__(self, *args, **kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], Traced):
            return self._traced(args[0])
        if len(args) == 1 and not kwargs and isinstance(args[0], (list, tuple)) and has_traced(args[0]):
            return self._traced(build(args[0]))
        return self.gradc_routes(*args, **kwargs)

    def _traced(self, x):
        t = aval(x)
        if self._python:  # int(x) / float(x): one number, as Python's
            if t.size != 1:
                raise TraceError(f"{self.gradc_routes.__name__}() of a traced array of shape {t.shape}: only an "
                                 "array of one element converts to a Python number",
                                 hint="index one element first (x[0]), or reduce the array (np.sum(x))")
            if t.shape != ():
                x = sh.reshape(x, ())
        if self._python and self.gradc_routes is builtins.int and t.dtype == "bool":
            return ew.astype(x, "i64")
        return ew.astype(x, DTYPE_NAMES[self.dtype])

    def __instancecheck__(self, obj):
        return isinstance(obj, self.gradc_routes)

    def __subclasscheck__(self, cls):
        return issubclass(cls, self.gradc_routes)

    def __getattr__(self, name):
        return getattr(self.gradc_routes, name)

    def __repr__(self):
        return repr(self.gradc_routes)

    def __eq__(self, other):
        return other is self or other == self.gradc_routes

    def __hash__(self):
        return hash(self.gradc_routes)


INT, FLOAT = Cast(builtins.int, np.int64, True), Cast(builtins.float, np.float64, True)
BUILTIN_CASTS = {"int": INT, "float": FLOAT}
NUMPY_CASTS = {dtype.type: Cast(dtype.type, dtype, False) for dtype in DTYPE_NAMES if dtype.kind != "b"}
FLOAT64 = NUMPY_CASTS[np.float64]


# ---------------------------------------------------------------- a Python list read at a traced index
def list_at(value, key):
    """``value[key]`` for a list or tuple ``value`` and a traced integer ``key``: the elements (traced or
    concrete values of one shape) stacked, then read at ``key`` (a traced choice, derivatives to the element
    chosen); None when ``value`` cannot be one array (the caller reports the static-argument fix).

    >>> list_at([1.0, 2.0], 1) is None
    True
    """
    if not isinstance(key, Traced) or not isinstance(value, (list, tuple)) or not value:
        return None
    if aval(key).dtype not in ("i64", "i32") or aval(key).shape != ():
        return None
    for v in value:
        if not (isinstance(v, (Traced, np.ndarray, np.generic, int, float)) and not isinstance(v, bool)):
            return None
    if len({aval(v).shape for v in value}) != 1:
        return None
    stacked = build(list(value))
    return (stacked if isinstance(stacked, Traced) else lift(stacked, key))[key]


__all__ = ["BUILTIN_CASTS", "Cast", "NUMPY_CASTS", "Pending", "ROUTED", "build", "has_traced", "list_at",
           "routed", "wrapped"]
