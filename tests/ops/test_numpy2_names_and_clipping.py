"""``np.linalg.cross`` (NumPy 2's name: 3-vectors along ``axis``) and ``np.corrcoef``'s clip to [-1, 1]
(NumPy clips rounding above 1), on both targets: values against NumPy, gradients against central
differences."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError

R = np.random.default_rng(2024)
TARGETS = ("numpy", "c")


@pytest.mark.skipif(not hasattr(np.linalg, "cross"), reason="np.linalg.cross is NumPy 2's")
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(3))
def test_linalg_cross_value_and_gradient(target, seed):
    rng = np.random.default_rng(seed)
    shape, axis = [((3,), -1), ((4, 3), -1), ((3, 2), 0), ((2, 3, 5), 1)][seed + (seed > 0)]
    b = rng.standard_normal(shape)
    w = rng.standard_normal(shape)

    def f(a):
        return np.sum(w * np.linalg.cross(a, b, axis=axis))

    a = rng.standard_normal(shape)
    np.testing.assert_allclose(gradc.jit(lambda a: np.linalg.cross(a, b, axis=axis), target=target)(a),
                               np.linalg.cross(a, b, axis=axis), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(gradc.jit(gradc.grad(f), target=target)(a), fd_grad(f, a), rtol=1e-6, atol=1e-8)


@pytest.mark.skipif(not hasattr(np.linalg, "cross"), reason="np.linalg.cross is NumPy 2's")
def test_linalg_cross_refuses_2_vectors_as_numpy_does():
    with pytest.raises(ValueError):
        np.linalg.cross(np.ones(2), np.ones(2))
    with pytest.raises(GradcError, match="3-vectors"):
        gradc.jit(lambda a: np.linalg.cross(a, np.ones(2)))(np.ones(2))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", range(6))
def test_corrcoef_is_clipped_to_unit_interval(target, seed):
    """Nearly collinear rows: NumPy's unclipped coefficients round above 1; gradc's equal NumPy's clipped ones."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(7)
    rows = np.stack([x, (seed + 1.5) * x + 0.1, -3.0 * x + 1e-9 * rng.standard_normal(7)])
    got = gradc.jit(np.corrcoef, target=target)(rows)
    np.testing.assert_allclose(got, np.corrcoef(rows), rtol=0, atol=4e-16)
    assert np.all(np.abs(got) <= 1.0)


def test_corrcoef_unclipped_rounding_exceeds_one_somewhere():
    """The clip is not vacuous: some collinear rows give |r| > 1 before clipping (cov / outer(std, std))."""
    found = False
    for seed in range(200):
        x = np.random.default_rng(seed).standard_normal(7)
        c = np.cov(np.stack([x, 3.7 * x + 0.1]))
        d = np.sqrt(np.diag(c))
        found |= bool(np.any(np.abs(c / d[:, None] / d[None, :]) > 1.0))
    assert found


@pytest.mark.parametrize("target", TARGETS)
def test_corrcoef_gradient_inside_the_interval(target):
    x = R.standard_normal((3, 6))
    w = R.standard_normal((3, 3))

    def f(x):
        return np.sum(w * np.corrcoef(x))

    np.testing.assert_allclose(gradc.jit(gradc.grad(f), target=target)(x), fd_grad(f, x), rtol=1e-6, atol=1e-8)


def test_complex_corrcoef_clips_both_parts():
    z = R.standard_normal((2, 5)) + 1j * R.standard_normal((2, 5))
    z[1] = (2 - 1j) * z[0]
    got = gradc.jit(np.corrcoef)(z)
    np.testing.assert_allclose(got, np.corrcoef(z), atol=1e-15)
    assert np.all(np.abs(got.real) <= 1) and np.all(np.abs(got.imag) <= 1)
