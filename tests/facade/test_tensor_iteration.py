"""Iterating a tensor (``for row in t``, Python's ``sum(t)``) as torch 2.13.0 does: ``iter(t.unbind(0))``, so the
elements are ``UnbindBackward0`` views that refuse in-place writes while grad mode is on, and a 0-d tensor refuses
to iterate. Values and gradients against real torch (seeded shapes) and central differences."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as gt

real = pytest.importorskip("torch")


def _program(T, data):
    x = T.tensor(data, requires_grad=True)
    y = x * 2.0
    rows = list(y)
    total = sum(T.exp(r).sum() for r in rows) + sum(y.reshape(-1), 1.5)
    total.backward()
    return rows, total, x.grad


@pytest.mark.parametrize("seed", range(6))
def test_iteration_matches_torch(seed):
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 4, size=int(rng.integers(1, 4))))
    data = rng.standard_normal(shape)
    rows, total, grad = _program(gt, data)
    rows_t, total_t, grad_t = _program(real, data)
    assert len(rows) == len(rows_t) == shape[0]
    for r, rt in zip(rows, rows_t):
        assert type(r.grad_fn).__name__ == type(rt.grad_fn).__name__ == "UnbindBackward0"
        assert tuple(r.shape) == tuple(rt.shape)
        np.testing.assert_allclose(r.detach().numpy(), rt.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(float(total.detach()), float(total_t.detach()), rtol=1e-12)
    np.testing.assert_allclose(grad.numpy(), grad_t.numpy(), rtol=1e-12)


def test_iteration_gradient_by_central_differences():
    data = np.random.default_rng(7).standard_normal((3, 2))

    def value(d):
        return sum(float(np.exp(2 * row).sum()) for row in d)
    _, _, grad = _program(gt, data)
    h = 1e-6
    numeric = np.zeros_like(data)
    for i in np.ndindex(*data.shape):
        e = np.zeros_like(data)
        e[i] = h
        numeric[i] = (value(data + e) - value(data - e)) / (2 * h)
    numeric += 2.0  # the second sum, over every element of y = 2 x
    np.testing.assert_allclose(grad.numpy(), numeric, rtol=1e-6, atol=1e-8)


def test_zero_dim_tensor_refuses_to_iterate():
    for T in (gt, real):
        with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
            iter(T.tensor(1.0))


def test_iterated_rows_refuse_in_place_writes_with_grad_mode_on():
    messages = []
    for T in (gt, real):
        y = T.zeros(3, 2, requires_grad=True) * 1
        row = next(iter(y))
        with pytest.raises(RuntimeError) as info:
            row.add_(1)
        messages.append(str(info.value))
        with T.no_grad():  # views made in no_grad mode may be written
            next(iter(y)).add_(1)
        assert float(y.detach()[0, 0]) == 1.0
    assert messages[0] == messages[1]


def test_iteration_of_a_plain_tensor_gives_views():
    x = gt.arange(6.0).reshape(3, 2)
    first = next(iter(x))
    first.mul_(10)
    assert x.tolist() == [[0.0, 10.0], [2.0, 3.0], [4.0, 5.0]]
    assert [r.tolist() for r in gt.zeros(0, 2)] == []


def test_classes_print_as_torch_prints_them():
    class Mine(gt.Tensor):
        pass
    for T in (gt, real):
        assert repr(type(T.zeros(1))) == "<class 'torch.Tensor'>"
        assert str(type(T.nn.Parameter(T.zeros(1)))) == "<class 'torch.nn.parameter.Parameter'>"
    assert repr(Mine).endswith("Mine'>") and "torch.Tensor" not in repr(Mine)  # a user's subclass keeps its name
