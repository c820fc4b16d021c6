"""Random in-place fills and samplers with torch's CPU streams: ``normal_``, ``uniform_``, ``random_``,
``bernoulli_``, ``exponential_``, ``torch.normal``, ``torch.bernoulli``, ``torch.multinomial``.

Each draws from the facade's generator (``gradc.facade.rng``) exactly the words torch draws, in
torch's order, and transforms them with torch's arithmetic (fused multiply-adds where torch's
compiled kernels fuse), so a seeded program gets torch's values bit for bit. The recorded values
are in ``tests/facade/spec/random.expected.txt``.

>>> import gradc.torch as torch
>>> _ = torch.manual_seed(0); torch.empty(3).uniform_(-1, 1)
tensor([-0.0075,  0.5364, -0.8230])
"""
from __future__ import annotations

import math

import numpy as np

from gradc.facade import dtypes, rng
from gradc.facade.fused import fma
from gradc.facade.inplace_ops import _overwrite
from gradc.facade.normal_float32 import fma32
from gradc.facade.tensor import Tensor

_log1p = np.frompyfunc(math.log1p, 1, 1)  # the C library's log1p, as torch's kernel calls it


def _gen(generator):
    return rng.default_generator if generator is None else generator


def _write(self, values, name):
    """Overwrite ``self`` with ``values`` drawn in torch's order: the elements' memory order (the logical
    order for a contiguous tensor). The old value gets a zero gradient, as in torch's in-place random ops."""
    values = np.asarray(values).reshape(-1)
    if not self._data.flags["C_CONTIGUOUS"] and values.size > 1:
        logical = np.empty_like(values)
        logical[_memory_order(self._data)] = values
        values = logical
    values = values.reshape(self._data.shape)
    return self._inplace(lambda s: _overwrite(name, s, values))


def _fill_complex(self, name, fill):
    """``self`` (complex) filled by ``fill`` applied to a real tensor of its ``[..., (real, imag)]`` pairs."""
    pairs = Tensor._wrap(np.empty(self._data.shape + (2,), self._data.real.dtype))
    fill(pairs)
    return _write(self, pairs._data[..., 0] + 1j * pairs._data[..., 1], name)


def _float_kind(self, op):
    if self.dtype.kind != 2:
        raise RuntimeError(f"{op} expects floating point dtypes, got: {self.dtype.legacy.replace('Tensor', '')}")


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    """Fill with normal values: torch's serial Box-Muller below 16 values (or for a strided tensor), its
    blocks of 16 above (``rng.Generator.normal``)."""
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if self.dtype.kind == 3:  # torch: both parts of each value, as one real tensor, with std / sqrt(2)
        return _fill_complex(self, "NormalBackward0", lambda pairs: normal_(pairs, mean, std / math.sqrt(2),
                                                                               generator=generator))
    _float_kind(self, "normal_")
    n = self._data.size
    g = _gen(generator)
    if self._data.flags["C_CONTIGUOUS"] or n < 16:
        values = g.normal(n, self._data.dtype, float(mean), float(std))
    else:  # a strided tensor: the serial path, one value per element, elements taken in memory order
        serial = np.array([g._one_normal() for _ in range(n)]) if std == 1.0 and mean == 0.0 else \
            np.array([rng._fma(g._one_normal(), std, mean) for _ in range(n)])
        values = serial.astype(self._data.dtype)
    return _write(self, values, "NormalBackward0")


def _memory_order(data):
    """Logical (C-order) positions of a strided array's elements, sorted by their address."""
    offsets = np.zeros(data.shape, np.int64)
    for axis, stride in enumerate(data.strides):
        shape = [1] * data.ndim
        shape[axis] = data.shape[axis]
        offsets = offsets + np.arange(data.shape[axis], dtype=np.int64).reshape(shape) * stride
    return np.argsort(offsets.reshape(-1), kind="stable")


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    """Fill with uniform values in [a, b): 24-bit uniforms for float32, 53-bit for float64, ``u * (b - a) + a``
    fused (the width rounded to the dtype first, as torch's kernel computes it)."""
    if self.dtype.kind == 3:  # torch: both parts of each value drawn as one real tensor
        return _fill_complex(self, "UniformBackward0", lambda pairs: uniform_(pairs, a, b, generator=generator))
    _float_kind(self, "uniform_")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    n, g = self._data.size, _gen(generator)
    if self._data.dtype == np.float64:
        values = fma(g.doubles(n), float(b) - float(a), float(a))
    else:
        lo, hi = np.float32(a), np.float32(b)
        values = fma32(g.uniform(n), hi - lo, lo)
    return _write(self, values, "UniformBackward0")


def random_(self, from_=None, to=None, *, generator=None):
    """Integers: ``random_()`` over the dtype's exact integers, ``random_(to)``, ``random_(from, to)``."""
    g, n = _gen(generator), self._data.size
    if from_ is None and to is None:
        bits = {np.dtype(np.float32): 24, np.dtype(np.float64): 53, np.dtype(np.float16): 11}.get(self._data.dtype)
        if bits is not None:
            span, wide = (1 << bits) + 1, bits > 32
        else:
            info = np.iinfo(self._data.dtype) if self._data.dtype != bool else None
            span = 2 if info is None else int(info.max) + 1
            wide = span > 1 << 32
        values = [(g.random64() if wide else g._u32()) % span for _ in range(n)]
        return _write(self, np.asarray(values, np.float64 if bits else np.int64).astype(self._data.dtype),
                      "RandomBackward0")
    low, high = (0, from_) if to is None else (from_, to)
    span = int(high) - int(low)
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    draws = [g.random64() for _ in range(n)] if span >= 1 << 32 else [g._u32() for _ in range(n)]
    values = np.asarray([d % span + int(low) for d in draws], np.int64)
    return _write(self, values.astype(self._data.dtype), "RandomBackward1")


