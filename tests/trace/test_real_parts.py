"""np.fabs, np.real, np.imag and the conjugate of gradc's (real) traced values, against NumPy and central differences.

>>> import numpy as np, gradc
>>> float(gradc.grad(lambda x: np.sum(np.fabs(x)))(np.array([-2.0, 3.0]))[0])
-1.0
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from tests.finite_differences import central_gradient

CASES = {
    "fabs": lambda x: np.sum(np.fabs(x) * x),
    "real_imag": lambda x: np.sum(np.real(x) ** 2 + np.imag(x)),
    "conj": lambda x: np.sum(np.conj(x) * np.conjugate(x) * x),
    "attributes": lambda x: np.sum(x.real * x.conj() + x.imag * 3.0 + x.conjugate()),
    "fabs_of_ints": lambda x: np.sum(np.fabs(np.arange(-1, 2)) * x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_and_gradient_agree_with_numpy(name):
    f = CASES[name]
    x = np.random.default_rng(len(name)).uniform(-1.5, 1.5, 3)
    value, grad = gradc.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(f, x), rtol=1e-6, atol=1e-8)


def test_fabs_of_integers_is_float_as_in_numpy():
    out = gradc.jit(lambda k: np.fabs(k))(np.array([-2, 3]))
    assert out.dtype == np.float64 and out.tolist() == [2.0, 3.0]
