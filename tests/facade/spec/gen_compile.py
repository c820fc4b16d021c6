#!/usr/bin/env python3
"""Conformance cases for torch.compile; prints one line per case.

    /tmp/torchenv/bin/python tests/facade/spec/gen_compile.py torch > tests/facade/spec/compile.expected.txt

(torch 2.13.0+cpu; the first compile of each case takes seconds under torch). What a
compiled function or module returns and prints: values, gradients, grad_fn names, the
OptimizedModule wrapper's repr and parameter names, recompiling on a new shape, grad mode,
a training trajectory with a compiled model, and the errors for bad options.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_runner import main, registry  # noqa: E402

CASES, case = registry()


def mlp(T):
    T.manual_seed(0)
    nn = T.nn
    return nn.Sequential(nn.Flatten(), nn.Linear(12, 8), nn.ReLU(), nn.Linear(8, 3))


@case
def function_value_and_grad(T):
    f = T.compile(lambda x: (x * x).sum())
    x = T.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = f(x)
    y.backward()
    return [repr(y), type(y.grad_fn).__name__, x.grad.tolist()]


@case
def decorator_forms(T):
    @T.compile
    def f(x):
        return T.sin(x) + 1

    @T.compile(mode="max-autotune", fullgraph=True, dynamic=False)
    def g(x):
        return x.exp() * 2

    x = T.tensor([0.0, 0.5])
    return [f(x).tolist(), g(x).tolist()]


@case
def module_wrapper(T):
    model = mlp(T)
    compiled = T.compile(model)
    return [repr(compiled), type(compiled).__name__, [n for n, _ in compiled.named_parameters()],
            list(compiled.state_dict()), compiled._orig_mod is model]


@case
def module_forward_backward(T):
    model = mlp(T)
    compiled = T.compile(model)
    x = T.arange(24, dtype=T.float32).reshape(2, 3, 4) / 10
    out = compiled(x)
    out.sum().backward()
    return [out.tolist(), type(out.grad_fn).__name__, [p.grad.tolist() for p in model.parameters()]]


@case
def training_trajectory(T):
    model = mlp(T)
    compiled = T.compile(model)
    loss_fn = T.nn.CrossEntropyLoss()
    opt = T.optim.SGD(model.parameters(), lr=0.1)
    x = T.arange(48, dtype=T.float32).reshape(4, 3, 4).sin()
    y = T.tensor([0, 2, 1, 1])
    losses = []
    for _ in range(5):
        loss = loss_fn(compiled(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@case
def new_shape_recompiles(T):
    f = T.compile(lambda x, w: (x @ w).tanh().sum(dim=0))
    w = T.tensor([[0.5, -1.0], [0.25, 2.0]])
    return [f(T.ones(3, 2), w).tolist(), f(T.ones(5, 2), w).tolist(), f(T.ones(3, 2), w).tolist()]


@case
def grad_mode(T):
    f = T.compile(lambda x: x * 3)
    x = T.tensor([1.0, 2.0], requires_grad=True)
    with T.no_grad():
        a = f(x)
    b = f(x)
    return [a.requires_grad, a.grad_fn is None, b.requires_grad, type(b.grad_fn).__name__]


@case
def item_inside(T):
    def f(x):
        if x.sum().item() > 0:
            return x * 2
        return x - 1
    g = T.compile(f)
    return [g(T.tensor([1.0, 2.0])).tolist(), g(T.tensor([-1.0, -2.0])).tolist()]


@case
def module_compile_method(T):
    model = mlp(T)
    model.compile()
    x = T.ones(2, 3, 4)
    return [repr(model).splitlines()[0], model(x).tolist()]


@case
def disable_returns_same(T):
    def f(x):
        return x + 1
    return [T.compile(f, disable=True)(T.tensor([1.0])).tolist()]


@case
def bad_mode(T):
    try:
        T.compile(lambda x: x, mode="fastest")
    except Exception as e:  # noqa: BLE001 - the case records torch's error
        return [type(e).__name__, str(e)]
    return "no error"


if __name__ == "__main__":
    sys.exit(main(CASES, sys.argv))
