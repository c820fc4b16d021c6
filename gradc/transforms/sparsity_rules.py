"""Local dependence maps by index arithmetic for the ops whose probes would be slow: matrix products
and reductions over axes. Each gives a boolean ``(output entries x operand entries)`` CSR matrix.

>>> reduction_map((2, 3), (1,), False).toarray().astype(int)
array([[1, 1, 1, 0, 0, 0],
       [0, 0, 0, 1, 1, 1]])
"""
from __future__ import annotations

import numpy as np

REDUCTIONS = ("sum", "mean", "max", "min", "prod")


def _csr(rows, cols, shape):
    import scipy.sparse as sp  # only for sparse Jacobians

    return sp.csr_matrix((np.ones(len(rows), bool), (rows, cols)), shape=shape)


def reduction_map(in_shape: tuple, axes, keepdims: bool):
    """Each output entry of a reduction over ``axes`` (None: all) depends on the entries it reduces."""
    ndim = len(in_shape)
    axes = tuple(range(ndim)) if axes is None else tuple(a % ndim for a in np.atleast_1d(axes).tolist())
    coords = list(np.indices(in_shape).reshape(ndim, -1))
    kept = [c for d, c in enumerate(coords) if d not in axes]
    out_shape = tuple(n for d, n in enumerate(in_shape) if d not in axes)
    rows = np.ravel_multi_index(kept, out_shape) if kept else np.zeros(coords[0].size if coords else 1, np.int64)
    size_out = int(np.prod(out_shape)) if out_shape else 1
    size_in = int(np.prod(in_shape)) if in_shape else 1
    return _csr(rows, np.arange(size_in), (size_out, size_in))


def matmul_maps(a_shape: tuple, b_shape: tuple):
    """``(map of a, map of b)`` for ``a @ b`` (NumPy's rules: 1-d operands promoted, batch dimensions broadcast):
    ``out[..., i, j]`` depends on the row ``a[..., i, :]`` and the column ``b[..., :, j]``."""
    a2 = (1,) + tuple(a_shape) if len(a_shape) == 1 else tuple(a_shape)
    b2 = tuple(b_shape) + (1,) if len(b_shape) == 1 else tuple(b_shape)
    batch = np.broadcast_shapes(a2[:-2], b2[:-2])
    n_i, n_k, n_j = a2[-2], a2[-1], b2[-1]
    full = batch + (n_i, n_j, n_k)
    a_ids = np.arange(int(np.prod(a2))).reshape(a2)[..., :, None, :]  # (..., I, 1, K)
    b_ids = np.swapaxes(np.arange(int(np.prod(b2))).reshape(b2), -1, -2)[..., None, :, :]  # (..., 1, J, K)
    out_ids = np.arange(int(np.prod(batch + (n_i, n_j)))).reshape(batch + (n_i, n_j))[..., None]
    rows = np.broadcast_to(out_ids, full).ravel()
    size_out = int(np.prod(batch + (n_i, n_j)))
    return (_csr(rows, np.broadcast_to(a_ids, full).ravel(), (size_out, int(np.prod(a2)))),
            _csr(rows, np.broadcast_to(b_ids, full).ravel(), (size_out, int(np.prod(b2)))))
