"""A loop's result that is an output is computed in the output buffer itself (no final copy).

``FunctionEmitter.output_array`` lets the work array holding a loop's carried result be the output
parameter when it has exactly the output's size and type. Checked against the user's function run by
NumPy and against central differences, for fill loops (GradBench ode's pattern) called as helpers,
loops returned twice, and seeded random loop lengths.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def fill(x, y):
    z = np.zeros(x.shape[0])
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * y[i - 1] + np.sin(z[i - 1])
    return z


def twice(x):
    z = fill(x, x)
    return z, z


def steps(x):
    y = np.zeros(x.shape[0])
    for _ in range(3):
        y = y + 0.5 * fill(x, y)
    return np.sum(y ** 2)


def central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("n", [2, 7, 40])
def test_fill_loop_output(n):
    x = np.random.default_rng(n).uniform(0.5, 1.5, n)
    c = gradc.compile(fill, x, x * 0.5, target="c", mode="jvp")
    np.testing.assert_allclose(c.forward(x, x * 0.5), fill(x, x * 0.5), rtol=1e-14)
    assert "all along" in c.source or n < 4  # the loop ran in the output (a short one is unrolled)


def test_loop_returned_twice():
    x = np.linspace(0.1, 1.0, 9)
    c = gradc.compile(twice, x, target="c", mode="jvp")
    a, b = c.forward(x)
    np.testing.assert_allclose(a, fill(x, x), rtol=1e-14)
    np.testing.assert_allclose(b, fill(x, x), rtol=1e-14)


@pytest.mark.parametrize("seed", range(4))
def test_helper_calls_gradient(seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.2, 1.2, int(rng.integers(3, 30)))
    c = gradc.compile(steps, x, target="c")
    value, grad = c.value_and_grad(x)
    assert value == pytest.approx(steps(x), rel=1e-13)
    np.testing.assert_allclose(grad, central(steps, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grad, gradc.compile(steps, x).grad(x), rtol=1e-12, atol=1e-14)
