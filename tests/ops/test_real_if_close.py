"""``np.real_if_close`` in traced code: the value itself for real input (NumPy's rule), a refusal naming the
user's line for traced complex input (the dtype would depend on the values; JAX has no real_if_close), and
NumPy's own result for a constant complex array."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_real_input_is_itself(target):
    def f(x):
        return np.sum(np.real_if_close(x) ** 3)

    x = np.array([0.5, -1.2, 2.0])
    np.testing.assert_allclose(gradc.jit(gradc.grad(f), target=target)(x), fd_grad(f, x), rtol=1e-7)


def test_traced_complex_refused_at_the_users_line():
    with pytest.raises(GradcError, match="depends on the values") as info:
        gradc.jit(lambda x: np.real_if_close(x * (1 + 0j)))(np.ones(3))
    assert "test_real_if_close.py" in str(info.value) and "np.real(z)" in str(info.value)


def test_constant_complex_follows_numpy():
    z = np.array([2.1 + 4e-14j, 5.2 + 3e-15j])
    got = gradc.jit(lambda x: x * np.real_if_close(z, tol=1000))(np.ones(2))
    np.testing.assert_array_equal(got, np.real_if_close(z, tol=1000))
    assert got.dtype == np.float64
