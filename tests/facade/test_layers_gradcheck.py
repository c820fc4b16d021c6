"""Every layer's and loss's gradient (eager ``backward``) against central finite differences, in float64.

The reference differentiates the facade's own forward numerically, so it does not involve
any VJP rule; the forward itself is held to torch in ``test_layers_torch``. Also: second
order through a convolution (``create_graph``), and the same losses compiled by
``gradc.grad`` from torch-style code, against the eager gradients.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
import gradc.torch as torch
from gradc.torch import nn

F = nn.functional


def _randn(rng, *shape, distinct=False):
    if distinct:  # values at least 0.05 apart: no ties for max pooling
        n = int(np.prod(shape))
        return torch.tensor((rng.permutation(n) * 0.05 + rng.uniform(0, 0.01, n)).reshape(shape))
    return torch.tensor(rng.standard_normal(shape))


def check_grads(f, inputs, seed=0, rtol=1e-6):
    """``f(*inputs)`` (a Tensor) dotted with a random cotangent: backward vs central differences."""
    for t in inputs:
        t.requires_grad_(True)
        t.grad = None
    out = f(*inputs)
    rng = np.random.default_rng(seed)
    ct = torch.tensor(rng.standard_normal(tuple(out.shape)))
    (out * ct).sum().backward()
    h = 1e-6
    for t in inputs:
        v = rng.standard_normal(tuple(t.shape))
        base = t.detach().numpy().copy()

        def at(step, t=t, base=base, v=v):
            with torch.no_grad():
                t.data = torch.tensor(base + step * v)
            return float((f(*inputs) * ct).sum().detach())
        expected = (at(h) - at(-h)) / (2 * h)
        with torch.no_grad():
            t.data = torch.tensor(base)
        actual = float(np.sum(t.grad.numpy() * v))
        assert abs(actual - expected) <= rtol * (1 + abs(expected)), (actual, expected)


def _seeded(layer_fn):
    torch.manual_seed(0)
    return layer_fn().double()


LAYERS = {
    "conv2d": (lambda: nn.Conv2d(3, 4, 3), (2, 3, 6, 5)),
    "conv2d_stride_pad_dilation": (lambda: nn.Conv2d(2, 3, (3, 2), stride=2, padding=(2, 1), dilation=(2, 1)),
                                   (2, 2, 7, 6)),
    "conv2d_groups_no_bias": (lambda: nn.Conv2d(4, 6, 3, groups=2, padding=1, bias=False), (1, 4, 5, 5)),
    "conv2d_same": (lambda: nn.Conv2d(2, 2, 4, padding="same"), (1, 2, 5, 6)),
    "conv2d_unbatched": (lambda: nn.Conv2d(2, 2, 2), (2, 4, 4)),
    "avg_pool2d": (lambda: nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
                   (1, 2, 7, 6)),
    "adaptive_avg_pool2d": (lambda: nn.AdaptiveAvgPool2d((3, 2)), (2, 2, 5, 7)),
    "batch_norm1d": (lambda: nn.BatchNorm1d(3), (5, 3)),
    "batch_norm1d_3d": (lambda: nn.BatchNorm1d(2), (3, 2, 4)),
    "batch_norm2d": (lambda: nn.BatchNorm2d(3, affine=True), (2, 3, 3, 4)),
    "batch_norm2d_eval": (lambda: nn.BatchNorm2d(2).eval(), (2, 2, 3, 3)),
    "layer_norm": (lambda: nn.LayerNorm((3, 4)), (2, 3, 4)),
    "softmax": (lambda: nn.Softmax(dim=1), (3, 4)),
    "log_softmax": (lambda: nn.LogSoftmax(dim=0), (3, 4)),
    "flatten": (lambda: nn.Flatten(0, 1), (2, 3, 2)),
    "conv1d": (lambda: nn.Conv1d(4, 2, 3, stride=2, padding=1, dilation=2, groups=2), (2, 4, 9)),
    "conv1d_same_unbatched": (lambda: nn.Conv1d(2, 3, 4, padding="same"), (2, 7)),
    "avg_pool1d": (lambda: nn.AvgPool1d(3, stride=2, padding=1, ceil_mode=True), (2, 2, 8)),
    "adaptive_avg_pool1d": (lambda: nn.AdaptiveAvgPool1d(3), (2, 2, 7)),
    "leaky_relu": (lambda: nn.LeakyReLU(0.2), (3, 4)),
    "gelu_tanh": (lambda: nn.GELU(approximate="tanh"), (3, 4)),
    "silu": (lambda: nn.SiLU(), (3, 4)),
    "elu": (lambda: nn.ELU(alpha=0.7), (3, 4)),
    "softplus": (lambda: nn.Softplus(beta=1.5, threshold=1.0), (3, 4)),
    "conv2d_reflect": (lambda: nn.Conv2d(2, 2, 3, padding=(2, 1), padding_mode="reflect"), (1, 2, 4, 5)),
    "conv2d_circular_same": (lambda: nn.Conv2d(2, 1, (2, 3), padding="same", padding_mode="circular"), (2, 2, 3, 4)),
    "conv1d_replicate": (lambda: nn.Conv1d(1, 2, 3, padding=3, padding_mode="replicate"), (2, 1, 4)),
}


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradients(mode):
    x = _randn(np.random.default_rng(10), 2, 3, 4)
    check_grads(lambda x: F.pad(x, (1, 3, 2, 0), mode=mode, value=0.5 if mode == "constant" else None), [x])


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_gradients(name):
    make, shape = LAYERS[name]
    layer = _seeded(make)
    rng = np.random.default_rng(1)
    with torch.no_grad():
        for p in layer.parameters():  # away from the default ones/zeros, so every term is exercised
            p.add_(torch.tensor(rng.uniform(-0.3, 0.3, tuple(p.shape))))
    x = _randn(rng, *shape)
    params = list(layer.parameters())
    check_grads(lambda x, *ps: layer(x), [x] + params)


def test_max_pool1d_gradients():
    x = _randn(np.random.default_rng(2), 2, 3, 9, distinct=True)
    check_grads(lambda x: F.max_pool1d(x, 3, stride=2, padding=1, ceil_mode=True), [x])


def test_embedding_bag_gradients():
    torch.manual_seed(0)
    bag = nn.EmbeddingBag(6, 3, mode="sum").double()
    psw = torch.tensor(np.linspace(0.5, 2.0, 7))
    idx, offsets = torch.tensor([0, 5, 5, 2, 1, 1, 3]), torch.tensor([0, 3, 3, 6])
    check_grads(lambda w, p: F.embedding_bag(idx, w, offsets, mode="sum", per_sample_weights=p), [bag.weight, psw])
    check_grads(lambda w: F.embedding_bag(idx, w, offsets, padding_idx=1), [bag.weight])


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=(2, 3), stride=1, dilation=(2, 1), ceil_mode=True)],
                         ids=["k2", "k3_s2_p1", "dilation_ceil"])
def test_max_pool_gradients(kw):
    x = _randn(np.random.default_rng(2), 2, 2, 7, 6, distinct=True)
    check_grads(lambda x: F.max_pool2d(x, **kw), [x])


def test_embedding_gradients():
    torch.manual_seed(0)
    emb = nn.Embedding(6, 3).double()
    idx = torch.tensor([[0, 2, 5], [5, 5, 1]])
    check_grads(lambda w: F.embedding(idx, w), [emb.weight])
    full = emb.weight.grad.numpy().copy()
    emb.weight.grad = None
    ct = torch.tensor(np.random.default_rng(0).standard_normal((2, 3, 3)))
    (F.embedding(idx, emb.weight, padding_idx=2) * ct).sum().backward()
    # as torch: the padding row's gradient is zero, however often it is looked up; the rest unchanged
    assert np.all(emb.weight.grad.numpy()[2] == 0) and np.any(full[2] != 0)
    np.testing.assert_allclose(np.delete(emb.weight.grad.numpy(), 2, 0), np.delete(full, 2, 0), rtol=1e-15)


def test_dropout_gradients_with_its_mask():
    x = _randn(np.random.default_rng(3), 4, 6)

    def f(x):
        torch.manual_seed(5)  # the same mask on every evaluation
        return F.dropout(x, 0.4)
    check_grads(f, [x])
    torch.manual_seed(5)
    out = F.dropout(x, 0.4).detach().numpy()
    kept = out != 0
    assert 0 < kept.sum() < kept.size
    np.testing.assert_allclose(out[kept], x.detach().numpy()[kept] / 0.6, rtol=1e-15)


def _logits(rng, *shape):
    return _randn(rng, *shape)


LOSSES = {
    "cross_entropy": lambda x: F.cross_entropy(x, torch.tensor([1, 0, 3])),
    "cross_entropy_weight_ignore_sum": lambda x: F.cross_entropy(
        x, torch.tensor([1, 2, 3]), weight=torch.tensor([0.5, 1.0, 2.0, 3.0], dtype=torch.float64), ignore_index=2,
        reduction="sum"),
    "cross_entropy_smoothing": lambda x: F.cross_entropy(x, torch.tensor([1, 0, 3]), label_smoothing=0.15),
    "cross_entropy_smoothing_weight": lambda x: F.cross_entropy(
        x, torch.tensor([1, 0, 3]), weight=torch.tensor([0.5, 1.0, 2.0, 3.0], dtype=torch.float64),
        label_smoothing=0.3),
    "cross_entropy_none": lambda x: F.cross_entropy(x, torch.tensor([1, 0, 3]), reduction="none"),
    "cross_entropy_probabilities": lambda x: F.cross_entropy(
        x, torch.tensor([[0.1, 0.2, 0.3, 0.4], [1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25]],
                        dtype=torch.float64)),
    "nll_loss_weight": lambda x: F.nll_loss(F.log_softmax(x, 1), torch.tensor([3, 3, 0]),
                                            weight=torch.tensor([1.0, 2.0, 0.5, 4.0], dtype=torch.float64)),
    "bce": lambda x: F.binary_cross_entropy(torch.sigmoid(x), torch.tensor(
        np.linspace(0, 1, 12).reshape(3, 4))),
    "bce_weight": lambda x: nn.BCELoss(weight=torch.tensor([1.0, 2.0, 3.0, 0.5], dtype=torch.float64))(
        torch.sigmoid(x), torch.tensor(np.linspace(1, 0, 12).reshape(3, 4))),
    "bce_with_logits": lambda x: nn.BCEWithLogitsLoss(pos_weight=torch.tensor([2.0, 1.0, 0.5, 3.0],
                                                                              dtype=torch.float64))(
        x, torch.tensor(np.linspace(0, 1, 12).reshape(3, 4))),
    "l1": lambda x: F.l1_loss(x, torch.zeros(3, 4, dtype=torch.float64) + 0.013),
    "smooth_l1": lambda x: F.smooth_l1_loss(x, torch.zeros(3, 4, dtype=torch.float64), beta=0.4),
    "huber": lambda x: nn.HuberLoss(delta=0.6, reduction="sum")(x, torch.ones(3, 4, dtype=torch.float64)),
    "mse": lambda x: nn.MSELoss()(x, torch.ones(3, 4, dtype=torch.float64)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_gradients(name):
    x = _logits(np.random.default_rng(4), 3, 4)
    if name in ("l1", "smooth_l1", "huber"):  # keep |x - target| away from the kinks
        data = x.detach().numpy()
        x = torch.tensor(np.where(np.abs(np.abs(data) - 0.5) < 0.1, data + 0.3, data))
    check_grads(LOSSES[name], [x])


def test_spatial_cross_entropy_gradients():
    x = _randn(np.random.default_rng(5), 2, 3, 2, 2)
    target = torch.tensor([[[0, 1], [2, 2]], [[1, 1], [0, 2]]])
    check_grads(lambda x: F.cross_entropy(x, target, ignore_index=1), [x])


def test_second_order_through_a_convolution():
    """d/dw of |d loss/dx|^2 (a gradient penalty), with create_graph, against differences of the first gradient."""
    rng = np.random.default_rng(6)
    x, w = _randn(rng, 1, 2, 5, 5), _randn(rng, 3, 2, 3, 3)

    def penalty(x, w):
        y = F.conv2d(x, w, stride=2, padding=1)
        (gx,) = torch.autograd.grad((y.tanh() ** 2).sum(), x, create_graph=True)
        return (gx * gx).sum()
    check_grads(penalty, [x, w], rtol=1e-5)


def _model_loss_numpy(x, w, b, y):
    h = F.conv2d(x, w, b, padding=1)
    h = F.max_pool2d(torch.relu(h), 2)
    h = F.avg_pool2d(h, 2)
    logits = F.adaptive_avg_pool2d(h, 1).reshape(2, 4)
    return F.cross_entropy(logits, y, label_smoothing=0.1)


def test_compiled_layers_match_eager_and_finite_differences():
    rng = np.random.default_rng(7)
    x, w, b = rng.standard_normal((2, 3, 8, 8)), rng.standard_normal((4, 3, 3, 3)), rng.standard_normal(4)
    y = np.array([1, 3])
    compiled = gradc.compile(_model_loss_numpy, x, w, b, y, wrt=("w", "b"))
    assert "sliding_window_view" in compiled.source
    value, (gw, gb) = compiled.value_and_grad(x, w, b, y)
    tw, tb = torch.tensor(w, requires_grad=True), torch.tensor(b, requires_grad=True)
    eager = _model_loss_numpy(torch.tensor(x), tw, tb, torch.tensor(y))
    eager.backward()
    np.testing.assert_allclose(value, eager.item(), rtol=1e-12)
    np.testing.assert_allclose(gw, tw.grad.numpy(), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(gb, tb.grad.numpy(), rtol=1e-10, atol=1e-14)
    v = rng.standard_normal(w.shape)
    h = 1e-6
    fd = (compiled.forward(x, w + h * v, b, y) - compiled.forward(x, w - h * v, b, y)) / (2 * h)
    assert abs(float(np.sum(gw * v)) - fd) <= 1e-6 * (1 + abs(fd))


def test_compiled_batch_norm_layer_norm_embedding():
    rng = np.random.default_rng(8)

    def loss(x, g, idx, table):
        h = F.batch_norm(x, None, None, g, None, training=True)
        h = F.layer_norm(h, (3,))
        e = F.embedding(idx, table).sum()
        return (h ** 3).sum() + e * e

    x, g, table = rng.standard_normal((4, 3)), rng.uniform(0.5, 1.5, 3), rng.standard_normal((5, 2))
    idx = np.array([0, 4, 4])
    grads = gradc.grad(loss, wrt=("x", "g", "table"))(x, g, idx, table)
    tensors = [torch.tensor(a, requires_grad=True) for a in (x, g, table)]
    loss(tensors[0], tensors[1], torch.tensor(idx), tensors[2]).backward()
    for got, t in zip(grads, tensors):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_compiled_model_of_layers_matches_eager():
    """gradc.grad of a loss over a seeded model of layers (their weights frozen in) equals eager backward."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Dropout(0.2), nn.Linear(4 * 4 * 4, 10), nn.LogSoftmax(dim=1)).double().eval()
    x = np.random.default_rng(9).standard_normal((2, 1, 8, 8))

    def loss(x):
        return model(x).sum()
    xt = torch.tensor(x, requires_grad=True)
    eager = model(xt).sum()
    eager.backward()
    np.testing.assert_allclose(gradc.compile(loss, x).forward(x), eager.item(), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(loss)(x), xt.grad.numpy(), rtol=1e-10, atol=1e-14)
