"""Constant cotangents stay scalars and the adjoint of ``x[:, None]`` is a reshape: the emitted gradient builds
no ``np.broadcast_to`` of a constant nor a zero array for them; values and gradients as before (central
differences) on random shapes."""
from __future__ import annotations

import numpy as np

import gradc
from tests.finite_differences import central_gradient


def pairs(a, b):
    return np.sum(a * a, 1)[None, :] + np.sum(b * b, 1)[:, None] - 2.0 * (b @ a.T)


def nearest_cost(b, a):
    return np.min(pairs(a, b), axis=0).sum()


def spread(b, a):
    return np.sum(np.tanh(pairs(a, b)) * np.arange(a.shape[0])[None, :])


def test_adjoints_of_new_axes_and_constant_seeds_are_not_arrays():
    rng = np.random.default_rng(5)
    for _ in range(6):
        k, n, d = (int(v) for v in rng.integers(2, 7, 3))
        a, b = rng.random((n, d)), rng.random((k, d))
        for f in (nearest_cost, spread):
            for mode in ("grad", "hvp"):
                compiled = gradc.compile(f, b, a, mode=mode)
                assert "np.broadcast_to(1.0" not in compiled.source
                assert "np.zeros" not in compiled.source, compiled.source
            g = gradc.compile(f, b, a).grad(b, a)
            np.testing.assert_allclose(g, central_gradient(lambda v, a=a, f=f: f(v, a), b), rtol=1e-6, atol=1e-7)
