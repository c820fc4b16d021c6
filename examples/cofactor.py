"""A determinant by cofactor expansion, recursive as written by hand: each size is one function of the module."""
import numpy as np


def det(M):
    n = M.shape[0]
    if n == 1:
        return M[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.delete(np.delete(M, 0, axis=0), j, axis=1)
        total = total + (-1.0) ** j * M[0, j] * det(minor)
    return total
