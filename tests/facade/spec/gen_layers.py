"""Layers under torch and gradc: seeded initial weights, outputs, gradients and ``print(model)``.

    /tmp/torchenv2/bin/python tests/facade/spec/gen_layers.py torch > tests/facade/spec/layers.expected.txt
    python tests/facade/spec/gen_layers.py gradc.torch      # the same cases under gradc

Every case takes the module standing in for torch and returns plain Python values (tensors as
``[dtype, shape, flat values]``; printed models as strings), one ``<case>: <repr>`` line each
(``spec_runner``). Float64 random inputs are uniform float32 draws, converted, so they are the
same numbers under both; cases ending in ``_f64`` compute in float64 (compared to 1e-10), the
others in float32 (to 1e-4). ``tests/facade/test_layers_torch.py`` runs them under gradc.
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()


def t(x):
    """A tensor as ``[dtype, shape, values]`` (None stays None)."""
    if x is None:
        return None
    return [str(x.dtype).replace("torch.", ""), list(x.shape), x.detach().reshape(-1).tolist()]


def run(T, layer, x, *more):
    """Forward ``x`` through ``layer``, backward a seeded random cotangent: output, gradients, parameters."""
    x = x.detach().requires_grad_(True)
    out = layer(x, *more)
    ct = (T.rand(*out.shape) * 2 - 1).to(out.dtype)
    (out * ct).sum().backward()
    params = {name: [t(p), t(p.grad)] for name, p in layer.named_parameters()}
    return {"out": t(out), "grad_fn": type(out.grad_fn).__name__, "x_grad": t(x.grad), "params": params}


def image(T, *shape, f64=False):
    """Random inputs; float64 ones from uniform float32 draws (every float32 is exact in float64)."""
    return T.rand(*shape).double() * 4 - 2 if f64 else T.randn(*shape)


# ---------------------------------------------------------------- Conv2d
def _conv(T, f64, *args, shape=(2, 3, 7, 6), **kw):
    T.manual_seed(1)
    dtype = T.float64 if f64 else None
    layer = T.nn.Conv2d(*args, dtype=dtype, **kw)
    return [repr(layer), run(T, layer, image(T, *shape, f64=f64))]


@case
def conv2d_default(T):
    return _conv(T, False, 3, 4, 3)


@case
def conv2d_default_f64(T):
    return _conv(T, True, 3, 4, 3)


@case
def conv2d_stride_padding(T):
    return _conv(T, False, 3, 5, (3, 2), stride=2, padding=1)


@case
def conv2d_dilation_groups_f64(T):
    return _conv(T, True, 4, 6, 3, padding=2, dilation=2, groups=2, shape=(2, 4, 7, 8))


@case
def conv2d_no_bias_asymmetric(T):
    return _conv(T, False, 3, 2, (2, 3), stride=(1, 2), padding=(0, 1), bias=False)


@case
def conv2d_same_padding_f64(T):
    return _conv(T, True, 3, 2, (4, 3), padding="same", dilation=(1, 2))


@case
def conv2d_depthwise(T):
    return _conv(T, False, 3, 3, 3, groups=3, padding=1)


@case
def conv2d_unbatched(T):
    return _conv(T, False, 3, 2, 2, shape=(3, 5, 5))


@case
def conv2d_functional_f64(T):
    T.manual_seed(2)
    x = image(T, 1, 2, 6, 6, f64=True).requires_grad_(True)
    w = image(T, 4, 1, 3, 3, f64=True).requires_grad_(True)
    b = image(T, 4, f64=True).requires_grad_(True)
    out = T.nn.functional.conv2d(x, w, b, stride=2, padding=1, groups=2)
    out.pow(2).sum().backward()
    return [t(out), t(x.grad), t(w.grad), t(b.grad)]


# ---------------------------------------------------------------- pooling
def _pool(T, layer, shape, f64=False):
    T.manual_seed(3)
    return [repr(layer), run(T, layer, image(T, *shape, f64=f64))]


@case
def max_pool2d_2(T):
    return _pool(T, T.nn.MaxPool2d(2), (2, 3, 6, 7))


@case
def max_pool2d_stride_padding_f64(T):
    return _pool(T, T.nn.MaxPool2d(3, stride=2, padding=1), (1, 2, 7, 6), True)


@case
def max_pool2d_ceil_dilation(T):
    return _pool(T, T.nn.MaxPool2d((2, 3), stride=(2, 1), dilation=(2, 1), ceil_mode=True), (1, 2, 8, 7))


@case
def max_pool2d_indices(T):
    T.manual_seed(3)
    x = image(T, 1, 2, 5, 5)
    out, idx = T.nn.functional.max_pool2d(x, 2, return_indices=True, ceil_mode=True)
    return [t(out), t(idx)]


@case
def avg_pool2d_2(T):
    return _pool(T, T.nn.AvgPool2d(2), (2, 3, 6, 7))


@case
def avg_pool2d_pad_ceil_exclude_f64(T):
    return _pool(T, T.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (1, 2, 8, 7),
                 True)


@case
def avg_pool2d_divisor(T):
    return _pool(T, T.nn.AvgPool2d((2, 3), stride=1, padding=(1, 0), divisor_override=5), (1, 2, 4, 5))


@case
def adaptive_avg_pool2d_1(T):
    return _pool(T, T.nn.AdaptiveAvgPool2d((1, 1)), (2, 3, 5, 6))


@case
def adaptive_avg_pool2d_uneven_f64(T):
    return _pool(T, T.nn.AdaptiveAvgPool2d((3, 4)), (1, 2, 7, 5), True)


@case
def adaptive_avg_pool2d_none(T):
    return _pool(T, T.nn.AdaptiveAvgPool2d((None, 2)), (1, 2, 3, 5))


# ---------------------------------------------------------------- normalisation
def _bn(T, layer, shape, steps=2, f64=False):
    T.manual_seed(4)
    results = [repr(layer)]
    for _ in range(steps):
        results.append(run(T, layer, image(T, *shape, f64=f64)))
    results.append([t(layer.running_mean), t(layer.running_var), t(layer.num_batches_tracked)]
                   if layer.running_mean is not None else None)
    layer.eval()
    results.append(run(T, layer, image(T, *shape, f64=f64)))
    return results


@case
def batch_norm1d(T):
    return _bn(T, T.nn.BatchNorm1d(5), (8, 5))


@case
def batch_norm1d_3d_f64(T):
    return _bn(T, T.nn.BatchNorm1d(3, momentum=None, dtype=T.float64), (4, 3, 6), f64=True)


@case
def batch_norm2d(T):
    return _bn(T, T.nn.BatchNorm2d(3, eps=1e-3, momentum=0.2), (4, 3, 5, 5))


@case
def batch_norm2d_no_affine_no_stats_f64(T):
    return _bn(T, T.nn.BatchNorm2d(2, affine=False, track_running_stats=False, dtype=T.float64), (3, 2, 4, 4),
               steps=1, f64=True)


@case
def layer_norm(T):
    T.manual_seed(5)
    layer = T.nn.LayerNorm(6)
    return [repr(layer), run(T, layer, image(T, 3, 6))]


@case
def layer_norm_2d_f64(T):
    T.manual_seed(5)
    layer = T.nn.LayerNorm((4, 5), eps=1e-4, dtype=T.float64)
    with T.no_grad():
        layer.weight.mul_(1.5)
        layer.bias.add_(0.25)
    return [repr(layer), run(T, layer, image(T, 2, 4, 5, f64=True))]


# ---------------------------------------------------------------- embedding, dropout, shapes
@case
def embedding(T):
    T.manual_seed(6)
    layer = T.nn.Embedding(10, 4)
    idx = T.tensor([[1, 2, 4, 5], [4, 3, 2, 9]])
    out = layer(idx)
    (out * T.randn(*out.shape)).sum().backward()
    return [repr(layer), t(layer.weight), t(out), t(layer.weight.grad), type(out.grad_fn).__name__]


@case
def embedding_padding_idx(T):
    T.manual_seed(6)
    layer = T.nn.Embedding(5, 3, padding_idx=-1)
    out = layer(T.tensor([0, 4, 2, 4]))
    out.sum().backward()
    return [repr(layer), t(layer.weight), t(out), t(layer.weight.grad)]


@case
def dropout_train(T):
    T.manual_seed(7)
    layer = T.nn.Dropout(0.3)
    x = T.randn(4, 25)
    first = run(T, layer, x)
    layer.eval()
    return [repr(layer), first, t(layer(x)), t(T.rand(3))]


@case
def dropout_functional_f64(T):
    T.manual_seed(8)
    x = image(T, 1000, f64=True)
    out = T.nn.functional.dropout(x, p=0.6)
    return [t(out)[2][:40], float(out.sum()), int((out == 0).sum()), t(T.rand(2))]


@case
def dropout_in_a_model(T):
    T.manual_seed(9)
    model = T.nn.Sequential(T.nn.Linear(6, 8), T.nn.ReLU(), T.nn.Dropout(0.5), T.nn.Linear(8, 2))
    return [str(model), run(T, model, T.randn(5, 6))]


@case
def flatten_softmax(T):
    T.manual_seed(10)
    model = T.nn.Sequential(T.nn.Flatten(), T.nn.Linear(12, 4), T.nn.Softmax(dim=1))
    x = T.randn(2, 3, 4)
    return [str(model), run(T, model, x), list(x.flatten(1, 2).shape), list(x.flatten().shape),
            list(T.flatten(x, 0, 1).shape), list(T.nn.Flatten(0, -2)(x).shape)]


@case
def log_softmax_module_f64(T):
    T.manual_seed(11)
    layer = T.nn.LogSoftmax(dim=0)
    return [repr(layer), run(T, layer, image(T, 4, 3, f64=True))]


# ---------------------------------------------------------------- losses
def _loss(T, loss, logits_shape, target, f64=False, prob=False):
    T.manual_seed(12)
    x = image(T, *logits_shape, f64=f64)
    if prob:
        x = x.sigmoid()
    x.requires_grad_(True)
    out = loss(x, target)
    out.sum().backward() if out.dim() else out.backward()
    return [repr(loss), t(out), type(out.grad_fn).__name__, t(x.grad)]


@case
def cross_entropy_mean(T):
    return _loss(T, T.nn.CrossEntropyLoss(), (4, 5), T.tensor([1, 0, 4, 2]))


@case
def cross_entropy_sum_weight_ignore_f64(T):
    w = T.tensor([0.5, 1.0, 2.0, 1.5, 0.25], dtype=T.float64)
    return _loss(T, T.nn.CrossEntropyLoss(weight=w, ignore_index=2, reduction="sum"), (4, 5),
                 T.tensor([1, 2, 4, 3]), True)


@case
def cross_entropy_none(T):
    return _loss(T, T.nn.CrossEntropyLoss(reduction="none"), (3, 4), T.tensor([3, 0, 1]))


@case
def cross_entropy_label_smoothing_f64(T):
    w = T.tensor([0.5, 1.0, 2.0, 1.5], dtype=T.float64)
    return _loss(T, T.nn.CrossEntropyLoss(weight=w, label_smoothing=0.2), (3, 4), T.tensor([3, 0, 1]), True)


@case
def cross_entropy_smoothing_ignore(T):
    return _loss(T, T.nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=0), (4, 3), T.tensor([0, 1, 2, 1]))


@case
def cross_entropy_probabilities_f64(T):
    T.manual_seed(13)
    target = image(T, 3, 4, f64=True).softmax(dim=1)
    return _loss(T, T.nn.CrossEntropyLoss(), (3, 4), target, True)


@case
def cross_entropy_spatial(T):
    return _loss(T, T.nn.CrossEntropyLoss(), (2, 3, 2, 2), T.tensor([[[0, 1], [2, 2]], [[1, 1], [0, 2]]]))


@case
def cross_entropy_unbatched(T):
    return _loss(T, T.nn.CrossEntropyLoss(), (5,), T.tensor(3))


@case
def nll_loss_weight_f64(T):
    w = T.tensor([1.0, 3.0, 0.5], dtype=T.float64)
    return _loss(T, T.nn.NLLLoss(weight=w), (4, 3), T.tensor([2, 1, 0, 1]), True)


@case
def nll_loss_none(T):
    return _loss(T, T.nn.NLLLoss(reduction="none", ignore_index=1), (4, 3), T.tensor([2, 1, 0, 1]))


@case
def bce_loss_weight(T):
    w = T.tensor([1.0, 2.0, 0.5])
    return _loss(T, T.nn.BCELoss(weight=w), (2, 3), T.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.3]]), prob=True)


@case
def bce_loss_f64(T):
    return _loss(T, T.nn.BCELoss(reduction="sum"), (5,), T.tensor([0.0, 1.0, 1.0, 0.0, 0.5], dtype=T.float64),
                 True, prob=True)


@case
def bce_with_logits_pos_weight(T):
    return _loss(T, T.nn.BCEWithLogitsLoss(pos_weight=T.tensor([2.0, 0.5, 1.0])), (2, 3),
                 T.tensor([[0.0, 1.0, 1.0], [1.0, 0.0, 0.0]]))


@case
def l1_loss(T):
    T.manual_seed(14)
    return _loss(T, T.nn.L1Loss(), (3, 4), T.randn(3, 4))


@case
def l1_loss_sum_f64(T):
    T.manual_seed(14)
    return _loss(T, T.nn.L1Loss(reduction="sum"), (3, 4), image(T, 3, 4, f64=True), True)


@case
def smooth_l1_loss(T):
    T.manual_seed(15)
    return _loss(T, T.nn.SmoothL1Loss(), (4, 5), T.randn(4, 5))


@case
def smooth_l1_loss_beta_none_f64(T):
    T.manual_seed(15)
    return _loss(T, T.nn.SmoothL1Loss(beta=0.5, reduction="none"), (4, 5), image(T, 4, 5, f64=True), True)


@case
def huber_loss_delta(T):
    T.manual_seed(16)
    return _loss(T, T.nn.HuberLoss(delta=0.7), (3, 5), 2 * T.randn(3, 5))


# ---------------------------------------------------------------- containers and printed models
class _Net:
    """A LeNet-style model built from the module it is given (torch or gradc)."""

    @staticmethod
    def make(T):
        class Net(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.features = T.nn.Sequential(
                    T.nn.Conv2d(1, 4, 3, padding=1), T.nn.BatchNorm2d(4), T.nn.ReLU(), T.nn.MaxPool2d(2),
                    T.nn.Conv2d(4, 6, 3), T.nn.ReLU(), T.nn.AdaptiveAvgPool2d((2, 2)))
                self.heads = T.nn.ModuleList([T.nn.Linear(24, 3) for _ in range(2)])
                self.extra = T.nn.ModuleDict({"drop": T.nn.Dropout(0.25), "norm": T.nn.LayerNorm(3)})
                self.embed = T.nn.Embedding(7, 2, padding_idx=0)

            def forward(self, x):
                h = T.flatten(self.features(x), 1)
                h = self.extra["drop"](h)
                return self.extra["norm"](self.heads[0](h) + self.heads[1](h))
        return Net()


@case
def lenet_print_and_step(T):
    T.manual_seed(17)
    net = _Net.make(T)
    x = T.randn(3, 1, 10, 10)
    out = net(x)
    loss = T.nn.functional.cross_entropy(out, T.tensor([0, 2, 1]))
    loss.backward()
    grads = {name: t(p.grad) for name, p in net.named_parameters() if p.grad is not None}
    return [str(net), t(out), t(loss), grads, [t(b) for b in net.buffers()]]


@case
def containers(T):
    T.manual_seed(18)
    seq = T.nn.Sequential(T.nn.Linear(2, 3), T.nn.ReLU(), T.nn.Linear(3, 1), T.nn.Sigmoid())
    ml = T.nn.ModuleList([T.nn.ReLU(), T.nn.ReLU(), T.nn.Tanh()])
    ml.append(T.nn.Linear(1, 1))
    ml.insert(0, T.nn.Dropout())
    md = T.nn.ModuleDict({"a": T.nn.Linear(1, 2)})
    md["b"] = T.nn.Softmax(dim=0)
    return [str(seq[1:3]), str(seq[-1]), len(seq), [type(m).__name__ for m in seq], str(ml), len(ml), str(ml[1:3]),
            str(md), list(md.keys()), "a" in md, len(list(ml.parameters())), sorted(dict(md.named_parameters()))]


if __name__ == "__main__":
    import importlib

    T = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "torch")
    for fn in CASES:
        print("%s: %r" % (fn.__name__, spec_runner.run_case(fn, T)))
