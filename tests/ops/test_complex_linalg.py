"""Linear algebra and scans on complex arrays: NumPy's and SciPy's values, and JAX's derivative convention.

Every function is run on seeded random complex matrices (three draws each, the generator): gradc's value and
dtype must equal NumPy's (SciPy's), the gradient of the real loss ``sum(Re(f(z) * w))`` (``w`` complex) must
equal central differences along the real and the imaginary direction of each entry (``df/dx - i df/dy``), and
``jvp`` along a random complex direction the difference quotient along it.
Functions holomorphic in their input are checked further as such: ``jacobian(holomorphic=True)`` applied to a
direction against the difference quotient along that direction and along ``i`` times it.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl
import scipy.special
from finite_differences import central_directional, central_gradient

import gradc


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def general(n, m=None):
    """A complex matrix, shifted along the diagonal when square (well conditioned)."""
    def make(rng):
        a = _complex(rng, n, n if m is None else m)
        return a + 3 * np.eye(n) if m is None else a
    return make


def hermitian(n, junk=False):
    """A Hermitian positive definite matrix; ``junk``: arbitrary values in the strict upper triangle (unread)."""
    def make(rng):
        a = _complex(rng, n, n)
        h = a @ a.conj().T + np.eye(n)
        return h + np.triu(_complex(rng, n, n), 1) if junk else h
    return make


def vector(n):
    return lambda rng: _complex(rng, n)


B3 = np.array([1.0 - 2j, 0.5j, 2.0])
B4 = np.array([1.0, -1j, 0.5 + 0.5j, 2.0])
Q2 = np.array([[1.0 + 1j, 2.0], [-1j, 0.5]])
D2 = np.array([[2.0 + 1j, 0.5], [1j, 3.0]])

CASES = [
    ("qr_square", lambda a: np.linalg.qr(a), general(3)),
    ("qr_tall", lambda a: np.linalg.qr(a), general(4, 2)),
    ("qr_wide", lambda a: np.linalg.qr(a), general(2, 4)),
    ("qr_r", lambda a: np.linalg.qr(a, mode="r"), general(4, 3)),
    ("qr_scipy_economic", lambda a: sl.qr(a, mode="economic"), general(4, 3)),
    ("qr_stack", lambda a: np.linalg.qr(a), lambda rng: _complex(rng, 2, 3, 2)),
    ("cholesky", lambda a: np.linalg.cholesky(a), hermitian(3)),
    ("cholesky_reads_lower", lambda a: np.linalg.cholesky(a), hermitian(3, junk=True)),
    ("cholesky_scipy_upper", lambda a: sl.cholesky(a), lambda rng: hermitian(3, junk=True)(rng).conj().T),
    ("cho_solve_lower", lambda a: sl.cho_solve(sl.cho_factor(a, lower=True), B3), hermitian(3)),
    ("cho_solve_upper", lambda a: sl.cho_solve(sl.cho_factor(a), B3), hermitian(3)),
    ("solve_pos", lambda a: sl.solve(a, B3, assume_a="pos"), hermitian(3)),
    ("solve_her_upper", lambda a: sl.solve(a, B3, assume_a="her"), lambda rng: hermitian(3, True)(rng).conj().T),
    ("solve_her_lower", lambda a: sl.solve(a, B3, assume_a="her", lower=True), hermitian(3, junk=True)),
    ("solve_sym", lambda a: sl.solve(a, B3, assume_a="sym"), general(3)),
    ("solve_scipy", lambda a: sl.solve(a, B3), general(3)),
    ("solve_triangular", lambda a: sl.solve_triangular(a, B3), general(3)),
    ("solve_triangular_T", lambda a: sl.solve_triangular(a, B3, trans="T", lower=True), general(3)),
    ("solve_triangular_C", lambda a: sl.solve_triangular(a, B3, trans="C"), general(3)),
    ("lu_solve_C", lambda a: sl.lu_solve(sl.lu_factor(a), B3, trans=2), general(3)),
    ("lu", lambda a: sl.lu(a), general(3)),
    ("lu_permute_l", lambda a: sl.lu(a, permute_l=True), general(4, 3)),
    ("pinv_tall", lambda a: np.linalg.pinv(a), general(4, 2)),
    ("pinv_wide", lambda a: np.linalg.pinv(a), general(2, 3)),
    ("pinv_scipy", lambda a: sl.pinv(a), general(3, 2)),
    ("lstsq_tall", lambda a: np.linalg.lstsq(a, B4, rcond=None)[:2], general(4, 2)),
    ("lstsq_square", lambda a: np.linalg.lstsq(a, B3, rcond=None)[0], general(3)),
    ("lstsq_scipy", lambda a: sl.lstsq(a, B4)[0], general(4, 3)),
    ("cond", lambda a: np.linalg.cond(a), general(3)),
    ("cond_fro", lambda a: np.linalg.cond(a, "fro"), general(3)),
    ("expm", lambda a: sl.expm(0.3 * a), general(3)),
    ("sqrtm", lambda a: sl.sqrtm(a), hermitian(3)),
    ("sylvester", lambda a: sl.solve_sylvester(a, D2, Q2), general(2)),
    ("lyapunov", lambda a: sl.solve_continuous_lyapunov(a, Q2), general(2)),
    ("discrete_lyapunov", lambda a: sl.solve_discrete_lyapunov(0.3 * a, Q2), general(2)),
    ("solveh_banded", lambda ab: sl.solveh_banded(ab, B4),
     lambda rng: np.vstack([_complex(rng, 1, 4), 4 + np.abs(_complex(rng, 1, 4))])),
    ("solve_banded", lambda ab: sl.solve_banded((1, 1), ab, B4),
     lambda rng: np.vstack([_complex(rng, 1, 4), 4 + _complex(rng, 1, 4), _complex(rng, 1, 4)])),
    ("matrix_power_negative", lambda a: np.linalg.matrix_power(a, -2), general(3)),
    ("det_scipy", lambda a: sl.det(a), general(3)),
    ("pinv_hermitian", lambda a: np.linalg.pinv(a, hermitian=True), hermitian(3, junk=True)),
    ("svd_hermitian", lambda a: np.linalg.svd(a, hermitian=True, compute_uv=False), hermitian(3, junk=True)),
    ("svd_hermitian_product", lambda a: (lambda u, s, vh: (u * np.sqrt(s)) @ vh)(*np.linalg.svd(a, hermitian=True)),
     hermitian(3, junk=True)),
    ("cholesky_upper", lambda a: np.linalg.cholesky(a, upper=True), lambda rng: hermitian(3, junk=True)(rng).conj().T),
    ("norms", lambda a: (np.linalg.matrix_norm(a, ord="nuc"), np.linalg.vector_norm(a, ord=3), np.linalg.svdvals(a)),
     general(3)),
    ("cumsum", lambda z: np.cumsum(z), vector(5)),
    ("cumsum_axis", lambda z: np.cumsum(z, axis=1), general(2, 3)),
    ("cumprod", lambda z: np.cumprod(z), vector(4)),
    ("cumprod_axis", lambda z: np.cumprod(z, axis=0), general(3, 2)),
    ("logsumexp", lambda z: scipy.special.logsumexp(z), vector(4)),
    ("logsumexp_axis_b", lambda z: scipy.special.logsumexp(z, axis=1, b=np.array([1.0, 2.0, 0.5])), general(2, 3)),
    ("cov", lambda z: np.cov(z), general(2, 5)),
    ("cov_rowvar_ddof", lambda z: np.cov(z, rowvar=False, ddof=0), general(5, 3)),
    ("cov_weights", lambda z: np.cov(z, fweights=np.array([1, 2, 1, 3, 1]), aweights=np.arange(1.0, 6.0)),
     general(2, 5)),
    ("cov_y", lambda z: np.cov(z, z[::-1] * (2 - 1j)), general(2, 4)),
    ("corrcoef", lambda z: np.corrcoef(z), general(3, 5)),
    ("vdot_inner_outer", lambda z: (np.vdot(z, B3), np.inner(z, B3), np.outer(z, B3), np.inner(z, z)), vector(3)),
]
IDS = [c[0] for c in CASES]
SEEDS = (0, 1, 2)


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


def _weights(value, seed):
    rng = np.random.default_rng(1000 + seed)
    return [_complex(rng, *np.shape(v)) for v in _leaves(value)]


def _loss(f, weights):
    def loss(z):
        return sum(np.sum(np.real(v * w)) for v, w in zip(_leaves(f(z)), weights))
    return loss


def _quiet(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name,f,make", CASES, ids=IDS)
def test_value_is_numpy_s(name, f, make, seed):
    z = make(np.random.default_rng(seed))
    want, got = _leaves(f(z)), _leaves(gradc.jit(f)(z))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype, (np.asarray(g).dtype, np.asarray(w).dtype)
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name,f,make", CASES, ids=IDS)
def test_gradient_is_jax_s_against_differences(name, f, make, seed):
    z = make(np.random.default_rng(seed))
    loss = _loss(f, _weights(f(z), seed))
    g = gradc.grad(loss)(z)
    assert g.dtype == np.complex128 and g.shape == z.shape
    np.testing.assert_allclose(g, _quiet(central_gradient, loss, z), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name,f,make", CASES, ids=IDS)
def test_forward_mode_against_differences(name, f, make):
    """``jvp`` pushes a complex tangent through the real-linear derivative: the difference quotient along it."""
    rng = np.random.default_rng(11)
    z = make(rng)
    direction = _complex(rng, *z.shape)
    _, tangent = gradc.jvp(f, (z,), (direction,))
    numeric = _leaves(_quiet(central_directional, lambda v: np.concatenate(
        [np.ravel(leaf) for leaf in _leaves(f(v))]), z, direction))
    pushed = np.concatenate([np.ravel(leaf) for leaf in _leaves(tangent)])
    np.testing.assert_allclose(pushed, numeric[0], rtol=1e-5, atol=1e-7)


def test_unread_entries_get_no_gradient():
    """cholesky reads the lower triangle and the diagonal's real part, as LAPACK: the rest has a zero gradient."""
    a = hermitian(3)(np.random.default_rng(4))
    g = gradc.grad(lambda a: np.sum(np.abs(np.linalg.cholesky(a)) ** 2 * np.arange(9.0).reshape(3, 3)))(a)
    assert np.all(g[np.triu_indices(3, 1)] == 0)
    assert np.all(np.imag(np.diagonal(g)) == 0)


