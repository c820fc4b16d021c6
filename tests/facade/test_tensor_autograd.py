"""Autograd semantics of the facade (values measured from torch 2.13.0)."""
import warnings

import pytest

import gradc.torch as torch


def names(node):
    return [None if n is None else type(n).__name__ for n, _ in node.next_functions]


def test_tutorial_graph_and_gradients():
    x = torch.ones(5)
    w = torch.tensor([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6], [-0.7, 0.8, 0.9], [1.0, -1.1, 1.2], [0.0, 0.3, -0.5]],
                     requires_grad=True)
    b = torch.tensor([0.5, -0.5, 0.25], requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, torch.zeros(3))
    assert type(z.grad_fn).__name__ == "AddBackward0"
    assert names(z.grad_fn) == ["SqueezeBackward4", "AccumulateGrad"]
    assert names(z.grad_fn.next_functions[0][0]) == ["MmBackward0"]
    assert names(loss.grad_fn) == ["AddBackward0", None]
    assert z.grad_fn.next_functions[1][0].variable is b
    loss.backward()
    assert b.grad.tolist() == pytest.approx(w.grad[0].tolist())


def test_node_protocol():
    a = torch.tensor([1., 2.], requires_grad=True)
    g = (a + 1).grad_fn
    assert type(g).__module__ == "builtins" and type(g).__repr__ is object.__repr__
    assert repr(type(g)) == "<class 'AddBackward0'>"
    assert g.name() == "AddBackward0"
    s = (a + a).grad_fn
    assert s.next_functions[0][0] is s.next_functions[1][0]
    assert names((1 - a).grad_fn) == ["AccumulateGrad"]
    assert names((2 / a).grad_fn) == ["ReciprocalBackward0", None]


def test_accumulation_zero_and_reset():
    x = torch.tensor([1., 2.], requires_grad=True)
    for k in (1, 2, 3):
        (x * x).sum().backward()
        assert x.grad.tolist() == [2. * k, 4. * k]
    g = x.grad
    assert x.grad.zero_() is g and x.grad is g
    x.grad = None
    (x * 3).sum().backward()
    assert x.grad.tolist() == [3., 3.] and x.grad.is_leaf and not x.grad.requires_grad


def test_second_backward_rule():
    x = torch.tensor([1., 2.], requires_grad=True)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2., 2.]
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()


def test_version_counter():
    b = torch.tensor([1., 2.], requires_grad=True)
    y = b * 2
    z = y * y
    y.detach().add_(1)
    assert y._version == 1
    with pytest.raises(RuntimeError, match=r"\[torch.FloatTensor \[2\]\], which is output 0 of Mul, is at version 1"):
        z.sum().backward()
    y = b * 2
    z = y + 3
    y.add_(1)
    z.sum().backward()


def test_inplace_rules():
    b = torch.tensor([1., 2.], requires_grad=True)
    with pytest.raises(RuntimeError, match="^a leaf Variable that requires grad"):
        b.add_(1)
    with pytest.raises(RuntimeError, match="^a view of a leaf Variable"):
        b[0] = 5.
    y = b * 2
    y.add_(1)
    assert type(y.grad_fn).__name__ == "AddBackward0"
    y.mul_(2)
    y.sum().backward()
    assert b.grad.tolist() == [4., 4.]
    with torch.no_grad():
        b -= 0.5 * b.grad
    assert b.is_leaf and b.requires_grad and b.tolist() == [-1., 0.]


def test_grad_modes():
    x = torch.tensor([1., 2.], requires_grad=True)
    with torch.no_grad() as ctx:
        assert ctx is None and not torch.is_grad_enabled()
        with torch.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad
    assert torch.is_grad_enabled()

    @torch.no_grad
    def f(t):
        return t * 2
    assert not f(x).requires_grad and f.__name__ == "f"
    torch.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    torch.set_grad_enabled(True)
    assert (x * 2).requires_grad


def test_nonleaf_grad_warning_and_retain_grad():
    a = torch.tensor([1., 2.], requires_grad=True)
    y = a * 2
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        assert y.grad is None
    assert len(w) == 1 and "not a leaf Tensor" in str(w[0].message)
    y2 = a * 3
    y2.retain_grad()
    (y2 * y2).sum().backward()
    assert y2.grad.tolist() == [6., 12.]


def test_autograd_grad_and_higher_order():
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    g, = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
    assert repr(g) == "tensor([ 3., 12., 27.], grad_fn=<MulBackward0>)"
    g2, = torch.autograd.grad(g.sum(), x)
    assert g2.tolist() == [6., 12., 18.] and x.grad is None
    s = torch.tensor(2., requires_grad=True)
    (s ** 3).backward(create_graph=True)
    assert repr(s.grad) == "tensor(12., grad_fn=<CopyBackwards>)"


