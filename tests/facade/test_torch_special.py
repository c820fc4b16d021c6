"""``torch.special`` and the special functions' top-level names on the facade: values and gradients against
torch 2.13.0 and central differences, on seeded random points of each function's domain."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as torch
from tests.facade.reference_check import check

RNG = np.random.default_rng(11)
REAL = RNG.normal(size=(2, 3))
POSITIVE = RNG.uniform(0.3, 3.0, size=(2, 3))
UNIT = RNG.uniform(0.05, 0.95, size=(2, 3))
OPEN = RNG.uniform(-0.9, 0.9, size=(2, 3))

UNARY = {
    "erf": REAL, "erfc": REAL, "erfcx": REAL, "erfinv": OPEN, "expit": REAL, "logit": UNIT, "gammaln": POSITIVE,
    "digamma": POSITIVE, "psi": POSITIVE, "i0": REAL, "i0e": REAL, "i1": REAL, "i1e": REAL, "ndtr": REAL,
    "ndtri": UNIT, "log_ndtr": REAL, "sinc": REAL, "entr": POSITIVE, "expm1": REAL, "exp2": REAL, "log1p": POSITIVE,
    "bessel_j0": REAL, "bessel_j1": REAL, "bessel_y0": POSITIVE, "bessel_y1": POSITIVE,
    "modified_bessel_i0": REAL, "modified_bessel_i1": REAL, "modified_bessel_k0": POSITIVE,
    "modified_bessel_k1": POSITIVE, "scaled_modified_bessel_k0": POSITIVE, "scaled_modified_bessel_k1": POSITIVE,
    "spherical_bessel_j0": REAL,
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(name):
    check(lambda T, x: getattr(T.special, name)(x), UNARY[name], rtol=1e-8, fd_rtol=2e-5)


@pytest.mark.parametrize("name,x,y", [("xlogy", POSITIVE, POSITIVE), ("xlog1py", REAL, POSITIVE),
                                      ("gammainc", POSITIVE, POSITIVE), ("gammaincc", POSITIVE, POSITIVE)])
def test_binary(name, x, y):
    diff = (1,) if name.startswith("gammainc") else None  # torch has no derivative in the first argument
    check(lambda T, a, b: getattr(T.special, name)(a, b), x, y, diff=diff, rtol=1e-8, fd_rtol=2e-5)


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_polygamma(n):
    check(lambda T, x: T.special.polygamma(n, x), POSITIVE, rtol=1e-8, fd_rtol=1e-4)
    check(lambda T, x: T.polygamma(n, x), POSITIVE, rtol=1e-8, fd_rtol=1e-4)
    check(lambda T, x: x.polygamma(n), POSITIVE, rtol=1e-8, fd_rtol=1e-4)


@pytest.mark.parametrize("p", [1, 2, 4])
def test_multigammaln(p):
    check(lambda T, x: T.special.multigammaln(x + 2, p), POSITIVE)
    check(lambda T, x: T.mvlgamma(x + 2, p), POSITIVE)


def test_logit_eps():
    check(lambda T, x: T.special.logit(x, eps=0.2), UNIT)


@pytest.mark.parametrize("dim,keepdim", [(0, False), (1, True), ((0, 1), False), (-1, False)])
def test_logsumexp(dim, keepdim):
    check(lambda T, x: T.special.logsumexp(x, dim, keepdim), REAL)
    check(lambda T, x: T.logsumexp(x, dim, keepdim), REAL)
    check(lambda T, x: x.logsumexp(dim, keepdim=keepdim), REAL)


def test_logsumexp_large_values_stay_finite():
    out = torch.logsumexp(torch.tensor([1000.0, 1000.0]), 0)
    assert abs(out.item() - (1000.0 + np.log(2.0))) < 1e-3


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax(name):
    check(lambda T, x: getattr(T.special, name)(x, 1), REAL)


@pytest.mark.parametrize("name,x", [("erf", REAL), ("erfc", REAL), ("erfinv", OPEN), ("lgamma", POSITIVE),
                                    ("digamma", POSITIVE), ("i0", REAL), ("sinc", REAL), ("logit", UNIT),
                                    ("exp2", REAL)])
def test_top_level_and_methods(name, x):
    check(lambda T, v: getattr(T, name)(v), x, rtol=1e-8, fd_rtol=2e-5)
    check(lambda T, v: getattr(v, name)(), x, rtol=1e-8, fd_rtol=2e-5)


def test_float32_stays_float32_and_ints_become_float():
    x = torch.tensor([0.5, 1.5])
    for name in ("erf", "gammaln", "digamma", "i0e", "ndtri"):
        assert getattr(torch.special, name)(x / 2).dtype == torch.float32
    assert torch.special.multigammaln(x + 2, 2).dtype == torch.float32
    assert torch.special.erf(torch.tensor([1, 2])).dtype == torch.float32


def test_second_derivative():
    x = torch.tensor([0.7, 1.9], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.special.gammaln(x).sum(), x, create_graph=True)
    (h,) = torch.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(h.numpy(), torch.special.polygamma(1, x).detach().numpy(), rtol=1e-10)


def test_functions_gradc_lacks_say_so():
    with pytest.raises(NotImplementedError, match="airy_ai"):
        torch.special.airy_ai(torch.ones(1))
    with pytest.raises(RuntimeError, match="negative n"):
        torch.special.polygamma(-1, torch.ones(1))
