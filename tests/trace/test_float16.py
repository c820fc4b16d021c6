"""float16 inputs follow NumPy's rules: float16 arithmetic stays float16, a gradient has its input's dtype,
mixing with float32/float64 arrays promotes as NumPy does; the C target refuses float16 clearly.

References: the user's function run by NumPy on the float16 inputs (value and dtype), and the
gradient of the same program at the same point in float64 checked by central differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.errors import GradcError
from tests.finite_differences import central_gradient

PROGRAMS = {
    "poly": lambda x: np.sum(x ** 3 - 2 * x),
    "tanh": lambda x: np.sum(np.tanh(x) * x),
    "exp": lambda x: np.sum(np.exp(x)),
    "mean": lambda x: np.mean(x * x),
    "matmul": lambda x: x @ x,
    "where": lambda x: np.sum(np.where(x > 0, x, 0.5 * x)),
    "loop": lambda x: sum(x[i] * x[i + 1] for i in range(3)),
    "max": lambda x: np.max(x),
    "logsumexp": lambda x: np.log(np.sum(np.exp(x))),
    "sqrt": lambda x: np.sum(np.sqrt(x * x + 1)),
    "reciprocal": lambda x: np.sum(1.0 / (1 + x * x)),
    "sin-cos": lambda x: np.sum(np.sin(x) * np.cos(2.0 * x)),
}
HALF_ULP = float(np.finfo(np.float16).eps)


def points(seed, n=3):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1.5, 1.5, size=5).astype(np.float16) for _ in range(n)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_float16_gradients_stay_float16_and_agree(name):
    f = PROGRAMS[name]
    for x in points(sum(map(ord, name))):
        grad = gradc.grad(f)(x)
        assert grad.dtype == np.float16
        exact = central_gradient(f, x.astype(np.float64))  # the same program at the same point, in float64
        np.testing.assert_allclose(grad.astype(np.float64), exact, rtol=8 * HALF_ULP, atol=8 * HALF_ULP)
        value, grad_compiled = gradc.compile(f, x).value_and_grad(x)
        expected = f(x)
        assert np.asarray(value).dtype == np.asarray(expected).dtype == np.float16
        np.testing.assert_allclose(float(value), float(expected), rtol=2 * HALF_ULP, atol=2 * HALF_ULP)
        np.testing.assert_array_equal(grad_compiled, grad)


@pytest.mark.parametrize("other, dtype", [(1.5, np.float16), (np.float32(1.5), np.float32),
                                          (np.ones(4, np.float32), np.float32), (np.ones(4), np.float64),
                                          (np.float16(1.5), np.float16), (np.int64(2), np.float64),
                                          (2, np.float16)])
def test_mixing_promotes_as_numpy_does(other, dtype):
    def f(x):
        return np.sum(x * other)
    x = np.array([0.5, -1.0, 2.0, 0.25], np.float16)
    value = gradc.jit(f)(x)
    assert np.asarray(value).dtype == np.asarray(f(x)).dtype == dtype
    grad = gradc.grad(f)(x)
    assert grad.dtype == np.float16
    np.testing.assert_allclose(grad.astype(float), np.broadcast_to(np.float64(np.sum(other) / np.size(other)), 4),
                               rtol=HALF_ULP)


def test_the_c_target_refuses_float16_by_name():
    x = np.ones(3, np.float16)
    with pytest.raises(GradcError, match="target c does not compute in float16") as info:
        gradc.compile(lambda x: np.sum(x * x), x, target="c")
    assert "target='numpy'" in info.value.hint
    with pytest.raises(GradcError, match="float16"):  # a float16 made inside the function too
        gradc.compile(lambda x: np.sum(x.astype(np.float16) ** 2), np.ones(3), target="c")
