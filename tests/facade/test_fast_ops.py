"""The eager fast lane (gradc.facade.fast_ops): same numbers, gradients and autograd rules as the general path."""
import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade import fast_ops

OPS = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("div", np.true_divide),
       ("maximum", np.maximum), ("minimum", np.minimum)]


def _pair(dtype, shape_b):
    rng = np.random.default_rng(0)
    a = torch.tensor(rng.uniform(0.5, 2.0, (3, 4)), dtype=dtype, requires_grad=True)
    b = torch.tensor(rng.uniform(0.5, 2.0, shape_b), dtype=dtype, requires_grad=True)
    return a, b


@pytest.mark.parametrize("op,ufunc", OPS)
@pytest.mark.parametrize("shape_b", [(3, 4), ()])
def test_values_match_numpy_and_gradients_match_finite_differences(op, ufunc, shape_b):
    a, b = _pair(torch.float64, shape_b)
    out = fast_ops.binary(op, a, b, "Node")
    assert out is not None, "the fast lane should take same-dtype float operands"
    assert np.array_equal(out.detach().numpy(), ufunc(a.detach().numpy(), b.detach().numpy()))
    weights = np.random.default_rng(1).standard_normal((3, 4))
    (out * torch.tensor(weights)).sum().backward()
    for t in (a, b):
        direction = np.random.default_rng(2).standard_normal(tuple(t.shape))
        base = t.detach().numpy().copy()

        def f(v, t=t):
            args = {id(a): a.detach().numpy(), id(b): b.detach().numpy()}
            args[id(t)] = v
            return float(np.sum(ufunc(args[id(a)], args[id(b)]) * weights))
        eps = 1e-6
        numeric = (f(base + eps * direction) - f(base - eps * direction)) / (2 * eps)
        assert np.isclose(np.sum(t.grad.numpy() * direction), numeric, rtol=1e-6, atol=1e-9)


def test_powers_two_and_three_round_as_torch_does():
    x = torch.tensor(np.random.default_rng(0).standard_normal(1000) * 10, dtype=torch.float32)
    xs = x.numpy()
    assert np.array_equal((x ** 2).numpy(), xs * xs)
    assert np.array_equal((x ** 3).numpy(), xs * xs * xs)  # torch's x*x*x, not powf (a different last bit)


@pytest.mark.parametrize("power", [2, 3, 2.5])
def test_power_gradients_first_and_second_order(power):
    x = torch.tensor([0.5, 1.5, 2.0], dtype=torch.float64, requires_grad=True)
    (g,) = torch.autograd.grad((x ** power).sum(), x, create_graph=True)
    xs = x.detach().numpy()
    np.testing.assert_allclose(g.detach().numpy(), power * xs ** (power - 1), rtol=1e-12)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), power * (power - 1) * xs ** (power - 2), rtol=1e-12)


def test_scalar_operands_and_node_names():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    assert type((x * 2).grad_fn).__name__ == "MulBackward0"
    assert type((2.0 + x).grad_fn).__name__ == "AddBackward0"
    assert type((x ** 2).grad_fn).__name__ == "PowBackward0"
    assert (x / 4).tolist() == [0.25, 0.5]
    assert (3 - x).tolist() == [2.0, 1.0]


def test_mixed_dtypes_and_broadcasting_take_the_general_path():
    a = torch.ones(2, 3, dtype=torch.float64)
    assert fast_ops.binary("add", a, torch.ones(3), "AddBackward0") is None
    assert fast_ops.binary("add", a, torch.ones(1, 3, dtype=torch.float64), "AddBackward0") is None
    assert (a + torch.ones(1, 3, dtype=torch.float64)).shape == (2, 3)
    assert (torch.ones(3, dtype=torch.int64) * 2).dtype is torch.int64


def test_saved_operand_changed_in_place_is_an_error():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, 4.0])
    y = a * b
    b.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_hooks_and_retain_grad_on_fast_results():
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    y = a * 3
    y.retain_grad()
    seen = []
    y.register_hook(lambda g: seen.append(g.tolist()))
    (y * y).sum().backward()
    assert y.grad.tolist() == [6.0, 12.0] and seen == [[6.0, 12.0]]
    assert a.grad.tolist() == [18.0, 36.0]


def test_no_grad_in_place_update_writes_through_views():
    w = torch.zeros(2, 3)
    row = w[0]
    version = w._version
    with torch.no_grad():
        row += 1.5
        row.mul_(2)
    assert w.tolist() == [[3.0, 3.0, 3.0], [0.0, 0.0, 0.0]]
    assert w._version == version + 2
    leaf = torch.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf.add_(1)


def test_sum_and_mean_over_everything():
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64, requires_grad=True)
    s, m = x.sum(), x.mean()
    assert type(s.grad_fn).__name__ == "SumBackward0" and type(m.grad_fn).__name__ == "MeanBackward0"
    (s + m).backward()
    assert x.grad.tolist() == [[1.25, 1.25], [1.25, 1.25]]
