"""Tensor methods for device-agnostic code and factories: ``to(device, dtype)``, ``cuda``, ``new_ones``, ...

Installed on the Tensor class by ``gradc.facade.methods.install``.

>>> from gradc.facade.creation import tensor
>>> t = tensor([1, 2]); t.new_ones(2, 3).dtype, t.to("cpu") is t
(torch.int64, True)
"""
from __future__ import annotations

import warnings

import numpy as np

import gradc.ops.complex_numbers as cx
from gradc.errors import user_facing
from gradc.facade import creation, devices, dtypes
from gradc.facade import functional as fn
from gradc.facade.record import record
from gradc.facade.tensor import Tensor


def install(T):
    """Attach ``to``, ``cuda``, ``cpu``, ``type`` and the ``new_*`` factories to the Tensor class ``T``."""
    for f in (to, cuda, cpu, new_ones, new_zeros, new_empty, new_full, new_tensor):
        setattr(T, f.__name__, user_facing(f))  # a device error shows the user's frame, not gradc's
    T.type = _typed(T.type)
    T.device = property(lambda self: devices.CPU)
    T.is_cuda = property(lambda self: False)


def _split_to_args(self, args, kwargs):
    """``(device, dtype, copy)`` from any of torch's ``to`` signatures."""
    where, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got unexpected keyword {sorted(kwargs)}")
    args = list(args)
    if args and hasattr(args[0], "_data") and hasattr(args[0], "dtype"):  # to(other)
        dtype = args.pop(0).dtype
    if args and (devices.is_device(args[0]) or type(args[0]) is int):  # an int is a CUDA device index
        where = args.pop(0)
    if args and not isinstance(args[0], bool):
        dtype = args.pop(0)
    if args:
        if isinstance(args[0], bool):  # to(dtype, non_blocking, copy)
            copy = bool(args[1]) if len(args) > 1 else copy
        else:
            raise TypeError(f"to() received an invalid combination of arguments - got {tuple(args)!r}")
    if isinstance(where, int) and not isinstance(where, bool):
        where = devices.device("cuda", where)
    return where, dtype, copy


def to(self, *args, **kwargs):
    """``t.to(device)``, ``t.to(dtype)``, ``t.to(device, dtype)``, ``t.to(other)``; a CUDA device is an error."""
    where, dtype, copy = _split_to_args(self, args, dict(kwargs))
    devices.check(where)
    dt = dtypes.to_dtype(dtype)
    if dt is None or dt is self.dtype:
        return self.clone() if copy else self
    if self.dtype.kind == 3 and dt.kind == 0:  # a complex value is true when either part is nonzero
        return Tensor._wrap(self._data != 0)
    if self.dtype.kind == 3 and dt.kind < 3:  # torch keeps the real parts and warns
        warnings.warn("Casting complex values to real discards the imaginary part", UserWarning, stacklevel=2)
        if dt.kind < 2 or not self.requires_grad:
            return Tensor._wrap(self._data.real.astype(dt.np))
        return record("ToCopyBackward0", lambda x: fn.cast(cx.real(x), dt), [self])
    if dt.kind < 2 or self.dtype.kind < 2:
        return Tensor._wrap(self._data.astype(dt.np))
    return record("ToCopyBackward0", lambda x: fn.cast(x, dt), [self])


def _typed(type_name):
    """``t.type()`` names the tensor type; ``t.type(torch.float)`` / ``t.type("torch.DoubleTensor")`` converts."""
    by_legacy = {"torch." + d.legacy: d for d in dtypes.ALL}

    def type(self, dtype=None, non_blocking=False, **_):  # noqa: A001 - torch's method name
        if dtype is None:
            return type_name(self)
        if isinstance(dtype, str):
            if dtype not in by_legacy:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = by_legacy[dtype]
        return self.to(dtype)
    return type


def cuda(self, device=None, non_blocking=False):
    devices.check(devices.device("cuda") if device is None else device if not isinstance(device, int)
                  else devices.device("cuda", device))


def cpu(self):
    return self


def _size(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(int(s) for s in size)


def _new(fill):
    def make(self, *size, dtype=None, device=None, requires_grad=False, **_):
        devices.check(device)
        dt = dtypes.to_dtype(dtype) or self.dtype
        return creation._finish(fill(_size(size), dt.np), dt, requires_grad)
    return make


new_ones = _new(np.ones)
new_ones.__name__ = "new_ones"
new_zeros = _new(np.zeros)
new_zeros.__name__ = "new_zeros"
new_empty = _new(np.zeros)
new_empty.__name__ = "new_empty"


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **_):
    devices.check(device)
    dt = dtypes.to_dtype(dtype) or self.dtype
    return creation._finish(np.full(tuple(size), fill_value, dt.np), dt, requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **_):
    devices.check(device)
    dt = dtypes.to_dtype(dtype) or self.dtype
    arr = np.array(data._data if hasattr(data, "_data") else data).astype(dt.np)
    return creation._finish(arr, dt, requires_grad)
