"""The blocked Cholesky adjoint (``cholesky_grad``): against Murray's closed form, finite differences and itself.

The op table checks the op at n = 4 (one block); here the blocked path runs at sizes that
need several blocks, by default and with a small ``BLOCK``.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import gradc
from gradc.errors import ShapeError
from gradc.ir.registry import bind
from gradc.ops import linalg_cholesky as lch
from gradc.trace import trace


def spd(n, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T / n + np.eye(n)


def closed_form(lf, g):
    """Murray (2016): Phi(S + S^T), S = L^-T Phi(L^T G) L^-1, written independently of gradc."""
    def phi(x):
        x = np.tril(x)
        x[np.diag_indices(len(x))] *= 0.5
        return x
    p = phi(lf.T @ np.tril(g))
    s = scipy.linalg.solve(lf.T, scipy.linalg.solve(lf.T, p.T).T)  # L^-T P L^-1, by general solves
    return phi(s + s.T)


@pytest.mark.parametrize("n", [1, 2, 5, 130, 300])
def test_blocked_equals_closed_form(n):
    lf = np.linalg.cholesky(spd(n))
    g = np.random.default_rng(1).standard_normal((n, n))
    expected = closed_form(lf, g)
    got = lch.cholesky_grad(lf, g)
    assert np.max(np.abs(got - expected)) <= 1e-12 * np.max(np.abs(expected))


def test_blocks_cover_the_matrix():
    for n in (1, 127, 128, 129, 500, 1000):
        spans = lch.blocks(n)
        assert spans[0][1] == n and spans[-1][0] == 0
        assert all(a[0] == b[1] for a, b in zip(spans, spans[1:]))
        assert max(k - j for j, k in spans) <= lch.BLOCK


def loss(a, w):
    return np.sum(np.linalg.cholesky(a) * w)


@pytest.mark.parametrize("n, block", [(7, 3), (9, 4), (200, 128)])
def test_emitted_gradient_against_finite_differences(monkeypatch, n, block):
    monkeypatch.setattr(lch, "BLOCK", block)
    a, w = spd(n, 2), np.random.default_rng(3).standard_normal((n, n))
    compiled = gradc.compile(loss, a, w, wrt="a")
    assert "A[" not in compiled.source and "[-" not in compiled.source
    g = compiled.grad(a, w)
    e = np.random.default_rng(4).standard_normal((n, n))
    e = e + e.T  # a symmetric direction: the gradient is read on the lower triangle
    h = 1e-6
    fd = (loss(a + h * e, w) - loss(a - h * e, w)) / (2 * h)
    assert abs(np.sum(g * np.tril(e)) - fd) <= 1e-7 * max(1.0, abs(fd))
    assert np.max(np.abs(g - closed_form(np.linalg.cholesky(a), w))) <= 1e-11 * np.max(np.abs(g))


def test_second_order_through_blocked_adjoint(monkeypatch):
    """d/da of <grad, v>: the adjoint's own VJP, against central differences of the emitted gradient."""
    monkeypatch.setattr(lch, "BLOCK", 2)
    n = 5
    a, w = spd(n, 5), np.random.default_rng(6).standard_normal((n, n))
    v = np.tril(np.random.default_rng(7).standard_normal((n, n)))

    def inner(a, w, v):
        return np.sum(gradc.grad(loss, wrt="a")(a, w) * v)

    second = gradc.compile(inner, a, w, v, wrt="a").grad(a, w, v)
    first = gradc.compile(loss, a, w, wrt="a")
    e = np.random.default_rng(8).standard_normal((n, n))
    e = e + e.T
    h = 1e-5
    fd = (np.sum(first.grad(a + h * e, w) * v) - np.sum(first.grad(a - h * e, w) * v)) / (2 * h)
    assert abs(np.sum(second * np.tril(e)) - fd) <= 1e-6 * max(1.0, abs(fd))


def test_float32_and_empty():
    lf = np.linalg.cholesky(spd(4)).astype(np.float32)
    g = np.ones((4, 4), np.float32)
    out = lch.cholesky_grad(lf, g)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, closed_form(lf.astype(float), g.astype(float)), rtol=1e-5, atol=1e-6)
    compiled = gradc.compile(loss, np.eye(0), np.ones((0, 0)), wrt="a")
    assert compiled.grad(np.eye(0), np.ones((0, 0))).shape == (0, 0)


def test_bad_operands_are_internal_shape_errors():
    def adjoint(a, g):
        return bind("cholesky_grad", a, g)

    with pytest.raises(ShapeError, match="cholesky_grad"):
        trace(adjoint, np.ones((2, 3)), np.ones((2, 3)))
    with pytest.raises(ShapeError, match="cholesky_grad"):
        trace(adjoint, np.eye(2), np.eye(3))


def test_stacks_take_the_formula():
    lf = np.linalg.cholesky(np.stack([spd(3, 9), spd(3, 10)]))
    g = np.random.default_rng(11).standard_normal((2, 3, 3))
    got = lch.cholesky_grad(lf, g)
    for i in range(2):
        np.testing.assert_allclose(got[i], closed_form(lf[i], g[i]), rtol=1e-12, atol=1e-14)
