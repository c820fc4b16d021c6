"""Autograd-style cases: indexing, shapes, broadcasting, joining and splitting, linear algebra."""
from __future__ import annotations

import numpy as np
from transform_checks import Case

rs = np.random.RandomState(1)


def randn(*shape):
    return rs.randn(*shape)


X = randn(3, 4)
CASES: list[Case] = []

INDEXING = [
    ("int_index", lambda x: x[1]), ("neg_index", lambda x: x[-1, -2]), ("slice", lambda x: x[1:, :2]),
    ("step_slice", lambda x: x[::2, 1::2]), ("neg_step", lambda x: x[::-1, ::-2]), ("ellipsis", lambda x: x[..., 1]),
    ("newaxis", lambda x: x[:, None, :] * x[None]), ("fancy_rows", lambda x: x[np.array([2, 0, 2])]),
    ("fancy_pairs", lambda x: x[np.array([0, 2]), np.array([3, 1])]), ("bool_mask_static", lambda x: x[X > 0]),
    ("list_index", lambda x: x[[0, 1, 1]]), ("take", lambda x: np.take(x, [3, 0], axis=1)),
    ("take_flat", lambda x: np.take(x, [5, 1, 5])), ("diag", lambda x: np.diag(x[:, :3])),
    ("diagonal", lambda x: np.diagonal(x)), ("triu", lambda x: np.triu(x)), ("tril", lambda x: np.tril(x, -1)),
    ("transpose", lambda x: x.T @ x), ("swapaxes", lambda x: np.swapaxes(x[None], 0, 2)),
    ("moveaxis", lambda x: np.moveaxis(x[None], 0, -1)),
    ("reshape", lambda x: x.reshape(2, 6) * np.arange(12).reshape(2, 6)),
    ("reshape_minus1", lambda x: np.reshape(x, (-1, 2))), ("ravel", lambda x: np.ravel(x) ** 2),
    ("flatten", lambda x: x.flatten()[::3]), ("squeeze", lambda x: np.squeeze(x[:1])),
    ("expand_dims", lambda x: np.expand_dims(x, 1) * 2), ("atleast_2d", lambda x: np.atleast_2d(x[0])),
    ("flip", lambda x: np.flip(x, axis=1) * x),
    ("fliplr", lambda x: np.fliplr(x)),
    ("roll", lambda x: np.roll(x, 1, axis=1)),
    ("roll_flat", lambda x: np.roll(x, -2)),
    ("tile", lambda x: np.tile(x[0], 2)),
    ("repeat", lambda x: np.repeat(x[0], 2)),
    ("repeat_axis", lambda x: np.repeat(x, [1, 0, 2], axis=0)),
    ("broadcast_to", lambda x: np.broadcast_to(x[0], (2, 4))),
    ("pad", lambda x: np.pad(x, 1)), ("sort", lambda x: np.sort(x, axis=1)), ("real", lambda x: np.real(x)),
]
for name, fun in INDEXING:
    CASES.append(Case(f"index_{name}", fun, (X + 0.01 * np.arange(12).reshape(3, 4),)))

JOINS = [
    ("concatenate", lambda x, y: np.concatenate([x, y])),
    ("concatenate_axis1", lambda x, y: np.concatenate((x, y), axis=1)),
    ("stack", lambda x, y: np.stack([x, y, x])), ("stack_axis", lambda x, y: np.stack([x, y], axis=-1)),
    ("hstack", lambda x, y: np.hstack([x, y])), ("vstack", lambda x, y: np.vstack([x, y])),
    ("dstack", lambda x, y: np.dstack([x, y])), ("column_stack", lambda x, y: np.column_stack([x[:, 0], y[:, 1]])),
    ("append", lambda x, y: np.append(x, y)),
    ("split_sum", lambda x, y: sum(np.sum(p ** 2) for p in np.split(x, 2, axis=1))),
    ("array_split", lambda x, y: np.array_split(x, 3, axis=1)[1] * y[:, :2]),
    ("hsplit", lambda x, y: np.hsplit(x, 2)[0] - y[:, 2:]),
    ("where_pick", lambda x, y: np.where(X[:, :2] > 0, x[:, :2], y[:, :2])),
]
Y = randn(3, 4)
for name, fun in JOINS:
    for argnum in (0, 1):
        CASES.append(Case(f"join_{name}_arg{argnum}", fun, (X, Y), argnum=argnum))

A = randn(3, 3)
SPD = A @ A.T + 3 * np.eye(3)
V = randn(3)
LINALG = [
    ("dot_mv", lambda a, v: np.dot(a, v)), ("dot_vv", lambda a, v: np.dot(v, v) * np.sum(a)),
    ("matmul", lambda a, v: a @ a), ("matmul_vec", lambda a, v: v @ a @ v), ("outer", lambda a, v: np.outer(v, a[0])),
    ("inner", lambda a, v: np.inner(a, v)), ("tensordot", lambda a, v: np.tensordot(a, a, axes=1)),
    ("tensordot_2", lambda a, v: np.tensordot(a, a, axes=([0, 1], [1, 0]))),
    ("einsum_ij_jk", lambda a, v: np.einsum("ij,jk->ik", a, a)), ("einsum_trace", lambda a, v: np.einsum("ii", a)),
    ("einsum_batch", lambda a, v: np.einsum("i,ij,j->", v, a, v)), ("kron", lambda a, v: np.kron(a[:2, :2], v[:2])),
    ("det", lambda a, v: np.linalg.det(a)), ("slogdet", lambda a, v: np.linalg.slogdet(a)[1]),
    ("inv", lambda a, v: np.linalg.inv(a)), ("solve", lambda a, v: np.linalg.solve(a, v)),
    ("solve_matrix", lambda a, v: np.linalg.solve(a, a.T)),
    ("cholesky", lambda a, v: np.linalg.cholesky(a @ a.T + 3 * np.eye(3))),
    ("eigh_values", lambda a, v: np.linalg.eigh(a + a.T + np.diag([0.0, 3.0, 6.0]))[0]),
    ("pinv", lambda a, v: np.linalg.pinv(a)), ("matrix_power", lambda a, v: np.linalg.matrix_power(a, 3)),
    ("cross", lambda a, v: np.cross(a[0], v)),
    ("vdot", lambda a, v: np.vdot(a, a)),
    ("trace", lambda a, v: np.trace(a @ a)),
    ("norm_2", lambda a, v: np.linalg.norm(v, 2)), ("norm_1", lambda a, v: np.linalg.norm(v + 5, 1)),
]
for name, fun in LINALG:
    out = fun(A, V)
    CASES.append(Case(f"linalg_{name}", fun, (A, V), order=2 if np.ndim(out) == 0 else 1))
    if name in ("dot_mv", "matmul_vec", "solve", "inner", "cross", "norm_2"):
        CASES.append(Case(f"linalg_{name}_arg1", fun, (A, V), argnum=1))
CASES.append(Case("linalg_spd_logdet", lambda s: 2 * np.sum(np.log(np.diag(np.linalg.cholesky(s)))), (SPD,)))
