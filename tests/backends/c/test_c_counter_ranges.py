"""Loop counters of known range index without checks in the C target, with NumPy's results.

A loop ``for i in range(a, b, step)`` of static length gives its counter, and the integer offsets
computed from it (``i - 1``, ``i + 2``), a range known at compile time; an index in ``[0, n)`` then
reads and writes without the negative wrap and the out-of-range status (so the C compiler can
vectorise the body), an index in ``[-n, 0)`` keeps the wrap, and one that may leave ``[-n, n)`` keeps
the check. Seeded random loops (forward and backward ranges, offsets that wrap) against the user's
function run by NumPy, the NumPy target and central differences.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _loop(start, stop, step, read_x, read_y, write):
    """``z[i + write] = sin(x[i + read_x]) * y[i + read_y]`` over ``range(start, stop, step)``, summed with weights."""
    def f(x, y):
        z = np.zeros(x.shape[0])
        for i in range(start, stop, step):
            z[i + write] = np.sin(x[i + read_x]) * y[i + read_y]
        return np.sum(z * np.arange(1.0, x.shape[0] + 1))
    return f


def _cases(count, n, seed):
    rng = np.random.default_rng(seed)
    cases = []
    while len(cases) < count:
        step = int(rng.choice([1, 2, 3, -1, -2]))
        start, stop = (int(v) for v in rng.integers(0, n, 2))
        if step < 0:
            start, stop = max(start, stop), min(start, stop) - 1
        trips = list(range(start, stop, step))
        if len(trips) < 2:
            continue
        lo, hi = min(trips), max(trips)
        offsets = [int(rng.integers(-lo - n, n - hi)) for _ in range(3)]  # every index stays in [-n, n)
        cases.append((start, stop, step, *offsets))
    return cases


@pytest.mark.parametrize("case", _cases(8, 7, seed=2027))
def test_counter_indexed_loop_matches_numpy_and_differences(case):
    n = 7
    rng = np.random.default_rng(abs(hash(case)) % 2 ** 32)
    x, y = rng.normal(size=n), rng.normal(size=n)
    f = _loop(*case)
    c = gradc.compile(f, x, y, argnums=(0, 1), target="c")
    py = gradc.compile(f, x, y, argnums=(0, 1), target="numpy")
    np.testing.assert_allclose(c.forward(x, y), f(x, y), rtol=1e-13, atol=1e-14)
    gx, gy = c.grad(x, y)
    wx, wy = py.grad(x, y)
    np.testing.assert_allclose(gx, wx, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(gy, wy, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(gx, central_gradient(lambda v: f(v, y), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, central_gradient(lambda v: f(x, v), y), rtol=1e-6, atol=1e-8)


def test_in_range_counter_indices_carry_no_checks():
    """``z[i] = x[i] * y[i - 1]`` for i in 1..n-1 (GradBench ode's fill): no wrap, no status in the loop."""
    def fill(x, y):
        z = np.zeros(x.shape[0])
        z[0] = x[0]
        for i in range(1, x.shape[0]):
            z[i] = x[i] * y[i - 1]
        return np.sum(z ** 2)
    x, y = np.linspace(0.5, 1.5, 9), np.linspace(-1.0, 1.0, 9)
    c = gradc.compile(fill, x, y, argnums=(0, 1), target="c")
    source = c.c_source
    assert "+= 9;" not in source and "/* out of range */" not in source
    gx, gy = c.grad(x, y)
    np.testing.assert_allclose(gx, central_gradient(lambda v: fill(v, y), x), rtol=1e-7)
    np.testing.assert_allclose(gy, central_gradient(lambda v: fill(x, v), y), rtol=1e-7)


def test_negative_counter_offsets_still_wrap():
    """``x[i - 3]`` for i in 0..2 reads x[-3..-1], as NumPy does."""
    def f(x):
        total = 0.0
        for i in range(3):
            total = total + x[i - 3] * (i + 1.0)
        return total
    x = np.arange(1.0, 7.0)
    c = gradc.compile(f, x, target="c")
    assert c.forward(x) == pytest.approx(f(x), rel=1e-15)
    np.testing.assert_array_equal(c.grad(x), [0, 0, 0, 1.0, 2.0, 3.0])
