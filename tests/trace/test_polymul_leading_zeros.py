"""``np.polymul`` drops its operands' leading zeros (NumPy goes through ``poly1d``), so its result's length
depends on the values: constant operands are trimmed at trace time, traced ones must lead with a nonzero
coefficient, checked when the compiled code runs (``ValueError`` on both targets, never a longer result)."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c.build import find_compiler

TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(find_compiler() is None, reason="no C compiler"))]


@pytest.mark.parametrize("target", TARGETS)
def test_traced_operands_agree_with_numpy_and_refuse_a_leading_zero(target):
    def f(a, b):
        return np.sum(np.polymul(a, b) * np.arange(1.0, 7.0))

    rng = np.random.default_rng(4)
    compiled = gradc.compile(f, np.ones(3), np.ones(4), target=target, argnums=(0, 1))
    for _ in range(5):
        a, b = rng.uniform(0.5, 2.0, 3), rng.uniform(-2.0, 2.0, 4)
        value, (ga, gb) = compiled.value_and_grad(a, b)
        assert value == pytest.approx(f(a, b), rel=1e-12)
        np.testing.assert_allclose(ga, central_gradient(lambda v, b=b: f(v, b), a), rtol=1e-6)
        np.testing.assert_allclose(gb, central_gradient(lambda v, a=a: f(a, v), b), rtol=1e-6)
    for a, b in [(np.array([0.0, 1.0, 2.0]), np.ones(4)), (np.ones(3), np.array([0.0, 0.0, 1.0, 2.0]))]:
        with pytest.raises(ValueError, match="leading coefficient is 0"):
            compiled.value_and_grad(a, b)


@pytest.mark.parametrize("constant", [[0.0, 0.0, 1.0, 2.0], [0.0, 3.0], [0.0], [0.0, 0.0]])
def test_constant_operands_are_trimmed_as_numpy_trims_them(constant):
    c = np.array(constant)

    def f(a):
        return np.polymul(a, c) * 1.0

    a = np.array([1.5, -2.0, 0.5])
    np.testing.assert_array_equal(gradc.jit(f)(a), f(a))
