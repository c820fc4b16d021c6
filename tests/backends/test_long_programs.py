"""Nothing in the compiler recurses in proportion to program length (NumPy target).

A straight-line function of 5,000 statements (1,500 in the default run: the 5,000 take
minutes through hvp; ``GRADC_FUZZ_LONG=1`` runs them) compiles through grad, jvp and hvp,
scalar and array, at Python's default recursion limit, and agrees with the user's function
and central differences; and the deepest Python stack while compiling does not grow with
the number of statements (measured on short programs: a recursion per statement, per
equation or per nested expression shows as a deeper stack for the longer one).
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import gradc

STATEMENTS = 5000 if os.environ.get("GRADC_FUZZ_LONG") == "1" else 1500


def chain(n: int, kind: str):
    """``y = np.sin(y) + x`` ``n`` times: each statement reads the previous one (and ``x``, whose cotangent
    sums ``n`` terms)."""
    body = "    y = np.sin(y) * 0.5 + x\n" * n
    result = "    return np.sum(y * y)\n" if kind == "array" else "    return y * y\n"
    namespace = {"np": np}
    exec(f"def f(x):\n    y = x\n{body}{result}", namespace)
    return namespace["f"]


def _point(kind):
    return (np.array([0.3, -0.2, 0.7]), np.array([1.0, 0.5, -1.0])) if kind == "array" else (0.3, 1.0)


def _central(f, x, direction, h=1e-6):
    return (f(x + h * direction) - f(x - h * direction)) / (2 * h)


@pytest.fixture(params=["scalar", "array"])
def kind(request):
    return request.param


def test_a_long_straight_line_function_through_grad_jvp_and_hvp(kind):
    f = chain(STATEMENTS, kind)
    x, v = _point(kind)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)  # CPython's default, whatever the test runner set
    value_and_grad = gradc.value_and_grad(f)
    try:
        value, grad = value_and_grad(x)
        primal, tangent = gradc.jvp(f, (x,), (v,))
        hv = gradc.hvp(f, (x,), (v,))
    finally:
        sys.setrecursionlimit(limit)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(primal, f(x), rtol=1e-12)
    np.testing.assert_allclose(np.sum(grad * v), _central(f, x, v), rtol=1e-6)
    np.testing.assert_allclose(tangent, _central(f, x, v), rtol=1e-6)
    np.testing.assert_allclose(hv, _central(lambda z: value_and_grad(z)[1], x, v, h=1e-5), rtol=1e-5, atol=1e-8)


def _deepest_stack(fn) -> int:
    """The deepest Python call stack while ``fn()`` runs, counted from here."""
    state = {"depth": 0, "deepest": 0}

    def profile(frame, event, arg):
        if event == "call":
            state["depth"] += 1
            state["deepest"] = max(state["deepest"], state["depth"])
        elif event == "return":
            state["depth"] -= 1

    sys.setprofile(profile)
    try:
        fn()
    finally:
        sys.setprofile(None)
    return state["deepest"]


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_the_stack_does_not_deepen_with_program_length(kind, mode):
    x, v = _point(kind)

    def compile_chain(n):
        f = chain(n, kind)
        if mode == "grad":
            return lambda: gradc.grad(f)(x)
        if mode == "jvp":
            return lambda: gradc.jvp(f, (x,), (v,))
        return lambda: gradc.hvp(f, (x,), (v,))

    # 80 statements already nest inline expressions as deep as they go (40 operations)
    short, long = _deepest_stack(compile_chain(80)), _deepest_stack(compile_chain(240))
    # a bounded nesting (an inline expression of at most 40 operations) may differ by a few frames
    assert long <= short + 10, f"{mode} on {kind} code: {short} frames for 80 statements, {long} for 240"
