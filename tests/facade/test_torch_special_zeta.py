"""``torch.special.zeta(input, other)`` in the facade: gradc's Hurwitz ``zeta`` op, differentiable in ``other``.

Expectations were measured on torch 2.13.0 (CPU, float64) and are recorded here; the live torch comparison
runs only where torch is installed.
"""
import numpy as np
import pytest
import scipy.special

import gradc.torch as gt

X, Q = [2.0, 3.5, 1.5], [1.0, 0.5, 2.0]
TORCH_VALUE = [1.6449340668482266, 11.620804663441898, 1.6123753486854886]  # torch 2.13.0
TORCH_GRAD_Q = [-2.404113806319188, -79.8370970114494, -0.5122308858763756]  # torch 2.13.0


def test_values_and_q_gradient_match_recorded_torch():
    q = gt.tensor(Q, dtype=gt.float64, requires_grad=True)
    y = gt.special.zeta(gt.tensor(X, dtype=gt.float64), q)
    assert y.grad_fn.name() == "SpecialZetaBackward0"
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), TORCH_VALUE, rtol=1e-13)
    np.testing.assert_allclose(q.grad.numpy(), TORCH_GRAD_Q, rtol=1e-13)


def test_derivative_in_x_refused_as_torch_refuses():
    x = gt.tensor(X, requires_grad=True)
    with pytest.raises(NotImplementedError, match="the derivative for 'zeta' is not implemented"):
        gt.special.zeta(x, gt.tensor(Q)).sum().backward()


@pytest.mark.parametrize("seed", range(5))
def test_random_points_against_scipy_and_central_differences(seed):
    rng = np.random.default_rng(seed)
    x, q = rng.uniform(1.2, 6.0, 7), rng.uniform(0.2, 4.0, 7)
    qt = gt.tensor(q, requires_grad=True)
    y = gt.special.zeta(gt.tensor(x), qt)
    np.testing.assert_allclose(y.detach().numpy(), scipy.special.zeta(x, q), rtol=1e-12)
    y.sum().backward()
    h = 1e-6
    fd = (scipy.special.zeta(x, q + h) - scipy.special.zeta(x, q - h)) / (2 * h)
    np.testing.assert_allclose(qt.grad.numpy(), fd, rtol=1e-6)


def test_float32_keeps_dtype():
    y = gt.special.zeta(gt.tensor(X), gt.tensor(Q))
    assert y.dtype == gt.float32
    np.testing.assert_allclose(y.numpy(), TORCH_VALUE, rtol=1e-6)


def test_live_torch_agrees():
    torch = pytest.importorskip("torch")
    for dt in ("float32", "float64"):
        qt = torch.tensor(Q, dtype=getattr(torch, dt), requires_grad=True)
        want = torch.special.zeta(torch.tensor(X, dtype=getattr(torch, dt)), qt)
        want.sum().backward()
        qg = gt.tensor(Q, dtype=getattr(gt, dt), requires_grad=True)
        got = gt.special.zeta(gt.tensor(X, dtype=getattr(gt, dt)), qg)
        got.sum().backward()
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(qg.grad.numpy(), qt.grad.numpy(), rtol=1e-6)
