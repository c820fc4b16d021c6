"""OpenMP threads for large loops (``GRADC_OPENMP=1``): the same results, bit for bit, as one thread.

Elementwise runs of at least ``threads.OPENMP_MIN`` elements and the block loops of large kernel
products get ``#pragma omp parallel for``; nothing is reduced across threads, so the value and the
gradient are byte-identical with and without threads, and agree with NumPy. Skipped where the C
compiler has no OpenMP.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import threads

CC = c_build.find_compiler()
pytestmark = pytest.mark.skipif(CC is None or not threads.compiler_supports_openmp(CC),
                                reason="needs a C compiler with OpenMP (-fopenmp)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))
    monkeypatch.setenv("GRADC_BLAS", "none")  # the kernels' own loops: the BLAS has its own threads


def smooth(x, w):
    h = np.tanh(x @ w)
    return np.sum(np.exp(-h * h) * np.sin(h)) + np.sum(x ** 2)


def both(monkeypatch, f, *args, **kwargs):
    out = []
    for flag in ("0", "1"):
        monkeypatch.setenv("GRADC_OPENMP", flag)
        c = gradc.compile(f, *args, target="c", **kwargs)
        out.append((c, c.value_and_grad(*args)))
    return out


def test_threads_give_the_same_bits(monkeypatch):
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(400, 180)), rng.normal(size=(180, 200)) * 0.05
    (serial, (v0, g0)), (threaded, (v1, g1)) = both(monkeypatch, smooth, x, w, wrt=("x", "w"))
    assert "#pragma omp" not in serial.source and "#pragma omp parallel for" in threaded.source
    assert v0 == v1
    for a, b in zip(g0, g1):
        assert a.tobytes() == b.tobytes()
    h = np.tanh(x @ w)
    assert v1 == pytest.approx(np.sum(np.exp(-h * h) * np.sin(h)) + np.sum(x ** 2), rel=1e-12)


def test_named_sizes_decide_when_they_run(monkeypatch):
    def f(x):
        return np.sum(np.sqrt(1.0 + x * x))
    monkeypatch.setenv("GRADC_OPENMP", "1")
    c = gradc.compile(f, gradc.spec("f64[n]"), target="c")
    assert f"if (n >= {threads.OPENMP_MIN})" in c.source
    rng = np.random.default_rng(1)
    for n in (3, threads.OPENMP_MIN + 5):
        x = rng.normal(size=n)
        np.testing.assert_allclose(c.grad(x), x / np.sqrt(1.0 + x * x), rtol=1e-14)


@pytest.mark.parametrize("seed", range(3))
def test_random_large_elementwise(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    shape = (int(rng.integers(200, 400)), int(rng.integers(200, 400)))
    a, b = rng.normal(size=shape), rng.uniform(0.5, 2.0, size=shape)

    def f(a, b):
        return np.sum(np.log(b) * a - np.cos(a * b) / b)
    (_, (v0, g0)), (c, (v1, g1)) = both(monkeypatch, f, a, b, wrt=("a", "b"))
    assert "#pragma omp parallel for" in c.source
    assert v0 == v1 and all(x.tobytes() == y.tobytes() for x, y in zip(g0, g1))
    np.testing.assert_allclose(g1[0], np.log(b) + np.sin(a * b), rtol=1e-12)


def test_small_loops_stay_serial(monkeypatch):
    monkeypatch.setenv("GRADC_OPENMP", "1")
    c = gradc.compile(lambda x: np.sum(np.sin(x)), np.ones(100), target="c")
    assert "#pragma omp" not in c.source
