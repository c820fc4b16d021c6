"""Optimiser and scheduler behaviour beyond the recorded trajectories: closures, groups, warnings, independence
from autograd, and SGD with momentum against the textbook update written out in NumPy."""
import warnings

import numpy as np
import pytest

import gradc.torch as torch


def _quadratic(dtype=torch.float64):
    w = torch.nn.Parameter(torch.tensor([1.0, -2.0, 0.5], dtype=dtype))
    target = torch.tensor([0.3, 0.1, -0.4], dtype=dtype)
    return w, lambda: ((w - target) ** 2).sum()


def test_sgd_momentum_nesterov_weight_decay_against_numpy():
    w, loss_fn = _quadratic()
    opt = torch.optim.SGD([w], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
    x, buf = np.array([1.0, -2.0, 0.5]), None
    target = np.array([0.3, 0.1, -0.4])
    for _ in range(15):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
        g = 2 * (x - target) + 0.01 * x
        buf = g.copy() if buf is None else 0.9 * buf + g
        x = x - 0.1 * (g + 0.9 * buf)
        np.testing.assert_allclose(w.detach().numpy(), x, rtol=1e-13)


def test_adam_against_numpy():
    w, loss_fn = _quadratic()
    opt = torch.optim.Adam([w], lr=0.05, betas=(0.8, 0.95), eps=1e-6)
    x, m, v = np.array([1.0, -2.0, 0.5]), np.zeros(3), np.zeros(3)
    target = np.array([0.3, 0.1, -0.4])
    for t in range(1, 16):
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
        g = 2 * (x - target)
        m = 0.8 * m + 0.2 * g
        v = 0.95 * v + 0.05 * g * g
        x = x - 0.05 * (m / (1 - 0.8 ** t)) / (np.sqrt(v / (1 - 0.95 ** t)) + 1e-6)
        np.testing.assert_allclose(w.detach().numpy(), x, rtol=1e-12)


def test_step_records_no_graph_and_keeps_parameter_objects():
    w, loss_fn = _quadratic(torch.float32)
    before = w
    opt = torch.optim.RMSprop([w], lr=0.01, momentum=0.5, centered=True)
    loss_fn().backward()
    opt.step()
    assert w is before and w.is_leaf and w.grad_fn is None and w.requires_grad


def test_closure_and_parameters_without_grad():
    w, loss_fn = _quadratic()
    frozen = torch.nn.Parameter(torch.ones(2, dtype=torch.float64))
    opt = torch.optim.SGD([w, frozen], lr=0.1)

    def closure():
        opt.zero_grad()
        loss = loss_fn()
        loss.backward()
        return loss

    first = opt.step(closure).item()
    assert opt.step(closure).item() < first
    assert frozen.tolist() == [1.0, 1.0] and opt.state_dict()["state"] == {}


def test_add_param_group_and_errors():
    w, _ = _quadratic()
    b = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
    opt = torch.optim.Adam([w], lr=0.1)
    opt.add_param_group({"params": b, "lr": 0.5})
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5] and opt.param_groups[1]["betas"] == (0.9, 0.999)
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [w]})
    with pytest.raises(TypeError, match="ordered collections"):
        torch.optim.SGD([w], lr=0.1).add_param_group({"params": {b}})


def test_scheduler_before_optimizer_warns():
    w, _ = _quadratic()
    opt = torch.optim.SGD([w], lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1)
    with pytest.warns(UserWarning, match="before `optimizer.step\\(\\)`"):
        sched.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_load_state_dict_mismatch():
    w, _ = _quadratic()
    opt = torch.optim.SGD([w], lr=0.1)
    other = torch.optim.SGD([w, torch.nn.Parameter(torch.ones(1))], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict(other.state_dict())
