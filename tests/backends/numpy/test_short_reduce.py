"""Sums/max/min over a short axis emitted as slice chains: same values as NumPy, the unrewritten
emission and central finite differences, over seeded random shapes, axes and keepdims."""
import numpy as np
import pytest

import gradc
from gradc.backends.numpy import short_reduce

REDUCERS = {"sum": np.sum, "max": np.max, "min": np.min}


def _cases(count=30, seed=7):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        ndim = int(rng.integers(1, 4))
        shape = tuple(int(n) for n in rng.integers(1, 10, size=ndim))
        axis = int(rng.integers(-ndim, ndim))
        yield shape, axis, bool(rng.integers(2)), str(rng.choice(list(REDUCERS)))


def _program(reducer, axis, keepdims):
    def f(x):
        r = reducer(np.sin(x) * x, axis=axis, keepdims=keepdims)
        return np.sum(r * r)
    return f


@pytest.mark.parametrize("shape,axis,keepdims,name", list(_cases()))
def test_matches_numpy_unrewritten_and_finite_differences(shape, axis, keepdims, name, monkeypatch):
    f = _program(REDUCERS[name], axis, keepdims)
    x = np.random.default_rng(sum(shape) + axis).normal(size=shape)
    compiled = gradc.compile(f, x, target="numpy")
    value, grad = compiled.value_and_grad(x)
    assert np.allclose(value, f(x), rtol=1e-13, atol=0)
    monkeypatch.setattr(short_reduce, "MAX_UNROLLED", 0)
    plain = gradc.compile(f, x, target="numpy")
    plain_value, plain_grad = plain.value_and_grad(x)
    assert value == plain_value
    assert np.allclose(grad, plain_grad, rtol=1e-13, atol=1e-15)
    eps, fd = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        fd[i] = (f(x + step) - f(x - step)) / (2 * eps)
    assert np.allclose(grad, fd, rtol=1e-5, atol=1e-6)


def test_short_last_axis_is_spelled_as_slices():
    f = _program(np.sum, -1, False)
    source = gradc.compile(f, np.ones((4, 3, 2)), target="numpy").source
    assert "[:, :, 0] + " in source and "reduce(t1, 2" not in source


def test_long_axis_and_integers_keep_the_reduce():
    def count_positive(x):  # a boolean sum accumulates in int64: not rewritten
        return np.sum(np.sum(x > 0, axis=1) * x[:, 0])
    x = np.array([[1.0, -2.0], [3.0, 4.0]])
    ints = gradc.compile(count_positive, x, target="numpy")
    assert "[:, 1]" not in ints.source and ints.value_and_grad(x)[0] == count_positive(x)
    long_axis = gradc.compile(lambda x: np.sum(np.sum(x * x, axis=1)), np.ones((3, 9)), target="numpy")
    assert "[:, 0]" not in long_axis.source
