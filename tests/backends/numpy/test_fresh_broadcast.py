"""Small broadcasts emitted as ``np.full``/``np.zeros`` (``gradc.backends.numpy.fresh_broadcast``).

Each program is compiled twice, with the rewrite and without it: the results must be the same bits,
dtypes and shapes, and agree with central differences of the user's function. Seeded random programs
cover float32/float64, constants of both signs of zero and broadcasts of values, scalars and rows.
"""
from __future__ import annotations

import ast

import numpy as np
import pytest
from finite_differences import central_gradient as _central

import gradc
from gradc.backends.numpy import emit as numpy_emit
from gradc.backends.numpy.fresh_broadcast import SMALL_BROADCAST, fresh_broadcasts


def _unrewritten(monkeypatch, f, *args, **kwargs):
    with monkeypatch.context() as m:
        m.setattr(numpy_emit, "fresh_broadcasts", lambda tree: tree)
        return gradc.compile(f, *args, **kwargs)


def _same(a, b):
    for x, y in zip(a if isinstance(a, tuple) else (a,), b if isinstance(b, tuple) else (b,)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


def test_the_rewrites_as_documented():
    tree = ast.parse("a = np.broadcast_to(-0.0, (2,)).copy()\nb = np.broadcast_to(np.float32(1.5), (3, 2))\n"
                     "c = np.broadcast_to(x, (5000,))\nd = np.broadcast_to(x, (n,))\n"
                     "for i in range(3):\n    e = np.broadcast_to(x, (2,))\n    f = np.broadcast_to(0.0, (2,)).copy()")
    assert ast.unparse(fresh_broadcasts(tree)).splitlines() == [
        "a = np.full((2,), -0.0)",  # a negative zero keeps its sign
        "b = np.full((3, 2), np.float32(1.5))",
        "c = np.broadcast_to(x, (5000,))",  # large: kept a view
        "d = np.broadcast_to(x, (n,))",  # size unknown: kept a view
        "for i in range(3):", "    e = np.broadcast_to(x, (2,))",  # in a loop: O(1) per iteration
        "    f = np.zeros((2,))"]
    assert SMALL_BROADCAST >= 1024


def ode_like(x, s):
    y = np.zeros(x.shape[0])
    y[1:] = x[1:] * x[:-1]
    return np.sum(y * s) + np.sum(np.maximum(x, 0.0))


def test_gradbench_ode_shape_same_bits_and_no_broadcast_call(monkeypatch):
    x = np.linspace(-1.0, 1.0, 50)
    fast = gradc.compile(ode_like, x, 2.0)
    slow = _unrewritten(monkeypatch, ode_like, x, 2.0)
    assert "np.broadcast_to" in slow.source and "np.broadcast_to" not in fast.source
    _same(fast.value_and_grad(x, 2.0), slow.value_and_grad(x, 2.0))
    np.testing.assert_allclose(fast.grad(x, 2.0), _central(lambda v: ode_like(v, 2.0), x), rtol=1e-6, atol=1e-8)


def _program(rng):
    """A random program with broadcasts of constants, scalars and rows, and an index update."""
    n, m = int(rng.integers(2, 6)), int(rng.integers(1, 5))
    c = float(rng.choice([0.0, -0.0, 1.0, -2.5]))
    use_row = bool(rng.integers(2))

    def f(X, s):
        base = np.zeros((n, m)) + c
        base[0] = X[0] * s
        row = np.sum(X, axis=0) if use_row else s
        out = base * X + row
        return np.sum(np.tanh(out) * X) + np.sum(np.maximum(X, c) * s)
    return f, (n, m)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("seed", range(6))
def test_random_programs_same_bits_as_the_unrewritten_module(monkeypatch, seed, dtype):
    rng = np.random.default_rng(seed)
    f, shape = _program(rng)
    X = rng.normal(size=shape).astype(dtype)
    s = dtype(rng.normal())
    fast = gradc.compile(f, X, s, argnums=(0, 1))
    slow = _unrewritten(monkeypatch, f, X, s, argnums=(0, 1))
    got, want = fast.value_and_grad(X, s), slow.value_and_grad(X, s)
    _same(got[0], want[0])
    _same(got[1], want[1])
    if dtype == np.float64:
        np.testing.assert_allclose(got[1][0], _central(lambda v: f(v, s), X), rtol=1e-5, atol=1e-7)
        assert gradc.compile(f, X, s, argnums=(0, 1)).source == fast.source  # deterministic


def test_results_are_writable_arrays_not_views():
    x = np.ones(3)
    c = gradc.compile(lambda x, k: np.sum(x * 0.0) + np.sum(np.ones(3) * k), x, 2.0, argnums=(0, 1))
    gx, gk = c.grad(x, 2.0)
    gx[0] = 5.0  # the caller owns what it gets back
    assert gx.flags.writeable and float(gk) == 3.0
