"""Seeded differential fuzzing of the facade (gradc.torch) against real torch 2.13.0.

Each generated program is run on both modules from the same seed; values, dtypes, shapes,
leaf .grad and the raise/no-raise outcome must agree. CI-sized by default; set
GRADC_FUZZ_LONG=1 for many more programs.
"""
import os

import numpy as np
import pytest

import gradc.torch as facade

real_torch = pytest.importorskip("torch")

N_PROGRAMS = 2000 if os.environ.get("GRADC_FUZZ_LONG") == "1" else 60

UNARY = ["exp", "tanh", "sigmoid", "sin", "cos", "abs", "neg", "relu", "square"]
REDUCE = ["sum", "mean", "amax", "prod"]
BINARY = ["add", "sub", "mul", "maximum"]


def make_program(seed: int):
    """Return (inputs, steps): numpy leaves and a list of op descriptions, all from `seed`."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 4, size=rng.integers(1, 4)))
    dtype = str(rng.choice(["float32", "float64"]))
    a = rng.uniform(-1.5, 1.5, shape).astype(dtype)
    b_shape = shape[int(rng.integers(0, len(shape))):]  # trailing dims broadcast
    b = rng.uniform(-1.5, 1.5, b_shape).astype(dtype)
    steps = []
    for _ in range(int(rng.integers(1, 5))):
        kind = rng.integers(0, 4)
        if kind == 0:
            steps.append(("unary", str(rng.choice(UNARY))))
        elif kind == 1:
            steps.append(("binary", str(rng.choice(BINARY))))
        elif kind == 2:
            steps.append(("slice", int(rng.integers(-1, 1))))
        else:
            steps.append(("reduce", str(rng.choice(REDUCE)), bool(rng.integers(0, 2))))
    return a, b, steps


def run(T, a, b, steps):
    x = T.tensor(a, requires_grad=True)
    y = T.tensor(b, requires_grad=True)
    h = x
    for step in steps:
        if step[0] == "unary":
            h = getattr(T, step[1])(h) if step[1] != "relu" else T.relu(h)
        elif step[0] == "binary":
            h = getattr(T, step[1])(h, y)
        elif step[0] == "slice":
            if h.dim() > 0 and h.shape[0] > 1:
                h = h[step[1]] if step[1] == -1 else h[1:]
        else:
            name, keepdim = step[1], step[2]
            if h.dim() > 0:
                h = getattr(h, name)(dim=-1, keepdim=keepdim)
    out = h.sum()
    out.backward()
    grads = [None if t.grad is None else t.grad.detach().numpy().copy() for t in (x, y)]
    return h.detach().numpy().copy(), str(h.dtype), tuple(h.shape), grads


def outcome(T, a, b, steps):
    try:
        return run(T, a, b, steps)
    except Exception as exc:  # the raise/no-raise outcome is part of the comparison
        return type(exc)


@pytest.mark.parametrize("seed", range(N_PROGRAMS))
def test_facade_matches_torch(seed):
    a, b, steps = make_program(seed)
    want = outcome(real_torch, a, b, steps)
    got = outcome(facade, a, b, steps)
    if isinstance(want, type):
        assert isinstance(got, type), f"torch raised {want.__name__}, facade did not: {steps}"
        return
    assert not isinstance(got, type), f"facade raised {got.__name__}, torch did not: {steps}"
    tol = 1e-5 if a.dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got[0], want[0], rtol=tol, atol=tol, err_msg=str(steps))
    assert got[1].split(".")[-1] == want[1].split(".")[-1], steps
    assert got[2] == want[2], steps
    for g, w in zip(got[3], want[3]):
        assert (g is None) == (w is None), steps
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=tol * 10, atol=tol * 10, err_msg=str(steps))


PROMOTE_DTYPES = ["float32", "float64", "int64", "int32", "bool"]


def promotion_case(T, seed):
    rng = np.random.default_rng(seed)
    da, db = (str(d) for d in rng.choice(PROMOTE_DTYPES, 2))
    op = str(rng.choice(["add", "mul", "maximum"]))
    a = T.tensor(rng.integers(0, 3, (2, 3)).astype(da))
    b = T.tensor(rng.integers(0, 3, (3,)).astype(db))
    try:
        r = getattr(T, op)(a, b)
    except Exception as exc:
        return type(exc)
    return r.numpy().copy(), str(r.dtype).split(".")[-1]


@pytest.mark.parametrize("seed", range(N_PROGRAMS // 2))
def test_dtype_promotion_matches_torch(seed):
    want, got = promotion_case(real_torch, seed), promotion_case(facade, seed)
    if isinstance(want, type):
        assert isinstance(got, type)
        return
    assert not isinstance(got, type), got
    assert got[1] == want[1]
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("seed", range(10))
def test_grad_accumulates_across_backward_calls(seed):
    a, b, steps = make_program(seed)
    results = []
    for T in (real_torch, facade):
        x = T.tensor(a, requires_grad=True)
        for _ in range(2):
            (x.tanh() * 2).sum().backward()
        results.append(x.grad.detach().numpy().copy())
    np.testing.assert_allclose(results[1], results[0], rtol=1e-5, atol=1e-6)


def inplace_view_case(T, seed):
    """In-place update of a view of a non-leaf under autograd, then detach/no_grad reads."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (3, 4))
    x = T.tensor(a, requires_grad=True)
    h = x * 1.5
    view = h[int(rng.integers(-3, 3))] if rng.integers(0, 2) else h[:, 1:3]
    getattr(view, str(rng.choice(["mul_", "add_"])))(float(rng.uniform(0.5, 2)))
    with T.no_grad():
        frozen = (h.detach() * 2).sum()
    (h.sin() * h).sum().backward()
    return h.detach().numpy().copy(), x.grad.numpy().copy(), frozen.requires_grad, float(frozen)


@pytest.mark.parametrize("seed", range(N_PROGRAMS // 3))
def test_inplace_on_views_matches_torch(seed):
    want, got = inplace_view_case(real_torch, seed), inplace_view_case(facade, seed)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-12, atol=1e-12)
    assert got[2] == want[2]
    assert got[3] == pytest.approx(want[3], rel=1e-12)


def training_step_case(T, seed):
    """One Linear layer, a loss and two optimiser steps from identical weights."""
    rng = np.random.default_rng(seed)
    n_in, n_out = int(rng.integers(1, 5)), int(rng.integers(2, 5))
    layer = T.nn.Linear(n_in, n_out).double()
    with T.no_grad():
        layer.weight.copy_(T.tensor(rng.uniform(-1, 1, (n_out, n_in))))
        layer.bias.copy_(T.tensor(rng.uniform(-1, 1, n_out)))
    data = T.tensor(rng.uniform(-1, 1, (5, n_in)))
    use_ce = bool(rng.integers(0, 2))
    target = T.tensor(rng.integers(0, n_out, 5)) if use_ce else T.tensor(rng.uniform(-1, 1, (5, n_out)))
    loss_fn = T.nn.CrossEntropyLoss() if use_ce else T.nn.MSELoss()
    opt_name = str(rng.choice(["SGD", "Adam"]))
    opt = getattr(T.optim, opt_name)(layer.parameters(), lr=0.1)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = loss_fn(layer(data), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy()


@pytest.mark.parametrize("seed", range(N_PROGRAMS // 4))
def test_training_steps_match_torch(seed):
    want, got = training_step_case(real_torch, seed), training_step_case(facade, seed)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-10)
    np.testing.assert_allclose(got[1], want[1], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-10, atol=1e-12)
