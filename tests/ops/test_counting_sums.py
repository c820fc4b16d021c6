"""Sums and products of booleans and narrow integers are accumulated as NumPy does (int64): ``np.sum(x > 0)`` counts.

Typed as the operand's dtype, a boolean sum was an ``or`` on the C target (``np.sum(x > 0) * x[0]`` gave
1 * x[0]) and an int32 sum wrapped at 2**31. Compared with NumPy running the same function, both targets.
"""
import numpy as np
import pytest

import gradc


def _c_available():
    from gradc.backends.c import build
    return build.find_compiler() is not None


PROGRAMS = [
    lambda x: np.sum(x > 0) * x[0, 0],
    lambda x: np.sum(np.sum(x > 0.5, axis=0) * x[0]),
    lambda x: np.sum(np.prod(x > -5, axis=1) * x[:, 0]),
    lambda x: np.sum(np.sum(x > 0, keepdims=True) * x),
    lambda x: (x > 0).sum() * np.sum(x),
]


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("k", range(len(PROGRAMS)))
def test_counts_match_numpy(k, target):
    if target == "c" and not _c_available():
        pytest.skip("no C compiler")
    f = PROGRAMS[k]
    x = np.random.default_rng(k).normal(size=(4, 3))
    value, grad = gradc.compile(f, x, target=target).value_and_grad(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    h = 1e-6
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        np.testing.assert_allclose(grad[i], (f(x + e) - f(x - e)) / (2 * h), rtol=1e-5, atol=1e-7)


def test_integer_sums_are_int64_as_numpy():
    big = np.full(4, 2 ** 30, dtype=np.int32)
    f = gradc.jit(lambda a: np.sum(a))
    assert int(f(big)) == int(np.sum(big)) == 2 ** 32
    assert np.asarray(gradc.jit(lambda a: np.sum(a > 0))(np.ones(3))).dtype == np.sum(np.ones(3) > 0).dtype
