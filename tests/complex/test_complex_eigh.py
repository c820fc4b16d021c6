"""np.linalg.eigh / eigvalsh (and scipy.linalg.eigh) of complex Hermitian matrices: NumPy's values, JAX's
derivative convention (a real loss's gradient is dL/dx - i dL/dy) against central differences in the real and
imaginary parts, forward mode against directional differences. Losses are phase-invariant in the eigenvectors
(their phases are not determined)."""
import numpy as np
import pytest
import scipy.linalg

import gradc


def jax_convention_gradient(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = eps
        dx = (f(a + e) - f(a - e)) / (2 * eps)
        dy = (f(a + 1j * e) - f(a - 1j * e)) / (2 * eps)
        g[idx] = dx - 1j * dy
    return g


def matrix(seed, n, hermitian):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + 1j * rng.normal(size=(n, n))
    return (a + a.conj().T) / 2 if hermitian else a  # eigh reads one triangle: any matrix will do


LOSSES = {
    "values": lambda a: np.sum(np.linalg.eigvalsh(a) ** 3),
    "values_upper": lambda a: np.sum(np.sin(np.linalg.eigvalsh(a, UPLO="U"))),
    "vectors": lambda a: np.sum(np.abs(np.linalg.eigh(a)[1]) ** 2 * np.arange(a.shape[0] ** 2).reshape(a.shape)),
    "function_of_matrix": lambda a: np.real(np.trace(_matrix_exp(a) @ np.diag(np.arange(1.0, a.shape[0] + 1)))),
    "scipy": lambda a: np.sum(scipy.linalg.eigh(a, lower=False)[0] * np.arange(1.0, a.shape[0] + 1)),
}


def _matrix_exp(a):
    w, v = np.linalg.eigh(a)
    return (v * np.exp(w / 4)) @ v.conj().T


@pytest.mark.parametrize("name", sorted(LOSSES))
@pytest.mark.parametrize("seed, n, hermitian", [(0, 1, True), (1, 2, False), (2, 3, True), (3, 4, False)])
def test_value_and_gradient(name, seed, n, hermitian):
    loss = LOSSES[name]
    a = matrix(seed, n, hermitian)
    assert abs(gradc.compile(loss, a).forward(a) - loss(a)) < 1e-10 * (1 + abs(loss(a)))
    np.testing.assert_allclose(gradc.grad(loss)(a), jax_convention_gradient(loss, a), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["values", "function_of_matrix"])
def test_forward_mode_is_the_directional_derivative(name):
    loss = LOSSES[name]
    a, direction = matrix(5, 3, True), matrix(6, 3, False)
    _, tangent = gradc.jvp(loss, (a,), (direction,))
    eps = 1e-6
    expected = (loss(a + eps * direction) - loss(a - eps * direction)) / (2 * eps)
    assert abs(tangent - expected) < 1e-6 * (1 + abs(expected))


def test_eigenvalues_are_real_and_vectors_complex():
    a = matrix(7, 3, True)

    def parts(a):
        w, v = np.linalg.eigh(a)
        return w, v
    w, v = gradc.compile(parts, a, mode="jvp").forward(a)
    assert w.dtype == np.float64 and v.dtype == np.complex128
    np.testing.assert_allclose(w, np.linalg.eigh(a)[0], rtol=1e-12)
    np.testing.assert_allclose(np.abs(v), np.abs(np.linalg.eigh(a)[1]), rtol=1e-10)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_c_target_computes_complex_eigh(name):
    """C's Jacobi eigenvectors have phases of their own: these phase-free losses agree with the NumPy target."""
    pytest.importorskip("gradc.backends.c.build").find_compiler() or pytest.skip("no C compiler")
    a = matrix(8, 3, True)
    value, grad = gradc.compile(LOSSES[name], a, target="c").value_and_grad(a)
    want_value, want_grad = gradc.value_and_grad(LOSSES[name])(a)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-8, atol=1e-10)
