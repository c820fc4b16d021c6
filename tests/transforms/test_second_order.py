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


# ---------------------------------------------------------------- every op of the per-op table, second order
from op_cases import DIFF_CASES, cotangent_like, make_inputs, make_loss, numpy_value, seed_of  # noqa: E402


def first_float64_array(args):
    for i, a in enumerate(args):
        if isinstance(a, np.ndarray) and a.dtype == np.float64:
            return i
    return None


SECOND_ORDER_CASES = [c for c in DIFF_CASES if first_float64_array(make_inputs(c)) is not None]


@pytest.mark.parametrize("case", SECOND_ORDER_CASES, ids=lambda c: c.id)
def test_hessian_vector_product_per_op(case):
    """grad of <grad(loss), v> (gradc inside gradc) against central differences of gradc's gradient."""
    args = make_inputs(case)
    i = first_float64_array(args)
    rng = np.random.default_rng(seed_of(case.id) + 3)
    ct = cotangent_like(numpy_value(case.fn, args), rng)
    # a smooth non-linear outer function, so that linear ops still have a non-zero second derivative
    loss = make_loss(lambda *a: np.sin(case.fn(*a)), len(args))
    g = gradc.grad(loss, wrt=f"a{i}")
    v = rng.standard_normal(args[i].shape)

    def directional(a):
        full = list(args)
        full[i] = a
        return np.sum(g(*full, ct) * v)

    hv = gradc.grad(directional)(args[i])
    assert hv.shape == args[i].shape and hv.dtype == np.float64
    h = 1e-5

    def grad_at(a):
        full = list(args)
        full[i] = a
        return g(*full, ct)

    # the five-point stencil (error O(h^4)): the Bessel and gamma cases curve steeply near their poles
    fd = (8 * (grad_at(args[i] + h * v) - grad_at(args[i] - h * v))
          - (grad_at(args[i] + 2 * h * v) - grad_at(args[i] - 2 * h * v))) / (12 * h)
    scale = 1.0 + float(np.max(np.abs(fd)))
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6 * scale)
