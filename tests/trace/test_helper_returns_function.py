"""A helper that returns a function closing over its traced values (a pullback from ``gradc.vjp``, a closure it
built) is traced in place rather than kept as a call: the function it returns is called later, outside the
helper, and reads those values. Checked against central differences."""
import numpy as np
import pytest
from finite_differences import central_gradient

import gradc


def scaled_by(x):
    factor = np.sin(x) * 2.0 + x * x  # traced values the returned closure reads
    offset = np.exp(x * 0.1) - 1.0

    def apply(v):
        return v * factor + offset
    return apply


def pullback_of(f, x):
    out, vjp_fn = gradc.vjp(f, x)
    return lambda ct: vjp_fn(ct)[0], out


def uses_closure(x):
    return np.sum(scaled_by(x)(x * 3.0) ** 2)


def uses_pullback(x):
    pull, out = pullback_of(lambda a: np.tanh(a) * a, x)
    return np.sum(pull(np.cos(x)) * out)


@pytest.mark.parametrize("f", [uses_closure, uses_pullback])
def test_gradient_through_a_returned_function(f):
    x = np.array([0.3, -0.8, 1.1])
    np.testing.assert_allclose(gradc.grad(f)(x), central_gradient(f, x), rtol=1e-6, atol=1e-8)
    value, tangent = gradc.jvp(f, (x,), (np.ones(3),))
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(np.sum(central_gradient(f, x)), rel=1e-6)


def test_a_returned_function_helper_is_listed_as_inlined():
    from gradc.trace.calls import INLINED
    INLINED.clear()
    gradc.trace(uses_closure, np.ones(2))
    assert any(name == "scaled_by" and "returns a function" in why for _, name, why in INLINED)


def make_vjp(fun):
    """autograd's ``make_vjp(fun)(x) -> (vjp, value)``, written on gradc.vjp."""
    def at(x):
        out, vjp_fn = gradc.vjp(fun, x)

        def vjp(ct):
            return vjp_fn(ct)[0]
        return vjp, out
    return at


def test_forward_mode_over_a_pullback_a_helper_returned():
    f = lambda x: np.array([x, x * 1.0, np.sin(x) + 2.5])  # noqa: E731
    second = lambda xv: make_vjp(lambda a: f(a))(xv[0])[0](xv[1])  # noqa: E731
    x, v = 0.7, np.array([1.0, -2.0, 0.5])
    value, tangent = gradc.jvp(second, ((x, v),), ((1.0, np.zeros(3)),))
    assert value == pytest.approx(1.0 - 2.0 + 0.5 * np.cos(x))
    assert tangent == pytest.approx(-0.5 * np.sin(x))
