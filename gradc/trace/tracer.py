"""The NumPy tracer: a traced array with ``shape``/``dtype`` but no numbers.

Plain NumPy code reaches gradc through ``__array_ufunc__``,
``__array_function__`` and Python operators; values Python itself would need
(``bool``, ``float``, ``len`` of a 0-d value) are refused with a clear message.

>>> from gradc.ir.builder import Builder
>>> from gradc.ir.types import TensorType
>>> b = Builder(); x = Tracer(b, b.input("x", TensorType((3,), "f64")))
>>> (x * 2.0).shape
(3,)
"""
from __future__ import annotations

import contextvars
import functools

import numpy as np

from gradc.errors import GradcError, StaticValueNeeded, TraceError
from gradc.ir.builder import Traced
from gradc.ir.dims import AS_VALUE, is_dim_expr, needed_a_number
from gradc.ir.types import DTYPE_NAMES, dtype_name
from gradc.ops import bitwise as bits
from gradc.ops import elementwise as ew
from gradc.ops import linalg as la
from gradc.ops import reduce as red
from gradc.ops import shape as sh
from gradc.ops.sizes import dim_value
from gradc.trace import array_like_dispatch as array_likes
from gradc.trace import (
    dispatch,  # noqa: F401  (merges the op families' tables into numpy_dispatch's)
    ufunc_methods,  # ufunc.accumulate's table
)
from gradc.trace.carried_writes import note_reads
from gradc.trace.inplace import (
    assign,
    check_writable,
    immutable_input,
    setitem,
    track_copy,
    track_view,
    ufunc_at,
    views_taken,
)
from gradc.trace.linalg_dispatch import public_name
from gradc.trace.numpy_dispatch import FUNCTIONS, UFUNC_REDUCE, UFUNCS, parse_index, read_index
from gradc.trace.scipy_dispatch import SCIPY_FUNCTIONS, conversion_error, ufunc_name

STATIC_HINT = ("if the value comes from an argument that steers Python (an index into a list, a trip count), declare "
               "that argument static: static_argnums=(i,) or static_argnames=('name',) on the transform; otherwise "
               "keep the value in NumPy operations (np.int64(x) and float(x) in the traced function's module stay "
               "traced, a list of same-shaped arrays indexed by a traced integer is a traced choice)")
_CONTROL_FLOW_HINT = ("use np.where(cond, a, b) to choose between values, or make the condition a Python value "
                      "(an argument it comes from can be declared static: static_argnums/static_argnames)")


