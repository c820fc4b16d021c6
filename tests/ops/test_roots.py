"""``np.roots`` of traced coefficients: the companion matrix's eigenvalues (NumPy's construction), always
complex as ``jax.numpy.roots`` under jit; values against NumPy, gradients (implicit differentiation of
``p(r) = 0`` through eig) against central differences, both targets."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError

TARGETS = ("numpy", "c")


def _sorted(r):
    r = np.asarray(r, complex)
    return r[np.lexsort((np.round(r.imag, 8), np.round(r.real, 8)))]


def _polynomial(seed):
    """Simple roots (real and complex pairs) well apart and a leading coefficient away
    from 0, so the roots are smooth in the coefficients."""
    rng = np.random.default_rng(seed)
    degree = 2 + seed % 4
    while True:
        p = rng.standard_normal(degree + 1)
        r = np.roots(p)
        gaps = np.abs(r[:, None] - r[None, :]) + np.eye(degree) * 9
        if abs(p[0]) > 0.5 and np.max(np.abs(r)) < 4 and np.min(gaps) > 0.3:
            return p


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(8))
def test_roots_values(seed, target):
    p = _polynomial(seed)
    got = gradc.jit(np.roots, target=target)(p)
    assert np.iscomplexobj(got)
    np.testing.assert_allclose(_sorted(got), _sorted(np.roots(p)), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(8))
def test_roots_gradient(seed, target):
    p = _polynomial(seed)
    w = np.random.default_rng(100 + seed).standard_normal(2)

    def f(p):  # symmetric in the roots: independent of eig's order
        r = np.roots(p)
        return w[0] * np.sum(r.real ** 3) + w[1] * np.sum(np.abs(r) ** 2)

    np.testing.assert_allclose(gradc.jit(gradc.grad(f), target=target)(p), fd_grad(f, p), rtol=1e-5, atol=1e-7)


def test_roots_match_implicit_differentiation():
    """dr/dp_k = -r^(n-k) / p'(r) for a simple root r (differentiating p(r) = 0)."""
    p = np.array([2.0, -3.0, -11.0, 6.0])  # roots 3, -2, 0.5

    def largest(p):
        return np.max(np.roots(p).real)

    r = 3.0
    n = len(p) - 1
    expected = -np.array([r ** (n - k) for k in range(n + 1)]) / np.polyval(np.polyder(p), r)
    np.testing.assert_allclose(gradc.grad(largest)(p), expected, rtol=1e-10)


def test_roots_of_short_polynomials_and_bad_shapes():
    assert gradc.jit(np.roots)(np.array([2.0])).shape == (0,)
    np.testing.assert_allclose(gradc.jit(np.roots)(np.array([2.0, -1.0])), [0.5])
    with pytest.raises(GradcError, match="1-d"):
        gradc.jit(np.roots)(np.ones((2, 2)))
