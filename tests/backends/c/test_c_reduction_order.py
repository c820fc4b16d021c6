"""Reductions over short trailing axes (row sums of an n x 8 array) loop over the kept axis innermost.

``loops._reduction_order`` moves short trailing reduced axes outside, so the inner loop runs along
the kept axes and vectorises; each output element takes its terms in the same order as before.
Seeded random shapes, ops and keepdims, checked against NumPy (the user's function) and the
gradient against its closed form.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.loops import SHORT_REDUCED, _reduction_order

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def test_order_rule():
    assert _reduction_order("sum", (1000, 8), (1,)) == [1, 0]
    assert _reduction_order("sum", (100, 3, 4), (1, 2)) == [1, 2, 0]
    assert _reduction_order("sum", (100, 4, 5), (1, 2)) == [0, 1, 2]  # 20 > SHORT_REDUCED terms: as written
    assert _reduction_order("max", (1000, 8), (1,)) == [0, 1]
    assert _reduction_order("sum", (10, 8), (1,)) == [0, 1]  # too few rows to gain
    assert _reduction_order("sum", (8, 1000), (0,)) == [0, 1]  # a leading axis: already inner along the kept one
    assert SHORT_REDUCED == 16


@pytest.mark.parametrize("seed", range(8))
def test_random_short_row_reductions(seed):
    rng = np.random.default_rng(seed)
    rows = int(rng.integers(64, 300))
    trailing = [int(rng.integers(1, 5)) for _ in range(int(rng.integers(1, 3)))]
    shape = (rows, *trailing)
    axes = tuple(range(1, len(shape)))
    op = ["sum", "mean", "prod"][seed % 3]
    keep = bool(seed % 2)
    x = rng.uniform(0.5, 1.5, size=shape)
    w = rng.normal(size=np.sum(x, axis=axes, keepdims=keep).shape)

    def f(x, w):
        return np.sum(getattr(np, op)(x, axis=axes, keepdims=keep) * w)
    c = gradc.compile(f, x, w, wrt="x", target="c")
    value, grad = c.value_and_grad(x, w)
    assert value == pytest.approx(f(x, w), rel=1e-12)
    wb = w if keep else np.expand_dims(w, axes)
    count = np.prod(trailing)
    expected = {"sum": np.broadcast_to(wb, shape), "mean": np.broadcast_to(wb / count, shape),
                "prod": wb * np.prod(x, axis=axes, keepdims=True) / x}[op]
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-14)