def bernoulli_(self, p=0.5, *, generator=None):
    """1 where a uniform is below ``p``: for a number ``p``, 53-bit doubles; for a tensor of probabilities,
    uniforms of its dtype (24-bit floats for float32), as torch's two kernels draw them."""
    g, n = _gen(generator), self._data.size
    if isinstance(p, Tensor):
        probs = np.broadcast_to(p._data, self._data.shape).reshape(-1)
        if not self._data.flags["C_CONTIGUOUS"]:
            probs = probs[_memory_order(self._data)]
        values = (g.uniform(n) if probs.dtype == np.float32 else g.doubles(n)) < probs
    else:
        if not 0 <= p <= 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
        values = g.doubles(n) < p
    return _write(self, values.astype(self._data.dtype), "BernoulliBackward0")


def exponential_(self, lambd=1.0, *, generator=None):
    """``-log1p(-u) / lambd`` per element from 53-bit uniforms (computed in double, then rounded)."""
    _float_kind(self, "exponential_")
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    u = _gen(generator).doubles(self._data.size)
    values = (-1.0 / lambd) * _log1p(-u).astype(np.float64)
    return _write(self, values.astype(self._data.dtype), "ExponentialBackward0")


def bernoulli(input, p=None, *, generator=None):  # noqa: A002 - torch's name
    """``torch.bernoulli(probs)``: 0/1 samples of ``input``'s dtype, one 53-bit uniform per element."""
    out = Tensor._wrap(np.zeros(input._data.shape, input._data.dtype))
    return bernoulli_(out, input if p is None else p, generator=generator)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, out=None, requires_grad=False):
    """``torch.normal``: standard normals drawn for the result's shape, then ``* std + mean`` (tensor
    arguments), or ``normal_(mean, std)`` of a new tensor (numbers and ``size``)."""
    tensor_args = isinstance(mean, Tensor) or isinstance(std, Tensor)
    if not tensor_args:
        if size is None:
            raise TypeError("normal() received an invalid combination of arguments: with numbers for mean and "
                            "std, give size as well, e.g. torch.normal(0.0, 1.0, size=(3,))")
        dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
        result = Tensor._wrap(np.zeros(tuple(size), dt.np))
        normal_(result, mean, std, generator=generator)
    else:
        m = mean._data if isinstance(mean, Tensor) else np.asarray(mean)
        s = std._data if isinstance(std, Tensor) else np.asarray(std)
        if isinstance(std, Tensor) and (s < 0).any():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        shape = np.broadcast_shapes(m.shape, s.shape)
        dt = np.result_type(*(t._data.dtype for t in (mean, std) if isinstance(t, Tensor)))
        result = Tensor._wrap(np.zeros(shape, dt))
        normal_(result, generator=generator)
        result = Tensor._wrap((result._data * s.astype(dt) + m.astype(dt)).astype(dt))
    if requires_grad:
        result.requires_grad_(True)
    return result


def multinomial(input, num_samples, replacement=False, *, generator=None):  # noqa: A002
    """``torch.multinomial``: with replacement, one 53-bit uniform per sample against the normalised cumulative
    sum (float32 for float32 weights); without, the largest ``weights / Exponential(1)`` keys."""
    w = input._data
    if w.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if (w < 0).any() or not np.isfinite(w).all():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    rows = w.reshape(-1, w.shape[-1])
    if (rows.sum(axis=1) == 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    if not replacement and num_samples > w.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    g = _gen(generator)
    if replacement:
        out = np.empty((rows.shape[0], num_samples), np.int64)
        for r, row in enumerate(rows):
            cum = np.cumsum(row, dtype=row.dtype)
            cum = (cum / cum[-1]).astype(row.dtype)
            u = g.doubles(num_samples)
            out[r] = np.minimum(np.searchsorted(cum, u, side="right"), len(row) - 1)
    else:
        q = Tensor._wrap(np.zeros(w.shape, w.dtype))
        exponential_(q, generator=generator)
        keys = (w / q._data).reshape(rows.shape)
        out = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples].astype(np.int64)
    return Tensor._wrap(out.reshape(w.shape[:-1] + (num_samples,)))


def randint_like(input, low=0, high=None, *, dtype=None, generator=None, requires_grad=False):  # noqa: A002
    """``torch.randint_like(t, high)`` / ``(t, low, high)``: ``random_(low, high)`` of a tensor like ``t``."""
    if high is None:
        low, high = 0, low
    dt = dtypes.to_dtype(dtype) or input.dtype
    out = Tensor._wrap(np.zeros(input._data.shape, dt.np))
    return random_(out, low, high, generator=generator)


def get_rng_state():
    """The default generator's state, as a uint8 tensor (round-trips through ``set_rng_state``; not torch's
    byte layout)."""
    return rng.default_generator.get_state()


def set_rng_state(new_state):
    rng.default_generator.set_state(new_state)


def install(T):
    """Attach the in-place random fills and ``bernoulli``/``multinomial`` methods to the Tensor class ``T``."""
    for f in (normal_, uniform_, random_, bernoulli_, exponential_):
        setattr(T, f.__name__, f)
    T.bernoulli = lambda self, p=None, *, generator=None: bernoulli(self, p, generator=generator)
    T.multinomial = lambda self, num_samples, replacement=False, *, generator=None: multinomial(
        self, num_samples, replacement, generator=generator)
