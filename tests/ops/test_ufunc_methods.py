"""``ufunc.accumulate``, ``ufunc.reduce`` of the associative ufuncs and ``np.nancumsum``/``np.nancumprod`` on
traced values: values against NumPy on seeded random shapes and axes, gradients against central differences,
and the C target."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError

FLOAT_UFUNCS = [np.add, np.multiply, np.subtract, np.true_divide, np.maximum, np.minimum, np.fmax, np.fmin,
                np.logaddexp, np.logaddexp2]
BOOL_UFUNCS = [np.logical_and, np.logical_or]
INT_UFUNCS = [np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.maximum, np.add]


def _shape_and_axis(seed):
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 7, ndim))
    return rng, shape, int(rng.integers(-ndim, ndim))


def _distinct(rng, shape):
    # values well apart (no ties, so the running extremes are smooth), away from 0 (divide)
    n = int(np.prod(shape))
    return (rng.permutation(n) * 0.37 + 0.5 + rng.uniform(0, 0.05, n)).reshape(shape) * rng.choice([-1, 1], shape)


@pytest.mark.parametrize("ufunc", FLOAT_UFUNCS, ids=lambda u: u.__name__)
@pytest.mark.parametrize("seed", range(4))
def test_float_accumulate_and_reduce(ufunc, seed):
    rng, shape, axis = _shape_and_axis(seed)
    x = _distinct(rng, shape)
    if ufunc in (np.multiply, np.true_divide):
        x = np.abs(x) / 2 + 0.5
    acc = lambda x: ufunc.accumulate(x, axis=axis)  # noqa: E731
    np.testing.assert_allclose(gradc.jit(acc)(x), acc(x), rtol=1e-12)
    w = rng.standard_normal(acc(x).shape)
    loss = lambda x: np.sum(w * ufunc.accumulate(x, axis=axis))  # noqa: E731
    np.testing.assert_allclose(gradc.grad(loss)(x), fd_grad(loss, x), rtol=1e-6, atol=1e-8)
    if ufunc not in (np.subtract, np.true_divide):
        red = lambda x: ufunc.reduce(x, axis=axis, keepdims=bool(seed % 2))  # noqa: E731
        np.testing.assert_allclose(gradc.jit(red)(x), red(x), rtol=1e-12)
        loss_r = lambda x: np.sum(w.sum() * ufunc.reduce(x, axis=None))  # noqa: E731
        np.testing.assert_allclose(gradc.grad(loss_r)(x), fd_grad(loss_r, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("seed", range(3))
def test_logical_and_bitwise(seed):
    rng, shape, axis = _shape_and_axis(seed + 10)
    b = rng.random(shape) < 0.5
    k = rng.integers(0, 16, shape)
    for ufunc in BOOL_UFUNCS:
        f = lambda b, u=ufunc: (u.accumulate(b, axis=axis), u.reduce(b, axis=axis))  # noqa: E731
        for got, expected in zip(gradc.jit(f)(b), f(b)):
            np.testing.assert_array_equal(got, expected)
    for ufunc in INT_UFUNCS:
        f = lambda k, u=ufunc: (u.accumulate(k, axis=axis), u.reduce(k, axis=axis))  # noqa: E731
        for got, expected in zip(gradc.jit(f)(k), f(k)):
            np.testing.assert_array_equal(got, expected)
            assert got.dtype == expected.dtype


def test_running_maximum_with_nan_and_dtype():
    x = np.array([0.5, np.nan, 2.0, 1.0])
    f = lambda x: (np.maximum.accumulate(x), np.fmax.accumulate(x), np.add.accumulate(x, dtype=np.float32))  # noqa
    for got, expected in zip(gradc.jit(f)(x), f(x)):
        np.testing.assert_array_equal(got, expected)
        assert got.dtype == expected.dtype


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_nancumsum_nancumprod(axis):
    x = np.random.default_rng(2).uniform(0.5, 1.5, (4, 5))
    x[1, 2] = x[3, 0] = np.nan
    f = lambda x: (np.nancumsum(x, axis=axis), np.nancumprod(x, axis=axis))  # noqa: E731
    for got, expected in zip(gradc.jit(f)(x), f(x)):
        np.testing.assert_allclose(got, expected, rtol=1e-13)
    clean = np.nan_to_num(x, nan=1.0)
    mask = np.isnan(x)
    loss = lambda v: np.sum(np.nancumsum(np.where(mask, np.nan, v), axis=axis) ** 2) + \
        np.sum(np.nancumprod(np.where(mask, np.nan, v), axis=axis))  # noqa: E731
    g = gradc.grad(loss)(clean)
    np.testing.assert_allclose(g, fd_grad(loss, clean), rtol=1e-6, atol=1e-8)
    assert np.all(g[mask] == 0.0)


@pytest.mark.parametrize("ufunc", [np.maximum, np.logaddexp, np.add, np.true_divide], ids=lambda u: u.__name__)
def test_c_target(ufunc):
    x = _distinct(np.random.default_rng(5), (5, 4))
    x = np.abs(x) + 0.5 if ufunc is np.true_divide else x
    f = lambda x: ufunc.accumulate(x, axis=1) + (ufunc.reduce(x, axis=0) if ufunc is not np.true_divide else 0.0)  # noqa
    np.testing.assert_allclose(gradc.jit(f, target="c")(x), f(x), rtol=1e-12)
    loss = lambda x: np.sum(np.sin(f(x)))  # noqa: E731
    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(x), fd_grad(loss, x), rtol=1e-6, atol=1e-8)
    nan = np.where(x > 1.0, np.nan, x)
    g = lambda x: np.nancumsum(x, axis=0) * np.nancumprod(x, axis=1)  # noqa: E731
    np.testing.assert_allclose(gradc.jit(g, target="c")(nan), g(nan), rtol=1e-12)


def test_refusals():
    with pytest.raises(GradcError, match=r"np.maximum.accumulate of a 0-d array"):
        gradc.jit(lambda x: np.maximum.accumulate(x))(np.float64(1.0))
    with pytest.raises(GradcError, match=r"np.power.accumulate is not supported"):
        gradc.jit(lambda x: np.power.accumulate(x))(np.ones(3))
    with pytest.raises(GradcError, match=r"np.logaddexp.reduce of an empty array"):
        gradc.jit(lambda x: np.logaddexp.reduce(x))(np.ones(0))


@pytest.mark.parametrize("call", [
    lambda x: np.add.reduce(x, axis=1, dtype=np.float32),
    lambda x: np.maximum.reduce(x, axis=0, initial=0.5),
    lambda x: np.multiply.reduce(x, axis=None, keepdims=True, initial=2.0),
    lambda x: np.subtract.reduce(x, axis=1),
    lambda x: np.true_divide.reduce(x, axis=0, keepdims=True),
    lambda x: np.subtract.reduce(x[0], axis=None),
    lambda x: np.logaddexp.reduce(x, axis=(0, 1), initial=-1.0),
])
def test_reduce_keywords_and_left_folds(call):
    x = np.random.default_rng(8).uniform(0.5, 1.5, (3, 4))
    got = gradc.jit(call)(x)
    np.testing.assert_allclose(got, call(x), rtol=1e-6 if got.dtype == np.float32 else 1e-13)
    assert got.dtype == call(x).dtype and got.shape == call(x).shape
    if got.dtype == np.float64:  # (float32 central differences are too coarse to compare)
        loss = lambda x: np.sum(np.sin(call(x)))  # noqa: E731
        np.testing.assert_allclose(gradc.grad(loss)(x), fd_grad(loss, x), rtol=1e-6, atol=1e-8)
    with pytest.raises(GradcError, match="where= is not supported"):
        gradc.jit(lambda x: np.add.reduce(x, where=x > 1.0))(x)
    with pytest.raises(GradcError, match="not reorderable"):
        gradc.jit(lambda x: np.subtract.reduce(x, axis=None))(x)
