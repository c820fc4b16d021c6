"""np.linalg.eig / eigvals of general (real and complex) matrices: NumPy's eigenpairs as complex arrays, JAX's
derivative convention against central differences (real matrices: the real gradient; complex: dL/dx - i dL/dy).
The losses do not depend on each eigenvector's phase (LAPACK's choice)."""
import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from tests.complex.test_complex_eigh import jax_convention_gradient


def central_real(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for idx in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[idx] = eps
        g[idx] = (f(a + e) - f(a - e)) / (2 * eps)
    return g


def losses(n):
    weights = np.random.default_rng(50).normal(size=(n, n))
    ramp = np.arange(1.0, n + 1)
    return {
        "eigvals_power": lambda a: np.real(np.sum(np.linalg.eigvals(a) ** 2 * ramp)),
        "eigvals_modulus": lambda a: np.sum(np.abs(np.linalg.eigvals(a)) ** 3),
        "eigvals_imag": lambda a: np.sum(np.imag(np.linalg.eigvals(a)) ** 2),
        "vectors_modulus": lambda a: np.sum(np.abs(np.linalg.eig(a)[1]) ** 2 * weights),
        "reconstruct": lambda a: np.real(np.sum(_power(a) * weights)),
    }


def _power(a):
    w, v = np.linalg.eig(a)
    return (v * w ** 2) @ np.linalg.inv(v)  # a @ a, through the eigenpairs: phase-free


NAMES = sorted(losses(2))


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n, seed, kind", [(1, 0, "real"), (2, 1, "real"), (3, 2, "real"), (3, 3, "complex"),
                                           (4, 4, "real"), (2, 5, "complex")])
def test_value_and_gradient(name, n, seed, kind):
    loss = losses(n)[name]
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + (1j * rng.normal(size=(n, n)) if kind == "complex" else 0.0)
    assert abs(gradc.compile(loss, a).forward(a) - loss(a)) < 1e-9 * (1 + abs(loss(a)))
    reference = jax_convention_gradient(loss, a) if kind == "complex" else central_real(loss, a)
    grad = gradc.grad(loss)(a)
    assert grad.dtype == a.dtype
    np.testing.assert_allclose(grad, reference, rtol=1e-5, atol=1e-6)


def test_eigenpairs_are_numpys_and_complex():
    a = np.array([[2.0, 1.0], [0.5, 3.0]])  # real eigenvalues: NumPy returns float64, gradc complex128

    def parts(a):
        return np.linalg.eig(a)
    w, v = gradc.compile(parts, a, mode="jvp").forward(a)
    want_w, want_v = np.linalg.eig(a)
    assert w.dtype == v.dtype == np.complex128
    np.testing.assert_allclose(w, want_w, rtol=1e-12)
    np.testing.assert_allclose(v, want_v, rtol=1e-12)


def test_forward_mode_is_the_directional_derivative():
    loss = losses(3)["reconstruct"]
    rng = np.random.default_rng(11)
    a, direction = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    _, tangent = gradc.jvp(loss, (a,), (direction,))
    expected = (loss(a + 1e-6 * direction) - loss(a - 1e-6 * direction)) / 2e-6
    assert abs(tangent - expected) < 1e-5 * (1 + abs(expected))


@pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found")
@pytest.mark.parametrize("name", ["eigvals_modulus", "eigvals_imag", "reconstruct"])  # free of the eigenvalues' order
@pytest.mark.parametrize("n, seed, kind", [(1, 0, "real"), (3, 2, "real"), (3, 3, "complex"), (4, 6, "complex")])
def test_c_target_value_and_gradient(name, n, seed, kind):
    """The C target's eig (Hessenberg QR, gradc/backends/c/linalg_eig.py) orders eigenvalues its own way."""
    loss = losses(n)[name]
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n)) + (1j * rng.normal(size=(n, n)) if kind == "complex" else 0.0)
    value, grad = gradc.compile(loss, a, target="c").value_and_grad(a)
    assert abs(value - loss(a)) < 1e-9 * (1 + abs(loss(a)))
    reference = jax_convention_gradient(loss, a) if kind == "complex" else central_real(loss, a)
    assert grad.dtype == a.dtype
    np.testing.assert_allclose(grad, reference, rtol=1e-5, atol=1e-6)


def test_scipy_linalg_eig_and_eigvals():
    import scipy.linalg

    def values(a):
        return np.sum(np.abs(scipy.linalg.eigvals(a)) ** 2) + np.sum(np.abs(scipy.linalg.eig(a)[1]) ** 2 * ramp)

    def only_values(a):
        return np.real(np.sum(scipy.linalg.eig(a, right=False, check_finite=False) ** 2))
    rng = np.random.default_rng(21)
    a = rng.normal(size=(3, 3))
    ramp = np.arange(1.0, 4.0)[:, None]
    for loss in (values, only_values):
        assert abs(gradc.jit(loss)(a) - loss(a)) < 1e-10 * (1 + abs(loss(a)))
        np.testing.assert_allclose(gradc.grad(loss)(a), central_real(loss, a), rtol=1e-5, atol=1e-6)
    for kwargs, word in (({"b": np.eye(3)}, "b="), ({"left": True}, "left=True")):
        with pytest.raises(gradc.GradcError, match=f"scipy.linalg.eig with {word}"):
            gradc.jit(lambda a, kwargs=kwargs: scipy.linalg.eig(a, **kwargs)[0])(a)
