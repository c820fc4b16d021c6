"""``np.i0`` on traced values (scipy.special.i0's op): values against NumPy, gradients against the closed
form d/dx i0 = i1 (SciPy's i1; NumPy's i0 is too noisy at 1e-12 for central differences), both targets."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special

import gradc


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_numpy_i0(target):
    x = np.array([-2.5, -0.3, 0.0, 0.7, 4.0, 11.0])
    np.testing.assert_allclose(gradc.jit(np.i0, target=target)(x), np.i0(x), rtol=1e-13)

    def f(x):
        return np.sum(np.i0(x) * np.arange(1.0, 7.0))

    np.testing.assert_allclose(gradc.jit(gradc.grad(f), target=target)(x), scipy.special.i1(x) * np.arange(1.0, 7.0),
                               rtol=1e-12, atol=1e-14)
