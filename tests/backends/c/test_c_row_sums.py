"""Sums over long trailing axes run in 8 running sums per row (``loops.reduce_rows``), as whole-array sums do.

A single running sum over a row of 1,000 terms is a chain of 1,000 dependent additions; k-means' Hessian
spends most of its time in two of them. Seeded random shapes (rows, trailing axes, float32 and float64,
keepdims, sum and mean, rows whose length is not a multiple of 8), checked against NumPy (the user's function)
in float64 to a tolerance near its own rounding, and the gradient against its closed form.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.loops import LONG_ROW

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


@pytest.mark.parametrize("seed", range(10))
def test_random_long_row_sums(seed):
    rng = np.random.default_rng(seed)
    lead = [int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 3)))]
    trailing = [int(rng.integers(LONG_ROW, 3 * LONG_ROW))] if seed % 2 else [int(rng.integers(9, 20)), 8]
    shape = (*lead, *trailing)
    axes = tuple(range(len(lead), len(shape)))
    op = "mean" if seed % 3 == 0 else "sum"
    keep = bool(seed % 4 < 2)
    dtype = np.float32 if seed % 5 == 0 else np.float64
    x = rng.normal(size=shape).astype(dtype)
    w = rng.normal(size=getattr(np, op)(x, axis=axes, keepdims=keep).shape).astype(dtype)

    def f(x, w):
        return np.sum(getattr(np, op)(x, axis=axes, keepdims=keep) * w)

    c = gradc.compile(f, x, w, wrt="x", target="c")
    assert "each row in 8 running sums" in c.source
    value, grad = c.value_and_grad(x, w)
    exact = float(np.sum(getattr(np, op)(x.astype(np.float64), axis=axes, keepdims=keep) * w.astype(np.float64)))
    scale = float(np.sum(np.abs(x.astype(np.float64)))) * float(np.max(np.abs(w)))
    assert abs(float(value) - exact) <= 64 * np.finfo(dtype).eps * scale
    count = int(np.prod(trailing))
    wb = w if keep else np.expand_dims(w, axes)
    expected = np.broadcast_to(wb / count if op == "mean" else wb, shape)
    np.testing.assert_allclose(grad, expected, rtol=1e-6 if dtype == np.float32 else 1e-13)


def test_short_rows_and_leading_axes_are_summed_as_written():
    def short(x):
        return np.sum(np.sum(x, axis=1) ** 2)

    def leading(x):
        return np.sum(np.sum(x, axis=0) ** 2)

    x = np.random.default_rng(3).normal(size=(200, LONG_ROW - 1))
    for f in (short, leading):
        c = gradc.compile(f, x, target="c")
        assert "each row in 8 running sums" not in c.source
        np.testing.assert_allclose(c.value_and_grad(x)[1], gradc.grad(f)(x), rtol=1e-12)


def test_row_sums_keep_nan_and_inf():
    x = np.ones((3, 100))
    x[0, 17] = np.nan
    x[1, 99] = np.inf
    x[2, 5], x[2, 6] = np.inf, -np.inf

    def f(x):
        return np.sum(x, axis=1)

    got = gradc.jit(f, target="c")(x)
    expected = f(x)
    assert np.isnan(got[0]) and got[1] == np.inf and np.isnan(got[2])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected))
