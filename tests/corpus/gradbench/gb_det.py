"""GradBench ``det`` (cmpad's det_by_minor): the determinant by expansion along the first row, recursively.

Input: ``A = rand(ell * ell)`` in row-major order and ``ell`` (5 to 11 by default), seed 31337.
Closed form of the gradient: the cofactor matrix, ``det(A) * inv(A).T``.
"""
from __future__ import annotations

import numpy as np

DEFAULT_SIZE = 5  # the eval's smallest default ell
SMALL_SIZE = 3


def det_of_minor(M):
    """Expansion by minors along row 0: each minor drops row 0 and column j (np.delete, as written by hand)."""
    m = M.shape[0]
    if m == 1:
        return M[0, 0]
    total = 0.0
    sign = 1.0
    for j in range(m):
        minor = np.delete(np.delete(M, 0, axis=0), j, axis=1)
        total = total + sign * M[0, j] * det_of_minor(minor)
        sign = -sign
    return total


def det(A, ell):
    """The eval's ``primal``: A flat, row-major."""
    return det_of_minor(A.reshape(ell, ell))


def generate(ell=SMALL_SIZE, seed=31337):
    rng = np.random.RandomState(seed)
    return {"A": rng.rand(ell * ell), "ell": ell}


def closed_form_gradient(A, ell):
    M = A.reshape(ell, ell)
    return (np.linalg.det(M) * np.linalg.inv(M).T).ravel()
