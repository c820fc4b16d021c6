"""Convolutions and pooling on the C target (gradc/backends/c/convolution.py): ``np.convolve`` and
``np.correlate`` in every mode, the facade's ``conv2d`` (stride, asymmetric padding, dilation, groups) and
``max_pool2d`` / ``max_pool2d_index`` (stride, padding, dilation, ceil_mode, NaN).

References: the user's function run by NumPy, the NumPy target (the ops' NumPy implementations are the
convention: ``gradc.ops.nn``), and central differences for the gradients. Seeded generators pick the
lengths, shapes and options.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.ops import nn as nn_ops

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def forward_c(fn, *args):
    return gradc.compile(fn, *args, target="c", mode="vjp").forward(*args)


def forward_numpy(fn, *args):
    return gradc.compile(fn, *args, mode="vjp").forward(*args)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_every_mode(seed, mode):
    rng = np.random.default_rng(seed)
    a, v = rng.normal(size=int(rng.integers(1, 9))), rng.normal(size=int(rng.integers(1, 9)))
    for np_fn in (np.convolve, np.correlate):
        np.testing.assert_allclose(forward_c(lambda a, v, f=np_fn: f(a, v, mode), a, v), np_fn(a, v, mode),
                                   rtol=1e-13, atol=1e-14)


def test_convolve_of_strided_views_float32_and_inf():
    rng = np.random.default_rng(1)
    a, v = rng.normal(size=10), rng.normal(size=4)
    np.testing.assert_allclose(forward_c(lambda a, v: np.convolve(a[::2], v[::-1]), a, v), np.convolve(a[::2], v[::-1]),
                               rtol=1e-13)
    a32, v32 = a.astype(np.float32), v.astype(np.float32)
    got = forward_c(lambda a, v: np.convolve(a, v), a32, v32)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, np.convolve(a32, v32), rtol=1e-5)
    a[3] = np.inf
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(np.isnan(forward_c(lambda a, v: np.convolve(a, v), a, v)),
                                      np.isnan(np.convolve(a, v)))


def test_convolve_gradients_through_c():
    a, v = np.random.default_rng(2).normal(size=(2, 6))[0], np.array([0.3, -1.2, 0.7])

    def loss(a, v):
        return np.sum(np.convolve(a, v, "same") ** 2) + np.sum(np.correlate(a, v, "valid"))

    ga, gv = gradc.compile(loss, a, v, argnums=(0, 1), target="c").grad(a, v)
    np.testing.assert_allclose(ga, central_gradient(lambda x: loss(x, v), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gv, central_gradient(lambda x: loss(a, x), v), rtol=1e-6, atol=1e-8)


def _conv_options(rng):
    groups = int(rng.choice([1, 1, 2, 3]))
    cin_g, cout_g = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    kh, kw = (int(k) for k in rng.integers(1, 4, 2))
    stride = tuple(int(s) for s in rng.integers(1, 3, 2))
    dilation = tuple(int(d) for d in rng.integers(1, 3, 2))
    padding = tuple((int(p), int(q)) for p, q in rng.integers(0, 3, (2, 2)))
    h, w = int(rng.integers(dilation[0] * (kh - 1) + 1, 9)), int(rng.integers(dilation[1] * (kw - 1) + 1, 9))
    x = rng.normal(size=(int(rng.integers(1, 3)), groups * cin_g, h, w))
    weight = rng.normal(size=(groups * cout_g, cin_g, kh, kw))
    return x, weight, dict(stride=stride, padding=padding, dilation=dilation, groups=groups)


@pytest.mark.parametrize("seed", range(10))
def test_conv2d_matches_the_numpy_target(seed):
    x, w, options = _conv_options(np.random.default_rng(seed))

    def fn(x, w):
        return nn_ops.conv2d(x, w, **options)

    got, expected = forward_c(fn, x, w), forward_numpy(fn, x, w)
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("seed", range(3))
def test_conv2d_gradients_through_c(seed):
    x, w, options = _conv_options(np.random.default_rng(50 + seed))

    def loss(x, w):
        return np.sum(np.tanh(nn_ops.conv2d(x, w, **options)))

    gx, gw = gradc.compile(loss, x, w, argnums=(0, 1), target="c").grad(x, w)
    np.testing.assert_allclose(gx, central_gradient(lambda a: loss(a, w), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gw, central_gradient(lambda a: loss(x, a), w), rtol=1e-6, atol=1e-8)


def _pool_options(rng):
    kernel = tuple(int(k) for k in rng.integers(1, 4, 2))
    stride = tuple(int(s) for s in rng.integers(1, 4, 2))
    padding = tuple(int(rng.integers(0, k // 2 + 1)) for k in kernel)
    dilation = tuple(int(d) for d in rng.integers(1, 3, 2))
    shape = (1, int(rng.integers(1, 3))) + tuple(int(d * (k - 1) + 1 + rng.integers(0, 5))
                                                 for d, k in zip(dilation, kernel))
    return shape, dict(kernel=kernel, stride=stride, padding=padding, dilation=dilation,
                       ceil_mode=bool(rng.integers(0, 2)))


@pytest.mark.parametrize("seed", range(10))
def test_max_pool_and_its_index_match_the_numpy_target(seed):
    rng = np.random.default_rng(seed)
    shape, options = _pool_options(rng)
    x = rng.integers(-3, 4, shape).astype(np.float64)  # ties: the first maximum's position
    if seed % 3 == 0:
        x[rng.random(shape) < 0.15] = np.nan
    if seed % 3 == 1:
        x[rng.random(shape) < 0.3] = -np.inf  # windows of -inf and padding

    def values(x):
        return nn_ops.max_pool2d(x, **options)

    def positions(x):
        return nn_ops.max_pool2d_index(x, **options) * 1.0

    np.testing.assert_array_equal(forward_c(values, x), forward_numpy(values, x))
    np.testing.assert_array_equal(forward_c(positions, x), forward_numpy(positions, x))


def test_max_pool_float32():
    x = np.random.default_rng(4).normal(size=(2, 3, 5, 6)).astype(np.float32)
    got = forward_c(lambda x: nn_ops.max_pool2d(x, 2, 1, 1), x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, forward_numpy(lambda x: nn_ops.max_pool2d(x, 2, 1, 1), x))


@pytest.mark.parametrize("seed", range(3))
def test_max_pool_gradient_through_c(seed):
    rng = np.random.default_rng(70 + seed)
    shape, options = _pool_options(rng)
    x = rng.permutation(np.arange(float(np.prod(shape)))).reshape(shape) * 0.1  # distinct: no tie moves

    def loss(x):
        return np.sum(nn_ops.max_pool2d(x, **options) ** 2)

    np.testing.assert_allclose(gradc.compile(loss, x, target="c").grad(x), central_gradient(loss, x),
                               rtol=1e-6, atol=1e-8)


def test_the_c_source_is_deterministic():
    x, w = np.ones((1, 2, 5, 5)), np.ones((2, 1, 3, 3))

    def loss(x, w):
        return np.sum(nn_ops.max_pool2d(nn_ops.conv2d(x, w, padding=1, groups=2), 2)) + np.sum(
            np.convolve(x[0, 0, 0], w[0, 0, 0]))

    sources = {gradc.compile(loss, x, w, target="c").c_source for _ in range(2)}
    assert len(sources) == 1


@pytest.mark.parametrize("seed", range(4))
def test_against_torch(seed):
    """torch's conv2d and max_pool2d (with return_indices) as the independent reference."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(200 + seed)
    x, w, options = _conv_options(rng)
    symmetric = dict(options, padding=tuple(p for p, _ in options["padding"]))

    def conv(x, w):
        return nn_ops.conv2d(x, w, **symmetric)

    expected = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), **symmetric).numpy()
    np.testing.assert_allclose(forward_c(conv, x, w), expected, rtol=1e-12, atol=1e-13)
    shape, pool = _pool_options(rng)
    x = rng.normal(size=shape)
    values, positions = torch.nn.functional.max_pool2d(torch.from_numpy(x), pool["kernel"], pool["stride"],
                                                        pool["padding"], pool["dilation"], pool["ceil_mode"],
                                                        return_indices=True)
    np.testing.assert_array_equal(forward_c(lambda x: nn_ops.max_pool2d(x, **pool), x), values.numpy())
    np.testing.assert_array_equal(forward_c(lambda x: nn_ops.max_pool2d_index(x, **pool) * 1.0, x),
                                  positions.numpy().astype(np.float64))
