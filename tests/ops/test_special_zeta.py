"""``scipy.special.zeta(x, q)`` on both targets: values against SciPy on a seeded grid and at its special values
(x at and below 1, x infinite, poles at non-positive integer q, negative q), the derivative in q against
central differences and ``-x zeta(x + 1, q)`` to second order, the derivative in x refused by name."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from finite_differences import central_gradient

import gradc
from gradc.errors import GradcError

S = scipy.special


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_values_against_scipy(target):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(1.0, 3.0, 200), 10 ** rng.uniform(0.01, 2.0, 200), [1.0, 0.5, 2.0, 3.0, 2.5, 4.0]])
    q = np.concatenate([10 ** rng.uniform(-4, 4, 400), [2.0, 2.0, 0.0, -2.0, -1.5, -1.5]])
    got = gradc.jit(lambda x, q: S.zeta(x, q), target=target)(x, q)
    np.testing.assert_allclose(got, S.zeta(x, q), rtol=1e-13, atol=0)
    special_x = np.array([np.inf, np.inf, np.inf, np.nan, 3.0, 1.0 + 1e-7])
    special_q = np.array([1.0, 0.5, 2.0, 1.0, np.inf, 3.0])
    got = gradc.jit(lambda x, q: S.zeta(x, q), target=target)(special_x, special_q)
    np.testing.assert_allclose(got, S.zeta(special_x, special_q), rtol=1e-9)


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_float32(target):
    q = np.linspace(0.5, 4.0, 6, dtype=np.float32)
    got = gradc.jit(lambda q: S.zeta(np.float32(2.5), q), target=target)(q)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, S.zeta(np.float32(2.5), q), rtol=1e-6)


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("x,q", [(1.5, 0.7), (2.0, 1.0), (3.3, 4.2), (7.0, 0.3), (2.0, -1.5)])
def test_derivative_in_q(target, x, q):
    dq = gradc.jit(gradc.grad(lambda q: S.zeta(x, q)), target=target)
    np.testing.assert_allclose(dq(q), central_gradient(lambda t: S.zeta(x, t), q), rtol=1e-6)
    np.testing.assert_allclose(dq(q), -x * S.zeta(x + 1, q), rtol=1e-13)
    dqq = gradc.grad(gradc.grad(lambda q: S.zeta(x, q)))(q)
    np.testing.assert_allclose(dqq, x * (x + 1) * S.zeta(x + 2, q), rtol=1e-13)


def test_traced_x_is_evaluated_but_its_derivative_refused():
    x, q = np.array([2.0, 3.5]), np.array([1.0, 0.4])
    np.testing.assert_allclose(gradc.jit(lambda x, q: S.zeta(x, q))(x, q), S.zeta(x, q), rtol=1e-14)
    g = gradc.grad(lambda x, q: np.sum(S.zeta(x, q)), argnums=1)(x, q)  # x traced, not differentiated
    np.testing.assert_allclose(g, -x * S.zeta(x + 1, q), rtol=1e-13)
    with pytest.raises(GradcError, match=r"scipy.special.zeta\(x, q\) in x has no derivative") as info:
        gradc.grad(lambda x, q: np.sum(S.zeta(x, q)))(x, q)
    assert "test_special_zeta.py" in str(info.value)


def test_riemann_zeta_of_one_argument_is_refused_with_the_hurwitz_spelling():
    with pytest.raises(GradcError, match=r"scipy.special.zeta\(x, 1.0\)"):
        gradc.jit(lambda x: S.zeta(x))(np.array([2.0]))
