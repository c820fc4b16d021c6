"""Second derivatives: ``gradc.grad(gradc.grad(f))`` against finite differences.

Each function is checked against central differences of the first derivative
(``gradc.grad(f)``, itself checked against finite differences in the op table)
and against the second difference of ``f`` itself, which does not involve gradc.
"""
import numpy as np
import pytest

import gradc

FUNCTIONS = {
    "cube": (lambda x: x ** 3 - 2.0 * x, 0.7),
    "sin": (lambda x: np.sin(x), 0.4),
    "exp_sin": (lambda x: np.exp(np.sin(x)), 0.3),
    "log": (lambda x: np.log(x), 1.7),
    "sqrt": (lambda x: np.sqrt(x), 0.9),
    "tanh": (lambda x: np.tanh(2.0 * x), 0.2),
    "softplus": (lambda x: np.log1p(np.exp(x)), -0.5),
    "logistic": (lambda x: 1.0 / (1.0 + np.exp(-x)), 0.8),
    "arctan": (lambda x: np.arctan(x * x), 0.6),
    "cosh_sinh": (lambda x: np.cosh(x) * np.sinh(x), 0.5),
    "tan": (lambda x: np.tan(x), 0.3),
    "expm1_over": (lambda x: np.expm1(x) / (x * x + 1.0), 1.1),
    "power_float": (lambda x: x ** 2.5 + x ** -1, 1.3),
    "pow_variable_exponent": (lambda x: x ** x, 1.4),
    "logaddexp": (lambda x: np.logaddexp(x, 2.0 * x), 0.25),
    "abs_smooth_side": (lambda x: np.abs(x) ** 3, 0.8),
    "through_arrays": (lambda x: np.sum(np.sin(x * np.arange(1.0, 4.0)) ** 2), 0.35),
    "max_away_from_tie": (lambda x: np.maximum(x * x, 0.1) * x, 0.9),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_second_derivative_matches_finite_differences(name):
    f, x = FUNCTIONS[name]
    df = gradc.grad(f)
    d2f = gradc.grad(gradc.grad(f))
    h = 1e-5
    fd_of_grad = (df(x + h) - df(x - h)) / (2 * h)
    value = d2f(x)
    assert np.ndim(value) == 0
    assert abs(value - fd_of_grad) <= 1e-6 * (1 + abs(fd_of_grad)), (value, fd_of_grad)
    k = 1e-4
    second_difference = (f(x + k) - 2 * f(x) + f(x - k)) / k ** 2
    assert abs(value - second_difference) <= 1e-5 * (1 + abs(second_difference)), (value, second_difference)


def test_third_derivative():
    d3 = gradc.grad(gradc.grad(gradc.grad(lambda x: np.sin(x) * x)))
    x = 0.6
    # d^3/dx^3 x sin x = -3 sin x - x cos x
    assert abs(d3(x) - (-3 * np.sin(x) - x * np.cos(x))) < 1e-12


def test_hessian_vector_product_of_array_function():
    def f(w):
        return np.sum(np.tanh(w) ** 2) + np.prod(w)

    v = np.array([0.3, -1.0, 0.5])

    def directional(w):
        return np.sum(gradc.grad(f)(w) * v)

    w = np.array([0.2, -0.7, 1.1])
    hv = gradc.grad(directional)(w)
    h = 1e-5
    g = gradc.grad(f)
    fd = (g(w + h * v) - g(w - h * v)) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-8)
