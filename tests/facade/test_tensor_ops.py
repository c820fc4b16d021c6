"""Facade ops beyond the tutorial: names of their nodes and gradients checked by finite differences."""
import math

import numpy as np
import pytest

import gradc
import gradc.torch as torch

F = torch.nn.functional


def numeric_grad(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in range(x.size):
        d = np.zeros_like(x)
        d.flat[i] = eps
        g.flat[i] = (f(torch.tensor(x + d)).item() - f(torch.tensor(x - d)).item()) / (2 * eps)
    return g


CASES = [
    ("var", lambda t: t.var()), ("std", lambda t: t.std()), ("repeat", lambda t: (t.repeat(2) * torch.tensor(
        [1., 2., 3., 4., 5., 6.], dtype=torch.float64)).sum()),
    ("gelu", lambda t: F.gelu(t).sum()), ("gelu_tanh", lambda t: F.gelu(t, approximate="tanh").sum()),
    ("softmax", lambda t: (F.softmax(t, dim=0) * t).sum()), ("log_softmax", lambda t: F.log_softmax(t, 0)[1]),
    ("prod", lambda t: t.prod()), ("norm", lambda t: t.norm()), ("leaky", lambda t: F.leaky_relu(t, 0.1).sum()),
    ("sigmoid", lambda t: t.sigmoid().sum()), ("mse", lambda t: F.mse_loss(t, torch.zeros(3, dtype=torch.float64))),
    ("clamp", lambda t: t.clamp(min=0.0).sum()), ("flip", lambda t: (t.flip(0) * t).sum()),
    ("cat", lambda t: (torch.cat([t, t * 2]) ** 2).sum()), ("stack", lambda t: (torch.stack([t, t]) ** 2).sum()),
]


@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_gradient_matches_finite_differences(name, f):
    x0 = [0.3, -1.2, 2.0]
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    f(x).backward()
    assert x.grad.tolist() == pytest.approx(numeric_grad(f, x0).tolist(), rel=1e-4, abs=1e-5)


def test_gelu_matches_erf():
    x = torch.tensor([-2., -0.5, 0.3, 1.7], dtype=torch.float64)
    want = [v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()]
    assert F.gelu(x).tolist() == pytest.approx(want, abs=1e-6)


def test_zero_derivative_ops_give_zero_grads():
    x = torch.tensor([0.4, 1.6], requires_grad=True)
    (x.floor() + x.round() + x.sign()).sum().backward()
    assert x.grad.tolist() == [0., 0.]


def test_linear_and_modules():
    torch.manual_seed(0)
    layer = torch.nn.Linear(3, 2)
    M = torch.ones(4, 3)
    out = layer(M)
    assert type(out.grad_fn).__name__ == "AddmmBackward0"
    assert type(layer(torch.ones(3)).grad_fn).__name__ == "ViewBackward0"
    torch.nn.MSELoss()(out, torch.zeros(4, 2)).backward()
    assert layer.bias.grad.shape == torch.Size([2]) and len(list(layer.parameters())) == 2
    assert repr(torch.nn.Parameter(torch.tensor([1., 2.]))) == (
        "Parameter containing:\ntensor([1., 2.], requires_grad=True)")


def test_node_names_of_shape_ops():
    M = torch.ones(2, 3, requires_grad=True)
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    got = [type(v.grad_fn).__name__ for v in (M.t().reshape(6), M.t().contiguous(), M.T, a[[0, 2]], a[1:],
                                              M[0, 1], a.expand(2, 3), a.double(), M.max(dim=1).values)]
    assert got == ["UnsafeViewBackward0", "CloneBackward0", "PermuteBackward0", "IndexBackward0", "SliceBackward0",
                   "SelectBackward0", "ExpandBackward0", "ToCopyBackward0", "MaxBackward0"]
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        M.t().view(6)


def test_torch_style_code_compiles_with_the_same_rules():
    def loss(w, b):
        z = torch.matmul(np.ones(5), w) + b
        return F.binary_cross_entropy_with_logits(z, np.zeros(3))
    w0 = np.arange(15.).reshape(5, 3) / 10 - 0.7
    b0 = np.array([0.5, -0.5, 0.25])
    gw, gb = gradc.grad(loss, wrt=("w", "b"))(w0, b0)
    w = torch.tensor(w0, requires_grad=True)
    b = torch.tensor(b0, requires_grad=True)
    eager = F.binary_cross_entropy_with_logits(torch.matmul(torch.ones(5, dtype=torch.float64), w) + b,
                                               torch.zeros(3, dtype=torch.float64))
    eager.backward()
    assert np.allclose(gb, b.grad.numpy()) and np.allclose(gw, w.grad.numpy())