def test_hermitian_svd_of_an_indefinite_real_matrix():
    """svd(hermitian=True) and pinv(hermitian=True) as NumPy: from eigh's lower triangle, |w| descending."""
    rng = np.random.default_rng(12)
    a = rng.standard_normal((4, 4))
    s = a + a.T
    for f in (lambda m: np.linalg.svd(m, hermitian=True)[1], lambda m: np.linalg.pinv(m, hermitian=True)):
        np.testing.assert_allclose(gradc.jit(f)(s), f(s), rtol=1e-10, atol=1e-12)
        weights = rng.standard_normal(np.shape(f(s)))
        loss = _loss(f, [weights])
        np.testing.assert_allclose(gradc.grad(loss)(a), central_gradient(loss, a), rtol=1e-5, atol=1e-7)


# ---------------------------------------------------------------- holomorphic functions: jacobian(holomorphic=True)
HOLOMORPHIC = [
    ("solve", lambda a: np.linalg.solve(a, B3), general(3)),
    ("inv", lambda a: np.linalg.inv(a).ravel(), general(3)),
    ("matrix_power", lambda a: np.linalg.matrix_power(a, -3).ravel(), general(2)),
    ("det", lambda a: np.linalg.det(a).reshape(1), general(3)),
    ("expm", lambda a: sl.expm(0.4 * a).ravel(), general(2)),
    ("sqrtm", lambda a: sl.sqrtm(a).ravel(), hermitian(2)),
    ("sylvester", lambda a: sl.solve_sylvester(a, D2, Q2).ravel(), general(2)),
    ("lu_solve", lambda a: sl.lu_solve(sl.lu_factor(a), B3, trans=1), general(3)),
    ("solve_triangular", lambda a: sl.solve_triangular(a, B3, lower=True), general(3)),
    ("cumsum_cumprod", lambda z: np.concatenate([np.cumsum(z * z), np.cumprod(z)]), vector(4)),
    ("logsumexp", lambda z: scipy.special.logsumexp(z, axis=0), general(3, 2)),
]


