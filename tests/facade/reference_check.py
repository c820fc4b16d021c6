"""Checking a facade function against torch 2.13.0 (when installed) and central differences.

A case is ``f(T, *xs)`` written once against a torch-like module ``T``: it runs on gradc's facade
and on real torch with the same float64 inputs. The values must agree, and so must the gradient of
``sum(w * f(xs))`` for a random ``w`` (by ``backward``); the facade's gradient must also match
central differences of the facade's own values (so the check stands without torch).
"""
from __future__ import annotations

import numpy as np

import gradc.torch as gtorch

try:
    import torch as real_torch
except ImportError:  # the finite-difference half still runs
    real_torch = None


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


def _loss(T, outs, weights):
    total = None
    for o, w in zip(outs, weights):
        if not o.dtype.is_floating_point:
            continue
        term = (o * T.tensor(w, dtype=o.dtype)).sum()
        total = term if total is None else total + term
    return total


def _value(f, xs, weights):
    ts = [gtorch.tensor(x) for x in xs]
    return float(_loss(gtorch, _outputs(f(gtorch, *ts)), weights).item())


def check(f, *xs, diff=None, rtol=1e-9, atol=1e-10, fd_rtol=1e-5, seed=0):
    """``f`` on the facade against torch (values and gradients) and central differences.

    ``diff``: the positions of ``xs`` to differentiate (default: every float array).
    """
    xs = [np.asarray(x) for x in xs]
    diff = [i for i, x in enumerate(xs) if x.dtype.kind == "f"] if diff is None else list(diff)
    ts = [gtorch.tensor(x, requires_grad=i in diff) for i, x in enumerate(xs)]
    outs = _outputs(f(gtorch, *ts))
    rng = np.random.default_rng(seed)
    weights = [rng.normal(size=tuple(o.shape)) for o in outs]
    loss = _loss(gtorch, outs, weights)
    grads = None
    if diff and loss is not None:
        loss.backward()
        grads = [ts[i].grad.numpy() if ts[i].grad is not None else np.zeros_like(xs[i]) for i in diff]
    if real_torch is not None:
        rs = [real_torch.tensor(x, requires_grad=i in diff) for i, x in enumerate(xs)]
        routs = _outputs(f(real_torch, *rs))
        assert len(routs) == len(outs)
        for o, r in zip(outs, routs):
            assert tuple(o.shape) == tuple(r.shape), (o.shape, r.shape)
            np.testing.assert_allclose(o.detach().numpy(), r.detach().numpy(), rtol=rtol, atol=atol)
        real_loss = _loss(real_torch, routs, weights)
        if grads is not None and real_loss.requires_grad:  # torch has no derivative for some (bessel_j0, ...)
            real_loss.backward()
            for g, i in zip(grads, diff):
                expect = rs[i].grad.numpy() if rs[i].grad is not None else np.zeros_like(xs[i])
                np.testing.assert_allclose(g, expect, rtol=rtol * 100, atol=atol * 100)
    if grads is not None:
        for g, i in zip(grads, diff):
            fd = np.zeros_like(xs[i], dtype=np.float64)
            h = 1e-6
            for k in np.ndindex(xs[i].shape):
                up, down = [x.copy() for x in xs], [x.copy() for x in xs]
                up[i][k] += h
                down[i][k] -= h
                fd[k] = (_value(f, up, weights) - _value(f, down, weights)) / (2 * h)
            np.testing.assert_allclose(g, fd, rtol=fd_rtol, atol=fd_rtol)
    return outs
