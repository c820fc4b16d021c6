"""Nested derivatives whose inner function closes over an outer traced value, and perturbation confusion.

The inner transform treats the enclosing values it reads as constants; the enclosing transform then
differentiates through the inlined inner derivative. The classic confusion test (Siskind & Pearlmutter,
"Perturbation confusion and referential transparency"): d/dx [x * d/dy (x + y)] = 1 at every x (a
system confusing the two perturbations answers 2). Values are derived by hand below each case and
checked against central finite differences of plain NumPy formulas.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from tests.finite_differences import central_gradient

g = gradc


@pytest.mark.parametrize("x", [-2.0, 0.0, 0.5, 3.0])
def test_the_classic_perturbation_confusion_case_is_one(x):
    # d/dy (x + y) = 1, so the outer function is x * 1 and its derivative 1
    assert g.grad(lambda x: x * g.grad(lambda y: x + y)(x))(x) == pytest.approx(1.0)
    assert g.grad(lambda x: x * g.grad(lambda y: x + y)(2.0))(x) == pytest.approx(1.0)


@pytest.mark.parametrize("x", [-1.5, 0.7, 3.0])
def test_perturbation_confusion_in_forward_mode_and_mixed(x):
    jvp_inner = lambda x: g.jvp(lambda y: x + y, (x,), (1.0,))[1]  # noqa: E731 - 1
    assert g.jvp(lambda x: x * jvp_inner(x), (x,), (1.0,))[1] == pytest.approx(1.0)  # jvp of jvp
    assert g.grad(lambda x: x * jvp_inner(x))(x) == pytest.approx(1.0)  # grad of jvp
    inner_grad = lambda x: g.grad(lambda y: x + y)(x)  # noqa: E731
    assert g.jvp(lambda x: x * inner_grad(x), (x,), (1.0,))[1] == pytest.approx(1.0)  # jvp of grad


@pytest.mark.parametrize("x", [-1.0, 0.3, 3.0])
def test_grad_of_grad_closing_over_the_outer_value(x):
    # d/dy (x y^2) = 2 x y, at y = x: 2 x^2, whose derivative is 4 x
    assert g.grad(lambda x: g.grad(lambda y: x * y ** 2)(x))(x) == pytest.approx(4 * x)
    # the inner point fixed at 2: 2 x * 2 = 4 x, derivative 4
    assert g.grad(lambda x: g.grad(lambda y: x * y ** 2)(2.0))(x) == pytest.approx(4.0)


def test_siskind_pearlmutter_nested_derivative_of_a_product():
    # D(λx. x * D(λy. x * y)(2))(1): the inner derivative is x, the outer function x^2, its derivative 2x = 2
    assert g.grad(lambda x: x * g.grad(lambda y: x * y)(2.0))(1.0) == pytest.approx(2.0)
    # D(λx. D(λy. x * y)(x) * D(λz. x + z)(x)): x * 1 -> 1
    assert g.grad(lambda x: g.grad(lambda y: x * y)(x) * g.grad(lambda z: x + z)(x))(5.0) == pytest.approx(1.0)


def test_three_levels_of_nesting():
    # f(x) = d/dy [ d/dz (x * y * z^2) ] at y = z = x: d/dz = 2 x y z, d/dy = 2 x z -> 2 x^2; derivative 4 x
    def level3(x):
        def level2(y):
            return g.grad(lambda z: x * y * z ** 2)(x)
        return g.grad(level2)(x)

    assert g.grad(level3)(1.5) == pytest.approx(6.0)


def test_inner_reads_an_outer_array_and_values_computed_from_it():
    a = np.array([0.5, -1.0, 2.0])

    def outer(w):
        scale = np.sin(w)  # computed in the outer trace, read by the inner function
        inner = g.grad(lambda v: np.sum(scale * v ** 2))(w)  # 2 sin(w) w
        return np.sum(inner * w)  # 2 sum(sin(w) w^2)

    def reference(w):
        return 2 * np.sum(np.sin(w) * w ** 2)

    np.testing.assert_allclose(g.grad(outer)(a), central_gradient(reference, a), rtol=1e-6, atol=1e-8)


def test_hessian_vector_products_built_by_nesting():
    x = np.array([0.3, -0.4, 1.2])
    v = np.array([1.0, 2.0, -1.0])

    def f(x):
        return np.sum(np.sin(x) * x ** 2)

    def hvp_by_nesting(x, v):
        return g.jvp(g.grad(f), (x,), (v,))[1]  # forward over reverse

    def hvp_by_closure(x, v):
        return g.grad(lambda y: np.sum(g.grad(f)(y) * v))(x)  # reverse over reverse, v closed over

    hessian_diag = -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)  # f is separable: H is diagonal
    np.testing.assert_allclose(hvp_by_nesting(x, v), hessian_diag * v, rtol=1e-10)
    np.testing.assert_allclose(hvp_by_closure(x, v), hessian_diag * v, rtol=1e-10)
    np.testing.assert_allclose(g.hvp(f, (x,), (v,)), hessian_diag * v, rtol=1e-10)


def test_nested_transforms_inside_compiled_and_jitted_functions():
    def f(x):
        return g.grad(lambda y: x * y ** 2)(x) + g.jvp(lambda y: x * np.sin(y), (x,), (1.0,))[1]

    def reference(x):
        return 2 * x ** 2 + x * np.cos(x)

    c = g.compile(f, 1.3)
    assert c.forward(1.3) == pytest.approx(reference(1.3))
    assert c.grad(1.3) == pytest.approx(float(central_gradient(reference, 1.3)), rel=1e-6)
    assert g.jit(f)(0.7) == pytest.approx(reference(0.7))


def test_inner_vjp_jacobian_and_hvp_closing_over_the_outer_value():
    x = np.array([1.0, 2.0])
    # vjp of y -> x * y at x, pulled back with ones: x; summed times x: sum(x^2); gradient 2 x
    np.testing.assert_allclose(g.grad(lambda x: np.sum(g.vjp(lambda y: x * y, x)[1](np.ones(2))[0] * x))(x), 2 * x)
    # Jacobian of y -> x * y is diag(x): summed, sum(x); gradient ones
    np.testing.assert_allclose(g.grad(lambda x: np.sum(g.jacrev(lambda y: x * y)(x)))(x), np.ones(2))
    np.testing.assert_allclose(g.grad(lambda x: np.sum(g.jacfwd(lambda y: x * y)(x)))(x), np.ones(2))
    # hvp of y -> a * sum(y^3) at (1, 2) along e0: 6 a y0 = 6 a; derivative in a: 6
    got = g.grad(lambda a: g.hvp(lambda y: a * np.sum(y ** 3), (x,), (np.array([1.0, 0.0]),))[0])(2.0)
    assert got == pytest.approx(6.0)


def test_inner_function_returning_the_outer_value_unchanged():
    # d/dy (x) = 0 (the inner function ignores y); the outer function x + 0: derivative 1
    assert g.grad(lambda x: x + g.grad(lambda y: x + 0.0 * y)(x))(2.0) == pytest.approx(1.0)
    out = g.grad(lambda x: g.value_and_grad(lambda y: x)(3.0)[0] * x)(2.0)  # value x, times x: 2 x
    assert out == pytest.approx(4.0)


@pytest.mark.parametrize("seed", range(10))
def test_random_nested_closures_against_finite_differences(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(-2, 2, 2)
    point = float(rng.uniform(-1.5, 1.5))
    inner_ops = [(lambda x, y: x * y ** 2, lambda x, y: 2 * x * y),
                 (lambda x, y: np.sin(x * y), lambda x, y: x * np.cos(x * y)),
                 (lambda x, y: np.exp(a * y) * x, lambda x, y: a * np.exp(a * y) * x),
                 (lambda x, y: (x + b) * y ** 3, lambda x, y: 3 * (x + b) * y ** 2)]
    inner, d_inner = inner_ops[seed % len(inner_ops)]

    def f(x):
        return np.sin(x) * g.grad(lambda y: inner(x, y))(x * a + b)

    def reference(x):
        return np.sin(x) * d_inner(x, x * a + b)

    assert g.grad(f)(point) == pytest.approx(float(central_gradient(reference, point)), rel=1e-5, abs=1e-7)


def carried_through_a_loop(x, n):
    acc = x
    for _ in range(n):
        acc = acc + g.grad(lambda y: acc * y ** 2)(x)  # noqa: B023 - reads the carried value on purpose
    return acc


def inside_a_branch(x):
    if x > 0:
        return g.grad(lambda y: x * y ** 2)(x)
    return x


def inside_a_while_loop(x):
    s = x
    while s < 10.0:
        s = s + g.grad(lambda y: s * y)(x)  # noqa: B023 - d/dy (s y) = s: s doubles each trip
    return s


def test_inner_derivatives_inside_traced_loops_and_branches():
    # n = 2: acc1 = x + 2 x^2, acc2 = acc1 (1 + 2x); at x = 1: (1 + 4x)(1 + 2x) + 2 (x + 2x^2) = 21
    assert g.grad(carried_through_a_loop)(1.0, 2) == pytest.approx(21.0)
    assert g.grad(inside_a_branch)(1.5) == pytest.approx(6.0)  # 2 x^2 -> 4 x
    assert g.grad(inside_a_branch)(-1.5) == pytest.approx(1.0)
    assert g.grad(inside_a_while_loop)(1.5) == pytest.approx(8.0)  # 1.5 -> 3 -> 6 -> 12: s = 8 x


def test_vmap_of_a_nested_derivative():
    xs = np.array([1.0, 2.0, -3.0])
    np.testing.assert_allclose(g.vmap(lambda x: g.grad(lambda y: x * y ** 2)(x))(xs), 2 * xs ** 2)


def test_vmap_and_jit_of_a_function_closing_over_the_outer_value():
    xs = np.array([1.0, 2.0, 3.0])

    def through_vmap(a, xs):
        return np.sum(g.vmap(lambda x: a * x ** 2)(xs))  # a sum(x^2): derivative 14

    def through_jit(a, xs):
        return np.sum(g.jit(lambda x: np.sin(a) * x ** 2)(xs))  # sin(a) 14: derivative 14 cos(a)

    def gradients_mapped(a, xs):
        return np.sum(g.vmap(lambda x: g.grad(lambda y: a * y ** 3)(x))(xs))  # 3 a sum(x^2): derivative 42

    assert g.grad(through_vmap)(2.0, xs) == pytest.approx(14.0)
    assert g.grad(through_jit)(0.5, xs) == pytest.approx(14.0 * np.cos(0.5))
    assert g.grad(gradients_mapped)(2.0, xs) == pytest.approx(42.0)
