"""``solve_ivp(..., dense_output=True)`` and ``sol(t)`` at given times on traced values: values against SciPy's
dense output and the closed form (within the tolerances), gradients against the closed form and central
differences, both targets."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
from finite_differences import central_gradient as fd_grad

import gradc

TIMES = np.array([0.7, 0.2, 1.5, 1.0])  # unsorted, as sol(t) accepts


def decay(k):
    res = scipy.integrate.solve_ivp(lambda t, y: -k * y, (0.0, 2.0), np.array([1.0, 2.0]), dense_output=True,
                                    rtol=1e-10, atol=1e-12)
    return res.sol(TIMES)


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_dense_output_values(target):
    got = gradc.jit(decay, target=target)(0.8)
    exact = np.array([1.0, 2.0])[:, None] * np.exp(-0.8 * TIMES)
    np.testing.assert_allclose(got, exact, rtol=1e-8)
    np.testing.assert_allclose(got, decay(0.8), rtol=1e-7)


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_dense_output_gradient(target):
    def f(k):
        return np.sum(decay(k) * np.arange(1.0, 9.0).reshape(2, 4))

    exact = np.sum(np.array([1.0, 2.0])[:, None] * -TIMES * np.exp(-0.8 * TIMES) * np.arange(1.0, 9.0).reshape(2, 4))
    got = gradc.jit(gradc.grad(f), target=target)(0.8)
    np.testing.assert_allclose(got, exact, rtol=1e-6)
    np.testing.assert_allclose(got, fd_grad(f, 0.8), rtol=1e-5)


def test_dense_output_scalar_time_and_t_eval():
    def f(k):
        res = scipy.integrate.solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.array([1.0]), t_eval=[0.5, 1.0],
                                        dense_output=True, rtol=1e-10, atol=1e-12)
        return res.sol(0.25)[0] + res.y[0, -1]

    np.testing.assert_allclose(gradc.jit(f)(1.3), np.exp(-0.325) + np.exp(-1.3), rtol=1e-8)
