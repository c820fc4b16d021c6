"""The C target's general eigenproblem and complex LU (gradc/backends/c/linalg_eig.py).

Raw ``eig`` from the C target against NumPy's (LAPACK's geev) on seeded random matrices of several kinds
(real, complex, float32/complex64, triangular, normal, repeated and defective eigenvalues, pure rotations,
graded, tiny and huge entries, batched and transposed operands): the eigenvalues are NumPy's as a multiset,
``A V = V diag(w)``, unit columns with the entry of largest modulus real and positive, and for a complex
matrix with well separated eigenvalues the vectors are NumPy's (zgeev's normalisation is the same).
``det``/``slogdet``/``solve`` of complex matrices against NumPy, singular and NaN input included.
Gradients through the C target against central differences along real and imaginary directions.
The raw output of ``f`` is read as the gradient of ``Re(sum(f(x) * ct))`` in a complex ``ct``.
"""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linear_sum_assignment

import gradc
from gradc.backends.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def raw(f, x):
    """``f(x)`` computed by the C target."""
    def loss(x, ct):
        return np.real(np.sum(f(x) * ct))
    dtype = np.complex64 if x.dtype in (np.float32, np.complex64) else np.complex128
    ct = np.zeros(np.shape(f(np.nan_to_num(x))), dtype)
    return gradc.compile(loss, x, ct, wrt="ct", target="c").grad(x, ct)


def eig_packed(x):
    w, v = np.linalg.eig(x)
    return np.concatenate([w[..., None, :], v], axis=-2)


