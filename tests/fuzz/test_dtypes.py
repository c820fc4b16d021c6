"""Integer and boolean operands on both targets against NumPy: a seeded sweep of programs mixing a
float input with an integer or boolean one (not differentiated), plus the wrong results it found.

Found: ``np.sum`` of booleans was typed bool (NumPy counts: int64), so the C target summed to True
(1) where NumPy gave the count; ``bool * bool`` and ``abs(bool)`` crashed the C emitter inside SymPy.
"""
import os
import warnings

import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler

needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")
LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"
SEED = int(os.environ.get("GRADC_FUZZ_SEED", 20261128))

# expressions of a float vector x and an integer or boolean vector k, each a float vector
TERMS = ["x * k", "x / (k + 10)", "x * np.cumsum(k)", "x * np.sum(k)", "x * k.sum()", "x * np.mean(k)",
         "x * np.prod(k)", "x * np.max(k)", "x * (k * k * k)", "x * np.abs(k)", "x * (k + k)",
         "x * np.maximum(k, k[::-1])", "x * np.minimum(k, k[::-1])", "x * np.square(k)", "np.where(k > 0, x, -x)",
         "x * (k & k[::-1])", "x * (k | k[::-1])", "x * np.sum(k, axis=0, keepdims=True)", "x * k.astype(np.float64)",
         "x ** 2 * np.count_nonzero(k)", "x * np.sum(k * k)", "x * np.sum(k[:2])", "np.sin(x) * np.max(k * k)"]
INTEGER_ONLY = {"x / (k + 10)"}


def operands(rng):
    kind = rng.integers(0, 3)
    if kind == 0:
        k = rng.random(4) > 0.5
    else:
        k = rng.integers(-3, 4, 4).astype(np.int64 if kind == 1 else np.int32)
    return rng.uniform(-1.0, 1.0, 4), k


def programs(n, seed):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        terms = [TERMS[i] for i in rng.choice(len(TERMS), int(rng.integers(1, 4)), replace=False)]
        x, k = operands(rng)
        if k.dtype == bool:
            terms = [t for t in terms if t not in INTEGER_ONLY] or ["x * k"]
        source = "def prog(x, k):\n    return np.sum(" + " + ".join(terms) + ")\n"
        namespace = {"np": np}
        exec(source, namespace)
        yield source, namespace["prog"], x, k


def _check(target, n, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for source, f, x, k in programs(n, seed):
            compiled = gradc.compile(f, x, k, wrt="x", target=target)
            value, grad = compiled.value_and_grad(x, k)
            np.testing.assert_allclose(value, f(x, k), rtol=1e-12, err_msg=f"{target} value\n{source}{k!r}")
            fd = np.array([(f(x + e, k) - f(x - e, k)) / 2e-6 for e in np.eye(4) * 1e-6])
            np.testing.assert_allclose(grad, fd, rtol=1e-5, atol=1e-6, err_msg=f"{target} gradient\n{source}{k!r}")


def test_integer_programs_numpy_target():
    _check("numpy", 600 if LONG else 60, SEED)


@needs_cc
def test_integer_programs_c_target():
    _check("c", 200 if LONG else 12, SEED + 1)


@pytest.mark.parametrize("target", ["numpy", pytest.param("c", marks=needs_cc)])
def test_bool_sum_counts(target):
    def f(x, k):
        return np.sum(x) * np.sum(k) + np.sum(x * k.sum(axis=0)) + np.sum(x) * np.prod(k[:1])

    x, k = np.ones(3), np.array([True, False, True])
    assert "bool[] = sum" not in str(gradc.trace(f, x, k))
    assert gradc.compile(f, x, k, target=target).forward(x, k) == pytest.approx(f(x, k))  # 3*2 + 6 + 3


@needs_cc
def test_bool_arithmetic_c_target():
    def f(x, k, j):
        return np.sum(x * (k * j)) + np.sum(x * (k + j)) * 2 + np.sum(x * np.abs(k)) * 3 \
            + np.sum(x * np.maximum(k, j)) * 5 + np.sum(x * np.minimum(k, j)) * 7 + np.sum(x * np.square(j)) * 11

    x = np.array([1.0, 10.0, 100.0, 1000.0])
    k, j = np.array([True, False, True, False]), np.array([True, True, False, False])
    assert gradc.compile(f, x, k, j, target="c").forward(x, k, j) == f(x, k, j)
