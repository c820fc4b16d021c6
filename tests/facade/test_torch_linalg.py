"""``torch.linalg`` on the facade: values and gradients against torch 2.13.0 and central differences."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as torch
from tests.facade.reference_check import check

RNG = np.random.default_rng(2024)


def _matrix(n, m=None, batch=()):
    return RNG.normal(size=batch + (n, m or n))


def _spd(n, batch=()):
    a = _matrix(n, batch=batch)
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _sym_fn(f):
    return lambda T, a: f(T, (a + a.mT) / 2)


def _spd_fn(f):
    return lambda T, a: f(T, a @ a.mT + 3 * T.eye(a.shape[-1], dtype=a.dtype))


CASES = {
    "det": (lambda T, a: T.linalg.det(a), [_matrix(3)]),
    "det_batch": (lambda T, a: T.linalg.det(a), [_matrix(3, batch=(2,))]),
    "inv": (lambda T, a: T.linalg.inv(a), [_matrix(3)]),
    "slogdet": (lambda T, a: T.linalg.slogdet(a), [_matrix(3, batch=(2,))]),
    "logdet": (lambda T, a: T.logdet(a), [_spd(3)]),
    "solve_matrix": (lambda T, a, b: T.linalg.solve(a, b), [_matrix(3), _matrix(3, 2)]),
    "solve_vector": (lambda T, a, b: T.linalg.solve(a, b), [_matrix(3), RNG.normal(size=3)]),
    "solve_batch_vector": (lambda T, a, b: T.linalg.solve(a, b), [_matrix(3, batch=(2,)), RNG.normal(size=(2, 3))]),
    "solve_broadcast": (lambda T, a, b: T.linalg.solve(a, b), [_matrix(3, batch=(2,)), RNG.normal(size=3)]),
    "solve_right": (lambda T, a, b: T.linalg.solve(a, b, left=False), [_matrix(3), _matrix(2, 3)]),
    "cholesky": (_spd_fn(lambda T, a: T.linalg.cholesky(a)), [_matrix(3)]),
    "cholesky_upper": (_spd_fn(lambda T, a: T.linalg.cholesky(a, upper=True)), [_matrix(3)]),
    "eigh_values": (_sym_fn(lambda T, a: T.linalg.eigh(a).eigenvalues), [_matrix(4)]),
    "eigh_vectors_abs": (_sym_fn(lambda T, a: T.linalg.eigh(a)[1].abs()), [_matrix(3)]),
    "eigvalsh": (_sym_fn(lambda T, a: T.linalg.eigvalsh(a)), [_matrix(3, batch=(2,))]),
    "svdvals": (lambda T, a: T.linalg.svdvals(a), [_matrix(4, 3)]),
    "svd_reduced_abs": (lambda T, a: tuple(x.abs() for x in T.linalg.svd(a, full_matrices=False)), [_matrix(4, 3)]),
    "qr_abs": (lambda T, a: tuple(x.abs() for x in T.linalg.qr(a)), [_matrix(4, 3)]),
    "pinv": (lambda T, a: T.linalg.pinv(a), [_matrix(4, 3)]),
    "lstsq": (lambda T, a, b: T.linalg.lstsq(a, b).solution, [_matrix(5, 3), _matrix(5, 2)]),
    "lstsq_vector": (lambda T, a, b: T.linalg.lstsq(a, b).solution, [_matrix(5, 3), RNG.normal(size=5)]),
    "lstsq_batch": (lambda T, a, b: T.linalg.lstsq(a, b).solution, [_matrix(4, 2, batch=(2,)),
                                                                   _matrix(4, 3, batch=(1,))]),
    "cond": (lambda T, a: T.linalg.cond(a), [_spd(3)]),
    "cond_2": (lambda T, a: T.linalg.cond(a, 2), [_matrix(3)]),
    "solve_ex": (lambda T, a, b: T.linalg.solve_ex(a, b).result, [_matrix(3), _matrix(3, 2)]),
    "vander": (lambda T, x: T.linalg.vander(x, N=4), [RNG.normal(size=3)]),
    "matrix_exp": (lambda T, a: T.linalg.matrix_exp(a), [_matrix(3) / 2]),
    "matrix_exp_batch": (lambda T, a: T.linalg.matrix_exp(a), [_matrix(2, batch=(3,)) / 2]),
    "matrix_power": (lambda T, a: T.linalg.matrix_power(a, 3), [_matrix(3)]),
    "matrix_power_negative": (lambda T, a: T.linalg.matrix_power(a, -2), [_spd(3)]),
    "multi_dot": (lambda T, a, b, c: T.linalg.multi_dot([a, b, c]), [_matrix(2, 3), _matrix(3, 4), _matrix(4, 2)]),
    "cross": (lambda T, a, b: T.linalg.cross(a, b), [RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))]),
    "cross_dim0_broadcast": (lambda T, a, b: T.linalg.cross(a, b, dim=0), [RNG.normal(size=(3, 2)),
                                                                          RNG.normal(size=(3, 1))]),
    "torch_cross_default": (lambda T, a, b: T.cross(a, b, dim=0), [RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))]),
    "norm_default": (lambda T, a: T.linalg.norm(a), [_matrix(3, 4)]),
    "norm_nuc": (lambda T, a: T.linalg.norm(a, "nuc"), [_matrix(3, 4)]),
    "norm_2": (lambda T, a: T.linalg.norm(a, 2), [_matrix(3, 4)]),
    "norm_inf_dim": (lambda T, a: T.linalg.norm(a, float("inf"), dim=1), [_matrix(3, 4)]),
    "vector_norm_3": (lambda T, a: T.linalg.vector_norm(a, 3, dim=(0, 2)), [RNG.normal(size=(2, 3, 4))]),
    "vector_norm_keepdim": (lambda T, a: T.linalg.vector_norm(a, 1.5, dim=-1, keepdim=True), [_matrix(3, 4)]),
    "matrix_norm_fro": (lambda T, a: T.linalg.matrix_norm(a), [_matrix(3, 4, batch=(2,))]),
    "matrix_norm_1": (lambda T, a: T.linalg.matrix_norm(a, 1, dim=(0, 1), keepdim=True), [_matrix(3, 4)]),
    "solve_triangular": (lambda T, a, b: T.linalg.solve_triangular(T.triu(a) + 3 * T.eye(3, dtype=a.dtype), b,
                                                                   upper=True), [_matrix(3), _matrix(3, 2)]),
    "vecdot": (lambda T, a, b: T.linalg.vecdot(a, b), [_matrix(3, 4), _matrix(3, 4)]),
    "tensor_norm_method": (lambda T, a: a.norm(3, dim=1), [_matrix(3, 4)]),
    "tensor_norm_fro": (lambda T, a: a.norm(), [_matrix(3, 4)]),
    "inverse_method": (lambda T, a: a.inverse(), [_spd(3)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_linalg_against_torch_and_central_differences(name):
    f, xs = CASES[name]
    check(f, *xs)


@pytest.mark.parametrize("seed", range(6))
def test_random_systems(seed):
    """Seeded random batch shapes and sizes: solve, inv and det with batches."""
    rng = np.random.default_rng(seed)
    n, batch = int(rng.integers(1, 5)), tuple(int(b) for b in rng.integers(1, 3, size=int(rng.integers(0, 3))))
    a = rng.normal(size=batch + (n, n)) + 2 * n * np.eye(n)
    b = rng.normal(size=batch + (n, int(rng.integers(1, 3))))
    check(lambda T, a, b: (T.linalg.solve(a, b), T.linalg.inv(a), T.linalg.det(a)), a, b)


def test_float32_keeps_dtype():
    a = torch.tensor(_spd(3), dtype=torch.float32)
    for out in (torch.linalg.inv(a), torch.linalg.det(a), torch.linalg.cholesky(a), torch.linalg.norm(a)):
        assert out.dtype == torch.float32


@pytest.mark.parametrize("call,what", [(lambda t: torch.linalg.norm(t[0]), "vector_norm"),
                                       (lambda t: torch.linalg.det(t), "det"), (lambda t: torch.linalg.inv(t), "inv"),
                                       (lambda t: torch.linalg.matrix_norm(t), "matrix_norm"),
                                       (lambda t: torch.linalg.solve(t.double(), t), "solve")])
def test_integer_input_is_refused_as_torch_does(call, what):
    with pytest.raises(RuntimeError, match=f"linalg.{what}: Expected a floating point or complex tensor as input. "
                                           "Got Long"):
        call(torch.tensor([[3, 4], [1, 2]]))


def test_integer_cross_and_einsum_stay_integer():
    assert torch.linalg.cross(torch.tensor([1, 0, 0]), torch.tensor([0, 1, 0])).tolist() == [0, 0, 1]
    assert torch.linalg.cross(torch.tensor([1, 0, 0]), torch.tensor([0, 1, 0])).dtype == torch.int64
    assert torch.einsum("i,i", torch.tensor([1, 2]), torch.tensor([3, 4])).dtype == torch.int64


def test_return_types_print_as_torch():
    text = repr(torch.linalg.slogdet(torch.eye(2)))
    assert text.startswith("torch.return_types.linalg_slogdet(\nsign=tensor(1.),\nlogabsdet=tensor(0.)")
    eig = torch.linalg.eigh(torch.eye(2))
    assert eig.eigenvalues is eig[0] and eig.eigenvectors is eig[1]


def test_errors_are_torchs():
    with pytest.raises(RuntimeError, match="must be batches of square matrices"):
        torch.linalg.det(torch.ones(2, 3))
    with pytest.raises(RuntimeError, match="at least 2 dimensions"):
        torch.linalg.inv(torch.ones(3))
    with pytest.raises(RuntimeError, match="must have length 3"):
        torch.linalg.cross(torch.ones(4), torch.ones(4))
    with pytest.raises(RuntimeError, match="Unknown Complex ScalarType for Long"):  # eig's result is complex
        torch.linalg.eig(torch.ones(2, 2, dtype=torch.int64))
    with pytest.raises(RuntimeError, match="full_matrices=False"):
        torch.linalg.svd(torch.ones(3, 2, requires_grad=True))


def test_svd_full_matrices_without_grad_matches_numpy():
    a = _matrix(4, 2)
    u, s, vh = torch.linalg.svd(torch.tensor(a))
    assert u.shape == (4, 4) and s.shape == (2,) and vh.shape == (2, 2)
    np.testing.assert_allclose((u[:, :2] * s) @ vh, a, atol=1e-12)


def test_second_derivative_through_create_graph():
    a = torch.tensor(_spd(3), requires_grad=True)
    (g,) = torch.autograd.grad(torch.linalg.det(a), a, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), a)
    eps = 1e-6
    ref = np.zeros((3, 3))
    base = _spd(3) * 0 + a.detach().numpy()
    for k in np.ndindex(3, 3):
        up, down = base.copy(), base.copy()
        up[k] += eps
        down[k] -= eps
        ref[k] = ((np.linalg.det(up) * np.linalg.inv(up).T).sum() - (np.linalg.det(down) * np.linalg.inv(down).T).sum()
                  ) / (2 * eps)
    np.testing.assert_allclose(h.numpy(), ref, rtol=1e-5, atol=1e-6)
