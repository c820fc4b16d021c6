"""Facade regressions that would otherwise give wrong gradients silently: views share their
base's version counter (an in-place change through any view of a saved tensor makes backward
fail loudly, as in torch), and BCE-with-logits is exact at a zero logit."""
import math

import pytest

import gradc
import gradc.torch as torch

VIEWS = {
    "view": lambda y: y.view(-1),
    "reshape": lambda y: y.reshape(6),
    "t": lambda y: y.t(),
    "transpose": lambda y: y.transpose(0, 1),
    "unsqueeze": lambda y: y.unsqueeze(0),
    "index": lambda y: y[0],
}


@pytest.mark.parametrize("make_view", list(VIEWS.values()), ids=list(VIEWS))
def test_inplace_change_through_a_view_of_a_saved_output_is_an_error(make_view):
    x = torch.ones(2, 3, requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its result
    view = make_view(y)
    assert view._version == y._version
    view.add_(1)
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_a_computed_result_does_not_share_the_counter():
    x = torch.ones(3, requires_grad=True)
    y = x * 2
    z = y + 1
    z.add_(1)  # z is new memory: y's saved state is untouched
    assert y._version == 0
    (y * y).sum().backward()
    assert x.grad.tolist() == [8.0, 8.0, 8.0]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_bce_with_logits_gradient_at_a_zero_logit_is_sigmoid_minus_target(dtype):
    # the loss is smooth at z = 0: d/dz = sigmoid(0) - y = 0.5 - y (torch gives the same)
    z = torch.zeros(3, dtype=dtype, requires_grad=True)
    y = torch.tensor([0.0, 1.0, 0.5], dtype=dtype)
    torch.nn.functional.binary_cross_entropy_with_logits(z, y).backward()
    assert z.grad.tolist() == pytest.approx([0.5 / 3, -0.5 / 3, 0.0], abs=1e-7)


def test_bce_with_logits_pos_weight_scales_the_positive_term():
    # closed form: -(pw * y * log(sigmoid(z)) + (1 - y) * log(1 - sigmoid(z))), mean over elements
    z = torch.tensor([0.0, 1.5, -2.0], dtype=torch.float64, requires_grad=True)
    y = torch.tensor([1.0, 0.0, 1.0], dtype=torch.float64)
    pw = torch.tensor([3.0, 2.0, 0.5], dtype=torch.float64)
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y, pos_weight=pw)
    loss.backward()
    s = [1 / (1 + math.exp(-v)) for v in (0.0, 1.5, -2.0)]
    expected = -(3.0 * math.log(s[0]) + math.log(1 - s[1]) + 0.5 * math.log(s[2])) / 3
    assert loss.item() == pytest.approx(expected, rel=1e-12)
    assert z.grad.tolist() == pytest.approx([-3.0 * (1 - s[0]) / 3, s[1] / 3, -0.5 * (1 - s[2]) / 3], rel=1e-12)


def test_compiled_torch_style_bce_is_exact_at_a_zero_logit():
    import numpy as np

    def loss(z, y):
        return torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    grad = gradc.grad(loss)(np.zeros(3), np.array([0.0, 1.0, 0.5]))
    assert grad.tolist() == pytest.approx([0.5 / 3, -0.5 / 3, 0.0], abs=1e-15)
