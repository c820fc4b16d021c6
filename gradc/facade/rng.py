"""A CPU random generator with the same streams as torch's default generator.

The engine is the 32-bit Mersenne Twister (NumPy's ``MT19937`` with its legacy seeding).
Uniform doubles take 53 bits of two draws, uniform floats 24 bits of one. Normals for
fewer than 16 values come from the Box-Muller transform in double precision, one value
at a time, keeping the second value of each pair for the next request (also across calls);
16 or more values are produced in blocks of 16 from uniforms of the tensor's dtype (``normal``).

>>> g = Generator(0); [round(float(v), 4) for v in g.normal(3)]
[1.541, -0.2934, -2.1788]
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from gradc.facade import normal_float32

_MASK53 = (1 << 53) - 1
_MASK24 = (1 << 24) - 1


DEFAULT_SEED = 67280421310721  # what a fresh torch.Generator() starts from


class Generator:
    def __init__(self, seed: int = DEFAULT_SEED, device="cpu"):
        self.seed(seed)

    def manual_seed(self, seed: int):
        """Reseed (torch's spelling); returns the generator, so ``Generator().manual_seed(42)`` chains."""
        return self.seed(seed)

    def random64(self) -> int:
        """A 64-bit draw: two 32-bit words, the first one high (torch's ``random64``)."""
        hi = self._u32()
        return (hi << 32) | self._u32()

    def permutation(self, n: int) -> list:
        """torch's ``randperm(n)``: swap element i with one of i..n-1 chosen by ``random() % (n - i)``."""
        out = list(range(n))
        raw = [int(v) for v in self._mt.random_raw(n - 1)] if n > 1 else []
        for i, r in enumerate(raw):
            j = i + r % (n - i)
            out[i], out[j] = out[j], out[i]
        return out

    def seed(self, seed: int):
        self._seed = int(seed)
        self._mt = np.random.MT19937(0)
        self._mt._legacy_seeding(self._seed & 0xFFFFFFFF)
        self._pending = None
        return self

    def initial_seed(self):
        return self._seed

    def get_state(self):
        """The generator's state as a uint8 tensor: the engine's 624 words and position, the seed and the
        cached normal value (``set_state`` restores it; the layout is the facade's own)."""
        from gradc.facade.tensor import Tensor
        st = self._mt.state["state"]
        pending = self._pending
        words = np.concatenate([np.asarray(st["key"], np.uint32).view(np.uint8),
                                np.asarray([st["pos"], self._seed & 0xFFFFFFFFFFFFFFFF,
                                            pending is not None], np.uint64).view(np.uint8),
                                np.asarray([pending or 0.0], np.float64).view(np.uint8)])
        return Tensor._wrap(words)

    def set_state(self, new_state):
        data = np.asarray(getattr(new_state, "_data", new_state))
        if data.dtype.kind not in "iu" or data.size != 624 * 4 + 4 * 8:
            raise RuntimeError("set_state: expected a ByteTensor returned by get_state() of the gradc facade")
        data = np.ascontiguousarray(data.astype(np.uint8))
        key = data[:2496].view(np.uint32)
        pos, seed, has_pending = (int(v) for v in data[2496:2520].view(np.uint64))
        self._mt.state = {"bit_generator": "MT19937", "state": {"key": key.copy(), "pos": pos}}
        self._seed = seed
        self._pending = float(data[2520:].view(np.float64)[0]) if has_pending else None
        return self

    def _u32(self) -> int:
        return int(self._mt.random_raw())

    def _double(self) -> float:
        hi = self._u32()
        lo = self._u32()
        return (((hi << 32) | lo) & _MASK53) / float(1 << 53)

    def doubles(self, n: int) -> np.ndarray:
        """``n`` float64 values in [0, 1), 53 bits of two draws each (``_double``, vectorised)."""
        raw = np.asarray(self._mt.random_raw(2 * n), dtype=np.uint64) if n else np.zeros(0, np.uint64)
        both = (raw[0::2] << np.uint64(32)) | raw[1::2]
        return (both & np.uint64(_MASK53)).astype(np.float64) / float(1 << 53)

    def _floats(self, n: int) -> np.ndarray:
        raw = np.asarray(self._mt.random_raw(n), dtype=np.uint64) if n else np.zeros(0, np.uint64)
        return ((raw & _MASK24).astype(np.float64) / float(1 << 24)).astype(np.float32)

    def uniform(self, n: int) -> np.ndarray:
        """``n`` float32 values in [0, 1)."""
        return self._floats(n)

    def _one_normal(self) -> float:
        if self._pending is not None:
            value, self._pending = self._pending, None
            return value
        a = self._double()
        b = self._double()
        radius = math.sqrt(-2.0 * math.log1p(-b))
        angle = 2.0 * math.pi * a
        self._pending = radius * math.sin(angle)
        return radius * math.cos(angle)

    def normal(self, n: int, dtype=np.float32, mean: float = 0.0, std: float = 1.0) -> np.ndarray:
        """``n`` normal values as torch's ``normal_(mean, std)`` draws them for a contiguous tensor of ``dtype``.

        Fewer than 16: one at a time in double precision (``_one_normal``), scaled, then rounded. 16 or
        more: uniforms of the dtype for every slot, turned into normals 16 at a time (the last block
        redrawn when ``n`` is not a multiple of 16), in float32 by torch's vectorised arithmetic
        (``normal_float32``), in float64 by the C library's ``log``/``cos``/``sin`` (Python's ``math``).
        """
        dtype = np.dtype(dtype)
        if n < 16:
            if std == 1.0 and mean == 0.0:
                return np.array([self._one_normal() for _ in range(n)], dtype=np.float64).astype(dtype)
            return np.array([_fma(self._one_normal(), std, mean) for _ in range(n)], np.float64).astype(dtype)
        if dtype == np.float64:
            d = self.doubles(n)
            starts = list(range(0, n - 15, 16))
            _normal_blocks64(d, starts, mean, std)
            if n % 16:
                d[n - 16:] = self.doubles(16)
                _normal_blocks64(d, [n - 16], mean, std)
            return d
        d = self._floats(n)
        whole = n - n % 16
        d[:whole] = normal_float32.box_muller_blocks(d[:whole].reshape(-1, 16)).reshape(-1)
        if n % 16:
            d[n - 16:] = normal_float32.box_muller_blocks(self._floats(16).reshape(1, 16)).reshape(-1)
        if std != 1.0 or mean != 0.0:
            d = normal_float32.fma32(d, np.float32(std), np.float32(mean))
        return d.astype(dtype)


def _normal_blocks64(d, starts, mean, std):
    """Box-Muller on float64 blocks of 16 in place: ``d[j]`` and ``d[j + 8]`` from ``1 - d[j]`` and ``d[j + 8]``."""
    two_pi = 2.0 * math.pi
    for start in starts:
        for j in range(start, start + 8):
            radius = math.sqrt(-2.0 * math.log(1.0 - d[j]))
            theta = two_pi * d[j + 8]
            if std == 1.0 and mean == 0.0:
                d[j], d[j + 8] = radius * math.cos(theta), radius * math.sin(theta)
            else:  # torch's compiled ``x * std + mean`` is one fused multiply-add
                d[j], d[j + 8] = _fma(radius * math.cos(theta), std, mean), _fma(radius * math.sin(theta), std, mean)


def _fma(x: float, y: float, z: float) -> float:
    """``x * y + z`` rounded once (``math.fma`` from Python 3.13; exact rationals before)."""
    fused = getattr(math, "fma", None)
    if fused is not None:
        return fused(x, y, z)
    return float(Fraction(x) * Fraction(y) + Fraction(z))


default_generator = Generator(0)


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator (and drop its cached normal value)."""
    return default_generator.seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()
