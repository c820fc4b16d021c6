"""The other ``numpy.polynomial`` bases (Chebyshev, Legendre, both Hermites, Laguerre) on traced values: values
against NumPy, gradients against central differences, the C target."""
from __future__ import annotations

import numpy as np
import numpy.polynomial.chebyshev as C
import numpy.polynomial.hermite as H
import numpy.polynomial.hermite_e as HE
import numpy.polynomial.laguerre as L
import numpy.polynomial.legendre as LEG
import pytest
from finite_differences import central_gradient as fd_grad

import gradc

X = np.linspace(-0.9, 1.3, 9)
MODULES = {"cheb": C, "leg": LEG, "herm": H, "herme": HE, "lag": L}


def _cases(prefix, module):
    val, vander, fit = (getattr(module, prefix + kind) for kind in ("val", "vander", "fit"))
    return {
        f"{prefix}val": lambda c: val(X, c),
        f"{prefix}val_2d": lambda c: np.concatenate([val(X[:3], np.reshape(c[:6], (3, 2))).ravel(),
                                                     val(c[:2], c[2:5])]),
        f"{prefix}val_no_tensor": lambda c: val(np.array([0.3, -0.6]), np.reshape(c[:6], (3, 2)), tensor=False),
        f"{prefix}vander": lambda c: vander(c[:4], 4),
        f"{prefix}fit": lambda c: fit(X, np.sin(c[0] * X) + c[1], 3),
        f"{prefix}fit_weighted": lambda c: fit(X, np.cos(X) * c[2], 2, w=np.linspace(1.0, 2.0, 9)),
    }


CASES = {name: f for prefix, module in MODULES.items() for name, f in _cases(prefix, module).items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_numpy_and_central_differences(name):
    f = CASES[name]
    c = np.random.default_rng(len(name)).uniform(0.5, 1.5, 6) * np.array([1, -1, 1, 1, -1, 1])
    np.testing.assert_allclose(gradc.jit(f)(c), f(c), rtol=1e-10, atol=1e-11)
    w = np.random.default_rng(3).standard_normal(np.shape(f(c)))
    loss = lambda c: np.sum(w * f(c))  # noqa: E731
    np.testing.assert_allclose(gradc.grad(loss)(c), fd_grad(loss, c), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["chebval", "legfit", "hermeval_2d"])
def test_c_target(name):
    f = CASES[name]
    c = np.random.default_rng(1).uniform(0.5, 1.5, 6)
    np.testing.assert_allclose(gradc.jit(f, target="c")(c), f(c), rtol=1e-10, atol=1e-11)
    loss = lambda c: np.sum(f(c))  # noqa: E731
    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(c), fd_grad(loss, c), rtol=1e-6, atol=1e-7)


def test_through_the_package_name():
    def f(c):
        return np.polynomial.chebyshev.chebval(0.3, c) + np.polynomial.legendre.legval(0.3, c)

    c = np.array([1.0, -0.5, 2.0])
    np.testing.assert_allclose(gradc.jit(f)(c), f(c), rtol=1e-14)
