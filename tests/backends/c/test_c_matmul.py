"""The C target's blocked matmul: every transpose combination, vectors, ragged sizes, work buffers.

Matmuls of at least ``c_matmul.BLOCKED_MIN`` multiply-adds go through register-block kernels
(``gradc_mm_<rows>x<cols>``); each case checks the value and both gradients against the NumPy
target (1e-12) and the gradient against central finite differences.
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import matmul as c_matmul

HAVE_CC = c_build.find_compiler() is not None
pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler found ($CC, cc or gcc): the C target cannot build")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _operand(rng, shape, transposed):
    """An array of ``shape``; when ``transposed``, stored the other way round (the loss reads ``.T``)."""
    return rng.normal(size=shape[::-1] if transposed else shape)


def _loss(ta, tb, weights):
    def loss(a, b):
        z = (a.T if ta else a) @ (b.T if tb else b)
        return np.sum(np.sin(z) * weights)
    return loss


def _close(c, n, rtol=1e-12):
    if isinstance(n, tuple):
        for x, y in zip(c, n):
            _close(x, y, rtol)
        return
    assert np.shape(c) == np.shape(n) and np.asarray(c).dtype == np.asarray(n).dtype
    np.testing.assert_allclose(c, n, rtol=rtol, atol=1e-12)


def _fd_check(c, args, rng, picks=4, h=1e-6):
    """Central differences of ``c`` at a few coordinates of each argument against ``c.grad``."""
    grads = c.grad(*args)
    for i, (x, g) in enumerate(zip(args, grads)):
        for _ in range(picks):
            idx = tuple(int(rng.integers(d)) for d in x.shape)
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[i][idx] += h
            minus[i][idx] -= h
            fd = (c.forward(*plus) - c.forward(*minus)) / (2 * h)
            assert abs(fd - g[idx]) <= 1e-6 * max(1.0, abs(fd)), (i, idx, fd, g[idx])


def _check(f, args, blocked=True):
    rng = np.random.default_rng(7)
    c = gradc.compile(f, *args, wrt=tuple(range(len(args))), target="c")
    n = gradc.compile(f, *args, wrt=tuple(range(len(args))))
    assert ("gradc_mm_" in c.c_source) == blocked
    _close(c.forward(*args), n.forward(*args))
    _close(c(*args), n(*args))
    _close(c.grad(*args), n.grad(*args))
    _fd_check(c, args, rng)
    return c


# (m, k, n): ragged against the 8-, 16- and 24-wide blocks, one side of 1, and the logreg shapes; with a
# transposed left operand and at most 10 columns, out is computed by blocks of its transpose
SHAPES = [(17, 33, 9), (50, 20, 7), (9, 7, 67), (1, 3, 1400), (33, 17, 16),
          (1, 64, 70), (70, 64, 1), (3, 40, 35), (256, 100, 10)]


@pytest.mark.parametrize("ta", [False, True], ids=["a", "aT"])
@pytest.mark.parametrize("tb", [False, True], ids=["b", "bT"])
@pytest.mark.parametrize("m,k,n", SHAPES, ids=["x".join(map(str, s)) for s in SHAPES])
def test_matrix_matrix_every_transpose(m, k, n, ta, tb):
    assert m * k * n >= c_matmul.BLOCKED_MIN
    rng = np.random.default_rng(m * 1000 + k * 10 + n)
    a, b = _operand(rng, (m, k), ta), _operand(rng, (k, n), tb)
    weights = rng.normal(size=(m, n))
    c = _check(_loss(ta, tb, weights), (a, b))
    expected = np.sum(np.sin((a.T if ta else a) @ (b.T if tb else b)) * weights)
    np.testing.assert_allclose(c.forward(a, b), expected, rtol=1e-12)


@pytest.mark.parametrize("tb", [False, True], ids=["b", "bT"])
@pytest.mark.parametrize("k,n", [(300, 17), (129, 33), (4096, 1)])
def test_vector_matrix(k, n, tb):
    rng = np.random.default_rng(k + n)
    v, b = rng.normal(size=k), _operand(rng, (k, n), tb)
    weights = rng.normal(size=n)
    _check(lambda v, b: np.sum(np.sin(v @ (b.T if tb else b)) * weights), (v, b), blocked=k * n >= c_matmul.BLOCKED_MIN)


@pytest.mark.parametrize("ta", [False, True], ids=["a", "aT"])
@pytest.mark.parametrize("m,k", [(33, 150), (9, 513), (1, 4100)])
def test_matrix_vector(m, k, ta):
    rng = np.random.default_rng(m + k)
    a, v = _operand(rng, (m, k), ta), rng.normal(size=k)
    weights = rng.normal(size=m)
    _check(lambda a, v: np.sum(np.sin((a.T if ta else a) @ v) * weights), (a, v))


def test_small_matmul_keeps_plain_loops():
    x, w = np.linspace(-1, 1, 5), np.linspace(0, 1, 15).reshape(5, 3)
    _check(lambda x, w: np.sum(np.tanh(x @ w)), (x, w), blocked=False)


def test_large_operands_use_the_work_buffer():
    rng = np.random.default_rng(5)
    x, w1, w2 = rng.normal(size=(70, 90)), rng.normal(size=(90, 80)) * 0.1, rng.normal(size=(80, 11)) * 0.1
    f = lambda x, w1, w2: np.sum(np.tanh(x @ w1) @ w2)  # noqa: E731
    c = gradc.compile(f, x, w1, w2, wrt=(1, 2), target="c")
    n = gradc.compile(f, x, w1, w2, wrt=(1, 2))
    assert "double *work" in c.header and "gradc_mm_" in c.c_source
    _close(c.value_and_grad(x, w1, w2), n.value_and_grad(x, w1, w2))


def test_float32():
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(20, 30)).astype(np.float32), rng.normal(size=(30, 19)).astype(np.float32)
    f = lambda a, b: np.sum(np.tanh(a @ b.T.T))  # noqa: E731
    c = gradc.compile(f, a, b, wrt=(0, 1), target="c")
    assert "gradc_mmf_" in c.c_source
    for x, y in zip(c.grad(a, b), gradc.compile(f, a, b, wrt=(0, 1)).grad(a, b)):
        assert x.dtype == np.float32
        np.testing.assert_allclose(x, y, rtol=2e-4, atol=2e-5)


def test_deterministic_source():
    rng = np.random.default_rng(1)
    a, b = rng.normal(size=(17, 33)), rng.normal(size=(9, 33))
    f = _loss(False, True, 1.0)
    s1 = gradc.compile(f, a, b, wrt=(0, 1), target="c").c_source
    s2 = gradc.compile(f, a, b, wrt=(0, 1), target="c").c_source
    assert s1 == s2


def test_kernels_compile_without_warnings(tmp_path):
    cc = shutil.which("gcc") or c_build.find_compiler()
    rng = np.random.default_rng(2)
    # row vector (a one-row kernel), transposed right operand (copied), blocks of the transpose (one-row too)
    v, a, b, d = rng.normal(size=300), rng.normal(size=(33, 40)), rng.normal(size=(17, 40)), rng.normal(size=(33, 7))
    e = rng.normal(size=(300, 30))
    f = lambda v, a, b, d, e: (np.sum(np.sin(v[:40] @ a.T)) + np.sum(a @ b.T)  # noqa: E731
                               + np.sum(v @ np.ones((300, 20))) + np.sum(np.cos(a.T @ d)) + np.sum(e.T @ v))
    source, _ = c_build.emit_sources_for(f, v, a, b, d, e, wrt=(0, 1, 2, 3, 4))
    for kernel in ("gradc_mm_1x", "gradc_mmt_7x24", "gradc_mmt_1x24", "_rhs"):
        assert kernel in source
    path = tmp_path / "m.c"
    path.write_text(source)
    proc = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", str(path), "-o",
                           str(tmp_path / "m.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


def test_integer_and_mixed_operands():
    a, b = np.arange(40 * 30).reshape(40, 30) % 7 - 3, np.arange(30 * 20).reshape(30, 20) % 5 - 2
    x = np.linspace(0.5, 1.5, 800).reshape(40, 20)
    f = lambda x, a, b: np.sum(x * (a @ b))  # noqa: E731
    c, n = gradc.compile(f, x, a, b, target="c"), gradc.compile(f, x, a, b)
    _close(c.forward(x, a, b), n.forward(x, a, b))
    _close(c.grad(x, a, b), n.grad(x, a, b))
    x32, w = np.linspace(-1, 1, 1200, dtype=np.float32).reshape(40, 30), np.linspace(0, 1, 600).reshape(30, 20)
    g = lambda x, w: np.sum(np.sin(x @ w))  # noqa: E731
    _close(gradc.compile(g, x32, w, wrt=1, target="c").grad(x32, w), gradc.compile(g, x32, w, wrt=1).grad(x32, w))


@pytest.mark.parametrize("n", [64, 67, 1000])
def test_full_sums_in_running_sums(n):
    """A contiguous array summed to a scalar (also lowered in c_loops) goes by 8 running sums."""
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 3))
    f = lambda x: np.mean(np.sin(x)) + np.sum(x[1:] * 2.0) + np.sum(np.cos(x).reshape(-1)[5:])  # noqa: E731
    c = _check(f, (x,), blocked=False)
    assert "8 running sums" in c.c_source
    x32 = x.astype(np.float32)
    g = lambda x: np.sum(np.tanh(x))  # noqa: E731
    np.testing.assert_allclose(gradc.compile(g, x32, target="c").forward(x32), np.sum(np.tanh(x32)), rtol=1e-5)


@pytest.mark.parametrize("ta", [False, True], ids=["a", "aT"])
@pytest.mark.parametrize("tb", [False, True], ids=["b", "bT"])
def test_batched(ta, tb):
    """Leading axes: one blocked product per index (the tracer broadcasts a 2-D operand first)."""
    rng = np.random.default_rng(11)
    a = rng.normal(size=(3, 140, 30) if ta else (3, 30, 140))
    b = rng.normal(size=(2, 1, 9, 140) if tb else (2, 1, 140, 9))
    at = (lambda x: np.transpose(x, (0, 2, 1))) if ta else (lambda x: x)  # noqa: E731
    bt = (lambda x: np.transpose(x, (0, 1, 3, 2))) if tb else (lambda x: x)  # noqa: E731
    _check(lambda a, b: np.sum(np.sin(at(a) @ bt(b))), (a, b))
    w = rng.normal(size=(20, 140) if tb else (140, 20))
    _check(lambda a, w: np.sum(np.cos(at(a) @ (w.T if tb else w))), (a, w))
    v = rng.normal(size=140)
    _check(lambda a, v: np.sum(np.cos(at(a) @ v)), (a, v))


def test_arrays_named_like_loop_indices():
    """Arrays called ``i``, ``j``, ``n``, ``p``, ``v``, ``c`` read right in every matmul and argmax loop."""
    rng = np.random.default_rng(4)
    i, j = rng.normal(size=(30, 40)), rng.normal(size=(40, 20))
    p, v = rng.normal(size=(3, 4)), rng.normal(size=(4, 2))

    def f(i, j, p, v):
        return (np.sum(np.sin(i @ j)) + np.sum(np.cos(i.T @ i[:, :7])) + np.sum(p @ v) + np.sum(p @ j[:4, :3])
                + np.sum(np.argmax(p, axis=1) * p[:, 0]))
    _check(f, (i, j, p, v))
