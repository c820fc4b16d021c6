"""A CPU random generator with the same streams as torch's default generator.

The engine is the 32-bit Mersenne Twister (NumPy's ``MT19937`` with its legacy seeding).
Uniform doubles take 53 bits of two draws, uniform floats 24 bits of one. Normals for
fewer than 16 values come from the Box-Muller transform in double precision, one value
at a time, keeping the second value of each pair for the next request (also across calls);
16 or more values are produced in blocks of 16 from float32 uniforms.

>>> g = Generator(0); [round(float(v), 4) for v in g.normal(3)]
[1.541, -0.2934, -2.1788]
"""
from __future__ import annotations

import math

import numpy as np

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

    def normal(self, n: int, dtype=np.float32) -> np.ndarray:
        """``n`` standard normal values (computed in double, then rounded to ``dtype``)."""
        if n < 16:
            return np.array([self._one_normal() for _ in range(n)], dtype=dtype)
        d = self._floats(n)
        for start in range(0, n - 15, 16):
            self._box_muller_block(d, start)
        if n % 16:
            start = n - 16
            d[start:] = self._floats(16)
            self._box_muller_block(d, start)
        return d

    @staticmethod
    def _box_muller_block(d, start):
        u1 = np.float32(1) - d[start:start + 8]
        u2 = d[start + 8:start + 16]
        radius = np.sqrt(np.float32(-2) * np.log(u1))
        angle = np.float32(2.0 * math.pi) * u2
        d[start:start + 8] = radius * np.cos(angle)
        d[start + 8:start + 16] = radius * np.sin(angle)


default_generator = Generator(0)


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator (and drop its cached normal value)."""
    return default_generator.seed(seed)


def initial_seed() -> int:
    return default_generator.initial_seed()
