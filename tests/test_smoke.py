"""End-to-end: the tutorial loss's gradient from gradc against central finite differences."""
import numpy as np

import gradc


def loss(x, y, w, b):
    z = x @ w + b
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def central_difference(f, args, i, h=1e-6):
    base = [np.array(a, dtype=np.float64, copy=True) for a in args]
    grad = np.zeros_like(base[i])
    for idx in np.ndindex(base[i].shape):
        plus = [a.copy() for a in base]
        minus = [a.copy() for a in base]
        plus[i][idx] += h
        minus[i][idx] -= h
        grad[idx] = (f(*plus) - f(*minus)) / (2 * h)
    return grad


def test_tutorial_loss_gradient_matches_finite_differences():
    rng = np.random.default_rng(1)
    args = [np.ones(5), np.zeros(3), rng.standard_normal((5, 3)), rng.standard_normal(3)]
    w_bar, b_bar = gradc.grad(loss, wrt=("w", "b"))(*args)
    np.testing.assert_allclose(w_bar, central_difference(loss, args, 2), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(b_bar, central_difference(loss, args, 3), rtol=1e-6, atol=1e-9)
    assert w_bar.shape == (5, 3) and w_bar.dtype == np.float64
