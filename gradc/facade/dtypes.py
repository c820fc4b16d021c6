"""torch-style dtype objects and the promotion rule of the facade.

>>> str(float32), float32.is_floating_point
('torch.float32', True)
"""
from __future__ import annotations

import numpy as np


class dtype:  # noqa: N801 - torch spelling
    """A named element type backed by a NumPy dtype."""

    def __init__(self, name, np_dtype, kind, legacy):
        self.name, self.np, self.kind, self.legacy = name, np.dtype(np_dtype), kind, legacy

    @property
    def is_floating_point(self):
        return self.kind == 2

    @property
    def is_complex(self):
        return self.kind == 3

    @property
    def is_signed(self):
        return self.kind >= 2 or self.np.kind == "i"

    @property
    def itemsize(self):
        return self.np.itemsize

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = dtype("float16", np.float16, 2, "HalfTensor")
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")
uint8 = dtype("uint8", np.uint8, 1, "ByteTensor")
int8 = dtype("int8", np.int8, 1, "CharTensor")
int16 = dtype("int16", np.int16, 1, "ShortTensor")
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
bool_ = dtype("bool", np.bool_, 0, "BoolTensor")
complex64 = dtype("complex64", np.complex64, 3, "ComplexFloatTensor")  # kind 3: above the floats in promotion
complex128 = dtype("complex128", np.complex128, 3, "ComplexDoubleTensor")
ALL = (float16, float32, float64, uint8, int8, int16, int32, int64, bool_, complex64, complex128)
_BY_NP = {d.np: d for d in ALL}
DEFAULT = [float32]
_NP_DTYPE_TYPES = frozenset(type(d.np) for d in ALL)  # np.dtype subclasses (Float64DType, ...)


def _by_name(name):
    return next(d for d in ALL if d.name == name)


def from_np(np_dtype) -> dtype:
    """The facade dtype of a NumPy dtype (other ints become int64, other floats float64)."""
    if type(np_dtype) in _NP_DTYPE_TYPES:
        d = _BY_NP.get(np_dtype)
        if d is not None:
            return d
    nd = np.dtype(np_dtype)
    if nd in _BY_NP:
        return _BY_NP[nd]
    if nd.kind in "iu":
        return int64
    if nd.kind == "b":
        return bool_
    if nd.kind == "c":  # complex256 and the like: the widest complex the facade holds
        return complex128
    return float64


def to_dtype(d) -> dtype:
    """Accept a facade dtype, a NumPy dtype or a Python type (float, int, bool)."""
    if d is None or isinstance(d, dtype):
        return d
    if d is float:
        return DEFAULT[0]
    if d is int:
        return int64
    if d is bool:
        return bool_
    if d is complex:
        return default_complex()
    return from_np(d)


def default_complex() -> dtype:
    """torch's default complex dtype: the complex of the default float dtype.

    >>> default_complex()
    torch.complex64
    """
    return complex128 if DEFAULT[0] is float64 else complex64


def complex_of(d: dtype) -> dtype:
    """The complex dtype whose parts are ``d`` (float64 -> complex128, any narrower float -> complex64).

    >>> complex_of(float64), complex_of(complex64)
    (torch.complex128, torch.complex64)
    """
    if d.kind == 3:
        return d
    return complex128 if d is float64 else complex64


def real_of(d: dtype) -> dtype:
    """The real dtype of a complex dtype's parts (``d`` itself when real).

    >>> real_of(complex128)
    torch.float64
    """
    return {"complex64": float32, "complex128": float64}.get(d.name, d)


def refuse_complex_into_real(np_dtype, value) -> None:
    """torch's error for a complex number written into real storage (``x.fill_(1j)``, ``x[0] = 1j``): NumPy would
    drop the imaginary part silently.

    >>> refuse_complex_into_real(np.float32, 1j)
    Traceback (most recent call last):
    RuntimeError: value cannot be converted to type float without overflow
    """
    if np.dtype(np_dtype).kind != "c" and np.iscomplexobj(value):
        name = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "int64_t",
                "int32": "int", "int16": "short", "int8": "signed char", "uint8": "unsigned char",
                "bool": "bool"}.get(np.dtype(np_dtype).name, np.dtype(np_dtype).name)
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def _wider(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a.kind != b.kind:
        if a.kind + b.kind == 5:  # complex meets float: torch keeps the wider precision (c64 + f64 -> c128)
            return complex_of(_wider(real_of(a), real_of(b)))
        return a if a.kind > b.kind else b
    # within a category torch's table is NumPy's: the narrowest type holding both (uint8 with int8 -> int16)
    return from_np(np.promote_types(a.np, b.np))


def _combine(higher, lower):
    """torch's ``combine_categories``: ``higher`` (dimensioned, then 0-d) wins unless ``lower`` is of a higher
    category; a complex ``lower`` under a float ``higher`` takes the float's precision."""
    if higher is None:
        return lower
    if lower is None or higher.kind >= lower.kind:
        return higher
    if lower.kind == 3 and higher.kind == 2:
        return complex_of(higher)
    return lower


def promote(*operands) -> dtype:
    """torch's result dtype: dimensioned tensors beat 0-d tensors, which beat Python scalars, within a category.

    ``operands`` are facade Tensors or Python numbers. A higher category (bool < int < float < complex)
    always wins; a Python float meeting only integers gives the default float dtype, a Python complex the
    default complex dtype (complex128 when it meets float64).

    >>> from gradc.facade.creation import tensor
    >>> promote(tensor([1.0], dtype=float64), 1j), promote(tensor([1j]), tensor(1.0, dtype=float64))
    (torch.complex128, torch.complex64)
    """
    if len(operands) == 2:  # two tensors of one dtype (the common case)
        da, db = getattr(operands[0], "_data", None), getattr(operands[1], "_data", None)
        if da is not None and db is not None and da.dtype == db.dtype:
            return from_np(da.dtype)
    dims = zero = None
    scal_kind = -1
    for x in operands:
        d = getattr(x, "dtype", None)
        if isinstance(d, dtype):
            if x.dim() > 0:
                dims = _wider(dims, d)
            else:
                zero = _wider(zero, d)
        elif isinstance(x, bool):
            scal_kind = max(scal_kind, 0)
        elif isinstance(x, int):
            scal_kind = max(scal_kind, 1)
        elif isinstance(x, complex):
            scal_kind = 3
        else:
            scal_kind = max(scal_kind, 2)
    scalar = None if scal_kind < 0 else (bool_, int64, DEFAULT[0], default_complex())[scal_kind]
    return _combine(dims, _combine(zero, scalar))
