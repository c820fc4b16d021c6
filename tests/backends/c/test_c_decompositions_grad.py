"""Gradients through the C target's decompositions: against central differences of the user's
function run by NumPy/SciPy, and equal to the NumPy target's (value and gradient, stacks and
strided operands); the emitted C is byte-identical across compilations.

The losses depend on the decompositions only through quantities that do not depend on the sign
of eigenvectors or singular vectors (the only ones with a derivative); QR's Q and R are unique
(LAPACK's signs), so its losses use them directly.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import gradc
from gradc.backends.c import build as c_build
from gradc.ops import linalg_scipy as lsp

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

W3 = np.linspace(-1.0, 1.5, 9).reshape(3, 3)


def eigh_loss(a):
    w, v = np.linalg.eigh(a)
    return np.sum((v * v) @ np.sin(w)) + np.sum(v @ np.diag(np.exp(w / 4)) @ v.T * a)


def eigh_upper_loss(a):
    w, v = np.linalg.eigh(a, UPLO="U")
    return np.sum(np.cos(w)) + np.sum((v ** 2) * np.arange(v.shape[-1]))


def eigvalsh_loss(a):
    return np.sum(np.linalg.eigvalsh(a) ** 3)


def svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum((u * u) @ np.sqrt(s)) + np.sum((vh * vh).T @ s ** 2) + np.sum((u * s) @ vh * a)


def svdvals_loss(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) * np.arange(1.0, 1.0 + min(a.shape[-2:])))


def nuclear_loss(a):
    return np.linalg.norm(a, "nuc") + np.linalg.norm(a, 2)


def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * np.cos(q)) + np.sum(r * r * np.arange(r.shape[-1]))


def expm_loss(a):
    return np.sum(lsp.expm(a) * np.tanh(a))


def pinv_loss(a):
    return np.sum(np.linalg.pinv(a) ** 2)


def lstsq_loss(a, b):
    return np.sum(np.linalg.lstsq(a, b, rcond=None)[0] ** 2)


def numpy_version(fn):
    """The loss run by NumPy/SciPy alone (gradc's expm replaced by SciPy's)."""
    if fn is expm_loss:
        return lambda a: np.sum(scipy.linalg.expm(a) * np.tanh(a))
    return fn


def symmetric(rng, *shape):
    a = rng.standard_normal(shape)
    return a + np.swapaxes(a, -1, -2) + np.diag(np.arange(shape[-1]) * 1.5)


CASES = [
    ("eigh", eigh_loss, lambda r: symmetric(r, 4, 4)),
    ("eigh_1x1", eigh_loss, lambda r: symmetric(r, 1, 1)),
    ("eigh_upper", eigh_upper_loss, lambda r: symmetric(r, 3, 3)),
    ("eigvalsh", eigvalsh_loss, lambda r: symmetric(r, 5, 5)),
    ("svd_tall", svd_loss, lambda r: r.standard_normal((5, 3))),
    ("svd_wide", svd_loss, lambda r: r.standard_normal((3, 5))),
    ("svd_square", svd_loss, lambda r: r.standard_normal((4, 4))),
    ("svd_1x1", svd_loss, lambda r: r.standard_normal((1, 1)) + 2.0),
    ("svdvals_tall", svdvals_loss, lambda r: r.standard_normal((6, 2))),
    ("svdvals_wide", svdvals_loss, lambda r: r.standard_normal((2, 4))),
    ("nuclear", nuclear_loss, lambda r: r.standard_normal((3, 4))),
    ("qr_tall", qr_loss, lambda r: r.standard_normal((5, 3))),
    ("qr_square", qr_loss, lambda r: r.standard_normal((4, 4))),
    ("qr_wide", qr_loss, lambda r: r.standard_normal((3, 5))),
    ("qr_1x1", qr_loss, lambda r: r.standard_normal((1, 1))),
    ("expm", expm_loss, lambda r: r.standard_normal((3, 3))),
    ("expm_scaled", expm_loss, lambda r: 4.0 * r.standard_normal((4, 4))),
    ("pinv", pinv_loss, lambda r: r.standard_normal((4, 3))),
]


def central_difference(f, a, direction, h=1e-6):
    return (f(a + h * direction) - f(a - h * direction)) / (2 * h)


@pytest.mark.parametrize("name,fn,make", CASES, ids=[c[0] for c in CASES])
def test_c_gradient_against_central_differences(name, fn, make):
    rng = np.random.default_rng(len(name))
    a = make(rng)
    compiled = gradc.compile(fn, a, target="c")
    value, grad = compiled.value_and_grad(a)
    reference = numpy_version(fn)
    assert abs(value - reference(a)) <= 1e-10 * (1 + abs(reference(a)))
    for k in range(3):
        direction = np.random.default_rng(100 + k).standard_normal(a.shape)
        if name.startswith("eigh") or name == "eigvalsh":  # the loss reads one triangle: perturb symmetrically
            direction = direction + direction.T
        fd = central_difference(reference, a, direction)
        assert abs(np.sum(grad * direction) - fd) <= 1e-6 * (1 + abs(fd)), (k, np.sum(grad * direction), fd)


def test_lstsq_gradient_against_central_differences():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    compiled = gradc.compile(lstsq_loss, a, b, wrt=("a", "b"), target="c")
    ga, gb = compiled.grad(a, b)
    da, db = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    fd = (lstsq_loss(a + 1e-6 * da, b + 1e-6 * db) - lstsq_loss(a - 1e-6 * da, b - 1e-6 * db)) / 2e-6
    assert abs(np.sum(ga * da) + np.sum(gb * db) - fd) <= 1e-6 * (1 + abs(fd))


def stacked_eigh(a):
    w, v = np.linalg.eigh(a)
    return np.sum((v * v) @ np.sin(w)[..., None])


def strided_svd(a):
    return svd_loss(a.T[1:, ::2]) + qr_loss(a[::2].T)


def stacked_qr_expm(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * 0.5) + np.sum(r ** 2) + np.sum(lsp.expm(a / 3) ** 2)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fn,shape", [(stacked_eigh, (2, 3, 4, 4)), (strided_svd, (5, 6)),
                                      (stacked_qr_expm, (3, 4, 4)), (svdvals_loss, (2, 3, 5))],
                         ids=["stacked_eigh", "strided_svd_qr", "stacked_qr_expm", "stacked_svdvals"])
def test_c_target_equals_numpy_target(fn, shape, dtype):
    a = np.random.default_rng(9).standard_normal(shape)
    a = (a + np.swapaxes(a, -1, -2) if fn is stacked_eigh else a).astype(dtype)
    c_value, c_grad = gradc.compile(fn, a, target="c").value_and_grad(a)
    value, grad = gradc.compile(fn, a).value_and_grad(a)
    rtol = 2e-4 if dtype == np.float32 else 1e-10
    assert np.asarray(c_grad).dtype == dtype
    np.testing.assert_allclose(c_value, value, rtol=rtol, atol=rtol)
    np.testing.assert_allclose(c_grad, grad, rtol=rtol, atol=rtol * np.abs(grad).max())


def all_six(a):
    w, v = np.linalg.eigh(a)
    u, s, vh = np.linalg.svd(a)
    q, r = np.linalg.qr(a)
    return (np.sum(np.linalg.eigvalsh(a)) + np.sum((v * v) @ w) + np.sum((u * u) @ s) + np.sum(q * r)
            + np.sum(np.linalg.svd(a, compute_uv=False)) + np.sum(lsp.expm(a)))


def test_emitted_c_is_deterministic():
    a = np.random.default_rng(2).standard_normal((3, 3))
    first = gradc.compile(all_six, a, target="c").c_source
    second = gradc.compile(all_six, a, target="c").c_source
    assert first == second
    for algorithm in ("cyclic Jacobi", "one-sided Jacobi", "Householder", "Pade"):
        assert algorithm in first


def every_linalg_function(a, b):
    """One call of each np.linalg / scipy.linalg function gradc supports (a: 4 x 4, b: 4 x 2)."""
    spd = a @ a.T + 4.0 * np.eye(4)
    lu = scipy.linalg.lu_factor(spd)
    terms = [
        np.linalg.solve(spd, b), np.linalg.inv(spd), np.linalg.det(spd), np.linalg.slogdet(spd)[1],
        np.linalg.cholesky(spd), np.linalg.matrix_power(spd, -2), np.linalg.matrix_power(a, 3),
        np.linalg.pinv(a[:, :3]), np.linalg.lstsq(a[:, :3], b, rcond=None)[0], np.linalg.cond(spd),
        np.linalg.norm(a, 2), np.linalg.norm(a, "nuc"), np.linalg.eigvalsh(spd), np.linalg.svd(a, compute_uv=False),
        np.linalg.qr(a, mode="r"), scipy.linalg.solve_triangular(spd, b, lower=True),
        scipy.linalg.cho_solve(scipy.linalg.cho_factor(spd), b), scipy.linalg.lu_solve(lu, b),
        scipy.linalg.eigh(spd, eigvals_only=True), scipy.linalg.svdvals(a), scipy.linalg.expm(a / 4),
        scipy.linalg.qr(a, mode="economic")[1], scipy.linalg.pinv(spd), scipy.linalg.lstsq(a, b)[0],
    ]
    return sum(np.sum(np.sin(t)) for t in terms)


def test_every_linalg_function_lowers_to_c():
    rng = np.random.default_rng(11)
    a, b = rng.standard_normal((4, 4)), rng.standard_normal((4, 2))
    c_compiled = gradc.compile(every_linalg_function, a, b, wrt=("a", "b"), target="c")
    value, grads = gradc.compile(every_linalg_function, a, b, wrt=("a", "b")).value_and_grad(a, b)
    c_value, c_grads = c_compiled.value_and_grad(a, b)
    assert abs(c_value - every_linalg_function(a, b)) <= 1e-10 * (1 + abs(value))
    for cg, g in zip(c_grads, grads):
        np.testing.assert_allclose(cg, g, rtol=1e-9, atol=1e-9 * np.abs(g).max())


def second_order_loss(a):
    return (np.sum(np.linalg.eigvalsh(a) ** 3) + np.sum(np.linalg.svd(a, compute_uv=False))
            + np.sum(lsp.expm(a / 3)) + np.sum(np.linalg.qr(a)[1] ** 2))


def test_hessian_vector_products_through_c():
    """The adjoint graphs differentiate again and lower: HVPs equal the NumPy target's and central differences
    of the C gradient."""
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    a, v = a + a.T, v + v.T
    c_hvp = gradc.compile(second_order_loss, a, target="c", mode="hvp").hvp(a, v)
    np.testing.assert_allclose(c_hvp, gradc.compile(second_order_loss, a, mode="hvp").hvp(a, v), rtol=1e-10,
                               atol=1e-10)
    grad = gradc.compile(second_order_loss, a, target="c").grad
    fd = (grad(a + 1e-5 * v) - grad(a - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(c_hvp, fd, rtol=1e-5, atol=1e-5)
