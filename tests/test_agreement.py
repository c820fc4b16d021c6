"""Whole programs: the reference interpreter, every optimised graph and the emitted NumPy agree,
and the gradient matches central finite differences (float64).

The per-op table checks ops one at a time; these are the compositions users write.
"""
import numpy as np
import pytest

import gradc
from gradc.ir.interpret import evaluate
from gradc.transforms import reverse as ad


def tutorial_loss(x, y, w, b):
    z = x @ w + b
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def mlp_cross_entropy(x, labels, w1, b1, w2, b2):
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    m = np.max(logits, axis=1, keepdims=True)
    lse = np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True)) + m
    logp = logits - lse
    return -np.mean(logp[np.arange(x.shape[0]), labels])


def attention(q, k, v):
    scores = q @ k.transpose(0, 2, 1) / 2.0
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    return np.sum((weights @ v) ** 2)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rnn(xs, w, u, h0, steps):
    h = h0
    total = 0.0
    for t in range(steps):
        h = np.tanh(w @ h + u * xs[t])
        total = total + np.sum(h * h) / (t + 1)
    return total


def huber_clip(x, y, delta):
    r = x - y
    small = np.abs(r) <= delta
    return np.mean(np.where(small, 0.5 * r ** 2, delta * (np.abs(r) - 0.5 * delta))) + np.sum(np.clip(x, -1, 1))


def layer_norm(x, gamma, beta):
    mu = np.mean(x, axis=-1, keepdims=True)
    var = np.mean((x - mu) ** 2, axis=-1, keepdims=True)
    y = (x - mu) / np.sqrt(var + 1e-5) * gamma + beta
    return np.sum(np.stack([y, y ** 2], axis=0)[1] * np.expand_dims(gamma, 0))


rng = np.random.default_rng(7)
PROGRAMS = {
    "tutorial_loss": (tutorial_loss, (rng.standard_normal((6, 3)), (rng.random(6) > 0.5) * 1.0,
                                      rng.standard_normal(3), 0.1), ("w", "b")),
    "mlp_cross_entropy": (mlp_cross_entropy, (rng.standard_normal((5, 3)), np.array([0, 2, 1, 1, 0]),
                                              rng.standard_normal((3, 4)), rng.standard_normal(4),
                                              rng.standard_normal((4, 3)), rng.standard_normal(3)),
                          ("w1", "b1", "w2", "b2")),
    "attention": (attention, tuple(rng.standard_normal((2, 3, 4)) for _ in range(3)), ("q", "k", "v")),
    "rosenbrock": (rosenbrock, (rng.uniform(-1, 1, 5),), ("x",)),
    "rnn": (rnn, (rng.standard_normal((3, 4)), rng.standard_normal((4, 4)) * 0.5, rng.standard_normal(4),
                  rng.standard_normal(4), 3), ("w", "u", "h0")),
    "huber_clip": (huber_clip, (rng.uniform(-2, 2, 7), rng.uniform(-2, 2, 7), 0.7), ("x", "y")),
    "layer_norm": (layer_norm, (rng.standard_normal((3, 4)), rng.uniform(0.5, 1.5, 4), rng.standard_normal(4)),
                   ("x", "gamma", "beta")),
}


def finite_difference_gradient(f, args, name, params, h=1e-6):
    i = params.index(name)
    base = np.asarray(args[i], dtype=np.float64)
    grad = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        plus, minus = base.copy(), base.copy()
        plus[idx] += h
        minus[idx] -= h
        a, b = list(args), list(args)
        a[i], b[i] = (plus, minus) if base.ndim else (float(plus), float(minus))
        grad[idx] = (f(*a) - f(*b)) / (2 * h)
    return grad


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_program_agreement(name):
    f, args, wrt = PROGRAMS[name]
    compiled = gradc.compile(f, *args, wrt=wrt)
    raw = gradc.trace(f, *args)
    tensor_args = [a for a, p in zip(args, raw.params) if p not in raw.static]
    expected = f(*args)

    value, grads = compiled.value_and_grad(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-12)
    np.testing.assert_allclose(compiled.forward(*args), expected, rtol=1e-12)
    np.testing.assert_allclose(evaluate(raw, *tensor_args)[0], expected, rtol=1e-12)
    np.testing.assert_allclose(evaluate(compiled.graph, *tensor_args)[0], expected, rtol=1e-12)
    for graph in (ad.value_and_grad_graph(raw, list(wrt)), compiled.value_and_grad_graph):
        outs = evaluate(graph, *tensor_args)
        for g, o in zip(grads, outs[1:]):
            np.testing.assert_allclose(o, g, rtol=1e-10, atol=1e-12)
    for g, o in zip(grads, evaluate(compiled.grad_graph, *tensor_args)):
        np.testing.assert_allclose(o, g, rtol=1e-10, atol=1e-12)
    for g, n in zip(grads, wrt):
        fd = finite_difference_gradient(f, args, n, raw.params)
        np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-7, err_msg=f"d{name}/d{n}")
    # the decorator path gives the same numbers as compile
    again = gradc.grad(f, wrt=wrt)(*args)
    for g, a in zip(grads, again):
        np.testing.assert_allclose(a, g, rtol=1e-12)
