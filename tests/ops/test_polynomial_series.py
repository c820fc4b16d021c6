"""``numpy.polynomial.polynomial`` functions and ``numpy.polynomial.Polynomial`` on traced coefficients: values
against NumPy itself on seeded random coefficients, gradients against central differences, the C target, the
run-time check where NumPy would trim trailing zeros, and from-imports."""
from __future__ import annotations

import numpy as np
import numpy.polynomial.polynomial as P
import pytest
from finite_differences import central_gradient as fd_grad
from numpy.polynomial import Polynomial

import gradc
from gradc.errors import GradcError

X = np.linspace(-1.3, 1.7, 7)

CASES = {
    "polyval": lambda c: P.polyval(X, c),
    "polyval_2d_tensor": lambda c: P.polyval(X[:3], np.reshape(c[:6], (3, 2))),
    "polyval_2d_no_tensor": lambda c: P.polyval(np.array([0.3, -0.7]), np.reshape(c[:6], (3, 2)), tensor=False),
    "polyval_traced_x": lambda c: P.polyval(c, np.array([0.5, -1.0, 2.0])),
    "polyder": lambda c: P.polyder(c, 2, scl=1.5),
    "polyder_axis": lambda c: P.polyder(np.reshape(c[:6], (2, 3)), axis=1),
    "polyder_too_many": lambda c: P.polyder(c[:2], 3),
    "polyint": lambda c: P.polyint(c, 2, k=[0.5, -1.0], lbnd=0.7, scl=0.5),
    "polyint_traced_k": lambda c: P.polyint(c[:3], 1, k=c[3], lbnd=c[4]),
    "polyint_axis": lambda c: P.polyint(np.reshape(c[:6], (3, 2)), axis=1),
    "polyadd_sub": lambda c: P.polyadd(c[:3], c[3:]) + P.polysub(c[3:], [1.0, 2.0, 0.0]),
    "polymul": lambda c: P.polymul(c[:3], c[3:]),
    "polymulx_pow": lambda c: P.polymulx(c[:2]) + P.polypow(c[2:4], 2)[:3],
    "polyvander": lambda c: P.polyvander(c[:4], 3),
    "polyfit": lambda c: P.polyfit(X, P.polyval(X, c[:3]) + 0.1 * np.sin(5 * X) * c[4], 2),
    "polyfit_weighted": lambda c: P.polyfit(X, np.cos(c[0] * X), 3, w=np.linspace(1.0, 2.0, 7)),
    "polyfromroots": lambda c: P.polyfromroots(c[:3]),
    "Polynomial_call": lambda c: Polynomial(c)(X),
    "Polynomial_domain": lambda c: Polynomial(c, domain=[0.0, 2.0])(X),
    "Polynomial_calculus": lambda c: Polynomial(c, domain=[-2.0, 3.0]).deriv(2)(X) + Polynomial(c).integ(lbnd=1.0)(X),
    "Polynomial_integ_k": lambda c: Polynomial(c[:3], domain=[0.0, 1.0]).integ(2, k=[1.0, c[4]], lbnd=0.5).coef,
    "Polynomial_arithmetic": lambda c: (Polynomial(c[:3]) * Polynomial(c[3:]) - 2.0 + c[0] * Polynomial(c[1:3]))(X),
    "Polynomial_pow_neg_div": lambda c: ((-Polynomial(c[:2])) ** 3 / 2.0 + 1.0 - Polynomial(c[2:4]))(X),
    "Polynomial_fit": lambda c: Polynomial.fit(X, np.exp(c[0] * X) + c[1], 3)(np.array([0.1, 0.9])),
    "Polynomial_fit_traced_x": lambda c: Polynomial.fit(X * c[0], np.cos(X), 2).coef,
    "Polynomial_identity": lambda c: (Polynomial.identity(domain=[0.0, 4.0]) * c[0])(X),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(2))
def test_against_numpy_and_central_differences(name, seed):
    f = CASES[name]
    c = np.random.default_rng(seed).uniform(0.5, 1.5, 6) * np.array([1, -1, 1, 1, -1, 1])
    np.testing.assert_allclose(gradc.jit(f)(c), f(c), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(seed + 3).standard_normal(np.shape(f(c)))

    def loss(c):
        return np.sum(w * f(c))

    np.testing.assert_allclose(gradc.grad(loss)(c), fd_grad(loss, c), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["polyval", "polyint", "polymul", "polyfit", "Polynomial_calculus",
                                  "Polynomial_fit"])
def test_c_target(name):
    f = CASES[name]
    c = np.random.default_rng(9).uniform(0.5, 1.5, 6)
    np.testing.assert_allclose(gradc.jit(f, target="c")(c), f(c), rtol=1e-10, atol=1e-12)

    def loss(c):
        return np.sum(f(c))

    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(c), fd_grad(loss, c), rtol=1e-6, atol=1e-7)


def test_trailing_zeros_checked_when_the_code_runs():
    f = gradc.jit(lambda a, b: P.polyadd(a, b))
    np.testing.assert_allclose(f(np.array([1.0, 2.0]), np.array([0.5, 1.0])), [1.5, 3.0])
    with pytest.raises(ValueError, match="drops trailing zero coefficients"):
        f(np.array([1.0, 2.0]), np.array([0.5, -2.0]))  # NumPy would return [1.5]
    # a constant operand is trimmed while tracing, as NumPy trims it
    g = lambda a: P.polymul(a, [1.0, 0.0])  # noqa: E731
    np.testing.assert_allclose(gradc.jit(g)(np.array([1.0, 2.0])), g(np.array([1.0, 2.0])))


def test_module_spellings_are_routed():
    def through_package(c):
        return np.polynomial.polynomial.polyval(0.5, c) + np.polynomial.Polynomial(c).deriv()(0.5)

    c = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(gradc.jit(through_package)(c), through_package(c), rtol=1e-14)


@pytest.mark.parametrize("call, match", [
    (lambda c: P.polyfit(X[:3], c, [0, 2]), "list of degrees"),
    (lambda c: P.polyder(c, -1), "order must be non-negative"),
    (lambda c: P.polypow(c, 20), r"power must be in \[0, 16\]"),
    (lambda c: Polynomial(c) / Polynomial(c), "division by a polynomial"),
    (lambda c: Polynomial(c, domain=[0.0, 1.0]) + Polynomial(c), "same domain and window"),
    (lambda c: Polynomial(c, domain=[0.0, 1.0, 2.0])(1.0), "domain must have two entries"),
])
def test_refusals(call, match):
    with pytest.raises(GradcError, match=match) as info:
        gradc.jit(call)(np.array([1.0, 2.0, 3.0]))
    assert "test_polynomial_series.py" in str(info.value)
