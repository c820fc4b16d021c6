"""Text forms of facade tensors (expected strings measured from torch 2.13.0)."""
import gradc.torch as torch


def r(*args, **kwargs):
    return repr(torch.tensor(*args, **kwargs))


def test_zero_dim_values():
    assert r(1.) == "tensor(1.)"
    assert r(0.5) == "tensor(0.5000)"
    assert r(2 / 3) == "tensor(0.6667)"
    assert r(3) == "tensor(3)"
    assert r(True) == "tensor(True)"
    assert r(1e-5) == "tensor(1.0000e-05)"
    assert r(1e8) == "tensor(100000000.)"
    assert r(123456.7) == "tensor(123456.7031)"


def test_one_dim_modes_and_alignment():
    assert r([1., -2., 3.]) == "tensor([ 1., -2.,  3.])"
    assert r([100., 2.5]) == "tensor([100.0000,   2.5000])"
    assert r([1., 1000.]) == "tensor([   1., 1000.])"
    assert r([10000., 2.5]) == "tensor([1.0000e+04, 2.5000e+00])"
    assert r([0.0001, 1.]) == "tensor([1.0000e-04, 1.0000e+00])"
    assert r([float("nan"), 1.]) == "tensor([nan, 1.])"
    assert r([float("inf"), 1.5]) == "tensor([   inf, 1.5000])"
    assert r([-1, 20, 300]) == "tensor([ -1,  20, 300])"
    assert r([True, False]) == "tensor([ True, False])"


def test_float32_storage_is_visible():
    assert r([12345.678]) == "tensor([12345.6777])"
    assert torch.tensor(0.1).item() == 0.10000000149011612


def test_two_and_three_dims():
    assert r([[1., 2.], [3., 4.]]) == "tensor([[1., 2.],\n        [3., 4.]])"
    assert repr(torch.ones(2, 1, 3, requires_grad=True)) == (
        "tensor([[[1., 1., 1.]],\n\n        [[1., 1., 1.]]], requires_grad=True)")


def test_suffixes_and_wrapping():
    assert r([1., 2.], dtype=torch.float64) == "tensor([1., 2.], dtype=torch.float64)"
    assert r([1, 2], dtype=torch.int32) == "tensor([1, 2], dtype=torch.int32)"
    assert repr(torch.tensor([1.5] * 9, requires_grad=True)) == (
        "tensor([1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000],\n"
        "       requires_grad=True)")
    assert repr(torch.ones(30)).count("\n") == 1
    a = torch.tensor([1., 2.], requires_grad=True)
    assert repr(a * 2) == "tensor([2., 4.], grad_fn=<MulBackward0>)"


def test_summary_and_empty():
    assert repr(torch.ones(1001)) == "tensor([1., 1., 1.,  ..., 1., 1., 1.])"
    assert r([]) == "tensor([])"
    assert repr(torch.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert r([], dtype=torch.int64) == "tensor([], dtype=torch.int64)"


def test_format_and_shapes():
    loss = torch.tensor(0.6819)
    assert f"{loss:.3f}" == "0.682"
    assert f"{torch.tensor(1.5)}" == "1.5"
    assert str(torch.ones(1, 2).shape) == "torch.Size([1, 2])"
    assert str(torch.ones(2).dtype) == "torch.float32"
    try:
        "{:.2f}".format(torch.ones(2))
    except TypeError as e:
        assert "unsupported format string" in str(e)
    else:
        raise AssertionError("no TypeError")
