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

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


float16 = dtype("float16", np.float16, 2, "HalfTensor")
float32 = dtype("float32", np.float32, 2, "FloatTensor")
float64 = dtype("float64", np.float64, 2, "DoubleTensor")
int32 = dtype("int32", np.int32, 1, "IntTensor")
int64 = dtype("int64", np.int64, 1, "LongTensor")
bool_ = dtype("bool", np.bool_, 0, "BoolTensor")
ALL = (float16, float32, float64, int32, int64, bool_)
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
    if nd.kind == "c":  # never drop the imaginary part silently
        raise TypeError(f"gradc's Tensor facade has real tensors only; it cannot hold {nd.name} values (torch's "
                        "complex dtypes). Differentiate NumPy code with complex values through gradc.grad instead")
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
    return from_np(d)


def _rank(d):
    order = {"float16": 0, "float32": 1, "float64": 2, "int32": 0, "int64": 1, "bool": 0}
    return order[d.name]


def _wider(a, b):
    if a is None:
        return b
    if b is None:
        return a
    if a.kind != b.kind:
        return a if a.kind > b.kind else b
    return a if _rank(a) >= _rank(b) else b


def promote(*operands) -> dtype:
    """torch's result dtype: dimensioned tensors beat 0-d tensors, which beat Python scalars, within a category.

    ``operands`` are facade Tensors or Python numbers. A higher category (bool < int < float) always wins;
    a Python float meeting only integers gives the default float dtype.
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
        else:
            scal_kind = max(scal_kind, 2)
    best = dims
    if zero is not None and (best is None or zero.kind > best.kind):
        best = zero
    if scal_kind >= 0 and (best is None or scal_kind > best.kind):
        best = {0: bool_, 1: int64, 2: DEFAULT[0]}[scal_kind]
    return best
