"""``torch.linalg.eig``/``eigvals`` with complex results, mixed-dtype matrix products and complex ``abs_`` against
torch 2.13.0's recorded behaviour (``spec/gen_eig_products.py``), and eig's gradient by central differences on
seeded random matrices."""
import numpy as np
import pytest

import gradc.torch as torch
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("eig_products")


def test_every_case_is_recorded():
    assert [fn.__name__ for fn in GEN.CASES] == list(EXPECTED)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda f: f.__name__)
def test_matches_torch(fn):
    assert RUNNER.compare(EXPECTED[fn.__name__], RUNNER.run_case(fn, torch), 1e-9) == []


def _loss(a, cw, cv):
    w, V = torch.linalg.eig(torch.tensor(a))
    return float((w.real * cw[0]).sum() + (w.imag * cw[1]).sum() + (V.abs() ** 2 * cv).sum())


@pytest.mark.parametrize("seed", range(6))
def test_eig_gradient_by_central_differences(seed):
    rng = np.random.default_rng(seed)
    n = 2 + seed % 3
    a = rng.standard_normal((n, n))
    cw, cv = torch.tensor(rng.standard_normal((2, n))), torch.tensor(rng.standard_normal((n, n)))
    x = torch.tensor(a, requires_grad=True)
    w, V = torch.linalg.eig(x)
    ((w.real * cw[0]).sum() + (w.imag * cw[1]).sum() + (V.abs() ** 2 * cv).sum()).backward()
    h, fd = 1e-6, np.zeros_like(a)
    for i in np.ndindex(a.shape):
        e = np.zeros_like(a)
        e[i] = h
        fd[i] = (_loss(a + e, cw, cv) - _loss(a - e, cw, cv)) / (2 * h)
    np.testing.assert_allclose(x.grad.numpy(), fd, rtol=1e-5, atol=1e-6)
