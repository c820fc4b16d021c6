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

import numpy as np

from gradc.errors import GradcError, TraceError
from gradc.ir.builder import Traced
from gradc.ir.types import DTYPE_NAMES, dtype_name
from gradc.ops import elementwise as ew
from gradc.ops import linalg as la
from gradc.ops import reduce as red
from gradc.ops import shape as sh
from gradc.trace.numpy_dispatch import FUNCTIONS, UFUNC_REDUCE, UFUNCS, index_value

_CONTROL_FLOW_HINT = "use np.where(cond, a, b) to choose between values, or make the condition a Python value"


class Tracer(Traced):
    """A traced NumPy array: has ``shape``/``dtype`` but no numbers."""

    __slots__ = ()
    __array_priority__ = 1000

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
        raise TraceError("a traced value is converted to a Python number (float(), int(), .item() or an index)",
                         hint="keep the computation in NumPy operations; Python numbers are fixed at trace time")

    __float__ = __int__ = __index__ = __complex__ = item = tolist = _no_number

    def __array__(self, dtype=None, copy=None):
        raise TraceError("a traced value was converted to a concrete NumPy array (np.asarray / np.array?)",
                         hint="pass the value on to NumPy functions directly")

    def __setitem__(self, key, value):
        raise TraceError("item assignment on a traced array is not supported",
                         hint="build the result with np.where(mask, new, old) or np.concatenate")

    def __hash__(self):
        return id(self)

    # ---- operators
    def __add__(self, o): return ew.add(self, _operand(o))
    def __radd__(self, o): return ew.add(_operand(o), self)
    def __sub__(self, o): return ew.sub(self, _operand(o))
    def __rsub__(self, o): return ew.sub(_operand(o), self)
    def __mul__(self, o): return ew.mul(self, _operand(o))
    def __rmul__(self, o): return ew.mul(_operand(o), self)
    def __truediv__(self, o): return ew.div(self, _operand(o))
    def __rtruediv__(self, o): return ew.div(_operand(o), self)
    def __pow__(self, o): return ew.power(self, _operand(o))
    def __rpow__(self, o): return ew.power(_operand(o), self)
    def __matmul__(self, o): return la.matmul(self, _operand(o))
    def __rmatmul__(self, o): return la.matmul(_operand(o), self)
    def __neg__(self): return ew.neg(self)
    def __pos__(self): return self
    def __abs__(self): return ew.abs_(self)
    def __lt__(self, o): return ew.less(self, _operand(o))
    def __le__(self, o): return ew.less_equal(self, _operand(o))
    def __gt__(self, o): return ew.greater(self, _operand(o))
    def __ge__(self, o): return ew.greater_equal(self, _operand(o))
    def __eq__(self, o): return ew.equal(self, _operand(o))
    def __ne__(self, o): return ew.not_equal(self, _operand(o))
    def __and__(self, o): return ew.logical_and(self, _operand(o))
    def __or__(self, o): return ew.logical_or(self, _operand(o))
    def __invert__(self): return ew.logical_not(self)

    def __getitem__(self, key):
        return index_value(self, key)

    # ---- methods of ndarray
    def sum(self, axis=None, keepdims=False): return red.sum_(self, axis, keepdims)
    def mean(self, axis=None, keepdims=False): return red.mean(self, axis, keepdims)
    def max(self, axis=None, keepdims=False): return red.max_(self, axis, keepdims)
    def min(self, axis=None, keepdims=False): return red.min_(self, axis, keepdims)
    def prod(self, axis=None, keepdims=False): return red.prod(self, axis, keepdims)
    def argmax(self, axis=None): return red.argmax(self, axis)
    def argmin(self, axis=None): return red.argmin(self, axis)
    def dot(self, o): return la.matmul(self, _operand(o))
    def clip(self, lo=None, hi=None): return FUNCTIONS[np.clip](self, lo, hi)
    def astype(self, dtype): return ew.astype(self, dtype_name(dtype))
    def copy(self): return self
    def flatten(self): return sh.reshape(self, (self.size,))
    ravel = flatten

    def reshape(self, *shape):
        return FUNCTIONS[np.reshape](self, shape[0] if len(shape) == 1 else shape)

    def transpose(self, *axes):
        return sh.transpose(self, None if not axes else (axes[0] if len(axes) == 1 else axes))

    def squeeze(self, axis=None):
        return FUNCTIONS[np.squeeze](self, axis)

    # ---- NumPy protocols
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if kwargs.get("out") is not None:
            raise TraceError(f"np.{ufunc.__name__} writes into an array in place (out= or an augmented assignment "
                             "on a NumPy array) with a traced value", hint="assign a new name: `a = a + b`")
        unsupported = set(kwargs) - {"out"}
        if method == "__call__" and ufunc in UFUNCS and not unsupported:
            return UFUNCS[ufunc](*[_operand(x) for x in inputs])
        if method == "reduce" and ufunc in UFUNC_REDUCE and set(kwargs) <= {"axis", "keepdims", "out"}:
            return UFUNC_REDUCE[ufunc](_operand(inputs[0]), kwargs.get("axis", 0), kwargs.get("keepdims", False))
        what = f"np.{ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        detail = f" with {', '.join(sorted(unsupported))}=" if unsupported and ufunc in UFUNCS else ""
        raise TraceError(f"{what}{detail} is not supported by gradc", hint="see `gradc ops` for what is")

    def __array_function__(self, func, types, args, kwargs):
        impl = FUNCTIONS.get(func)
        if impl is None:
            raise TraceError(f"np.{func.__name__} is not supported by gradc",
                             hint="rewrite it with supported operations (see `gradc ops`)")
        try:
            return impl(*args, **kwargs)
        except TypeError as e:
            if isinstance(e, GradcError):
                raise
            raise TraceError(f"np.{func.__name__} called with arguments gradc does not handle: {e}") from None


def _operand(x):
    """Operands from user code: tracers, NumPy values and Python scalars as they are; lists as arrays."""
    if isinstance(x, (Tracer, np.ndarray, np.generic, float, int, bool)):
        if isinstance(x, np.ndarray) and x.dtype not in DTYPE_NAMES:
            return x.astype(np.float64) if x.dtype.kind == "f" else x.astype(np.int64)
        return x
    if isinstance(x, (list, tuple)):
        return np.asarray(x)
    raise TraceError(f"cannot use a {type(x).__name__} as an array operand",
                     hint="use NumPy arrays, Python floats or ints")
