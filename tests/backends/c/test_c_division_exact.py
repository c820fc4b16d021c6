"""Division by a constant in C is a division, as in NumPy: bit-for-bit equal results.

SymPy turns ``x / 6.0`` into ``0.16666666666666666 * x``, an ulp off for many x; values then fall on the
other side of a bin edge (np.histogram, np.linspace's points) or a comparison. A generator over random
divisors (powers of two, whose reciprocal is exact, included) and random values, float64 and float32.
"""
import numpy as np
import pytest

import gradc


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(3))
def test_division_by_constants_is_bit_exact(dtype, seed):
    rng = np.random.default_rng(seed)
    divisors = [float(d) for d in rng.choice([3.0, 6.0, 7.0, 10.0, 0.1, 1e-3, 4.0, 0.5, 49.0], size=4,
                                             replace=False)]
    x = rng.normal(size=257).astype(dtype) * dtype(100)

    def f(x):
        return x / divisors[0] + x / divisors[1], (x - 1) / divisors[2] * divisors[3], x / 3  # (not a sum: C adds in
        # its own order, NumPy pairwise)
    got = gradc.compile(f, x, mode="jvp", target="c").forward(x)
    want = f(x)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)
