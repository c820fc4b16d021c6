"""Abstract values: the shape and dtype a traced value carries.

>>> TensorType((5, 3), "f64")
f64[5,3]
>>> TensorType((), "f32").np_dtype
dtype('float32')
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradc.ir.dims import as_dim, parse_dim, prod, shape_text

DTYPE_NAMES = {
    np.dtype(np.float64): "f64",
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",  # NumPy's rules: float16 arithmetic stays float16 (the C target refuses it)
    np.dtype(np.int64): "i64",
    np.dtype(np.int32): "i32",
    np.dtype(np.int16): "i16",  # the narrow integers are the torch facade's (int16, int8, uint8)
    np.dtype(np.int8): "i8",
    np.dtype(np.uint8): "u8",
    np.dtype(np.bool_): "bool",
    np.dtype(np.complex64): "c64",
    np.dtype(np.complex128): "c128",
}
NP_DTYPES = {name: dt for dt, name in DTYPE_NAMES.items()}
FLOAT_DTYPES = ("f16", "f32", "f64")  # real floats only: complex dtypes are COMPLEX_DTYPES
COMPLEX_DTYPES = ("c64", "c128")
INT_DTYPES = ("i64", "i32", "i16", "i8", "u8")
INEXACT_DTYPES = FLOAT_DTYPES + COMPLEX_DTYPES  # the dtypes a derivative flows through
REAL_OF_COMPLEX = {"c64": "f32", "c128": "f64"}
COMPLEX_OF_REAL = {"f32": "c64", "f64": "c128"}


def dtype_name(dtype) -> str:
    """gradc's short name of a NumPy dtype.

    >>> dtype_name(np.float32)
    'f32'
    """
    try:
        return DTYPE_NAMES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"unsupported dtype {dtype!r}; gradc handles float16, float32, float64, complex64, complex128, "
                        "int32, int64 and bool") from None


@dataclass(frozen=True)
class TensorType:
    """Shape (a tuple of dimensions: ints, or size expressions such as ``n``; see ``gradc.ir.dims``) and
    dtype (a short name such as ``"f64"``) of a value.

    >>> t = TensorType((2, 3), "f64"); t.size, t.ndim
    (6, 2)
    """

    shape: tuple
    dtype: str

    def __post_init__(self):
        shape = self.shape
        if shape is not None and not all(type(d) is int for d in shape):  # canonical dims: int when known
            object.__setattr__(self, "shape", tuple(as_dim(d) for d in shape))

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self):
        """The number of elements: an int, or a size expression when the shape has names."""
        return prod(self.shape)

    @property
    def is_symbolic(self) -> bool:
        return not all(type(d) is int for d in self.shape)

    @property
    def np_dtype(self) -> np.dtype:
        return NP_DTYPES[self.dtype]

    @property
    def is_float(self) -> bool:
        """A real floating dtype (f32/f64); complex dtypes answer ``is_complex``."""
        return self.dtype in FLOAT_DTYPES

    @property
    def is_complex(self) -> bool:
        return self.dtype in COMPLEX_DTYPES

    @property
    def is_inexact(self) -> bool:
        """Real or complex floating: the dtypes a derivative flows through."""
        return self.dtype in INEXACT_DTYPES

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dtype: str) -> "TensorType":
        return TensorType(self.shape, dtype)

    def __repr__(self) -> str:
        return f"{self.dtype}[{shape_text(self.shape)}]"

    __str__ = __repr__


@dataclass(frozen=True)
class TupleType:
    """The type of an equation with several results (a loop's carried values, a branch's outputs).

    Only ``element`` equations read such a value; each takes out one item.

    >>> TupleType((TensorType((3,), "f64"), TensorType((), "i64")))
    (f64[3], i64[])
    """

    items: tuple
    shape = None  # not an array: code that asks for a shape must handle tuples first
    dtype = "tuple"
    is_float = is_complex = is_inexact = False

    def __repr__(self) -> str:
        return "(" + ", ".join(map(repr, self.items)) + ("," if len(self.items) == 1 else "") + ")"

    __str__ = __repr__


@dataclass(frozen=True)
class StackType:
    """A stack of values of type ``item``, one per iteration of a loop whose trip count is known only when it
    runs (a ``while`` loop's tape). Read and written by loops only; its value is an array ``(trips, *item.shape)``.

    >>> StackType(TensorType((3,), "f64"))
    stack(f64[3])
    """

    item: TensorType
    shape = None
    dtype = "stack"
    is_float = is_complex = is_inexact = False

    def __repr__(self) -> str:
        return f"stack({self.item!r})"

    __str__ = __repr__


def type_of_array(value) -> TensorType:
    """The TensorType of a concrete NumPy value.

    >>> type_of_array(np.zeros((2, 2), np.float32))
    f32[2,2]
    """
    if type(value) is np.ndarray:  # fast path: the shape is already a tuple of ints
        t = _TYPES.get((value.shape, value.dtype))
        if t is not None:
            return t
    arr = np.asarray(value)
    shape = tuple(int(d) for d in arr.shape)
    t = TensorType(shape, dtype_name(arr.dtype))
    if len(_TYPES) < 4096:
        _TYPES[(shape, arr.dtype)] = t
    return t


_TYPES: dict = {}  # (shape, np.dtype) -> TensorType, for concrete arrays


def parse_type(text: str) -> TensorType:
    """Parse ``"f64[5,3]"`` / ``"f32[]"`` / ``"f64[n,10]"`` (a named size: one compile for every n) into a
    TensorType.

    >>> parse_type("f64[5, 3]"), parse_type("f64[n,10]")
    (f64[5,3], f64[n,10])
    """
    text = text.strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        text = text[1:-1].strip()  # an annotation under ``from __future__ import annotations`` keeps its quotes
    if not text.endswith("]") or "[" not in text:
        raise ValueError(f"malformed type {text!r}: expected e.g. f64[5,3] or f64[]")
    name, dims = text[:-1].split("[", 1)
    if name not in NP_DTYPES:
        raise ValueError(f"unknown dtype {name!r} in {text!r}: use one of {', '.join(NP_DTYPES)}")
    dims = dims.strip()
    try:
        shape = tuple(parse_dim(d) for d in dims.split(",")) if dims else ()
    except ValueError:
        raise ValueError(f"malformed shape in {text!r}: a dimension is an integer or a size name such as n "
                         "(letters, digits, _)") from None
    if any(type(d) is int and d < 0 for d in shape):
        raise ValueError(f"negative dimension in {text!r}")
    return TensorType(shape, name)
