"""The eager fast lanes for unary ops and basic indexing, and the tape of an op given one tensor twice.

Each lane must give the bits the general path (``record``) gives: the same values, the same
gradients, the same node names, the same view and in-place rules. The general path is reached
by switching the lane off (it returns None), so every case is compared with it, and with
central finite differences.
"""
import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade import fast_ops

UNARY = [("exp", "ExpBackward0"), ("log", "LogBackward0"), ("tanh", "TanhBackward0"), ("sin", "SinBackward0"),
         ("cos", "CosBackward0"), ("sqrt", "SqrtBackward0"), ("neg", "NegBackward0"), ("abs", "AbsBackward0"),
         ("sigmoid", "SigmoidBackward0"), ("relu", "ReluBackward0")]


def _run(name, data, weights):
    x = torch.tensor(data, requires_grad=True)
    y = getattr(torch, name)(x)
    (y * torch.tensor(weights)).sum().backward()
    return y, x.grad


def _general(monkeypatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(fast_ops, "unary", lambda *a, **k: None)
        m.setattr(fast_ops, "basic_view", lambda *a, **k: None)
        return fn(*args)


@pytest.mark.parametrize("name,node", UNARY)
@pytest.mark.parametrize("seed", range(3))
def test_unary_lane_gives_the_general_paths_bits(monkeypatch, name, node, seed):
    rng = np.random.default_rng(seed)
    dtype = (np.float32, np.float64)[seed % 2]
    shape = [(), (5,), (3, 4)][seed]
    data = rng.uniform(0.2, 3.0, shape).astype(dtype) * (1 if name in ("log", "sqrt") else rng.choice([-1, 1], shape))
    weights = rng.standard_normal(shape).astype(dtype)
    y, g = _run(name, data, weights)
    y0, g0 = _general(monkeypatch, _run, name, data, weights)
    assert type(y.grad_fn).__name__ == type(y0.grad_fn).__name__ == node
    assert y.dtype == y0.dtype and np.array_equal(y.detach().numpy(), y0.detach().numpy())
    assert np.array_equal(g.numpy(), g0.numpy())
    # and against central differences of the op itself (float64)
    f = {"sigmoid": lambda v: 1 / (1 + np.exp(-v)), "relu": lambda v: np.maximum(v, 0), "neg": np.negative}.get(
        name, getattr(np, name, None))
    d = data.astype(np.float64)
    eps = 1e-6
    numeric = (f(d + eps) - f(d - eps)) / (2 * eps) * weights
    np.testing.assert_allclose(g.numpy(), numeric, rtol=1e-4 if dtype == np.float32 else 1e-6, atol=1e-5)


def test_unary_lane_second_order_and_saved_output_rules():
    x = torch.tensor([0.3, -1.2, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad(torch.sigmoid(x).sum(), x, create_graph=True)
    g.sum().backward()
    s = 1 / (1 + np.exp(-x.detach().numpy()))
    np.testing.assert_allclose(g.detach().numpy(), s * (1 - s), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), s * (1 - s) * (1 - 2 * s), rtol=1e-12)
    y = torch.exp(x)
    y.add_(1)  # exp saves its output: torch refuses the backward
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    with torch.no_grad():
        assert torch.tanh(x).grad_fn is None and not torch.tanh(x).requires_grad


def _index(data, key, weights):
    x = torch.tensor(data, requires_grad=True)
    y = x * 1.0
    v = y[key]
    (v * torch.tensor(weights)).sum().backward()
    return v, x.grad


@pytest.mark.parametrize("seed", range(8))
def test_index_lane_gives_the_general_paths_bits(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    shape = tuple(rng.integers(1, 5, rng.integers(1, 4)))
    data = rng.standard_normal(shape)
    n = shape[0]
    keys = [int(rng.integers(-n, n)), slice(int(rng.integers(-n, n)), None), slice(None, None, 2),
            slice(int(rng.integers(0, n)), int(rng.integers(0, n + 2)))]
    for key in keys:
        weights = rng.standard_normal(data[key].shape)
        v, g = _index(data, key, weights)
        v0, g0 = _general(monkeypatch, _index, data, key, weights)
        assert type(v.grad_fn).__name__ == type(v0.grad_fn).__name__
        assert type(v.grad_fn).__name__ == ("SelectBackward0" if type(key) is int else "SliceBackward0")
        assert np.array_equal(v.detach().numpy(), data[key]) and np.array_equal(v0.detach().numpy(), data[key])
        expected = np.zeros(shape)
        expected[key] = weights
        assert np.array_equal(g.numpy(), expected) and np.array_equal(g0.numpy(), expected)


def test_index_lane_views_share_storage_and_versions():
    x = torch.zeros(3, 4)
    row = x[1]
    row.add_(2)  # a write through the view reaches the base
    assert x[1, 0].item() == 2 and x._version == row._version == 1
    x[2].fill_(5)
    assert x.sum().item() == 8 + 20
    with pytest.raises(IndexError, match="index 3 is out of bounds for dimension 0 with size 3"):
        x[3]
    assert list(x[-1].shape) == [4] and x[-1][0].item() == 5
    leaf = torch.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        leaf[0].mul_(2)
    assert [float(v) for v in torch.tensor([1.0, 2.0, 3.0])] == [1.0, 2.0, 3.0]  # iteration by index


def test_cat_of_one_tensor_twice_sums_both_slots():
    # GradBench's lstm: torch.cat((x, h, x, h)) * w + b
    rng = np.random.default_rng(0)
    xs, hs, ws = rng.standard_normal(3), rng.standard_normal(3), rng.standard_normal(12)
    x = torch.tensor(xs, requires_grad=True)
    h = torch.tensor(hs, requires_grad=True)
    (torch.cat((x, h, x, h)) * torch.tensor(ws)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ws[0:3] + ws[6:9], rtol=1e-15)
    np.testing.assert_allclose(h.grad.numpy(), ws[3:6] + ws[9:12], rtol=1e-15)
    # two tensors on one array (a view that is the same array object) keep their own edges
    a = torch.tensor(xs, requires_grad=True)
    b = a.view(3) * 1.0
    (torch.cat((a, b, a)) ** 2).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), 6 * xs, rtol=1e-15)
