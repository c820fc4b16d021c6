"""Fast-lane nodes are their own VJP (``gradc.facade.fast_nodes``): gradients equal to the general path's and to
central differences for every lane, a renamed node keeps its lane, a refused derivative on a lane node refuses as
torch does and makes no reference cycle (the graph is freed with the cyclic collector off)."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade import fast_ops, record
from gradc.facade import grad_fn as gf

LANES = {
    "BinaryNode": lambda x, c: x * c + x / (c + 2.0) - c * 0.5 * x,
    "SquareNode": lambda x, c: x ** 2 * c,
    "ReduceNode": lambda x, c: x.sum() * c,
    "UnaryNode": lambda x, c: torch.tanh(x) * c,
    "ViewNode": lambda x, c: x[1:] * c[1:],
}


def _value_and_grad(f, data, c):
    x = torch.tensor(data, requires_grad=True)
    y = f(x, torch.tensor(c)).sum()
    y.backward()
    return float(y.detach()), x.grad.numpy()


def _general(monkeypatch, *args):
    with monkeypatch.context() as m:
        for name in ("binary", "unary", "basic_view", "reduce_all"):
            m.setattr(fast_ops, name, lambda *a, **k: None)
        return _value_and_grad(*args)


@pytest.mark.parametrize("lane", sorted(LANES))
@pytest.mark.parametrize("seed", range(3))
def test_lane_gradients(monkeypatch, lane, seed):
    rng = np.random.default_rng(seed)
    data, c = rng.uniform(0.5, 2.0, 4), rng.uniform(0.5, 2.0, 4)
    f = LANES[lane]
    x = torch.tensor(data, requires_grad=True)
    node = f(x, torch.tensor(c)).grad_fn
    lanes = {type(n).__mro__[1].__name__ for n in _nodes(node)}
    assert lane in lanes
    value, grad = _value_and_grad(f, data, c)
    value0, grad0 = _general(monkeypatch, f, data, c)
    assert value == value0
    np.testing.assert_array_equal(grad, grad0)  # the same bits
    h = 1e-6
    for i in range(4):
        e = np.zeros(4)
        e[i] = h
        numeric = (_value_and_grad(f, data + e, c)[0] - _value_and_grad(f, data - e, c)[0]) / (2 * h)
        assert abs(numeric - grad[i]) < 1e-6 * max(1.0, abs(numeric))


def _nodes(node):
    seen, stack = [], [node]
    while stack:
        n = stack.pop()
        if n is not None and n not in seen:
            seen.append(n)
            stack.extend(n._edges)
    return seen


def test_lane_nodes_hold_no_vjp_object():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = torch.tanh(x * x + x[0]).sum()
    for n in _nodes(y.grad_fn):
        if type(n).__name__ != "AccumulateGrad":
            assert type(n)._LANE is not None and "_vjp" not in n.__dict__, type(n).__name__


def test_renamed_lane_node_keeps_its_vjp():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3.0
    gf.rename(y, "RenamedBackward0")
    assert type(y.grad_fn).__name__ == "RenamedBackward0"
    y.sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


def test_refused_derivative_on_a_lane_node_refuses_and_makes_no_cycle():
    was = gc.isenabled()
    gc.disable()
    try:
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = torch.tanh(x)
        gf.refuse_derivative(y, 0, "not implemented here")
        node = weakref.ref(y.grad_fn)
        with pytest.raises(NotImplementedError, match="not implemented here"):
            y.sum().backward()
        del y
        assert node() is None  # freed by reference counting alone
        z = x * 2.0
        gf.refuse_derivative(z, 1, "the other slot")  # a slot that needs nothing: the gradient still flows
        z.sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
    finally:
        if was:
            gc.enable()


@pytest.mark.parametrize("case", ["mul_self", "mul_other", "sigmoid_out", "tanh_out", "square"])
def test_saved_tensors_of_lane_nodes_as_torch(case):
    real = pytest.importorskip("torch")
    results = []
    for T in (torch, real):
        x = T.tensor([0.5, -1.5, 2.0], dtype=T.float64, requires_grad=True)
        a, b = x * 1.0, x * 2.0
        y = {"mul_self": a * b, "mul_other": a * b, "sigmoid_out": T.sigmoid(a), "tanh_out": T.tanh(a),
             "square": a ** 2}[case]
        node = y.grad_fn
        saved = node._saved_result if case.endswith("_out") else (
            node._saved_other if case == "mul_other" else node._saved_self)
        results.append(np.round(saved.detach().numpy(), 12).tolist())
        with T.no_grad():
            (b if case == "mul_other" else a).add_(1.0)  # a saved operand (or the output's input) changed in place
        if case.endswith("_out"):
            with T.no_grad():
                y.mul_(1.0)  # the saved output changed in place
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        results.append(str(info.value).split(";")[0].replace("torch::autograd::", ""))
    assert results[:2] == results[2:]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("seed", range(4))
def test_multi_step_unary_node_keeps_one_flat_tape(monkeypatch, dtype, seed):
    """sigmoid is four primitive steps: its node keeps them as one flat tuple (one object for the cyclic collector,
    untracked once it survives a collection) and backward gives the general path's bits and torch's values."""
    real = pytest.importorskip("torch")
    rng = np.random.default_rng(seed)
    data = rng.uniform(-30, 30, 7).astype(dtype)  # large |x|: sigmoid's saturated ends
    data[rng.integers(0, 7)] = 0.0
    c = rng.uniform(-2, 2, 7).astype(dtype)

    def f(x, c):
        return torch.sigmoid(x * c) * torch.sigmoid(x) + torch.tanh(x)
    x = torch.tensor(data, requires_grad=True)
    y = f(x, torch.tensor(c))
    sig = [n for n in _nodes(y.grad_fn) if type(n).__name__ == "SigmoidBackward0"]
    assert len(sig) == 2
    for n in sig:
        assert type(n._tape) is tuple and n._op1 is None
        steps = [s[0].name for s in record.unflatten_tape(n._tape)]
        assert steps[:2] == ["neg", "exp"] and steps[-1] == "div" and "add" in steps
    gc.collect()  # a tuple is untracked in a pass where its elements already are: a (shape,) may need a first pass
    gc.collect()
    assert not any(gc.is_tracked(n._tape) for n in sig)
    value, grad = _value_and_grad(f, data, c)
    value0, grad0 = _general(monkeypatch, f, data, c)
    # the general path sums float32 in torch's order, the fast lane in NumPy's (GRADC_TORCH_EXACT_SUMS): last bit
    assert value == value0 if dtype == "float64" else abs(value - value0) <= 1e-6 * abs(value0)
    np.testing.assert_array_equal(grad, grad0)
    xt = real.tensor(data, requires_grad=True)
    (real.sigmoid(xt * real.tensor(c)) * real.sigmoid(xt) + real.tanh(xt)).sum().backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(grad, xt.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("seed", range(20))
def test_flat_tape_round_trip(seed):
    """Seeded random tapes (steps of 0-3 arguments: arrays, numbers, parameter dicts) survive flatten_tape and
    unflatten_tape."""
    from gradc.ir import registry
    rng = np.random.default_rng(seed)
    names = sorted(registry.OPS)
    tape = []
    for _ in range(rng.integers(0, 6)):
        args = tuple(rng.standard_normal(2) if rng.random() < 0.6 else float(rng.random())
                     for _ in range(rng.integers(0, 4)))
        params = {} if rng.random() < 0.5 else {"axes": (0,), "keepdims": bool(rng.random() < 0.5)}
        tape.append((registry.OPS[names[rng.integers(len(names))]], args, params, rng.standard_normal(3)))
    back = record.unflatten_tape(record.flatten_tape(tape))
    assert len(back) == len(tape)
    for (op, args, params, out), (op2, args2, params2, out2) in zip(tape, back):
        assert op2 is op and params2 == params and out2 is out
        assert len(args2) == len(args) and all(a is b for a, b in zip(args, args2))


@pytest.mark.parametrize("fn", ["sigmoid", "tanh", "exp", "neg", "sqrt", "relu", "log", "sin"])
@pytest.mark.parametrize("seed", range(3))
def test_unary_nodes_without_a_kept_operand_replay_as_torch(fn, seed):
    """A unary node whose torch counterpart saves no operand keeps none (no ``_saved_self``, as torch); its
    replays (create_graph: second derivatives; neg's output written in place) read the operand's array alone."""
    real = pytest.importorskip("torch")
    data = np.random.default_rng(seed).uniform(0.2, 2.0, 5)
    grads = {}
    for lib in (torch, real):
        x = lib.tensor(data, requires_grad=True)
        y = getattr(lib, fn)(x * 1.5)
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        # a constant first derivative (neg; relu here, where torch records a zero second derivative): zeros
        gg = lib.autograd.grad((g * g).sum(), x)[0].numpy() if g.requires_grad else np.zeros_like(data)
        saved_self = hasattr(y.grad_fn, "_saved_self")
        z = -(x * 2.0)
        z.mul_(3.0)  # neg's output changed in place: its node replays (torch's NegBackward0 saves nothing)
        (gz,) = lib.autograd.grad(z.sum(), x)
        grads[lib.__name__] = (g.detach().numpy(), gg, saved_self, gz.numpy())
    mine, theirs = grads["gradc.torch"], grads["torch"]
    np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-12)
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-12)
    assert mine[2] == theirs[2]
    np.testing.assert_array_equal(mine[3], theirs[3])
