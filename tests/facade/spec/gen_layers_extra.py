"""1-D layers, EmbeddingBag and activation modules under torch and gradc (as ``gen_layers.py``).

    /tmp/torchenv2/bin/python tests/facade/spec/gen_layers_extra.py torch > tests/facade/spec/layers_extra.expected.txt
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402
from gen_layers import image, run, t  # noqa: E402

CASES, case = spec_runner.registry()


def _layer(T, make, shape, f64=False, seed=20):
    T.manual_seed(seed)
    layer = make()
    return [repr(layer), run(T, layer, image(T, *shape, f64=f64))]


@case
def conv1d_default(T):
    return _layer(T, lambda: T.nn.Conv1d(3, 4, 3), (2, 3, 9))


@case
def conv1d_all_f64(T):
    return _layer(T, lambda: T.nn.Conv1d(4, 6, 3, stride=2, padding=2, dilation=2, groups=2, dtype=T.float64),
                  (2, 4, 11), True)


@case
def conv1d_same_no_bias(T):
    return _layer(T, lambda: T.nn.Conv1d(2, 3, 4, padding="same", bias=False), (3, 2, 7))


@case
def conv1d_unbatched(T):
    return _layer(T, lambda: T.nn.Conv1d(2, 2, 2), (2, 6))


@case
def max_pool1d_f64(T):
    return _layer(T, lambda: T.nn.MaxPool1d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 10), True)


@case
def max_pool1d_indices(T):
    T.manual_seed(21)
    out, idx = T.nn.functional.max_pool1d(image(T, 1, 2, 7), 2, return_indices=True)
    return [t(out), t(idx)]


@case
def avg_pool1d_f64(T):
    return _layer(T, lambda: T.nn.AvgPool1d(3, stride=2, padding=1, count_include_pad=False), (2, 2, 9), True)


@case
def adaptive_avg_pool1d(T):
    return _layer(T, lambda: T.nn.AdaptiveAvgPool1d(4), (2, 3, 7))


@case
def embedding_bag_offsets(T):
    T.manual_seed(22)
    bag = T.nn.EmbeddingBag(10, 3)
    out = bag(T.tensor([1, 2, 4, 5, 4, 3, 2, 9]), T.tensor([0, 4, 4]))
    (out * (T.rand(*out.shape) * 2 - 1)).sum().backward()
    return [repr(bag), t(out), t(bag.weight.grad), type(out.grad_fn).__name__]


@case
def embedding_bag_sum_weights_2d(T):
    T.manual_seed(23)
    bag = T.nn.EmbeddingBag(6, 2, mode="sum", padding_idx=0)
    psw = T.rand(2, 3).requires_grad_(True)
    out = bag(T.tensor([[1, 0, 5], [2, 2, 3]]), per_sample_weights=psw)
    (out * (T.rand(*out.shape) * 2 - 1)).sum().backward()
    return [repr(bag), t(out), t(bag.weight.grad), t(psw.grad)]


@case
def activations(T):
    layers = [T.nn.LeakyReLU(0.2), T.nn.GELU(), T.nn.GELU(approximate="tanh"), T.nn.SiLU(), T.nn.ELU(alpha=0.5),
              T.nn.Softplus(beta=2.0, threshold=3.0)]
    return [_layer(T, lambda m=m: m, (3, 5), seed=24) for m in layers]


@case
def activations_f64(T):
    layers = [T.nn.LeakyReLU(), T.nn.SiLU(), T.nn.ELU(), T.nn.Softplus()]
    return [_layer(T, lambda m=m: m, (3, 5), True, seed=25) for m in layers]


@case
def text_classifier(T):
    """The text-classification tutorial's model: EmbeddingBag, Linear, cross entropy."""
    T.manual_seed(26)

    class TextClassificationModel(T.nn.Module):
        def __init__(self, vocab_size, embed_dim, num_class):
            super().__init__()
            self.embedding = T.nn.EmbeddingBag(vocab_size, embed_dim, sparse=False)
            self.fc = T.nn.Linear(embed_dim, num_class)

        def forward(self, text, offsets):
            return self.fc(self.embedding(text, offsets))
    model = TextClassificationModel(20, 4, 3)
    out = model(T.tensor([3, 7, 19, 0, 4, 4, 12]), T.tensor([0, 3, 5]))
    loss = T.nn.functional.cross_entropy(out, T.tensor([2, 0, 1]))
    loss.backward()
    return [str(model), t(out), t(loss), t(model.embedding.weight.grad), t(model.fc.weight.grad)]


@case
def pad_modes_f64(T):
    T.manual_seed(27)
    results = []
    for mode, value in (("constant", 0.0), ("constant", 1.5), ("reflect", None), ("replicate", None),
                        ("circular", None)):
        x = image(T, 1, 2, 3, 4, f64=True).requires_grad_(True)
        kw = {} if value is None else {"value": value}
        out = T.nn.functional.pad(x, (2, 1, 1, 2), mode=mode, **kw)
        (out * (T.rand(*out.shape).double() * 2 - 1)).sum().backward()
        results.append([t(out), t(x.grad), type(out.grad_fn).__name__])
    x = image(T, 2, 5, f64=True).requires_grad_(True)
    out = T.nn.functional.pad(x, (3, 0), mode="reflect")
    return results + [t(out), type(out.grad_fn).__name__]


@case
def conv_padding_modes(T):
    return [_layer(T, lambda m=m: T.nn.Conv2d(2, 3, 3, padding=(1, 2), padding_mode=m), (2, 2, 5, 6), seed=28)
            for m in ("reflect", "replicate", "circular")] + [
        _layer(T, lambda: T.nn.Conv2d(2, 2, (3, 2), padding="same", padding_mode="circular"), (1, 2, 4, 5), seed=29),
        _layer(T, lambda: T.nn.Conv1d(2, 2, 3, padding=2, padding_mode="reflect"), (2, 2, 6), seed=30)]


@case
def cross_entropy_probabilities_smoothing_weight_f64(T):
    T.manual_seed(31)
    x = image(T, 3, 4, f64=True).requires_grad_(True)
    target = image(T, 3, 4, f64=True).softmax(dim=1)
    w = T.tensor([0.5, 1.0, 2.0, 1.5], dtype=T.float64)
    results = []
    for reduction in ("mean", "sum", "none"):
        x.grad = None
        out = T.nn.functional.cross_entropy(x, target, weight=w, label_smoothing=0.25, reduction=reduction)
        out.sum().backward()
        results.append([t(out), t(x.grad)])
    return results


@case
def nll_loss_spatial_weight_ignore_f64(T):
    T.manual_seed(32)
    x = image(T, 2, 3, 2, 3, f64=True).log_softmax(dim=1).detach().requires_grad_(True)
    target = T.tensor([[[0, 1, 2], [2, 2, 1]], [[1, 0, 0], [2, 1, 0]]])
    out = T.nn.NLLLoss(weight=T.tensor([0.2, 1.0, 3.0], dtype=T.float64), ignore_index=1)(x, target)
    out.backward()
    return [t(out), t(x.grad), type(out.grad_fn).__name__]


if __name__ == "__main__":
    import importlib

    T = importlib.import_module(sys.argv[1] if len(sys.argv) > 1 else "torch")
    for fn in CASES:
        print("%s: %r" % (fn.__name__, spec_runner.run_case(fn, T)))
