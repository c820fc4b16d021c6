"""Loop carries begun as Python numbers promote as NumPy's weak scalars (NEP 50), and a loop target bound before
the loop takes the loop's items' type: dtypes and values against the user's function run by NumPy, on a seeded
generator of small loops (start value, array dtype, body, kept loop or not)."""
import linecache
import random

import numpy as np
import pytest

import gradc

DTYPES = (np.float32, np.float64)
STARTS = ("0.0", "1.5", "0", "2")
BODIES = (
    "total = total + v * 0.5",
    "total += v",
    "total = total * 0.9 + np.sin(v)",
    "total = np.maximum(total, v)",
    "total = v * 2.0 - total",
)


def _function(source, name):
    filename = f"<weak carry {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["prog"]


def _program(rng: random.Random):
    start, body = rng.choice(STARTS), rng.choice(BODIES)
    prior = rng.choice(("", "    v = np.float64(3.0)\n", "    v = x[0] * 0.0\n"))
    return (f"def prog(x, y):\n{prior}    total = {start}\n    for v in x:\n        {body}\n"
            f"    return np.sum(y * total) + v\n")


CASES = [(seed, _program(random.Random(seed)), random.Random(seed + 1000).choice(DTYPES)) for seed in range(24)]


@pytest.mark.parametrize("seed,source,dtype", CASES, ids=[f"seed{c[0]}" for c in CASES])
def test_weak_carry_dtype_and_value_match_numpy(seed, source, dtype):
    f = _function(source, seed)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, 4).astype(dtype)
    y = rng.uniform(-1, 1, 3).astype(dtype)
    expected = np.asarray(f(x, y))
    got = np.asarray(gradc.compile(f, x, y).forward(x, y))
    assert got.dtype == expected.dtype, source
    tol = 1e-5 if expected.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol, err_msg=source)


def test_weak_carry_gradient_matches_central_differences():
    def f(x):
        total = 0.0
        for v in x:
            total = total * 0.9 + np.sin(v)
        return total
    x = np.array([0.3, -0.2, 0.7, 1.1])
    grad = gradc.grad(f)(x)
    eps = 1e-6
    fd = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(4)])
    np.testing.assert_allclose(grad, fd, rtol=1e-7, atol=1e-8)


def test_loop_target_rebound_with_another_dtype_after_a_loop_over_float32():
    def f(x, y):
        total = np.float32(0)
        for v in x:
            total = total + v
        t2 = 0.0
        for v in y:
            t2 = t2 + v * total
        return t2 + v
    x, y = np.arange(1, 4, dtype=np.float32), np.array([1.0, 2.0])
    got = gradc.compile(f, x, y).forward(x, y)
    assert np.asarray(got).dtype == np.asarray(f(x, y)).dtype
    assert got == pytest.approx(f(x, y))


def test_int_carry_over_float32_items_stays_float32():
    def f(x):
        total = 0
        for v in x:
            total = total + v
        return total
    x = np.arange(1, 4, dtype=np.float32)
    assert np.asarray(gradc.compile(f, x).forward(x)).dtype == np.float32
