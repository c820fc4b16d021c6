"""Recorded graphs hold no reference cycle, so reference counting frees them as soon as they are dropped.

A cycle anywhere in a graph (a node keeping its own output, or an operand whose history an
in-place write later renews) makes Python's cyclic collector the only way to free the whole
graph, and it walks every object of every live graph to find out. These tests build seeded
random programs (arithmetic with numbers, unary ops that save their output, indexing views,
writes into a buffer read back later, ``cat``, reductions, in-place updates), check their
gradients against torch 2.13.0, and check that dropping them leaves no cyclic garbage.
No timing here: ``benchmarks/facade.py`` measures speed.
"""
from __future__ import annotations

import gc
import random

import numpy as np
import pytest

import gradc.torch as facade

torch = pytest.importorskip("torch")


def _program(lib, rng_seed, x, w):
    """A random recurrent-style program on ``x`` (8) and ``w`` (8): a buffer written row by row and read back."""
    rng = random.Random(rng_seed)
    buf = lib.zeros(4, 8, dtype=lib.float64)
    h = x * 1.0
    total = 0.0
    for i in range(rng.randint(2, 5)):
        kind = rng.randrange(7)
        if kind == 0:
            h = lib.sigmoid(h * w + 0.5)
        elif kind == 1:
            h = lib.tanh(h) * 2.0 - w
        elif kind == 2:
            h = lib.cat((h[0:4], lib.exp(h[4:8] * 0.1)))
        elif kind == 3:
            h = h * (1.0 / (1.0 + h[rng.randrange(8)] ** 2))
        elif kind == 4:
            h = 3.0 - h * h[0:8]
        elif kind == 5:
            h = h.clone()
            h.mul_(w)
        else:
            h = (h @ w) * w + h
        buf[i % 4] = h  # a write into the buffer (CopySlices), read back below through a view
        h = buf[i % 4] + sum(buf[i % 4][0:2])  # Python's sum over a tensor: a select per element
        total = total + (h * w).sum()
    return total


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_match_torch_and_leave_no_cyclic_garbage(seed):
    data = np.random.default_rng(seed)
    xv, wv = data.uniform(-1, 1, 8), data.uniform(-1, 1, 8)
    grads = {}
    for name, lib in (("torch", torch), ("gradc", facade)):
        x = lib.tensor(xv, requires_grad=True)
        w = lib.tensor(wv, requires_grad=True)
        loss = _program(lib, seed, x, w)
        loss.backward()
        grads[name] = (float(loss.detach()), x.grad.numpy().copy(), w.grad.numpy().copy())
    for got, want in zip(grads["gradc"], grads["torch"]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)

    x = facade.tensor(xv, requires_grad=True)
    w = facade.tensor(wv, requires_grad=True)
    _program(facade, seed, x, w)  # classes of nodes are made on first use: not garbage of this graph
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        loss = _program(facade, seed, x, w)
        assert loss.grad_fn is not None
        del loss  # the forward graph, dropped without backward
        loss = _program(facade, seed, x, w)
        loss.backward()
        del loss  # and a graph after backward
        del x, w  # a leaf and its AccumulateGrad too
        assert gc.collect() == 0
    finally:
        if enabled:
            gc.enable()


def test_a_graph_after_backward_with_retain_graph_is_freed_when_dropped():
    x = facade.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = facade.sigmoid(x) * facade.exp(x)  # both save their outputs
    gc.collect()
    gc.disable()
    try:
        z = (facade.tanh(y) * y).sum()
        z.backward(retain_graph=True)
        z.backward()
        del z
        assert gc.collect() == 0
    finally:
        gc.enable()


def test_saved_output_and_operands_read_as_torch_gives_them():
    a = facade.tensor([1., 2.], requires_grad=True)
    assert (a * a).grad_fn._saved_self is a  # a leaf that requires grad is kept itself
    y = facade.exp(a)
    saved = y.grad_fn._saved_result
    assert saved is not y and saved.tolist() == y.tolist() and type(saved.grad_fn).__name__ == "ExpBackward0"
    t = torch.exp(torch.tensor([1., 2.], requires_grad=True))
    assert t.grad_fn._saved_result is not t  # torch's unpacking also gives a new tensor object


def _message(lib, case):
    x = lib.tensor([1., 2.], requires_grad=True)
    if case == "renewed":  # a saved non-leaf modified in place: named by its node now (torch's saved original)
        y = x * 1
        z = y * x
        y.mul_(2)
    elif case == "written buffer":  # a buffer saved by mul, then written through a view (CopySlices)
        s = lib.zeros(3)
        z = s * x.sum()
        s[0] = z[1]
    else:  # a saved output modified in place: named by the node that saved it
        y = lib.sigmoid(x)
        z = y * 1
        y.add_(1)
    with pytest.raises(RuntimeError) as err:
        z.sum().backward()
    return str(err.value)


@pytest.mark.parametrize("case", ["renewed", "written buffer", "saved output"])
def test_changed_saved_tensor_messages_are_torchs(case):
    assert _message(facade, case) == _message(torch, case)


@pytest.mark.parametrize("make", [lambda a, b: a + b, lambda a, b: b - 1.0, lambda a, b: 1.0 + a, lambda a, b: a * b,
                                  lambda a, b: b / a, lambda a, b: b ** 2, lambda a, b: a * 2, lambda a, b: 2 / a,
                                  lambda a, b: 1 - a, lambda a, b: a - b, lambda a, b: a ** b])
def test_saved_attributes_and_next_functions_of_binary_nodes_are_torchs(make):
    def seen(lib):
        a = lib.tensor([1., 2.], requires_grad=True)
        node = make(a, a * 2).grad_fn
        kept = {k: hasattr(node, k) for k in ("_saved_self", "_saved_other")}
        return type(node).__name__, kept, [type(n).__name__ for n, _ in node.next_functions]
    assert seen(facade) == seen(torch)
