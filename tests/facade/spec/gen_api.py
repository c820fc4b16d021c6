#!/usr/bin/env python3
"""Conformance cases for the API details tutorials hit: input=/other=/out= keywords, Tensor.new_*,
loss dtypes, item(), no_grad as a decorator, inference_mode, randperm.

    /tmp/torchenv/bin/python tests/facade/spec/gen_api.py torch > tests/facade/spec/api.expected.txt
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from spec_runner import main, registry  # noqa: E402

CASES, case = registry()


def err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return f"{type(e).__name__}: {e}"
    return "NO ERROR"


@case
def keyword_arguments(T):
    a, b = T.tensor([[1.0, 2.0], [3.0, 4.0]]), T.tensor([[0.5, -1.0], [2.0, 0.0]])
    return [T.matmul(input=a, other=b).tolist(), T.add(input=a, other=b, alpha=2).tolist(),
            T.sub(a, other=b).tolist(), T.mul(input=a, other=3).tolist(), T.div(input=a, other=b + 3).tolist(),
            T.pow(input=a, exponent=2).tolist(), T.maximum(input=a, other=b).tolist(),
            T.mm(input=a, mat2=b).tolist(), T.exp(input=T.zeros(2)).tolist(),
            T.sum(input=a, dim=1).tolist(), T.mean(input=a).item(), T.where(a > 2, input=a, other=b).tolist(),
            T.clamp(input=a, min=1.5, max=3.5).tolist(), T.cat(tensors=[a, b], dim=0).shape[0],
            T.sigmoid(input=T.zeros(1)).tolist(), T.reshape(input=a, shape=(4,)).tolist()]


@case
def out_argument(T):
    a, b = T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])
    out = T.empty(2)
    r1 = T.add(a, b, out=out)
    same = r1 is out
    m = T.zeros(2, 2)
    T.matmul(a.reshape(2, 1), b.reshape(1, 2), out=m)
    e = T.zeros(3)
    T.neg(a, out=e[:2])
    grown = T.empty(0)
    T.mul(a, b, out=grown)
    ints = T.zeros(2, dtype=T.int64)
    w = T.ones(2, requires_grad=True)
    return [same, out.tolist(), m.tolist(), e.tolist(), grown.tolist(), list(grown.shape),
            err(lambda: T.add(a, b, out=ints)), err(lambda: T.mul(w, 2, out=T.zeros(2))),
            T.add(T.tensor([1, 2]), T.tensor([3, 4]), out=ints).tolist()]


@case
def new_factories(T):
    x = T.tensor([1.5, 2.5], dtype=T.float64)
    i = T.tensor([1, 2])
    outs = [x.new_ones(2, 3), x.new_zeros((2,)), x.new_full((2, 2), 7), x.new_tensor([1, 2]), i.new_ones(3),
            i.new_full((2,), 4), x.new_zeros(3, dtype=T.float32), x.new_ones(1, requires_grad=True),
            i.new_tensor([0.5])]
    return [[o.tolist(), str(o.dtype), o.requires_grad] for o in outs]


@case
def loss_dtypes(T):
    F = T.nn.functional
    x32 = T.tensor([1.0, 2.0, 3.0])
    y64 = T.tensor([1, 1, 1])
    out = [F.mse_loss(x32, y64), T.nn.MSELoss()(x32, y64), F.mse_loss(x32, y64.double()),
           F.mse_loss(x32.double(), y64), F.mse_loss(x32, y64, reduction="sum")]
    return [[str(o.dtype), o.item()] for o in out]


@case
def item_values(T):
    return [T.tensor(2.5).item(), T.tensor([7]).item(), T.tensor([[True]]).item(), type(T.tensor(3).item()).__name__,
            T.tensor(0.1).item(), T.tensor(0.1, dtype=T.float64).item(), err(lambda: T.ones(2).item())]


@case
def no_grad_decorator(T):
    w = T.ones(2, requires_grad=True)

    @T.no_grad()
    def f(x):
        return x * 2

    @T.no_grad
    def g(x):
        return x * 3

    @T.enable_grad()
    def h(x):
        return x * 4

    with T.no_grad():
        inside = h(w).requires_grad
    return [f(w).requires_grad, g(w).requires_grad, (w * 2).requires_grad, inside, T.is_grad_enabled(),
            f.__name__]


@case
def inference_mode(T):
    w = T.ones(2, requires_grad=True)
    with T.inference_mode():
        a = w * 2
        flags = [T.is_grad_enabled(), T.is_inference_mode_enabled()]

    @T.inference_mode()
    def f(x):
        return x + 1

    @T.inference_mode
    def g(x):
        return x + 2

    with T.inference_mode(False):
        c = w * 2
    return [a.requires_grad, flags, f(w).requires_grad, g(w).requires_grad, c.requires_grad,
            T.is_inference_mode_enabled(), T.is_grad_enabled(), a.tolist()]


@case
def randperm_streams(T):
    T.manual_seed(0)
    a = T.randperm(8).tolist()
    g = T.Generator().manual_seed(3)
    b = T.randperm(12, generator=g).tolist()
    return [a, b, str(T.randperm(3).dtype), T.rand(2).tolist()]


@case
def tensor_to_and_device_kwargs(T):
    x = T.ones(2)
    return [str(T.zeros(2, device="cpu").device), str(T.tensor([1.0], device=T.device("cpu")).device),
            str(x.to(device="cpu", dtype=T.float64).dtype), x.cpu() is x, x.to("cpu", copy=True) is x,
            str(T.ones(1, device=None).dtype)]


if __name__ == "__main__":
    sys.exit(main(CASES, sys.argv))
