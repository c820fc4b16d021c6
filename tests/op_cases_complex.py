"""Per-op table entries for complex numbers (merged into ``op_cases``; see its docstring for the checks).

Each case takes real inputs ``x, y`` and works on ``z = x + 1j * y`` inside, returning a real value: the
table's finite differences in ``x`` and ``y`` are then the differences along the real and the imaginary
direction of ``z``, and its dot-product test checks JAX's convention of every complex op on the way
(gradc/ops/complex_numbers.py). Domains keep away from 0 (abs, angle) and the branch cut of log and sqrt.
"""
from __future__ import annotations

import numpy as np
import scipy.special
from op_cases import Case, away_from_zero, f32, normal, positive


def _z(x, y):
    return x + 1j * y


def _matrix(x, y):
    return _z(x, y) + 3.0 * np.eye(x.shape[-1])


def _half_power(a):  # U S^1/2 V^H: free of the singular vectors' common phase, not of their relative one
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return (u * np.sqrt(s)) @ vh


def _paired(w, v):  # each vector's moduli weighted by row and by its own eigenvalue
    return np.sum(np.abs(v) ** 2 * np.arange(1.0, 1.0 + v.shape[-1])[:, None] * np.real(w * (1 + 0.5j)))


DIFF_CASES = [
    Case("complex_real_imag", lambda x, y: np.real(_z(x, y) * (2 - 1j)) + 2 * np.imag(_z(x, y) ** 2),
         [normal(4), normal(4)], ("real", "imag", "mul")),
    Case("complex_conj", lambda x, y: np.imag(np.conj(_z(x, y)) * (0.5 + 2j)) + np.real(_z(x, y).conj() ** 3),
         [normal(4), normal(4)], ("conj", "imag", "real")),
    Case("complex_abs", lambda x, y: np.abs(_z(x, y) * (1 - 2j)), [away_from_zero(5), away_from_zero(5)],
         ("abs",)),
    Case("complex_abs_f32", lambda x, y: np.abs(_z(x, y)), [f32(away_from_zero(4)), f32(away_from_zero(4))],
         ("abs",), rtol=1e-3),
    Case("complex_angle", lambda x, y: np.angle(_z(x, y)), [away_from_zero(5), away_from_zero(5)],
         ("arctan2", "real", "imag")),
    Case("complex_exp_log", lambda x, y: np.real(np.exp(_z(x, y))) + np.imag(np.log(_z(x, y))),
         [positive(4), normal(4)], ("exp", "log", "real", "imag")),
    Case("complex_sqrt_div", lambda x, y: np.abs(np.sqrt(_z(x, y)) / (_z(x, y) + 3.0)),
         [positive(4), normal(4)], ("sqrt", "div", "abs")),
    Case("complex_trig", lambda x, y: np.real(np.sin(_z(x, y)) * np.cos(_z(x, y)) + np.tan(0.3 * _z(x, y))),
         [normal(4), normal(4)], ("sin", "cos", "tan", "real")),
    Case("complex_hyperbolic", lambda x, y: np.imag(np.sinh(_z(x, y)) + np.cosh(_z(x, y)) * np.tanh(_z(x, y))),
         [normal(4), normal(4)], ("sinh", "cosh", "tanh", "imag")),
    Case("complex_pow", lambda x, y: np.real(_z(x, y) ** 3 - 1.0 / _z(x, y) + _z(x, y) ** (0.5 + 0.5j)),
         [positive(4), normal(4)], ("pow", "div", "real")),
    Case("complex_reductions",
         lambda x, y: np.abs(np.sum(_z(x, y), axis=0)) + np.real(np.mean(_z(x, y) ** 2)) + np.imag(np.prod(_z(x, y))),
         [normal(3, 2), normal(3, 2)], ("sum", "mean", "prod", "abs")),
    Case("complex_matmul",
         lambda x, y: np.real(_z(x, y) @ _z(y, x).T) + np.imag(np.einsum("ij,ij->i", _z(x, y), _z(x, y))),
         [normal(3, 2), normal(3, 2)], ("matmul", "real", "imag")),
    Case("complex_promote_real", lambda x, y: np.abs(x * (1 + 2j) + y) ** 2, [normal(4), normal(4)],
         ("astype", "abs")),
    Case("complex_solve_inv", lambda x, y: np.real(np.linalg.solve(x + 1j * y + 3 * np.eye(3), np.ones(3) + 1j)) +
         np.imag(np.linalg.inv(y + 1j * x + 3 * np.eye(3))[0]), [normal(3, 3), normal(3, 3)], ("solve",)),
    Case("complex_eigh", lambda x, y: np.sum(np.linalg.eigvalsh(_matrix(x, y)) * np.arange(1.0, 4.0)) +
         np.sum(np.abs(np.linalg.eigh(_matrix(x, y))[1]) ** 2 * np.arange(9.0).reshape(3, 3)),
         [normal(3, 3), normal(3, 3)], ("eigh", "eigvalsh")),
    Case("complex_svd", lambda x, y: np.sum(np.linalg.svd(_z(x, y), compute_uv=False) ** 2 * np.arange(1.0, 3.0)) +
         np.real(np.sum(_half_power(_z(x, y)))), [normal(3, 2), normal(3, 2)], ("svd", "svdvals")),
    # functions of the eigenpairs free of their order and of each vector's phase (the C target's order is its own)
    Case("eig_complex", lambda x, y: np.real(np.sum(np.linalg.eigvals(_matrix(x, y)) ** 2)) +
         _paired(*np.linalg.eig(_matrix(x, y))), [normal(3, 3), normal(3, 3)], ("eig",)),
    Case("eig_real", lambda x, y: np.real(np.sum(np.linalg.eigvals(x + y.T) ** 3)) + _paired(*np.linalg.eig(x - y)),
         [normal(3, 3), normal(3, 3)], ("eig",)),
    Case("complex_det", lambda x, y: np.real(np.linalg.det(_matrix(x, y))) + np.imag(np.linalg.det(_matrix(x, y))),
         [normal(3, 3), normal(3, 3)], ("det_phase", "logabsdet")),
    Case("complex_slogdet",
         lambda x, y: np.linalg.slogdet(_matrix(x, y))[1] + np.imag(np.linalg.slogdet(_matrix(x, y))[0]),
         [normal(3, 3), normal(3, 3)], ("det_phase", "logabsdet")),
    Case("complex_qr", lambda x, y: np.real(np.sum(np.linalg.qr(_z(x, y))[0] * np.arange(6.0).reshape(3, 2))) +
         np.imag(np.sum(np.linalg.qr(_z(y, x).T)[1])), [normal(3, 2), normal(3, 2)], ("qr",)),
    Case("complex_cholesky", lambda x, y: np.sum(np.abs(np.linalg.cholesky(
         (x + 1j * y) @ (x - 1j * y).T + np.eye(3))) ** 2 * np.arange(9.0).reshape(3, 3)),
         [normal(3, 3), normal(3, 3)], ("cholesky", "triangular_solve")),
    Case("complex_pinv_lstsq", lambda x, y: np.real(np.sum(np.linalg.pinv(_z(x, y)))) +
         np.imag(np.sum(np.linalg.lstsq(_z(x, y), np.arange(3.0) + 1j, rcond=None)[0])),
         [normal(3, 2), normal(3, 2)], ("svd",)),
    Case("complex_scans", lambda x, y: np.real(np.cumsum(_z(x, y) ** 2)) + np.imag(np.cumprod(_z(x, y), axis=0)),
         [normal(4), normal(4)], ("cumsum", "cumprod")),
    Case("complex_cov_logsumexp", lambda x, y: np.real(np.cov(_z(x, y))) + np.imag(
         scipy.special.logsumexp(_z(x, y), axis=1)[:, None]), [normal(2, 4), normal(2, 4)], ("matmul", "exp")),
]

NONDIFF_CASES: list = []
