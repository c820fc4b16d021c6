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


if __name__ == "__main__":
    import gradc

    M = np.random.default_rng(0).uniform(-1.0, 1.0, (6, 6))
    grad = gradc.grad(det)(M)
    cofactors = np.linalg.det(M) * np.linalg.inv(M).T  # d det / dM, the matrix of cofactors
    print(f"det {det(M):.12f} (numpy {np.linalg.det(M):.12f})")
    print(f"gradient agrees with the cofactor matrix: {np.allclose(grad, cofactors, rtol=1e-10, atol=1e-12)}")