def test_broadcast_and_dtype_grads():
    M = torch.tensor([[1., 2., 3.], [4., 5., 6.]], requires_grad=True)
    c = torch.tensor([[1.], [2.]], requires_grad=True)
    s = torch.tensor(2., requires_grad=True)
    (M + c).sum().backward()
    (M * s).sum().backward()
    assert c.grad.tolist() == [[3.], [3.]] and repr(s.grad) == "tensor(21.)"
    x32 = torch.tensor([1., 2.], requires_grad=True)
    x64 = torch.tensor([3., 4.], dtype=torch.float64, requires_grad=True)
    (x32 * x64).sum().backward()
    assert str(x32.grad.dtype) == "torch.float32" and str(x64.grad.dtype) == "torch.float64"


def test_error_texts():
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    with pytest.raises(RuntimeError, match="^grad can be implicitly created only for scalar outputs$"):
        (a * 2).backward()
    with pytest.raises(RuntimeError, match="^element 0 of tensors does not require grad"):
        torch.tensor(1.).backward()
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape of torch.Size\(\[2\]\)"):
        (a * 2).backward(torch.ones(2))
    with pytest.raises(RuntimeError, match=r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 2x3\)"):
        torch.ones(2, 3) @ torch.ones(2, 3)
    with pytest.raises(RuntimeError, match="^Only Tensors of floating point and complex dtype"):
        torch.tensor([1, 2], requires_grad=True)
    with pytest.raises(IndexError, match="index 5 is out of bounds for dimension 0 with size 3"):
        a[5]
    with pytest.raises(RuntimeError, match="Use tensor.detach"):
        a.numpy()


def test_losses():
    F = torch.nn.functional
    x = torch.tensor([1., 2., 3.], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(x, torch.tensor([0., 1., 0.]))
    loss.backward()
    assert repr(loss) == "tensor(1.4963, grad_fn=<BinaryCrossEntropyWithLogitsBackward0>)"
    assert [round(v, 4) for v in x.grad.tolist()] == [0.2437, -0.0397, 0.3175]
    m = torch.tensor([[1., 2., 3.], [1., 0., -1.]], requires_grad=True)
    assert repr(F.cross_entropy(m, torch.tensor([2, 0]))) == "tensor(0.4076, grad_fn=<NllLossBackward0>)"


def test_rng_streams():
    torch.manual_seed(0)
    w = torch.randn(5, 3)
    assert [round(v, 4) for v in w[0].tolist()] == [1.541, -0.2934, -2.1788]
    torch.manual_seed(0)
    a = torch.randn(3)
    b = torch.randn(1)
    torch.manual_seed(0)
    assert torch.randn(4).tolist() == a.tolist() + b.tolist()
    assert str(torch.rand(2).dtype) == "torch.float32"


def test_hooks_saved_values_and_custom_function():
    a = torch.tensor([1., 2.], requires_grad=True)
    y = a * a
    assert y.grad_fn._saved_self is a and (a + 1).grad_fn._saved_alpha == 1
    handle = a.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert a.grad.tolist() == [20., 40.]
    handle.remove()
    with pytest.raises(RuntimeError, match="second time"):
        _ = y.grad_fn._saved_self

    class Cube(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return g * 3 * x ** 2
    x = torch.tensor([1., 2.], requires_grad=True)
    out = Cube.apply(x)
    assert type(out.grad_fn).__name__ == "CubeBackward"
    out.sum().backward()
    assert x.grad.tolist() == [3., 12.]
    assert repr(torch.set_grad_enabled(True)) == "torch.autograd.grad_mode.set_grad_enabled(mode=True)"
    assert repr(torch.no_grad()).startswith("<torch.autograd.grad_mode.no_grad object at 0x")


def test_inplace_through_views_of_graph_tensors():
    a = torch.tensor([1., 2., 3.], requires_grad=True)
    y = a * 2
    v = y[0:1]
    v.mul_(3)
    assert type(y.grad_fn).__name__ == "CopySlices" and y._version == v._version == 1
    y.sum().backward()
    assert a.grad.tolist() == [6., 2., 2.]
    a.grad = None
    y = a * 2
    y[1] = y[0] * 5
    y.sum().backward()
    assert a.grad.tolist() == [12., 0., 2.]


def test_randn_float64_uses_the_double_values():
    torch.manual_seed(0)
    d = torch.randn(3, dtype=torch.float64)
    torch.manual_seed(0)
    f = torch.randn(3)
    assert str(d.dtype) == "torch.float64" and d.tolist() != f.tolist()
    assert [round(v, 6) for v in d.tolist()] == [round(v, 6) for v in f.tolist()]