@pytest.mark.parametrize("name,f,make", HOLOMORPHIC, ids=[h[0] for h in HOLOMORPHIC])
def test_holomorphic_jacobian_against_differences(name, f, make):
    rng = np.random.default_rng(7)
    z = make(rng)
    jac = gradc.jacobian(f, holomorphic=True)(z)
    direction = _complex(rng, *z.shape)
    pushed = jac.reshape(-1, z.size) @ direction.ravel()
    for turn in (1.0, 1j):  # a holomorphic f: J v along v and along i v (Cauchy-Riemann)
        np.testing.assert_allclose(turn * pushed, np.ravel(central_directional(f, z, turn * direction)),
                                   rtol=1e-6, atol=1e-8)


def test_complex64_stays_single_precision():
    rng = np.random.default_rng(3)
    a = general(3)(rng).astype(np.complex64)
    h = hermitian(3)(rng).astype(np.complex64)
    for f, x in ((lambda a: np.linalg.qr(a)[1], a), (np.linalg.cholesky, h), (np.linalg.pinv, a),
                 (lambda z: np.cumprod(z, axis=0), a)):
        got, want = gradc.jit(f)(x), f(x)
        assert got.dtype == want.dtype == np.complex64
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)


def test_second_order_through_complex_cholesky_and_qr():
    """Each adjoint is made of differentiable ops: the Hessian-vector product against differences of the grad."""
    h0 = hermitian(3)(np.random.default_rng(8))
    direction = hermitian(3)(np.random.default_rng(9)) * 0.1

    def f(a):
        return np.sum(np.abs(np.linalg.cholesky(a)) ** 2 * np.arange(9.0).reshape(3, 3)) + \
            np.sum(np.real(np.linalg.qr(a)[1]) * np.arange(9.0).reshape(3, 3))

    grad = gradc.grad(f)
    along = gradc.grad(lambda a: np.real(np.sum(grad(a) * direction)))(h0)
    h = 1e-5
    numeric = central_gradient(lambda a: np.real(np.sum(grad(a) * direction)), h0, h)
    np.testing.assert_allclose(along, numeric, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- what is still refused, and how
def qr_complete_tall(a):
    return np.linalg.qr(a, mode="complete")


def test_refusals_name_the_user_s_line():
    a = general(3, 2)(np.random.default_rng(0))
    with pytest.raises(gradc.GradcError, match="extra columns of Q are not unique") as info:
        gradc.jit(qr_complete_tall)(a)
    assert "test_complex_linalg.py" in str(info.value)
    with pytest.raises(gradc.ArgumentError, match="holomorphic"):
        gradc.grad(lambda a: np.sum(np.linalg.qr(a)[1]))(general(3)(np.random.default_rng(0)))