class Tracer(Traced):
    """A traced NumPy array: has ``shape``/``dtype`` but no numbers."""

    __slots__ = ()
    __array_priority__ = 1000

    @classmethod
    def __gradc_bind__(cls, op, args, params):
        note_reads(args)  # arrays of the code around a loop body or branch, read in it (see carried_writes)
        return Traced.__gradc_bind__.__func__(cls, op, args, params)

    # ---- array attributes
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.np_dtype

    @property
    def ndim(self):
        return self.aval.ndim

    @property
    def size(self):
        return self.aval.size

    @property
    def T(self):
        return sh.transpose(self)

    def __len__(self):
        if not self.shape:
            raise TraceError("len() of a 0-d array", hint="a 0-d value has no length; use np.shape(x) or x.size")
        if not isinstance(self.shape[0], int):  # Python's len() must return an int
            raise StaticValueNeeded(f"len() of an array whose length {self.shape[0]} is a named size",
                                    hint="use x.shape[0]: it stays a size read at run time")
        return self.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __repr__(self):
        return f"Tracer<{self.aval}>({getattr(self.atom, 'name', 'const')})"

    # ---- values that Python would need: refused with a clear message
    def __bool__(self):
        raise TraceError("a Python `if`, `while`, `and`/`or` or `bool()` depends on a traced value",
                         hint=_CONTROL_FLOW_HINT)

    def _no_number(self, *args):
        raise StaticValueNeeded(
            "a traced value is converted to a Python number where Python needs a concrete one (a list or tuple "
            "index, a range() bound, int()/float()/math.* outside the traced function's module, operator.index, "
            "a torch-style .item())",
            hint=STATIC_HINT)

    __float__ = __int__ = __index__ = __complex__ = _no_number

    def item(self, *args):
        """``x.item()``: the one element as a traced 0-d value (a Python number is fixed at trace time)."""
        out = self[args] if args else self
        if out.size != 1:
            raise TraceError(f"x.item() of a traced array of shape {self.shape}: it has more than one element",
                             hint="index one element (x.item(i) or x[i]) or reduce the array (np.sum(x))")
        return sh.reshape(out, ()) if out.shape else out.copy()

    def tolist(self):
        """``x.tolist()``: nested lists of traced 0-d values (the shape must be known)."""
        if not self.shape:
            return self
        if not all(isinstance(d, int) for d in self.shape):
            raise StaticValueNeeded(f"x.tolist() of an array of named shape {self.shape}",
                                    hint="compile for a fixed size, or keep the array as an array")
        return [self[i].tolist() for i in range(self.shape[0])]

    def __array__(self, dtype=None, copy=None):
        raise conversion_error(StaticValueNeeded(
            "a traced value was converted to a concrete NumPy array (np.asarray / np.array, or a traced index into "
            "a NumPy array the function holds?)",
            hint="pass the value on to NumPy functions directly; lists of traced values work in the NumPy calls of "
                 "the traced function's module (np.mean([a, b]), np.array([...]); see gradc.trace.array_routing), "
                 "elsewhere build the array with np.stack([...]); to index a constant array with a traced index, "
                 "make it a traced value first (e.g. y = x * 0 + y)"))

    def __setitem__(self, key, value):
        # a functional update the object is rebound to (gradc.trace.inplace); refused on inputs
        setitem(self, key, value)

    def wrap(self, atom, builder=None):
        return Tracer(builder or self.builder, atom)  # a copy's results are ordinary values

    # ---- in-place operators: NumPy's meaning on values the function computed, refused on inputs and views
    def _update(self, symbol, op, other):
        what = f"`{symbol}=`"
        if immutable_input(self):  # a float argument: `b = x; b += 1` leaves x as it was
            return op(self, _operand(other))
        check_writable(self, what, owned=type(self) is _Copy and self.atom is self.copied)
        assign(self, op(self, _operand(other)), what, ew.astype)  # a view writes through into its base
        return self

    def __iadd__(self, o): return self._update("+", ew.add, o)
    def __isub__(self, o): return self._update("-", ew.sub, o)
    def __imul__(self, o): return self._update("*", ew.mul, o)
    def __itruediv__(self, o): return self._update("/", ew.div, o)
    def __ipow__(self, o): return self._update("**", ew.power, o)
    def __imatmul__(self, o): return self._update("@", la.matmul, o)
    def __iand__(self, o): return self._update("&", bits.bitwise_and, o)
    def __ior__(self, o): return self._update("|", bits.bitwise_or, o)
    def __ixor__(self, o): return self._update("^", bits.bitwise_xor, o)
    def __ilshift__(self, o): return self._update("<<", bits.left_shift, o)
    def __irshift__(self, o): return self._update(">>", bits.right_shift, o)

    # ---- ndarray attributes a traced array cannot have: refused with the reason
    def __getattr__(self, name):
        function = _METHOD_FUNCTIONS.get(name)
        if function is not None and function in FUNCTIONS:  # x.var(...) is np.var(x, ...), once a family has it
            return functools.partial(FUNCTIONS[function], self)
        refusal = _REFUSED.get(name)
        if refusal is not None:
            raise TraceError(refusal[0].format(name=name), hint=refusal[1])
        if not name.startswith("_") and hasattr(np.ndarray, name):
            raise TraceError(f"the ndarray method or attribute .{name} is not supported on traced arrays",
                             hint="see `gradc ops` for what is supported (or use the np. function)")
        raise AttributeError(f"traced array has no attribute {name!r}")

    def __hash__(self):
        return id(self)

    # ---- operators
    def __add__(self, o): return ew.add(self, _operand(o, self))
    def __radd__(self, o): return ew.add(_operand(o, self), self)
    def __sub__(self, o): return ew.sub(self, _operand(o, self))
    def __rsub__(self, o): return ew.sub(_operand(o, self), self)
    def __mul__(self, o): return ew.mul(self, _operand(o, self))
    def __rmul__(self, o): return ew.mul(_operand(o, self), self)
    def __truediv__(self, o): return ew.div(self, _operand(o, self))
    def __rtruediv__(self, o): return ew.div(_operand(o, self), self)
    def __pow__(self, o): return ew.power(self, _operand(o, self))
    def __rpow__(self, o): return ew.power(_operand(o, self), self)
    def __mod__(self, o): return UFUNCS[np.mod](self, _operand(o, self))
    def __rmod__(self, o): return UFUNCS[np.mod](_operand(o, self), self)
    def __floordiv__(self, o): return UFUNCS[np.floor_divide](self, _operand(o, self))
    def __rfloordiv__(self, o): return UFUNCS[np.floor_divide](_operand(o, self), self)
    def __matmul__(self, o): return la.matmul(self, _operand(o, self))
    def __rmatmul__(self, o): return la.matmul(_operand(o, self), self)
    def __neg__(self): return ew.neg(self)
    def __pos__(self): return self
    def __abs__(self): return ew.abs_(self)
    def __lt__(self, o): return ew.less(self, _operand(o, self))
    def __le__(self, o): return ew.less_equal(self, _operand(o, self))
    def __gt__(self, o): return ew.greater(self, _operand(o, self))
    def __ge__(self, o): return ew.greater_equal(self, _operand(o, self))
    def __eq__(self, o): return ew.equal(self, _operand(o, self))
    def __ne__(self, o): return ew.not_equal(self, _operand(o, self))
    def __and__(self, o): return bits.bitwise_and(self, _operand(o, self))
    def __rand__(self, o): return bits.bitwise_and(_operand(o, self), self)
    def __or__(self, o): return bits.bitwise_or(self, _operand(o, self))
    def __ror__(self, o): return bits.bitwise_or(_operand(o, self), self)
    def __xor__(self, o): return bits.bitwise_xor(self, _operand(o, self))
    def __rxor__(self, o): return bits.bitwise_xor(_operand(o, self), self)
    def __lshift__(self, o): return bits.left_shift(self, _operand(o, self))
    def __rlshift__(self, o): return bits.left_shift(_operand(o, self), self)
    def __rshift__(self, o): return bits.right_shift(self, _operand(o, self))
    def __rrshift__(self, o): return bits.right_shift(_operand(o, self), self)
    def __invert__(self): return bits.invert(self)

    def __getitem__(self, key):
        spec, arrays = parse_index(self.aval, key)
        out = read_index(self, spec, arrays)
        if arrays:
            return out  # advanced indexing gives a copy in NumPy
        if all(item[0] == "int" for item in spec):
            track_copy(out)  # so does reading one element
            return out
        # basic indexing gives a view, as in NumPy; it lives where it was read (a branch keeps its ops)
        return _View(out.builder, out.atom, self, spec)

    # ---- methods of ndarray
    def sum(self, axis=None, keepdims=False): return red.sum_(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return red.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return red.max_(self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return red.min_(self, axis, keepdims)
    def prod(self, axis=None, keepdims=False): return red.prod(self, axis, keepdims)
    def argmax(self, axis=None): return red.argmax(self, axis)
    def argmin(self, axis=None): return red.argmin(self, axis)
    def dot(self, o): return la.matmul(self, _operand(o, self))
    def clip(self, lo=None, hi=None): return FUNCTIONS[np.clip](self, lo, hi)
    def astype(self, dtype, copy=True):
        out = ew.astype(self, dtype_name(dtype), explicit=True)  # NumPy's: complex to real drops the imaginary part
        return out.copy() if out is self and copy else out
    def copy(self, order="K"): return _Copy(self.builder, self.atom)
    def flatten(self): return sh.reshape(self, (self.size,))
    ravel = flatten

    def reshape(self, *shape):
        return FUNCTIONS[np.reshape](self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes):
        return sh.transpose(self, None if not axes else (axes[0] if len(axes) == 1 else axes))

    def squeeze(self, axis=None):
        return FUNCTIONS[np.squeeze](self, axis)

    # ---- matrix methods (gradc.ops.contract)
    def diagonal(self, offset=0, axis1=0, axis2=1): return FUNCTIONS[np.diagonal](self, offset, axis1, axis2)
    def trace(self, offset=0, axis1=0, axis2=1, dtype=None, out=None):
        return FUNCTIONS[np.trace](self, offset, axis1, axis2, dtype, out)
    def swapaxes(self, axis1, axis2): return FUNCTIONS[np.swapaxes](self, axis1, axis2)

    @property
    def mT(self):
        return FUNCTIONS[np.swapaxes](self, -1, -2)

    @property
    def real(self):
        return FUNCTIONS[np.real](self)

    @property
    def imag(self):
        return FUNCTIONS[np.imag](self)

    def conj(self): return FUNCTIONS[np.conj](self)
    def conjugate(self): return FUNCTIONS[np.conj](self)

    # ---- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.pop("out", None)
        if out is not None:
            return _ufunc_into(ufunc, method, inputs, kwargs, out)
        if method == "at" and not kwargs and isinstance(inputs[0], Tracer):  # np.add.at(y, idx, v), y traced
            ufunc_at(ufunc, *inputs)
            return None
        if method == "at":
            raise conversion_error(TraceError(
                f"{ufunc_name(ufunc)}.at writes a traced value into a NumPy array in place",
                hint="start from a traced array, e.g. `out = np.zeros_like(x)`, then write into it"))
        unsupported = set(kwargs)
        if method == "__call__" and ufunc in UFUNCS and not unsupported:
            return UFUNCS[ufunc](*[_operand(x) for x in inputs])
        routed = SCIPY_FUNCTIONS.get(ufunc_name(ufunc)) if method == "__call__" else None
        if routed is not None:  # a SciPy ufunc (scipy.special.erf) called where routing by name did not reach
            return routed(*inputs, **kwargs)
        if method == "reduce" and ufunc in UFUNC_REDUCE and set(kwargs) <= {"axis", "keepdims", "out"}:
            return UFUNC_REDUCE[ufunc](_operand(inputs[0]), kwargs.get("axis", 0), kwargs.get("keepdims", False))
        if method == "reduce" and ufunc in ufunc_methods.UFUNC_ACCUMULATE:  # dtype=, initial=, np.subtract.reduce
            return ufunc_methods.reduce(ufunc, _operand(inputs[0]), **kwargs)
        if method == "accumulate" and ufunc in ufunc_methods.UFUNC_ACCUMULATE:  # np.maximum.accumulate(x), ...
            return ufunc_methods.accumulate(ufunc, _operand(inputs[0]), **kwargs)
        what = ufunc_name(ufunc) + ("" if method == "__call__" else f".{method}")
        detail = f" with {', '.join(sorted(unsupported))}=" if unsupported and ufunc in UFUNCS else ""
        refusal = TraceError(f"{what}{detail} is not supported by gradc", hint="see `gradc ops` for what is")
        raise conversion_error(refusal)  # named after the SciPy function that called the ufunc, if one did

    def __array_function__(self, func, types, args, kwargs):
        if array_likes.has_pending(args, kwargs):  # lists of traced values, wrapped: NumPy said which are arrays
            return array_likes.call_resolved(func, types, args, kwargs)
        if func in FUNCTIONS and array_likes.needs_wrapping(args, kwargs, func):  # ask NumPy's dispatcher which are
            args, kwargs = array_likes.wrapped(args, kwargs)
            return func(*args, **kwargs)
        return dispatch_function(func, args, kwargs)


def _deferring(method):
    """``method``, returning NotImplemented for an operand that says it handles the operation itself
    (``__array_ufunc__ = None``, NumPy's protocol: ``x * Polynomial(c)`` is the polynomial's ``__rmul__``)."""
    def call(self, o):
        if getattr(type(o), "__array_ufunc__", False) is None:
            return NotImplemented
        return method(self, o)
    call.__name__ = method.__name__
    return call


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__"):
    setattr(Tracer, _name, _deferring(getattr(Tracer, _name)))


def dispatch_function(func, args, kwargs):
    """gradc's entry for the NumPy function ``func`` on arguments holding traced values."""
    impl = FUNCTIONS.get(func)
    if impl is None:
        raise TraceError(f"{public_name(func)} is not supported by gradc",
                         hint="rewrite it with supported operations (see `gradc ops`)")
    try:
        return impl(*args, **kwargs)
    except TypeError as e:
        if isinstance(e, GradcError):
            raise
        if any(isinstance(a, Tracer) and a.aval.is_symbolic for a in args) and needed_a_number(e):
            raise StaticValueNeeded(f"{public_name(func)} needs a named size of its arguments as a number here",
                                    hint="compile for a fixed size along that axis") from None
        raise TraceError(f"{public_name(func)} called with arguments gradc does not handle: {e}") from None


array_likes.DISPATCH.append(dispatch_function)


class _Copy(Tracer):
    """``x.copy()``: a new array object that shares the traced value until it is first written."""

    __slots__ = ("copied", "views_before")

    def __init__(self, builder, atom):
        super().__init__(builder, atom)
        self.copied = atom
        self.views_before = views_taken(builder, atom)  # those are the source's views, never the copy's


class _View(Tracer):
    """``x[basic index]``: a view of ``x``, as in NumPy. Writing into it writes into ``x``; a write into ``x``
    refreshes it (``gradc.trace.inplace.store``)."""

    __slots__ = ("_base", "_spec", "__weakref__")

    def __init__(self, builder, atom, base, spec):
        super().__init__(builder, atom)
        self._base, self._spec = base, spec
        track_view(self)


# ndarray methods that are the NumPy function of the same name with the array first (the families' dispatch
# tables in gradc/trace/*_dispatch.py give the functions; a method whose function no table has stays refused)
_METHOD_FUNCTIONS = {name: getattr(np, name) for name in (
    "var", "std", "cumsum", "cumprod", "round", "repeat", "take", "argsort", "any", "all", "nonzero", "conj",
    "conjugate", "compress", "searchsorted")} | {"ptp": np.ptp}
_IN_PLACE = "x.{name}() changes an array in place, which a traced array cannot do"
_MEMORY = "x.{name} describes an array's memory; a traced array has a shape and a dtype but no memory"
_REFUSED = {
    "sort": (_IN_PLACE, "use `x = np.sort(x)`, which returns a new sorted array"),
    "partition": (_IN_PLACE, "gradc has no partition; see `gradc ops` for what is supported"),
    "fill": (_IN_PLACE, "build a new array with np.full_like(x, value)"),
    "resize": (_IN_PLACE, "use x.reshape(...) for a new array of the same size"),
    "put": (_IN_PLACE, "build a new array with np.where(mask, new, x)"),
    "itemset": (_IN_PLACE, "build a new array with np.where(mask, new, x)"),
    "setfield": (_IN_PLACE, "build a new array with np.where(mask, new, x)"),
    "setflags": (_IN_PLACE, "a traced array has no flags to set; remove the call"),
    "byteswap": ("x.{name}() works on an array's bytes, which a traced array does not have",
                 "remove the call; convert types with .astype(...)"),
    "flags": (_MEMORY, "use x.shape, x.dtype, x.ndim or x.size"),
    "strides": (_MEMORY, "use x.shape, x.dtype, x.ndim or x.size"),
    "data": (_MEMORY, "use x.shape, x.dtype, x.ndim or x.size"),
    "ctypes": (_MEMORY, "use x.shape, x.dtype, x.ndim or x.size"),
    "base": (_MEMORY, "use x.shape, x.dtype, x.ndim or x.size"),
}


def _ufunc_into(ufunc, method, inputs, kwargs, out):
    """``np.add(a, b, out=y)``: into a traced value the function computed, as ``y += ...`` would; never into an
    input, a view or a concrete NumPy array."""
    out = out if isinstance(out, tuple) else (out,)
    target = out[0] if len(out) == 1 else None
    what = f"np.{ufunc.__name__}(..., out=...)"
    if not isinstance(target, Tracer):
        raise conversion_error(TraceError(
            f"{what} writes a traced value into a NumPy array in place (out= or an augmented assignment on a "
            "NumPy array)", hint="assign a new name: `a = a + b`"))
    check_writable(target, what, owned=type(target) is _Copy and target.atom is target.copied)
    result = target.__array_ufunc__(ufunc, method, *inputs, **kwargs)
    assign(target, result, what, ew.astype)
    return target


TRACING: contextvars.ContextVar = contextvars.ContextVar("gradc_tracing", default=None)  # the outermost Builder


def size_operand(dim, dtype: str = "i64"):
    """A named size (``X.shape[0]`` of ``f64[n,3]``, or ``n - 1``) as a traced scalar of the trace in progress.

    >>> size_operand(3)
    3
    """
    root = TRACING.get()
    if root is None or not is_dim_expr(dim):
        return dim
    return dim_value(dim, Tracer(root, None), dtype)


AS_VALUE.append(size_operand)



def _operand(x, like=None):
    """Operands from user code: tracers, NumPy values and Python scalars as they are; lists as arrays;
    a named size (``X.shape[0]`` of ``f64[n,3]``) as a value read at run time, typed like the tracer ``like``."""
    if isinstance(x, (Tracer, np.ndarray, np.generic, float, int, bool, complex)):
        if isinstance(x, np.ndarray) and x.dtype not in DTYPE_NAMES:
            kind = x.dtype.kind
            return x.astype(np.float64 if kind == "f" else np.complex128 if kind == "c" else np.int64)
        return x
    if isinstance(x, (list, tuple)):
        return array_likes.build(x)  # NumPy's coercion, traced elements included
    if isinstance(x, array_likes.Pending):
        return array_likes.build(x)
    if is_dim_expr(x) and like is not None:
        return dim_value(x, like, like.aval.dtype if like.aval.is_float else "i64")
    raise TraceError(f"cannot use a {type(x).__name__} as an array operand",
                     hint="use NumPy arrays, Python floats, ints or complex numbers")
