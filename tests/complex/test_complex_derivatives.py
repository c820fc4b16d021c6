"""Complex numbers: JAX's derivative convention checked on values worked out by hand, against central
differences along the real and the imaginary direction, and holomorphic derivatives against f'(z)."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient, holomorphic_derivative

import gradc

Z = 3 + 4j


# ---------------------------------------------------------------- JAX's convention, by hand
# f real-valued of z = x + iy: the gradient is df/dx - i df/dy
HAND = [
    ("abs_squared", lambda z: np.abs(z) ** 2, 6 - 8j),  # x^2 + y^2: 2x - 2iy
    ("real", lambda z: np.real(z), 1 + 0j),
    ("imag", lambda z: np.imag(z), -1j),
    ("abs", lambda z: np.abs(z), (3 - 4j) / 5),  # (x - iy) / |z|
    ("angle", lambda z: np.angle(z), (-4 - 3j) / 25),  # d/dx atan2(y, x) = -y/r^2, d/dy = x/r^2
    ("z_times_conj", lambda z: np.real(z * np.conj(z)), 6 - 8j),
    ("real_attribute", lambda z: z.real * 2 + z.imag, 2 - 1j),
    ("conj_method", lambda z: np.imag(z.conj()), 1j),  # -y: d/dy = -1
]


@pytest.mark.parametrize("name,f,expected", HAND, ids=[h[0] for h in HAND])
def test_jax_convention_by_hand(name, f, expected):
    g = gradc.grad(f)(np.complex128(Z))
    assert np.iscomplexobj(g)
    np.testing.assert_allclose(g, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(g, central_gradient(f, Z), rtol=1e-6, atol=1e-8)


def test_python_complex_argument():
    assert gradc.grad(lambda z: abs(z) ** 2)(3 + 4j) == pytest.approx(6 - 8j)


def test_real_input_promoted_gets_the_real_part():
    # f(x) = |x (1 + 2j)|^2 = 5 x^2: a real input's gradient is real
    g = gradc.grad(lambda x: np.abs(x * (1 + 2j)) ** 2)(2.0)
    assert isinstance(g, float) and g == pytest.approx(20.0)
    w = np.array([0.5, -1.5])
    g = gradc.grad(lambda w: np.sum(np.imag(np.exp(1j * w))))(w)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, np.cos(w), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
def test_arrays_against_differences(dtype):
    rng = np.random.default_rng(1)
    z = (rng.normal(size=4) + 1j * rng.normal(size=4) + 1.5).astype(dtype)

    def f(z):
        w = np.exp(0.3 * z) * np.conj(z) + z ** 2 / (z + 2.0)
        return np.sum(np.abs(w) ** 2) + np.real(np.prod(np.sqrt(z)))

    g = gradc.grad(f)(z)
    assert g.dtype == dtype
    rtol = 1e-6 if dtype == np.complex128 else 2e-3
    np.testing.assert_allclose(g, central_gradient(f, z.astype(np.complex128)), rtol=rtol, atol=rtol)


def test_linalg_on_complex_matrices():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=3) + 1j * rng.normal(size=3)

    def f(a):
        return (np.abs(np.linalg.det(a)) + np.real(np.sum(np.linalg.inv(a) @ b))
                + np.linalg.slogdet(a)[1] + np.imag(np.linalg.slogdet(a)[0]) + np.sum(np.abs(np.linalg.solve(a, b))))

    np.testing.assert_allclose(gradc.grad(f)(a), central_gradient(f, a), rtol=1e-6, atol=1e-8)


def test_matmul_dot_einsum_vdot():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    z = rng.normal(size=3) + 1j * rng.normal(size=3)

    def f(z):
        return (np.real(np.sum(a @ z)) + np.imag(np.dot(z, z)) + np.real(np.einsum("ij,j->", a, z))
                + np.real(np.vdot(z, a[0])) + np.imag(np.vdot(a[1], z)))

    np.testing.assert_allclose(f(z), gradc.compile(f, z).forward(z), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(f)(z), central_gradient(f, z), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- holomorphic functions: f'(z)
HOLOMORPHIC = [
    ("square", lambda z: z ** 2, lambda z: 2 * z),
    ("exp_sin", lambda z: np.exp(z) * np.sin(z), lambda z: np.exp(z) * (np.sin(z) + np.cos(z))),
    ("log", lambda z: np.log(z), lambda z: 1 / z),
    ("sqrt", lambda z: np.sqrt(z), lambda z: 0.5 / np.sqrt(z)),
    ("tan", lambda z: np.tan(z), lambda z: 1 / np.cos(z) ** 2),
    ("tanh_cosh", lambda z: np.tanh(z) + np.cosh(z), lambda z: 1 - np.tanh(z) ** 2 + np.sinh(z)),
    ("reciprocal", lambda z: np.reciprocal(z) - 1j * z, lambda z: -1 / z ** 2 - 1j),
    ("power", lambda z: z ** (1.5 - 0.5j), lambda z: (1.5 - 0.5j) * z ** (0.5 - 0.5j)),
]


@pytest.mark.parametrize("name,f,df", HOLOMORPHIC, ids=[h[0] for h in HOLOMORPHIC])
def test_holomorphic_grad_is_the_derivative(name, f, df):
    z = np.complex128(0.7 + 0.4j)
    g = gradc.grad(f, holomorphic=True)(z)
    np.testing.assert_allclose(g, df(z), rtol=1e-10)
    np.testing.assert_allclose(g, holomorphic_derivative(f, z), rtol=1e-6)
    value, g2 = gradc.value_and_grad(f, holomorphic=True)(z)
    np.testing.assert_allclose(value, f(z), rtol=1e-12)
    assert g2 == g


def test_holomorphic_jacobians_and_hessian():
    z = np.array([1 + 2j, 0.5 - 1j])
    f = lambda z: z ** 2 * z[0]  # noqa: E731
    expected = np.diag(2 * z * z[0]) + np.outer(z ** 2, [1, 0])
    for transform in (gradc.jacfwd, gradc.jacrev, gradc.jacobian):
        np.testing.assert_allclose(transform(f, holomorphic=True)(z), expected, rtol=1e-12)
    np.testing.assert_allclose(gradc.hessian(lambda z: np.sum(z ** 3), holomorphic=True)(z), np.diag(6 * z),
                               rtol=1e-12)
    u = gradc.compile(lambda z: np.sin(z), z, mode="jacobian", holomorphic=True)
    np.testing.assert_allclose(u.jacobian(z), np.diag(np.cos(z)), rtol=1e-12)
    c = gradc.compile(lambda z: np.sum(np.sin(z)), z, holomorphic=True)
    np.testing.assert_allclose(c.grad(z), np.cos(z), rtol=1e-12)


def test_non_holomorphic_jacobians_follow_jax():
    z = np.array([1 + 2j, 0.5 - 1j])
    x = np.array([0.3, 0.7])
    np.testing.assert_allclose(gradc.jacobian(lambda z: np.abs(z) ** 2)(z), np.diag(2 * np.conj(z)), rtol=1e-12)
    np.testing.assert_allclose(gradc.jacobian(lambda x: np.exp(1j * x))(x), np.diag(1j * np.exp(1j * x)),
                               rtol=1e-12)


def test_vjp_is_the_transpose_and_jvp_the_real_linear_map():
    z = np.array([1 + 2j, 0.5 - 1j])
    ct = np.array([1.0 + 0j, 1j])
    (pulled,) = gradc.vjp(lambda z: z ** 2, z)[1](ct)
    np.testing.assert_allclose(pulled, 2 * z * ct, rtol=1e-12)  # ct * f'(z): no conjugate
    t = np.array([1j, 1.0 + 0j])
    _, tangent = gradc.jvp(lambda z: np.abs(z) ** 2, (z,), (t,))
    np.testing.assert_allclose(tangent, 2 * np.real(np.conj(z) * t), rtol=1e-12)
    _, tangent = gradc.jvp(lambda z: np.conj(z) * 2j, (z,), (t,))
    np.testing.assert_allclose(tangent, np.conj(t) * 2j, rtol=1e-12)