def matrices(rng, n, kind, dtype):
    """A seeded n x n matrix of ``kind``."""
    cplx = np.dtype(dtype).kind == "c"

    def normal(*shape):
        z = rng.standard_normal(shape)
        return z + 1j * rng.standard_normal(shape) if cplx else z
    if kind == "random":
        a = normal(n, n)
    elif kind == "triangular":
        a = np.triu(normal(n, n))
    elif kind == "normal":  # unitary similarity of a diagonal: well conditioned eigenvectors
        q, _ = np.linalg.qr(normal(n, n))
        a = (q * normal(n)) @ q.conj().T
    elif kind == "repeated":  # diagonalisable, eigenvalues 2 (twice or more) and others
        q = normal(n, n) + 3 * np.eye(n)
        d = np.where(np.arange(n) < max(2, n // 2), 2.0, np.arange(n) + 3.0)
        a = np.linalg.solve(q, (q * d))
    elif kind == "rotation":  # real with eigenvalues on the unit circle, in conjugate pairs
        theta = rng.uniform(0, np.pi, n)
        a = np.zeros((n, n))
        for k in range(0, n - 1, 2):
            c, s = np.cos(theta[k]), np.sin(theta[k])
            a[k:k + 2, k:k + 2] = [[c, -s], [s, c]]
        if n % 2:
            a[-1, -1] = 1.0
        q, _ = np.linalg.qr(rng.standard_normal((n, n)))
        a = q @ a @ q.T
    else:  # graded: entries spanning twelve orders of magnitude
        s = np.logspace(0, -12, n)
        a = normal(n, n) * s[:, None] * s[None, :]
    return np.asarray(a, dtype)


def check_eigenpairs(a, out, tol, *, equal_vectors=False, positive=True):
    w, v = out[..., 0, :], out[..., 1:, :]
    wn, vn = np.linalg.eig(a.astype(np.complex128))
    scale = max(np.abs(a).max(), np.finfo(float).tiny)
    assert out.dtype == (np.complex64 if a.dtype in (np.float32, np.complex64) else np.complex128)
    # the eigenvalues as a multiset: NumPy's matched one to one to the nearest (an optimal assignment)
    nearest = linear_sum_assignment(np.abs(wn[:, None] - w[None, :]))[1]
    np.testing.assert_allclose(w[nearest], wn, atol=tol * scale * 10)
    np.testing.assert_allclose(a @ v, v * w, atol=tol * scale * len(w))
    np.testing.assert_allclose(np.linalg.norm(v, axis=0), 1.0, rtol=tol)
    top = v[np.abs(v).argmax(axis=0), np.arange(len(w))]
    assert np.all(top.imag == 0) and (not positive or np.all(top.real > 0))
    if equal_vectors:
        np.testing.assert_allclose(v[:, nearest], vn, atol=tol * 100)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
@pytest.mark.parametrize("kind", ["random", "triangular", "normal", "repeated", "rotation", "graded"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
def test_eig_values_and_vectors(n, kind, dtype):
    if kind == "rotation" and np.dtype(dtype).kind == "c":
        pytest.skip("rotations are real")
    rng = np.random.default_rng(1000 * n + len(kind) + np.dtype(dtype).itemsize)
    a = matrices(rng, n, kind, dtype)
    single = dtype in (np.float32, np.complex64)
    tol = 5e-5 if single else 1e-12
    if kind == "repeated":  # a double eigenvalue moves by sqrt(eps) under rounding: its vectors are not unique
        tol = 3e-3 if single else 1e-7
    if kind == "graded":
        tol = 1e-3 if single else 1e-11
    separated = kind in ("random", "normal") and dtype == np.complex128
    check_eigenpairs(a, raw(eig_packed, a), tol, equal_vectors=separated)


def test_eig_of_special_matrices():
    eye = np.eye(4)
    out = raw(eig_packed, eye)
    np.testing.assert_array_equal(out, np.vstack([np.ones(4), eye]).astype(complex))
    out = raw(eig_packed, np.zeros((3, 3)))
    np.testing.assert_array_equal(out, np.vstack([np.zeros(3), np.eye(3)]).astype(complex))
    jordan = np.array([[2.0, 1.0], [0.0, 2.0]])  # defective: both vectors (nearly) e_0, as LAPACK's
    out = raw(eig_packed, jordan)
    np.testing.assert_allclose(out[0], [2, 2])
    np.testing.assert_allclose(np.abs(out[1:]), np.abs(np.linalg.eig(jordan)[1]), atol=1e-14)
    # a companion matrix (roots of x^3 - 6x^2 + 11x - 6): NumPy's roots run eig on one
    companion = np.array([[6.0, -11.0, 6.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])
    np.testing.assert_allclose(np.sort(raw(eig_packed, companion)[0].real), [1, 2, 3], rtol=1e-12)


@pytest.mark.parametrize("magnitude", [1e-200, 1e150, 1e300])
def test_eig_of_huge_and_tiny_entries(magnitude):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((4, 4)) + 1j * rng.standard_normal((4, 4))) * magnitude
    check_eigenpairs(a, raw(eig_packed, a), 1e-12)


def test_eig_nan_and_infinity_give_nan():
    for bad in (np.nan, np.inf):
        a = np.eye(3)
        a[1, 2] = bad
        assert np.all(np.isnan(raw(eig_packed, a)))


def test_eig_batched_and_transposed_operands():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 3, 4, 4))
    out = raw(lambda x: eig_packed(np.swapaxes(x, -1, -2)[::-1]), a)
    for i in range(2):
        for j in range(3):
            check_eigenpairs(a[1 - i, j].T, out[i, j], 1e-12)


def test_eigvals_of_real_matrix_come_in_conjugate_pairs():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((7, 7))
    w = raw(lambda x: np.linalg.eigvals(x), a)
    np.testing.assert_allclose(np.sort_complex(np.round(w, 10)), np.sort_complex(np.round(np.conj(w), 10)))


# ---------------------------------------------------------------- complex LU: det, slogdet, solve
def _complex(rng, *shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


@pytest.mark.parametrize("n", [1, 2, 4, 7])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_complex_det_slogdet_solve(n, dtype):
    rng = np.random.default_rng(n)
    a, b = _complex(rng, 2, n, n).astype(dtype), _complex(rng, 2, n, 3).astype(dtype)
    tol = 2e-4 if dtype == np.complex64 else 1e-12

    def parts(x):
        sign, logabs = np.linalg.slogdet(x)
        return np.concatenate([sign, logabs + 0j, np.linalg.det(x)])
    np.testing.assert_allclose(raw(parts, a), parts(a), rtol=tol)
    solved = raw(lambda x: np.linalg.solve(x, b).ravel(), a)
    np.testing.assert_allclose(solved, np.linalg.solve(a, b).ravel(), rtol=tol * 10, atol=tol)


def test_complex_slogdet_of_singular_and_nan_matrices():
    singular = np.array([[1 + 1j, 2 - 1j], [2 + 2j, 4 - 2j]])
    singular[1] = 2 * singular[0]

    def parts(x):
        sign, logabs = np.linalg.slogdet(x)
        return np.stack([sign, logabs + 0j])
    out = raw(parts, singular)
    assert out[0] == 0 and out[1] == -np.inf
    nan = singular.copy()
    nan[0, 0] = np.nan
    assert np.all(np.isnan(raw(parts, nan)))


# ---------------------------------------------------------------- gradients against central differences
def _central(f, args, k, direction, h=1e-6):
    plus, minus = list(args), list(args)
    plus[k] = args[k] + h * direction
    minus[k] = args[k] - h * direction
    return (f(*plus) - f(*minus)) / (2 * h)


def eig_loss(a, b):
    z = a + 1j * b + 4 * np.eye(a.shape[-1])
    w, v = np.linalg.eig(z)
    weights = np.arange(1.0, 1.0 + a.shape[-1])[:, None]
    return np.real(np.sum(w ** 2 * (1 - 0.5j))) + np.sum(np.abs(v) ** 2 * weights * np.abs(w))


def det_loss(a, b):
    z = a + 1j * b + 2 * np.eye(a.shape[-1])
    sign, logabs = np.linalg.slogdet(z)
    return np.imag(sign) + logabs + np.real(np.linalg.det(z) * (0.5 + 1j))


@pytest.mark.parametrize("loss", [eig_loss, det_loss])
@pytest.mark.parametrize("seed", range(4))
def test_gradients_against_central_differences(loss, seed):
    rng = np.random.default_rng(seed)
    n = 2 + seed
    args = (rng.standard_normal((n, n)), rng.standard_normal((n, n)))
    grads = gradc.compile(loss, *args, wrt=("a", "b"), target="c").grad(*args)
    for k in (0, 1):  # the real and the imaginary direction of z
        direction = rng.standard_normal((n, n))
        expected = _central(loss, args, k, direction)
        assert abs(np.sum(grads[k] * direction) - expected) <= 1e-6 * (1 + abs(expected))


def test_eig_of_real_matrix_gradient_is_real():
    rng = np.random.default_rng(9)
    a = rng.standard_normal((4, 4))

    def loss(x):
        return np.sum(np.abs(np.linalg.eigvals(x)) ** 2)
    g = gradc.compile(loss, a, target="c").grad(a)
    assert g.dtype == np.float64
    direction = rng.standard_normal((4, 4))
    expected = (loss(a + 1e-6 * direction) - loss(a - 1e-6 * direction)) / 2e-6
    assert abs(np.sum(g * direction) - expected) <= 1e-6 * (1 + abs(expected))


def test_emitted_c_is_deterministic():
    a = np.eye(3) + 0.1
    first = gradc.compile(eig_loss, a, a, target="c").c_source
    second = gradc.compile(eig_loss, a, a, target="c").c_source
    assert first == second and "gradc_eig_c128(" in first and "Hessenberg" in first


# ---------------------------------------------------------------- complex values through helper calls
def _rotate(z, turn):
    return z * turn, np.conj(z) * z


def _called_twice(x, y):
    z = x + 1j * y
    a, b = _rotate(z, 0.5 + 2j)
    c, _ = _rotate(a, np.exp(1j * x))
    return np.real(np.sum(c * b)) + np.sum(np.abs(np.linalg.eigvals(np.outer(a, c) + 3 * np.eye(3))))


def test_complex_values_through_helper_calls():
    """A helper taking and returning complex arrays (a call equation in C) agrees with the NumPy target."""
    rng = np.random.default_rng(12)
    args = rng.standard_normal(3), rng.standard_normal(3)
    c_value, c_grads = gradc.compile(_called_twice, *args, wrt=("x", "y"), target="c").value_and_grad(*args)
    value, grads = gradc.compile(_called_twice, *args, wrt=("x", "y")).value_and_grad(*args)
    assert abs(c_value - value) <= 1e-12 * abs(value) and abs(value - _called_twice(*args)) <= 1e-12 * abs(value)
    for cg, g in zip(c_grads, grads):
        np.testing.assert_allclose(cg, g, rtol=1e-10, atol=1e-12)
    for k in (0, 1):
        direction = rng.standard_normal(3)
        expected = _central(_called_twice, args, k, direction)
        assert abs(np.sum(c_grads[k] * direction) - expected) <= 1e-6 * (1 + abs(expected))
