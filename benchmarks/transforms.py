#!/usr/bin/env python3
"""Jacobians, Hessians and Hessian-vector products: gradc's emitted NumPy against hand-written NumPy and peers.

Workloads (the issue's): the Jacobian of a 100 -> 100 map ``y = tanh(W x + b) * x``
and the Hessian of a 100-parameter loss (L2-regularised logistic regression on 500
samples). Each implementation is first checked against the hand-written closed
form (rtol 1e-8), then all are timed in this process, interleaved (``run.py``'s
harness); medians per call in microseconds and ratios to hand-written NumPy.
Peers where installed: JAX (``jit(jacfwd)``, ``jit(jacrev)``, ``jit(hessian)``),
``torch.func`` (``jacfwd``, ``jacrev``, ``hessian``; float64), HIPS autograd
(``jacobian``, ``hessian``). Last, an HVP's cost relative to a gradient's.

    PYTHONPATH=. python benchmarks/transforms.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import interleaved  # noqa: E402

import gradc  # noqa: E402

N, SAMPLES = 100, 500


def map_100(x, W, b):
    return np.tanh(W @ x + b) * x


def map_jacobian_by_hand(x, W, b):
    t = np.tanh(W @ x + b)
    return (1 - t * t)[:, None] * W * x[:, None] + np.diag(t)


def logistic(w, X, y):
    return np.mean(np.logaddexp(0.0, -y * (X @ w))) + 0.005 * np.sum(w * w)


def logistic_hessian_by_hand(w, X, y):
    s = 1.0 / (1.0 + np.exp(-y * (X @ w)))
    d = s * (1 - s) / X.shape[0]
    return (X * d[:, None]).T @ X + 0.01 * np.eye(X.shape[1])


def logistic_grad_by_hand(w, X, y):
    m = y * (X @ w)
    return X.T @ (-y / (1.0 + np.exp(m))) / X.shape[0] + 0.01 * w


def peers(args):
    """{name: (jacobian fn, hessian fn)} for the peers that import."""
    found = {}
    try:
        import jax
        import jax.numpy as jnp

        jax.config.update("jax_enable_x64", True)
        jmap = lambda x, W, b: jnp.tanh(W @ x + b) * x  # noqa: E731
        jlog = lambda w, X, y: jnp.mean(jnp.logaddexp(0.0, -y * (X @ w))) + 0.005 * jnp.sum(w * w)  # noqa: E731
        jf, jr, jh = jax.jit(jax.jacfwd(jmap)), jax.jit(jax.jacrev(jmap)), jax.jit(jax.hessian(jlog))
        found["JAX jit(jacfwd)"] = ("jac", lambda *a: np.asarray(jf(*a)))
        found["JAX jit(jacrev)"] = ("jac", lambda *a: np.asarray(jr(*a)))
        found["JAX jit(hessian)"] = ("hess", lambda *a: np.asarray(jh(*a)))
    except ImportError:
        pass
    try:
        import torch
        from torch import func

        tmap = lambda x, W, b: torch.tanh(W @ x + b) * x  # noqa: E731
        tlog = lambda w, X, y: torch.mean(torch.logaddexp(torch.zeros(()), -y * (X @ w))) + 0.005 * torch.sum(w * w)  # noqa: E731,E501
        conv = lambda a: [torch.from_numpy(v) for v in a]  # noqa: E731
        found["torch.func.jacfwd"] = ("jac", lambda *a: func.jacfwd(tmap)(*conv(a)).numpy())
        found["torch.func.jacrev"] = ("jac", lambda *a: func.jacrev(tmap)(*conv(a)).numpy())
        found["torch.func.hessian"] = ("hess", lambda *a: func.hessian(tlog)(*conv(a)).numpy())
    except ImportError:
        pass
    try:
        import autograd
        import autograd.numpy as anp

        amap = lambda x, W, b: anp.tanh(W @ x + b) * x  # noqa: E731
        alog = lambda w, X, y: anp.mean(anp.logaddexp(0.0, -y * (X @ w))) + 0.005 * anp.sum(w * w)  # noqa: E731
        found["HIPS autograd jacobian"] = ("jac", autograd.jacobian(amap))
        found["HIPS autograd hessian"] = ("hess", autograd.hessian(alog))
    except ImportError:
        pass
    return found


def table(title, rows, base):
    print(f"\n{title}")
    print(f"{'implementation':32s} {'median µs':>12s} {'÷ hand NumPy':>14s}")
    for name, t in rows:
        print(f"{name:32s} {t * 1e6:12.1f} {t / base:14.2f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs (a smoke test)")
    opts = parser.parse_args(argv)
    min_time, repeat = (0.02, 3) if opts.quick else (0.2, 9)
    rng = np.random.default_rng(0)
    x, W, b = rng.standard_normal(N), rng.standard_normal((N, N)) / 10, rng.standard_normal(N)
    X = rng.standard_normal((SAMPLES, N))
    y = np.sign(X @ rng.standard_normal(N) + 0.3 * rng.standard_normal(SAMPLES))
    w = rng.standard_normal(N) / 10
    jac_args, hess_args = (x, W, b), (w, X, y)
    expected_jac, expected_hess = map_jacobian_by_hand(*jac_args), logistic_hessian_by_hand(*hess_args)

    jac_impls = {"hand-written NumPy": lambda: map_jacobian_by_hand(*jac_args)}
    hess_impls = {"hand-written NumPy": lambda: logistic_hessian_by_hand(*hess_args)}
    for name, fn in [("gradc jacfwd (NumPy)", gradc.jacfwd(map_100)), ("gradc jacrev (NumPy)", gradc.jacrev(map_100))]:
        jac_impls[name] = lambda fn=fn: fn(*jac_args)
    hess_impls["gradc hessian (NumPy)"] = lambda fn=gradc.hessian(logistic): fn(*hess_args)
    from gradc.backends.c.build import find_compiler

    if find_compiler() is not None:  # the same units on the C target (ctypes calls)
        jac_c = gradc.compile(map_100, *jac_args, mode="jacobian", target="c", wrt=0).jacobian
        hess_c = gradc.compile(logistic, *hess_args, mode="hessian", target="c", wrt=0).hessian
        jac_impls["gradc jacobian (C)"] = lambda: jac_c(*jac_args)
        hess_impls["gradc hessian (C)"] = lambda: hess_c(*hess_args)
    for name, (kind, fn) in peers(opts).items():
        if kind == "jac":
            jac_impls[name] = lambda fn=fn: fn(*jac_args)
        else:
            hess_impls[name] = lambda fn=fn: fn(*hess_args)
    for impls, expected in ((jac_impls, expected_jac), (hess_impls, expected_hess)):
        for name, fn in impls.items():
            got = np.asarray(fn())
            if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-8, atol=1e-11):
                raise AssertionError(f"{name} disagrees with the closed form")
    for title, impls in (("Jacobian of a 100 -> 100 map", jac_impls), ("Hessian of a 100-parameter loss", hess_impls)):
        times = interleaved(list(impls.values()), min_time, repeat)
        table(title, list(zip(impls, times)), times[0])

    grad = gradc.grad(logistic)
    v = rng.standard_normal(N)
    hvp = lambda: gradc.hvp(logistic, hess_args, (v, None, None), argnums=0)  # noqa: E731
    np.testing.assert_allclose(hvp(), expected_hess @ v, rtol=1e-8)
    np.testing.assert_allclose(grad(*hess_args), logistic_grad_by_hand(*hess_args), rtol=1e-8)
    t_grad, t_hvp, t_hand = interleaved([lambda: grad(*hess_args), hvp, lambda: logistic_grad_by_hand(*hess_args)],
                                        min_time, repeat)
    print(f"\nHVP against gradient (logistic loss, 100 parameters): gradient {t_grad * 1e6:.1f} µs, "
          f"HVP {t_hvp * 1e6:.1f} µs, ratio {t_hvp / t_grad:.2f} (floor: at most 4); "
          f"hand-written gradient {t_hand * 1e6:.1f} µs")


if __name__ == "__main__":
    main()
