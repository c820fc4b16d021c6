"""Linear algebra beyond the op table: batching and broadcasting, second order, SciPy's functions by name,
and refusals that name the function's full path at the user's line. References are NumPy/SciPy values and
central differences, never gradc against itself."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from finite_differences import central_gradient as fd_grad
from scipy.linalg import cho_factor, cho_solve, solve_triangular

import gradc
from gradc.errors import GradcError
from gradc.trace.numpy_dispatch import UFUNCS

R = np.random.default_rng(13)


def spd(n, *batch):
    a = R.standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) / n + np.eye(n)




# ---------------------------------------------------------------- batching and broadcasting
def test_solve_broadcasts_batch_axes_like_numpy():
    a, b = spd(3, 2, 1), R.standard_normal((4, 3, 2))

    def f(a, b):
        return np.sum(np.linalg.solve(a, b) ** 2)
    value, (ga, gb) = gradc.value_and_grad(f, wrt=("a", "b"))(a, b)
    assert np.isclose(value, f(a, b), rtol=1e-12)
    np.testing.assert_allclose(ga, fd_grad(lambda x: f(x, b), a), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, fd_grad(lambda x: f(a, x), b), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [
    lambda a: np.linalg.cholesky(a), lambda a: np.linalg.inv(a), lambda a: np.linalg.slogdet(a)[1],
    lambda a: np.linalg.eigvalsh(a), lambda a: np.linalg.svd(a, compute_uv=False), lambda a: np.linalg.det(a),
    lambda a: np.linalg.qr(a)[1], lambda a: np.linalg.eigh(a)[0],
], ids=["cholesky", "inv", "slogdet", "eigvalsh", "svdvals", "det", "qr", "eigh"])
def test_stacked_matrices_match_numpy_and_differences(fn):
    a = spd(3, 2, 2)
    ct = R.standard_normal(np.shape(fn(a)))

    def f(a):
        return np.sum(fn(a) * ct)
    value, g = gradc.value_and_grad(f)(a)
    assert np.isclose(value, f(a), rtol=1e-10)
    np.testing.assert_allclose(g, fd_grad(f, a), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- second order (Hessian-vector products)
@pytest.mark.parametrize("f", [
    lambda a: np.sum(np.linalg.solve(a, np.arange(3.0)) ** 2),
    lambda a: np.sum(np.linalg.cholesky(a) ** 3),
    lambda a: np.linalg.slogdet(a)[1] ** 2,
], ids=["solve", "cholesky", "slogdet"])
def test_second_order_against_differences_of_the_gradient(f):
    a, v = spd(3), R.standard_normal((3, 3))
    grad = gradc.grad(f)
    hv = gradc.hvp(f, (a,), (v,))
    h = 1e-5
    expected = (grad(a + h * v) - grad(a - h * v)) / (2 * h)  # the gradient itself is checked against FD above
    np.testing.assert_allclose(hv, expected, rtol=1e-6, atol=1e-8)
    numpy_grad = fd_grad(f, a)
    np.testing.assert_allclose(grad(a), numpy_grad, rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- SciPy by its public name
def gp_nll(k, y):
    c, low = cho_factor(k, lower=True)
    alpha = cho_solve((c, low), y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(c)))


def through_module(a, b):
    lu, piv = scipy.linalg.lu_factor(a)
    x = scipy.linalg.lu_solve((lu, piv), b)
    e = scipy.linalg.expm(0.1 * a)
    return np.sum(x ** 2) + np.sum(e) + np.sum(solve_triangular(a, b, lower=True))


def calls_helper(k, y):
    return gp_nll(k, y) * 2.0


@pytest.mark.parametrize("f", [gp_nll, through_module, calls_helper])
def test_scipy_functions_are_routed_by_name(f):
    a, y = spd(4), R.standard_normal(4)
    value, g = gradc.value_and_grad(f)(a, y)
    assert np.isclose(value, f(a, y), rtol=1e-12)  # f run by NumPy/SciPy itself
    np.testing.assert_allclose(g, fd_grad(lambda x: f(x, y), a), rtol=1e-6, atol=1e-8)


def test_scipy_on_constants_still_runs_scipy():
    k = spd(3)

    def f(x):
        c, low = cho_factor(k)  # a constant: SciPy computes it, with its leftover upper triangle
        return np.sum(cho_solve((c, low), x))
    np.testing.assert_allclose(gradc.grad(f)(np.ones(3)), np.linalg.solve(k, np.ones(3)), rtol=1e-12)


def test_emitted_code_imports_scipy_only_when_needed():
    with_scipy = gradc.compile(gp_nll, spd(3), np.ones(3)).source
    assert "import scipy.linalg" in with_scipy
    plain = gradc.compile(lambda a: np.linalg.slogdet(a)[1], spd(3)).source
    assert "scipy" not in plain
    assert gradc.compile(gp_nll, spd(3), np.ones(3)).source == with_scipy  # deterministic


# ---------------------------------------------------------------- refusals name the full path at the user's line
def uses_matrix_rank(a):
    return np.sum(np.linalg.matrix_rank(a))  # the line the error points at


def uses_schur(a):
    return np.sum(scipy.linalg.schur(a)[0])


def uses_full_svd(a):
    return np.sum(np.linalg.svd(a)[0])


def misuses_lu(a):
    lu, piv = scipy.linalg.lu_factor(a)
    return np.sum(np.diag(lu))


@pytest.mark.parametrize("f,shape,message", [
    (uses_matrix_rank, (3, 3), r"np\.linalg\.matrix_rank is not supported"),
    (uses_schur, (3, 3), r"scipy\.linalg\.schur is not supported"),
    (uses_full_svd, (4, 3), r"np\.linalg\.svd with full_matrices=True .*; pass full_matrices=False"),
    (misuses_lu, (3, 3), r"only usable by scipy\.linalg\.lu_solve"),
])
def test_refusals_name_the_function_at_the_users_line(f, shape, message):
    with pytest.raises(GradcError, match=message) as info:
        gradc.grad(f)(R.standard_normal(shape))
    text = str(info.value)
    line = f.__code__.co_firstlineno + (2 if f is misuses_lu else 1)
    assert f"test_linalg.py:{line}" in text, text
    assert "\n" not in text


def test_qr_complete_of_tall_matrix_is_refused_with_a_fix():
    with pytest.raises(GradcError, match="mode='reduced'"):
        gradc.grad(lambda a: np.sum(np.linalg.qr(a, mode="complete")[0]))(R.standard_normal((4, 2)))


def test_array_methods_for_matrices():
    a = R.standard_normal((2, 3, 3))

    def f(a):
        return np.sum(a.diagonal(0, 1, 2) * a.trace(1, 1, 2)[:, None]) + np.sum(a.swapaxes(0, 2)[0] * a.mT[:, 0].T)
    value, g = gradc.value_and_grad(f)(a)
    assert np.isclose(value, f(a), rtol=1e-12)
    np.testing.assert_allclose(g, fd_grad(f, a), rtol=1e-6, atol=1e-8)


def test_scipy_ufuncs_are_named_by_their_path():
    import scipy.special

    def f(x):
        return np.sum(scipy.special.struve(1.0, x))
    if scipy.special.struve in UFUNCS:
        pytest.skip("struve became supported")
    with pytest.raises(GradcError, match=r"scipy\.special\.struve(\.__call__)? .*not supported") as info:
        gradc.grad(f)(np.array([2.0, 3.0]))
    assert "test_linalg.py:" in str(info.value)


def subset_of_eigh(a):
    return np.sum(scipy.linalg.eigh(a, subset_by_index=[0, 1])[0])


def test_scipy_options_that_change_the_result_are_refused():
    with pytest.raises(GradcError, match=r"scipy\.linalg\.eigh called with arguments.*subset_by_index") as info:
        gradc.grad(subset_of_eigh)(spd(3))
    assert f"test_linalg.py:{subset_of_eigh.__code__.co_firstlineno + 1}" in str(info.value)
    # options that only affect speed or checking are accepted
    k = spd(3)

    def f(k):
        return np.sum(scipy.linalg.cho_solve(scipy.linalg.cho_factor(k, check_finite=False), np.ones(3)))
    np.testing.assert_allclose(gradc.grad(f)(k), fd_grad(f, k), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn,shape", [
    (lambda a: np.linalg.cond(a), (3, 3)), (lambda a: np.linalg.cond(a, "fro"), (3, 3)),
    (lambda a: np.linalg.cond(a, -2), (2, 3, 3)),
    (lambda a: np.sum(np.linalg.tensorinv(a.reshape(2, 3, 6), 2) ** 2), (6, 6)),
    (lambda a: np.sum(np.linalg.tensorsolve(a.reshape(6, 2, 3), np.arange(6.0)) ** 2), (6, 6)),
], ids=["cond", "cond_fro", "cond_-2_batched", "tensorinv", "tensorsolve"])
def test_composites_match_numpy_and_differences(fn, shape):
    a = R.standard_normal(shape) + 3 * np.eye(shape[-1])

    def f(a):
        return np.sum(fn(a))
    value, g = gradc.value_and_grad(f)(a)
    assert np.isclose(value, f(a), rtol=1e-11)
    np.testing.assert_allclose(g, fd_grad(f, a), rtol=1e-5, atol=1e-7)


def test_eigvals_sum_is_the_trace():
    # the sum of the eigenvalues is the trace: its gradient is the identity (tests/complex/test_eig.py: the rest)
    a = np.random.default_rng(1).normal(size=(3, 3))
    np.testing.assert_allclose(gradc.grad(lambda a: np.real(np.sum(np.linalg.eigvals(a))))(a), np.eye(3), atol=1e-10)
