"""nn.Module details not covered by the recorded torch cases: hooks, Sequential indexing, lookups, copies."""
import copy

import pytest

import gradc.torch as torch
from gradc.torch import nn


def test_forward_hooks_run_and_can_be_removed():
    model = nn.Linear(2, 3)
    seen = []
    pre = model.register_forward_pre_hook(lambda m, args: (args[0] * 0,))
    post = model.register_forward_hook(lambda m, args, out: seen.append(out.shape) or out + 1)
    out = model(torch.ones(4, 2))
    assert seen == [torch.Size([4, 3])]
    assert torch.allclose(out, model.bias.detach().expand(4, 3) + 1)
    assert torch.equal(out[0], out[1]) and not torch.allclose(out, out + 1e-3)
    pre.remove()
    post.remove()
    assert model(torch.zeros(1, 2)).tolist() == [model.bias.tolist()]


def test_sequential_indexing_slicing_and_append():
    seq = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
    assert isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.Linear) and len(seq) == 3
    tail = seq[1:]
    assert isinstance(tail, nn.Sequential) and [n for n, _ in tail.named_children()] == ["1", "2"]
    assert tail[1] is seq[2]
    seq.append(nn.Sigmoid())
    assert [type(m).__name__ for m in seq] == ["Linear", "ReLU", "Linear", "Sigmoid"]
    with pytest.raises(IndexError):
        seq[4]


def test_lookups_by_path():
    model = nn.Sequential(nn.Sequential(nn.Linear(2, 2)))
    assert model.get_submodule("0.0") is model[0][0]
    assert model.get_parameter("0.0.bias") is model[0][0].bias
    with pytest.raises(AttributeError, match="has no attribute `9`"):
        model.get_submodule("9")


def test_deepcopy_gives_independent_parameters():
    model = nn.Sequential(nn.Linear(2, 2))
    clone = copy.deepcopy(model)
    with torch.no_grad():
        clone[0].weight.fill_(0.0)
    assert model[0].weight.abs().sum().item() > 0
    assert isinstance(clone[0].weight, nn.Parameter) and clone[0].weight.requires_grad


def test_missing_forward_and_early_assignment():
    class NoForward(nn.Module):
        pass

    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        NoForward()(torch.ones(1))

    class Early(nn.Module):
        def __init__(self):
            self.layer = nn.Linear(1, 1)
            super().__init__()

    with pytest.raises(AttributeError, match="cannot assign module before Module.__init__"):
        Early()


def test_linear_initialisation_is_torchs_stream():
    # values printed by torch 2.13.0 after torch.manual_seed(0), bit for bit (float64: fused multiply-add)
    torch.manual_seed(0)
    layer = nn.Linear(3, 2)
    assert layer.weight.tolist() == [[-0.004322517663240433, 0.3097158372402191, -0.4751853346824646],
                                     [-0.4248946011066437, -0.2223689705133438, 0.15482072532176971]]
    assert layer.bias.tolist() == [-0.011439144611358643, 0.45777493715286255]
    torch.manual_seed(0)
    layer = nn.Linear(3, 2, dtype=torch.float64)
    assert layer.weight.tolist() == [[0.5427704542528101, 0.23996970930833816, -0.046900537438113156],
                                     [0.48583757737745076, 0.16745942958373372, 0.3361886278485809]]
    assert layer.bias.tolist() == [-0.3711136225274598, -0.17192610627289664]
