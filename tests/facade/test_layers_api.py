"""Layers, losses and containers: torch's behaviour around the numbers, and torch's errors for bad input.

The numbers themselves are held to torch in ``test_layers_torch`` and to finite differences
in ``test_layers_gradcheck``; here: modes, buffers, containers, printing, and every bad
argument raising the exception type torch raises with a message saying what is wrong.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as torch
from gradc.torch import nn

F = nn.functional


# ---------------------------------------------------------------- bad input: torch's exception, a clear message
def _img(*shape):
    return torch.zeros(*shape)


BAD = [
    ("conv_channels", lambda: F.conv2d(_img(1, 5, 4, 4), _img(2, 3, 3, 3)), RuntimeError,
     r"Given groups=1, weight of size \[2, 3, 3, 3\], expected input\[1, 5, 4, 4\] to have 3 channels, but got 5"),
    ("conv_kernel_too_big", lambda: F.conv2d(_img(1, 1, 2, 2), _img(1, 1, 3, 3)), RuntimeError,
     r"Kernel size can't be greater than actual input size"),
    ("conv_input_rank", lambda: F.conv2d(_img(5, 5), _img(1, 1, 3, 3)), RuntimeError,
     r"Expected 3D \(unbatched\) or 4D \(batched\) input to conv2d, but got input of size: \[5, 5\]"),
    ("conv_dtype", lambda: F.conv2d(_img(1, 1, 3, 3), _img(1, 1, 2, 2).double()), RuntimeError,
     r"Input type \(float\) and weight type \(double\) should be the same"),
    ("conv_groups", lambda: nn.Conv2d(3, 4, 3, groups=2), ValueError, "in_channels must be divisible by groups"),
    ("conv_out_groups", lambda: nn.Conv2d(4, 3, 3, groups=2), ValueError, "out_channels must be divisible by groups"),
    ("conv_padding_string", lambda: nn.Conv2d(1, 1, 3, padding="full"), ValueError, "Invalid padding string 'full'"),
    ("conv_same_strided", lambda: nn.Conv2d(1, 1, 3, stride=2, padding="same"), ValueError,
     "padding='same' is not supported for strided convolutions"),
    ("conv_padding_mode", lambda: nn.Conv2d(1, 1, 3, padding_mode="mirror"), ValueError,
     "padding_mode must be one of"),
    ("conv_reflect_too_wide", lambda: nn.Conv2d(1, 1, 3, padding=3, padding_mode="reflect")(_img(1, 1, 3, 3)),
     RuntimeError, "Padding size should be less than the corresponding input dimension"),
    ("pad_odd", lambda: F.pad(_img(2, 2), (1, 2, 3)), RuntimeError, "Padding length must be divisible by 2"),
    ("pad_mode", lambda: F.pad(_img(2, 2), (1, 1), mode="mirror"), NotImplementedError,
     "Unrecognised padding mode mirror"),
    ("pad_value", lambda: F.pad(_img(2, 2), (1, 1), mode="reflect", value=1.0), RuntimeError,
     "doesn't take in value argument"),
    ("pool_padding", lambda: F.max_pool2d(_img(1, 1, 4, 4), 2, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size"),
    ("avg_pool_padding", lambda: F.avg_pool2d(_img(1, 1, 4, 4), 3, padding=2), RuntimeError,
     "pad should be at most half of effective kernel size"),
    ("avg_pool_divisor", lambda: F.avg_pool2d(_img(1, 1, 4, 4), 2, divisor_override=0), RuntimeError,
     "divisor must be not zero"),
    ("dropout_p", lambda: nn.Dropout(1.5), ValueError, "dropout probability has to be between 0 and 1, but got 1.5"),
    ("dropout_fn_p", lambda: F.dropout(_img(3), -0.1), ValueError, "between 0 and 1"),
    ("batch_norm2d_rank", lambda: nn.BatchNorm2d(3)(_img(2, 3, 4)), ValueError, r"expected 4D input \(got 3D input\)"),
    ("batch_norm1d_rank", lambda: nn.BatchNorm1d(3)(_img(2, 3, 4, 4)), ValueError,
     r"expected 2D or 3D input \(got 4D input\)"),
    ("batch_norm_one_value", lambda: nn.BatchNorm1d(3)(_img(1, 3)), ValueError,
     r"Expected more than 1 value per channel when training, got input size \[1, 3\]"),
    ("layer_norm_shape", lambda: nn.LayerNorm(4)(_img(2, 3)), RuntimeError,
     r"Given normalized_shape=\[4\], expected input with shape \[\*, 4\], but got input of size\[2, 3\]"),
    ("embedding_range", lambda: nn.Embedding(3, 2)(torch.tensor([0, 3])), IndexError, "index out of range in self"),
    ("embedding_float", lambda: nn.Embedding(3, 2)(torch.tensor([0.0, 1.0])), RuntimeError,
     "'indices' to have one of the following scalar types: Long, Int"),
    ("embedding_padding", lambda: nn.Embedding(3, 2, padding_idx=3), AssertionError,
     "Padding_idx must be within num_embeddings"),
    ("ce_target_range", lambda: F.cross_entropy(_img(2, 3), torch.tensor([0, 3])), IndexError,
     "Target 3 is out of bounds."),
    ("ce_batch", lambda: F.cross_entropy(_img(2, 3), torch.tensor([0, 1, 2])), ValueError,
     r"Expected input batch_size \(2\) to match target batch_size \(3\)"),
    ("ce_target_dtype", lambda: F.nll_loss(_img(2, 3), torch.tensor([0.0, 1.0, 2.0]).reshape(3)[:2]), RuntimeError,
     "expected scalar type Long but found Float"),
    ("ce_prob_shape", lambda: F.cross_entropy(_img(2, 3), torch.zeros(2, 4)), RuntimeError,
     r"Expected target size \[2, 3\], got \[2, 4\]"),
    ("reduction", lambda: F.l1_loss(_img(2), _img(2), reduction="avg"), ValueError,
     "avg is not a valid value for reduction"),
    ("bce_size", lambda: F.binary_cross_entropy(_img(2, 1), _img(2)), ValueError,
     r"Using a target size \(torch.Size\(\[2\]\)\) that is different to the input size"),
    ("bce_range", lambda: F.binary_cross_entropy(torch.tensor([0.5, 1.5]), _img(2)), RuntimeError,
     "all elements of input should be between 0 and 1"),
    ("smooth_l1_beta", lambda: F.smooth_l1_loss(_img(2), _img(2), beta=-1.0), RuntimeError,
     "does not support negative values for beta"),
    ("flatten_order", lambda: _img(2, 3, 4).flatten(2, 1), RuntimeError,
     "flatten\\(\\) has invalid args: start_dim cannot come after end_dim"),
    ("flatten_dim", lambda: _img(2, 3).flatten(0, 5), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 5\)"),
    ("module_list_index", lambda: nn.ModuleList([nn.ReLU()])[3], IndexError, "index 3 is out of range"),
    ("module_list_extend", lambda: nn.ModuleList().extend(nn.ReLU()), TypeError,
     "ModuleList.extend should be called with an iterable"),
    ("module_dict_key", lambda: nn.ModuleDict()["missing"], KeyError, "missing"),
]


@pytest.mark.parametrize("make, error, message", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_input_raises_torchs_error(make, error, message):
    with pytest.raises(error, match=message) as info:
        make()
    assert "\n" not in str(info.value)


def test_shape_errors_in_compiled_code_name_the_users_line():
    import gradc
    from gradc.ops import nn as nn_ops

    def f(x):
        return nn_ops.max_pool2d(x, 5).sum()
    with pytest.raises(gradc.GradcError, match=r"kernel \(5, 5\) does not fit .*test_layers_api.py:\d+"):
        gradc.grad(f)(np.ones((1, 1, 3, 3)))


# ---------------------------------------------------------------- modes and buffers
def test_dropout_modes():
    torch.manual_seed(0)
    layer = nn.Dropout(0.5)
    x = torch.ones(200)
    out = layer(x)
    assert set(np.unique(out.numpy())) == {0.0, 2.0}
    layer.eval()
    assert layer(x) is x
    assert np.all(F.dropout(x, 0.0).numpy() == 1) and np.all(F.dropout(x, 1.0).numpy() == 0)
    assert F.dropout(x, 0.5, training=False) is x


def test_batch_norm_updates_running_stats_only_in_training():
    torch.manual_seed(0)
    bn = nn.BatchNorm1d(2)
    x = torch.randn(6, 2)
    bn(x)
    mean, var = bn.running_mean.numpy().copy(), bn.running_var.numpy().copy()
    np.testing.assert_allclose(mean, 0.1 * x.numpy().mean(0), rtol=1e-6)
    np.testing.assert_allclose(var, 0.9 + 0.1 * x.numpy().var(0, ddof=1), rtol=1e-6)
    assert int(bn.num_batches_tracked) == 1
    bn.eval()
    out = bn(x)
    np.testing.assert_allclose(out.detach().numpy(), (x.numpy() - mean) / np.sqrt(var + 1e-5), rtol=1e-5)
    np.testing.assert_array_equal(bn.running_mean.numpy(), mean)
    assert sorted(bn.state_dict()) == ["bias", "num_batches_tracked", "running_mean", "running_var", "weight"]


# ---------------------------------------------------------------- containers
def test_module_list():
    ml = nn.ModuleList([nn.Linear(2, 2), nn.ReLU()])
    ml.append(nn.Linear(2, 1))
    ml += [nn.Sigmoid()]
    ml.insert(1, nn.Tanh())
    assert [type(m).__name__ for m in ml] == ["Linear", "Tanh", "ReLU", "Linear", "Sigmoid"]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2 and ml[-1] is ml[4]
    del ml[1]
    assert [type(m).__name__ for m in ml] == ["Linear", "ReLU", "Linear", "Sigmoid"]
    ml[1] = nn.Tanh()
    assert type(ml[1]).__name__ == "Tanh"
    assert sorted(ml.state_dict()) == ["0.bias", "0.weight", "2.bias", "2.weight"]
    assert len(list(ml.parameters())) == 4


def test_module_list_prints_runs_once():
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)] + [nn.ReLU()])
    assert str(ml) == ("ModuleList(\n  (0-2): 3 x Linear(in_features=2, out_features=2, bias=True)\n"
                       "  (3): ReLU()\n)")
    assert str(nn.ModuleList()) == "ModuleList()"


def test_module_dict():
    md = nn.ModuleDict({"conv": nn.Conv2d(1, 2, 3), "act": nn.ReLU()})
    md.update([("pool", nn.MaxPool2d(2))])
    assert list(md) == ["conv", "act", "pool"] and "act" in md and len(md) == 3
    assert md.pop("act").__class__.__name__ == "ReLU"
    assert list(md.keys()) == ["conv", "pool"]
    assert sorted(md.state_dict()) == ["conv.bias", "conv.weight"]
    assert str(md) == ("ModuleDict(\n  (conv): Conv2d(1, 2, kernel_size=(3, 3), stride=(1, 1))\n"
                       "  (pool): MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)\n)")


def test_print_of_every_layer():
    layers = [nn.Conv2d(3, 8, (3, 5), stride=(2, 1), padding=1, dilation=2, groups=1, bias=False),
              nn.Conv2d(4, 4, 3, groups=4, padding="same"), nn.MaxPool2d(3, 1, 1, ceil_mode=True),
              nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((5, 7)), nn.BatchNorm1d(4, affine=False),
              nn.BatchNorm2d(6, momentum=None), nn.LayerNorm([3, 4], elementwise_affine=False),
              nn.Embedding(10, 3, padding_idx=0), nn.Dropout(p=0.2), nn.Flatten(), nn.Unflatten(1, (2, 5)),
              nn.Softmax(dim=-1), nn.LogSoftmax(1), nn.Identity(), nn.CrossEntropyLoss(), nn.NLLLoss(),
              nn.BCELoss(), nn.BCEWithLogitsLoss(), nn.L1Loss(), nn.SmoothL1Loss(), nn.HuberLoss()]
    assert [repr(m) for m in layers] == [
        "Conv2d(3, 8, kernel_size=(3, 5), stride=(2, 1), padding=(1, 1), dilation=(2, 2), bias=False)",
        "Conv2d(4, 4, kernel_size=(3, 3), stride=(1, 1), padding=same, groups=4)",
        "MaxPool2d(kernel_size=3, stride=1, padding=1, dilation=1, ceil_mode=True)",
        "AvgPool2d(kernel_size=2, stride=2, padding=0)",
        "AdaptiveAvgPool2d(output_size=(5, 7))",
        "BatchNorm1d(4, eps=1e-05, momentum=0.1, affine=False, bias=False, track_running_stats=True)",
        "BatchNorm2d(6, eps=1e-05, momentum=None, affine=True, bias=True, track_running_stats=True)",
        "LayerNorm((3, 4), eps=1e-05, elementwise_affine=False, bias=False)",
        "Embedding(10, 3, padding_idx=0)", "Dropout(p=0.2, inplace=False)", "Flatten(start_dim=1, end_dim=-1)",
        "Unflatten(dim=1, unflattened_size=(2, 5))", "Softmax(dim=-1)", "LogSoftmax(dim=1)", "Identity()",
        "CrossEntropyLoss()", "NLLLoss()", "BCELoss()", "BCEWithLogitsLoss()", "L1Loss()", "SmoothL1Loss()",
        "HuberLoss()"]


def test_flatten_and_unflatten_shapes():
    x = torch.zeros(2, 3, 4, 5)
    assert tuple(x.flatten().shape) == (120,)
    assert tuple(x.flatten(1).shape) == (2, 60)
    assert tuple(x.flatten(-3, -2).shape) == (2, 12, 5)
    assert tuple(torch.tensor(3.0).flatten().shape) == (1,)
    assert tuple(nn.Unflatten(1, (3, 20))(x.flatten(1)).shape) == (2, 3, 20)


def test_softmax_implicit_dim_warns_as_torch():
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax has been deprecated"):
        out = nn.Softmax()(torch.ones(2, 3))
    np.testing.assert_allclose(out.numpy(), np.full((2, 3), 1 / 3), rtol=1e-6)


def test_legacy_loss_arguments():
    assert nn.L1Loss(size_average=False).reduction == "sum"
    assert nn.MSELoss(reduce=False).reduction == "none"


def test_dropout_in_training_mode_is_not_compiled_silently():
    import gradc

    model = nn.Sequential(nn.Linear(3, 2), nn.Dropout(0.5))
    with pytest.raises(gradc.TraceError, match=r"dropout with p=0.5 in training mode cannot be compiled "
                                                r".*test_layers_api.py:\d+.*model.eval\(\)"):
        gradc.grad(lambda x: model(x).sum())(np.ones((4, 3), np.float32))
    model.eval()
    assert gradc.grad(lambda x: model(x).sum())(np.ones((4, 3), np.float32)).shape == (4, 3)


def test_compiled_batch_norm_in_training_mode_warns_that_running_stats_stay():
    import gradc

    bn = nn.BatchNorm1d(3)
    with pytest.warns(gradc.GradcWarning, match="does not update running_mean/running_var"):
        g = gradc.grad(lambda x: (bn(x) ** 3).sum())(np.arange(12.0).reshape(4, 3) ** 1.5)
    assert g.shape == (4, 3)
    np.testing.assert_array_equal(bn.running_mean.numpy(), np.zeros(3))
    assert int(bn.num_batches_tracked) == 0


@pytest.mark.parametrize("make, error, message", [
    (lambda: F.embedding_bag(torch.tensor([[0, 1]]), torch.zeros(3, 2), torch.tensor([0])), ValueError,
     "if input is 2D, then offsets has to be None"),
    (lambda: F.embedding_bag(torch.tensor([0, 1]), torch.zeros(3, 2)), ValueError,
     "offsets has to be a 1D Tensor but got None"),
    (lambda: F.embedding_bag(torch.tensor([0, 1]), torch.zeros(3, 2), torch.tensor([1])), ValueError,
     "offsets must start at 0"),
    (lambda: F.embedding_bag(torch.tensor([0, 7]), torch.zeros(3, 2), torch.tensor([0])), IndexError,
     "index out of range in self"),
    (lambda: F.embedding_bag(torch.tensor([0, 1]), torch.zeros(3, 2), torch.tensor([0]), mode="max"),
     NotImplementedError, "modes 'sum' and 'mean'"),
    (lambda: nn.EmbeddingBag(3, 2)(torch.tensor([0, 1]), torch.tensor([0]), torch.ones(2)), NotImplementedError,
     "per_sample_weights is only supported for mode='sum'"),
    (lambda: F.conv1d(torch.zeros(1, 3, 5), torch.zeros(2, 2, 3)), RuntimeError,
     r"expected input\[1, 3, 5\] to have 2 channels, but got 3 channels instead"),
    (lambda: F.max_pool1d(torch.zeros(1, 1, 5), 2, padding=2), RuntimeError, "pad should be at most half"),
], ids=["bag_2d_offsets", "bag_no_offsets", "bag_offsets_start", "bag_range", "bag_max", "bag_weights_mean",
        "conv1d_channels", "max_pool1d_padding"])
def test_bad_1d_and_bag_input(make, error, message):
    with pytest.raises(error, match=message):
        make()
