"""Complex linear algebra on the C target (gradc/backends/c/linalg_complex*.py): the user's function, the NumPy
target and the C target agree, value and gradient (JAX's convention), and the gradient equals central differences
along the real and the imaginary direction. Eigenvectors and singular vectors have phases of their own (the C
target's differ from LAPACK's): the functions here do not depend on them."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _general(rng, *shape):
    return _complex(rng, *shape) + 3 * np.eye(shape[-1])


def _hermitian(rng, n):
    a = _complex(rng, n, n)
    return a @ a.conj().T + np.eye(n)


B = np.array([1.0 - 2j, 0.5j, 2.0, -1.0])
W = np.arange(16.0).reshape(4, 4) * (0.1 - 0.05j)


def solve_inv(a):
    return np.sum(np.abs(np.linalg.solve(a, B)) ** 2) + np.real(np.sum(np.linalg.inv(a) * W))


def slogdet_power(a):
    return np.linalg.slogdet(a)[1] + np.imag(np.sum(np.linalg.matrix_power(a, -2) * W))


def cholesky_solves(h):
    lower = np.linalg.cholesky(h)
    return (np.sum(np.abs(lower) ** 2 * np.abs(W)) + np.real(np.sum(sl.cho_solve(sl.cho_factor(h), B) * B))
            + np.imag(np.sum(sl.solve_triangular(h, B, trans="C"))))


def stacked(a):
    return np.sum(np.linalg.slogdet(a)[1]) + np.real(np.sum(np.linalg.solve(a, np.ones(a.shape[:-1] + (1,)))))


def scans(z):
    return np.real(np.sum(np.cumprod(z) * (1 - 1j))) + np.imag(np.sum(np.cumsum(z * z)))


def sylvester(a):
    return np.real(np.sum(sl.solve_sylvester(a[:2, :2], a[2:, 2:], a[:2, 2:]) * (1 + 2j)))


def expm(a):
    return np.real(np.sum(sl.expm(a) * W)) + np.imag(np.sum(sl.expm(3 * a)))  # (3 a: scaled and squared)


def qr_parts(a):
    q, r = np.linalg.qr(a)
    return np.real(np.sum(q * W[:q.shape[0], :q.shape[1]])) + np.imag(np.sum(r * W[:r.shape[0], :r.shape[1]]))


def eigh_phase_free(h):
    w, v = np.linalg.eigh(h)
    return np.sum(w * np.arange(1.0, 5.0)) + np.sum(np.abs(v) ** 2 * np.abs(W)) + np.sum(np.linalg.eigvalsh(h) ** 2)


def svd_phase_free(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (np.sum(s ** 2 * np.arange(1.0, 1.0 + s.size)) + np.real(np.sum((u * np.sqrt(s)) @ vh))
            + np.linalg.norm(a, 2) + np.linalg.norm(a, "nuc"))


def pinv_lstsq(a):
    return (np.real(np.sum(np.linalg.pinv(a) * (1 - 1j))) + np.linalg.cond(a)
            + np.imag(np.sum(np.linalg.lstsq(a, B[:a.shape[0]], rcond=None)[0])))


CASES = [
    ("eigh", eigh_phase_free, lambda rng: _hermitian(rng, 4)),
    ("svd_tall", svd_phase_free, lambda rng: _complex(rng, 4, 3)),
    ("svd_wide", svd_phase_free, lambda rng: _complex(rng, 2, 4)),
    ("pinv_lstsq", pinv_lstsq, lambda rng: _complex(rng, 4, 2)),
    ("qr_square", qr_parts, lambda rng: _complex(rng, 4, 4)),
    ("qr_tall", qr_parts, lambda rng: _complex(rng, 4, 2)),
    ("qr_wide", qr_parts, lambda rng: _complex(rng, 2, 4)),
    ("expm", expm, lambda rng: _complex(rng, 4, 4)),
    ("solve_inv", solve_inv, lambda rng: _general(rng, 4, 4)),
    ("slogdet_power", slogdet_power, lambda rng: _general(rng, 4, 4)),
    ("cholesky_solves", cholesky_solves, lambda rng: _hermitian(rng, 4)),
    ("stacked", stacked, lambda rng: _general(rng, 2, 3, 3)),
    ("scans", scans, lambda rng: _complex(rng, 5)),
    ("sylvester", sylvester, lambda rng: _general(rng, 4, 4)),
]


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name,f,make", CASES, ids=[c[0] for c in CASES])
def test_c_equals_numpy_and_differences(name, f, make, dtype):
    z = make(np.random.default_rng(5)).astype(dtype)
    compiled = gradc.compile(f, z, target="c")
    value, grad = compiled.value_and_grad(z)
    want_value, want_grad = gradc.value_and_grad(f)(z)
    assert grad.dtype == dtype
    rtol = 1e-10 if dtype == np.complex128 else 2e-4
    np.testing.assert_allclose(value, f(z), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(value, want_value, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(grad, want_grad, rtol=rtol, atol=rtol * np.max(np.abs(want_grad)))
    if dtype == np.complex128:
        np.testing.assert_allclose(grad, central_gradient(f, z), rtol=1e-5, atol=1e-7)


def test_singular_matrix_raises_numpys_error_and_log_zero():
    """A zero pivot: NumPy's LinAlgError from the C status, as NumPy raises; log|det| is -inf (NumPy's value)."""
    z = np.zeros((2, 2), complex)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        np.linalg.solve(z, np.ones(2) + 0j)
    with pytest.raises(np.linalg.LinAlgError, match="Singular matrix"):
        gradc.jit(lambda a: np.linalg.solve(a, np.ones(2) + 0j), target="c")(z)
    assert gradc.jit(lambda a: np.linalg.slogdet(a)[1], target="c")(z) == -np.inf
    not_positive = np.array([[1.0, 2j], [-2j, 1.0]])  # Hermitian, eigenvalues -1 and 3
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        gradc.jit(lambda a: np.linalg.cholesky(a), target="c")(not_positive)


def helper(x, y):
    return np.abs((x + 1j * y) ** 2 + 1j)


def complex_helper(z):
    return z * np.conj(z) + 1j * z


def with_helpers(x, y):
    """Helpers called twice (one C function each) with complex values inside and across their boundary."""
    s = complex_helper(x[0] + 1j * y[0]) + complex_helper(x[1] - 1j * y[2])
    return np.sum(helper(x, y) * helper(y, x)) + np.real(s) + np.imag(np.sum(complex_helper(x + 2j * y)))


def test_complex_values_in_and_across_helper_functions():
    x, y = np.array([0.3, -1.2, 2.0]), np.array([0.5, -1.0, 0.7])
    compiled = gradc.compile(with_helpers, x, y, wrt=("x", "y"), target="c")
    value, grads = compiled.value_and_grad(x, y)
    np.testing.assert_allclose(value, with_helpers(x, y), rtol=1e-12)
    np.testing.assert_allclose(grads[0], central_gradient(lambda v: with_helpers(v, y), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(grads[1], central_gradient(lambda v: with_helpers(x, v), y), rtol=1e-6, atol=1e-8)


def test_complex_scalars_cross_the_extension_boundary():
    """A complex128 scalar argument or result fills two doubles of the glue's slots (it overflowed one)."""
    z = np.ones((2, 2), complex)
    assert gradc.jit(lambda a: np.sum(a), target="c")(z) == 4
    assert gradc.jit(lambda a, w: np.sum(a) * w, target="c")(z, np.complex128(1j)) == 4j
    assert gradc.jit(lambda a, w: np.sum(a) * w, target="c")(z.astype(np.complex64), np.complex64(2j)) == 8j
