"""Tensor factories: ``tensor``, ``ones``, ``zeros``, ``eye``, ``randn``, ``arange``, ``*_like``, ..."""
from __future__ import annotations

import warnings

import numpy as np

from gradc.facade import devices, dtypes, rng
from gradc.facade.tensor import Tensor

INT_GRAD = "Only Tensors of floating point and complex dtype can require gradients"


def _finish(data, dtype, requires_grad):
    dt = dtypes.to_dtype(dtype)
    if dt is not None:
        data = np.asarray(data).astype(dt.np)
    t = Tensor._wrap(np.ascontiguousarray(data) if np.ndim(data) else np.asarray(data))
    if requires_grad:
        if t.dtype.kind < 2:
            raise RuntimeError(INT_GRAD)
        t._requires_grad = True
    return t


def _infer(data):
    """The dtype torch gives a nested list of Python numbers (a NumPy scalar alone keeps its dtype)."""
    if isinstance(data, np.generic):
        return dtypes.from_np(data.dtype)
    flat = list(np.asarray(data, dtype=object).reshape(-1)) if np.ndim(data) else [data]
    if any(isinstance(v, (complex, np.complexfloating)) for v in flat):
        return dtypes.default_complex()
    if any(isinstance(v, (float, np.floating)) for v in flat) or not flat:
        return dtypes.DEFAULT[0]
    if all(isinstance(v, (bool, np.bool_)) for v in flat):
        return dtypes.bool_
    return dtypes.int64


def tensor(data, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                      "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        arr = data._data.copy()
    elif isinstance(data, np.ndarray):
        arr = data.copy()
    else:
        if isinstance(data, (list, tuple)) and any(isinstance(v, Tensor) for v in data):
            data = [v.tolist() if isinstance(v, Tensor) else v for v in data]
        arr = np.array(data, dtype=(dtypes.to_dtype(dtype) or _infer(data)).np)
    return _finish(arr, dtype, requires_grad)


def as_tensor(data, dtype=None, device=None):
    devices.check(device)
    return data if isinstance(data, Tensor) and dtype is None else tensor(data, dtype)


def from_numpy(arr):
    return Tensor._wrap(arr)


def _shape(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(int(s) for s in size)


def _factory(fill):
    def make(*size, dtype=None, device=None, requires_grad=False):
        devices.check(device)
        shape = _shape(size)
        dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
        return _finish(fill(shape, dt.np), dt, requires_grad)
    return make


ones = _factory(lambda shape, dt: np.ones(shape, dt))
zeros = _factory(lambda shape, dt: np.zeros(shape, dt))
empty = _factory(lambda shape, dt: np.zeros(shape, dt))


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    dt = dtypes.to_dtype(dtype) or _infer(fill_value)
    return _finish(np.full(tuple(size), fill_value, dt.np), dt, requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    return _finish(np.eye(n, n if m is None else m, dtype=dt.np), dt, requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    if end is None:
        start, end = 0, start
    dt = dtypes.to_dtype(dtype) or _infer([start, end, step])
    return _finish(np.arange(start, end, step).astype(dt.np), dt, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    if dt.np in (np.float32, np.float64) and all(isinstance(v, (int, float)) for v in (start, end)):
        from gradc.facade.linspace_torch import linspace_values  # torch's rounding, bit for bit
        return _finish(linspace_values(start, end, int(steps), dt.np), dt, requires_grad)
    return _finish(np.linspace(start, end, steps).astype(dt.np), dt, requires_grad)


def _like(fill):
    def make(t, dtype=None, device=None, requires_grad=False):
        devices.check(device)
        dt = dtypes.to_dtype(dtype) or t.dtype
        return _finish(fill(t.shape, dt.np), dt, requires_grad)
    return make


ones_like = _like(lambda shape, dt: np.ones(shape, dt))
zeros_like = _like(lambda shape, dt: np.zeros(shape, dt))
empty_like = zeros_like


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    dt = dtypes.to_dtype(dtype) or t.dtype
    return _finish(np.full(t.shape, fill_value, dt.np), dt, requires_grad)


def _refuse_integers(dt, kernel):
    """torch draws normal and uniform values in floating dtypes only."""
    if dt.kind < 2:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dt.legacy[:-len("Tensor")]}\'')


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    shape = _shape(size)
    g = generator or rng.default_generator
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    n = int(np.prod(shape, dtype=np.int64))
    if dt.kind == 3:  # torch: (real, imag) pairs drawn as 2n normals of the part dtype, std 1/sqrt(2)
        pairs = g.normal(2 * n, dtypes.real_of(dt).np, std=1 / np.sqrt(2)).reshape(shape + (2,))
        return _finish(pairs[..., 0] + 1j * pairs[..., 1], dt, requires_grad)
    _refuse_integers(dt, "normal_kernel_cpu")
    data = g.normal(n, dt.np if dt.kind == 2 else np.float32).reshape(shape)
    return _finish(data, dtype, requires_grad)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    shape = _shape(size)
    g = generator or rng.default_generator
    n = int(np.prod(shape, dtype=np.int64))
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    if dt.kind == 3:  # torch: (real, imag) pairs drawn as 2n uniforms of the part dtype
        wide = dtypes.real_of(dt).np == np.float64
        pairs = (g.doubles(2 * n) if wide else g.uniform(2 * n)).reshape(shape + (2,))
        return _finish(pairs[..., 0] + 1j * pairs[..., 1], dt, requires_grad)
    _refuse_integers(dt, "check_uniform_bounds")
    data = (g.doubles(n) if dt.np == np.float64 else g.uniform(n)).reshape(shape)  # 53-bit uniforms for doubles
    return _finish(data, dtype, requires_grad)


def _writes_out(fn, name):
    """``fn`` taking torch's ``out=``: the values made in ``out``'s dtype (unless ``dtype`` is given) and written
    into it, as torch's factories do (``torch.rand(2, 2, out=c)`` returns ``c``, changed in place)."""
    def make(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if kwargs.get("dtype") is None and isinstance(out, Tensor):
            kwargs["dtype"] = out.dtype
        from gradc.facade.torch_args import with_out
        return with_out(fn(*args, **kwargs), out, name)
    make.__name__ = make.__qualname__ = name
    make.__doc__ = fn.__doc__
    return make


ones, zeros, empty, full, eye, arange, linspace, randn, rand = (_writes_out(f, n) for f, n in (
    (ones, "ones"), (zeros, "zeros"), (empty, "empty"), (full, "full"), (eye, "eye"), (arange, "arange"),
    (linspace, "linspace"), (randn, "randn"), (rand, "rand")))


def randn_like(t, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    return randn(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def rand_like(t, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    return rand(*t.shape, dtype=dtype or t.dtype, requires_grad=requires_grad)


def randint(low, high=None, size=(), generator=None, dtype=None, device=None, requires_grad=False):
    devices.check(device)
    if isinstance(high, (tuple, list)):  # randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    g = generator or rng.default_generator
    n = int(np.prod(size, dtype=np.int64))
    span = int(high) - int(low)
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    # torch: one 32-bit draw modulo the range (two draws, 64 bits, for ranges of 2**32 and more)
    draws = [g.random64() for _ in range(n)] if span >= 1 << 32 else g._mt.random_raw(n) if n else []
    data = (np.asarray([int(d) % span + int(low) for d in draws], dtype=np.int64)).reshape(tuple(size))
    return _finish(data, dtype or dtypes.int64, requires_grad)
