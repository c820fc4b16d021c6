"""torch.compile's guards (gradc.facade.compile_guards): state a compiled function read that changed since
it was traced re-traces, and the result equals eager after every kind of change."""
import warnings

import numpy as np
import pytest

import gradc.torch as torch
from gradc.torch import nn

SCALE = 2.0


def _helper(v):
    return v * SCALE


class Scaled(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(2, 1)
        self.scale = 2.0

    def forward(self, x):
        return _helper(self.lin(x)) * self.scale


def agree(compiled, eager, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, never an eager fallback
        got = compiled(*args)
    np.testing.assert_allclose(got.detach().numpy(), eager(*args).detach().numpy(), rtol=1e-6)


def test_module_attribute_change_re_traces():
    m = Scaled()
    f = torch.compile(m)
    x = torch.ones(3, 2)
    agree(f, m, x)
    m.scale = 5.0
    agree(f, m, x)


def test_rebound_global_read_by_a_helper_re_traces():
    global SCALE
    m = Scaled()
    f = torch.compile(m)
    direct = torch.compile(lambda x: x * SCALE)
    x = torch.ones(3, 2)
    agree(f, m, x)
    agree(direct, lambda x: x * SCALE, x)
    try:
        SCALE = 3.0
        agree(f, m, x)
        agree(direct, lambda x: x * SCALE, x)
    finally:
        SCALE = 2.0


def test_mutated_list_and_dict_in_a_closure_re_trace():
    coefs = [1.0, 2.0]
    table = {"shift": 0.5, "w": torch.tensor([1.0, 2.0])}

    def f(x):
        return x * coefs[0] + coefs[1] + table["shift"] + x * table["w"]

    g = torch.compile(f)
    x = torch.ones(2)
    agree(g, f, x)
    coefs[0] = 10.0
    agree(g, f, x)
    table["shift"] = -4.0
    agree(g, f, x)
    table["w"].mul_(3.0)  # a tensor that is not an input, changed in place
    agree(g, f, x)
    table["w"] = torch.tensor([7.0, 8.0])  # and replaced
    agree(g, f, x)


def test_requires_grad_toggled_on_a_tensor_that_is_not_an_input():
    table = {"w": torch.tensor([1.0, 2.0])}

    def f(x):
        return (x * table["w"]).sum()

    g = torch.compile(f)
    x = torch.tensor([3.0, 4.0], requires_grad=True)
    g(x).backward()
    table["w"].requires_grad_(True)
    with pytest.warns(UserWarning, match="requires grad but is neither"):  # re-traced: now it needs a gradient
        g(x).backward()
    assert table["w"].grad.tolist() == [3.0, 4.0]


def test_plain_object_attribute_and_default_argument_re_trace():
    class Config:
        power = 2

    config = Config()

    def f(x, offset=1.0):
        return x ** config.power + offset

    g = torch.compile(f)
    x = torch.tensor([1.5, 2.0])
    agree(g, f, x)
    config.power = 3
    agree(g, f, x)
    f.__defaults__ = (4.0,)
    agree(g, f, x)


def test_module_tensor_attribute_that_is_not_a_buffer():
    m = Scaled()
    m.mask = torch.tensor([[1.0], [0.0], [1.0]])
    g = torch.compile(lambda x: m(x) * m.mask)
    x = torch.ones(3, 2)
    agree(g, lambda x: m(x) * m.mask, x)
    m.mask[1] = 3.0
    agree(g, lambda x: m(x) * m.mask, x)


def test_parameter_replaced_requires_grad_toggled_and_mode_switched():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5), nn.Linear(4, 1))
    f = torch.compile(model)
    x = torch.ones(2, 3)
    model.eval()
    agree(f, model, x)
    model[0].weight = nn.Parameter(torch.full((4, 3), 0.25))
    agree(f, model, x)
    out = f(x).sum()
    out.backward()
    grad = model[0].weight.grad.numpy().copy()
    model[0].weight.grad = None
    model(x).sum().backward()
    np.testing.assert_allclose(grad, model[0].weight.grad.numpy(), rtol=1e-6)
    model[0].weight.requires_grad_(False)
    assert f(x).grad_fn is not None and model[2].weight.requires_grad
    model[0].weight.grad = None
    f(x).sum().backward()
    assert model[0].weight.grad is None and model[2].weight.grad is not None
    model.train()
    torch.manual_seed(3)
    got = f(x)
    torch.manual_seed(3)
    np.testing.assert_allclose(got.detach().numpy(), model(x).detach().numpy(), rtol=1e-6)


def test_submodule_replaced_re_traces():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin, self.act = nn.Linear(2, 2), nn.ReLU()

        def forward(self, x):
            return self.act(self.lin(x))

    model = Net()
    f = torch.compile(model)
    x = torch.tensor([[-1.0, 2.0], [3.0, -4.0]])
    agree(f, model, x)
    model.act = nn.Tanh()
    agree(f, model, x)


def test_recompile_limit_falls_back_to_eager_with_a_warning():
    state = {"k": 0.0}

    def f(x):
        return x + state["k"]

    g = torch.compile(f)
    x = torch.zeros(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(12):
            state["k"] = float(k)
            assert g(x).item() == k
    assert g._recompiles > 8


def test_a_function_changing_python_state_it_reads_runs_eagerly():
    calls = []

    def f(x):
        calls.append(1)
        return x * len(calls)

    g = torch.compile(f)
    with pytest.warns(UserWarning, match="changes Python state it reads"):
        g(torch.ones(1))
    n = len(calls)
    assert g(torch.ones(1)).item() == n + 1  # eager: the list grows at each call
