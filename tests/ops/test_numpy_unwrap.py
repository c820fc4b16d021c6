"""``np.unwrap`` on traced phases: values against NumPy (jumps folded at every size, ``discont``, ``period``,
``axis``), derivative 1 (the corrections are piecewise constant) against central differences, both targets."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as fd_grad

import gradc

OPTIONS = [{}, {"discont": 4.0}, {"period": 6.0}, {"axis": 0}, {"discont": 1.0}]


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("seed", range(5))
def test_unwrap(seed, target):
    rng = np.random.default_rng(seed)
    phase = np.cumsum(rng.uniform(-2.0, 2.0, (4, 9)), axis=1)
    wrapped = np.mod(phase + np.pi, 2 * np.pi) - np.pi
    options = OPTIONS[seed]
    np.testing.assert_allclose(gradc.jit(lambda p: np.unwrap(p, **options), target=target)(wrapped),
                               np.unwrap(wrapped, **options), rtol=1e-13, atol=1e-13)
    w = rng.standard_normal(wrapped.shape)

    def f(p):
        return np.sum(w * np.unwrap(p, **options))

    np.testing.assert_allclose(gradc.jit(gradc.grad(f), target=target)(wrapped), fd_grad(f, wrapped), rtol=1e-6,
                               atol=1e-8)
