"""scipy.linalg.lu under gradc: SciPy's P, L, U (square and rectangular), and derivatives by central differences."""
import numpy as np
import pytest
import scipy.linalg
from scipy.linalg import lu

import gradc

SHAPES = [(1, 1), (2, 2), (3, 3), (5, 5), (4, 2), (2, 4), (6, 3)]


def central(fun, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (fun(x + e) - fun(x - e)) / (2 * eps)
    return g


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(3))
def test_factors_match_scipy_and_gradients_match_central_differences(shape, seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=shape)
    w_l, w_u = rng.normal(size=(shape[0], min(shape))), rng.normal(size=(min(shape), shape[1]))

    def parts(a):
        p, lower, u = lu(a)
        return p, lower, u

    def loss(a):
        p, lower, u = lu(a)
        return np.sum(w_l * lower) + np.sum(w_u * u) + np.sum(p)

    compiled = gradc.compile(parts, a, mode="jvp")
    for got, want in zip(compiled.forward(a), scipy.linalg.lu(a)):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gradc.grad(loss)(a), central(loss, a), rtol=1e-6, atol=1e-8)


def test_permute_l_and_p_indices_and_the_c_target():
    a = np.random.default_rng(7).normal(size=(4, 4))

    def both(a):
        pl, u = scipy.linalg.lu(a, permute_l=True)
        perm, lower, u2 = scipy.linalg.lu(a, p_indices=True)
        return pl, u, perm, lower, u2
    want_pl, want_u = scipy.linalg.lu(a, permute_l=True)
    want_perm, want_l, _ = scipy.linalg.lu(a, p_indices=True)
    for target in ("numpy", "c"):
        got = gradc.compile(both, a, target=target, mode="jvp").forward(a)
        np.testing.assert_allclose(got[0], want_pl, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[1], want_u, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(got[2], want_perm)
        np.testing.assert_allclose(got[3], want_l, rtol=1e-12, atol=1e-12)


def test_determinant_from_the_factors():
    a = np.random.default_rng(3).normal(size=(4, 4))

    def log_abs_det(a):
        _, _, u = lu(a)
        return np.sum(np.log(np.abs(np.diag(u))))
    np.testing.assert_allclose(gradc.grad(log_abs_det)(a), np.linalg.inv(a).T, rtol=1e-9)
