"""torch's bitwise ops on integer and boolean tensors: ``bitwise_and``/``or``/``xor``/``not``, the shifts, and the
operators ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` (reflected and in place: ``mask &= other``).

The result dtype is torch's promotion of the operands (``bool_tensor & 1`` is int64); on booleans the ops are
logic. Floating and complex operands are refused with torch's messages. No gradient flows (integers and
booleans do not require grad); under ``torch.compile`` they trace as gradc's bitwise ops.

>>> import gradc.torch as torch
>>> torch.tensor([1, 5, 11]) ^ torch.tensor([2, 7, 10])
tensor([3, 2, 1])
>>> torch.tensor([True, False]) & torch.tensor([True, True])
tensor([ True, False])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.bitwise as bw
import gradc.ops.elementwise as ew
from gradc.facade import dtypes
from gradc.facade.functional import scalar_array
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.ir.types import DTYPE_NAMES

_TORCH_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
                     "complex128": "ComplexDouble"}
# name -> (torch's kernel name in its refusal, gradc op)
_BINARY = {"bitwise_and": ("bitwise_and", bw.bitwise_and), "bitwise_or": ("bitwise_or", bw.bitwise_or),
           "bitwise_xor": ("bitwise_xor", bw.bitwise_xor), "bitwise_left_shift": ("lshift", bw.left_shift),
           "bitwise_right_shift": ("rshift", bw.right_shift)}


def _binary(name):
    kernel, op = _BINARY[name]

    def fn(input, other, *, out=None):  # noqa: A002 - torch's names
        if not isinstance(input, Tensor) and not isinstance(other, Tensor):
            input = Tensor._wrap(np.asarray(input))  # noqa: A001
        dt = dtypes.promote(input, other)
        if dt.kind >= 2:
            raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{_TORCH_TYPE_NAMES[dt.name]}\'')
        np_dt = dt.np

        def compute(x, y):
            return op(bw_cast(x, np_dt), bw_cast(y, np_dt))
        result = record(name.capitalize() + "Backward0", compute, [input, other], nondiff=True)
        if out is not None:
            from gradc.facade.torch_args import with_out
            return with_out(result, out, name)
        return result
    fn.__name__ = fn.__qualname__ = name
    return fn


def bw_cast(v, np_dt):
    """``v`` (an array, a traced value or a Python number) in the result dtype ``np_dt``."""
    if isinstance(v, (bool, int)):
        return scalar_array(v, dtypes.from_np(np_dt))
    return v if getattr(v, "dtype", None) == np_dt else ew.astype(v, DTYPE_NAMES[np_dt])


bitwise_and = _binary("bitwise_and")
bitwise_or = _binary("bitwise_or")
bitwise_xor = _binary("bitwise_xor")
bitwise_left_shift = _binary("bitwise_left_shift")
bitwise_right_shift = _binary("bitwise_right_shift")


def bitwise_not(input, *, out=None):  # noqa: A002 - torch's name
    if input.dtype.kind >= 2:
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_TORCH_TYPE_NAMES[input.dtype.name]}\'')
    result = record("BitwiseNotBackward0", bw.invert, [input], nondiff=True)
    if out is not None:
        from gradc.facade.torch_args import with_out
        return with_out(result, out, "bitwise_not")
    return result


def _invert(self):
    if self.dtype.kind >= 2:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors")
    return bitwise_not(self)


def _reflected(f):
    return lambda self, other: f(other, self)  # ``3 ^ t``: the number first, promoted as torch promotes it


FUNCTIONS = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
             "bitwise_right_shift")


def install(T) -> None:
    """The methods, operators and in-place forms on the Tensor class ``T``."""
    for name in FUNCTIONS:
        f = globals()[name]
        setattr(T, name, f)
        setattr(T, name + "_", (lambda g: lambda self, *a, **k: self._inplace(lambda s: g(s, *a, **k)))(f))
    for dunder, f in (("and", bitwise_and), ("or", bitwise_or), ("xor", bitwise_xor),
                      ("lshift", bitwise_left_shift), ("rshift", bitwise_right_shift)):
        setattr(T, f"__{dunder}__", f)
        setattr(T, f"__r{dunder}__", _reflected(f))
        setattr(T, f"__i{dunder}__", getattr(T, f.__name__ + "_"))
    T.__invert__ = _invert
