"""``scipy.linalg.solve`` with each ``assume_a``: gradc reads the entries SciPy reads, so value and gradient agree
with SciPy's (and the gradient is zero in the entries SciPy ignores), against central differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from finite_differences import central_gradient as central

import gradc

RNG = np.random.default_rng(0)
A = RNG.standard_normal((4, 4)) + 4 * np.eye(4)
SPD = A @ A.T
B = RNG.standard_normal(4)




@pytest.mark.parametrize(("kind", "matrix", "options"), [
    ("gen", A, {}), ("banded", A, {}), ("lower triangular", A, {}), ("upper triangular", A, {}),
    ("diagonal", A, {}), ("tridiagonal", A, {}), ("sym", A, {}), ("sym", A, {"lower": True}), ("her", A, {}),
    ("pos", SPD, {}), ("pos", SPD, {"lower": True}), ("positive definite", SPD, {}), ("pos", SPD, {"transposed": True}),
    ("sym", A, {"transposed": True}), ("lower triangular", A, {"transposed": True}), ("gen", A, {"transposed": True}),
    ("tridiagonal", A, {"transposed": True}),
])
def test_solve_reads_what_scipy_reads(kind, matrix, options):
    def loss(m, b):
        return np.sum(sla.solve(m, b, assume_a=kind, **options) ** 2)

    compiled = gradc.compile(loss, matrix, B, wrt="m")
    np.testing.assert_allclose(compiled.forward(matrix, B), loss(matrix, B), rtol=1e-12)
    np.testing.assert_allclose(compiled.grad(matrix, B), central(lambda m: loss(m, B), matrix), rtol=1e-6,
                               atol=1e-9)


def test_unknown_structure_is_refused():
    with pytest.raises(gradc.GradcError, match="assume_a='skew'"):
        gradc.grad(lambda m: np.sum(sla.solve(m, B, assume_a="skew")))(A)
