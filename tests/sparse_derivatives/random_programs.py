"""A seeded generator of NumPy programs with structured sparsity (slices, gathers, reductions, matrix products,
index assignment, loops), for testing detected Jacobian patterns against finite differences."""
from __future__ import annotations

import numpy as np

import gradc

N = 6  # the input's length


def _unary(rng):
    return [np.sin, np.cos, np.tanh, np.exp, lambda v: v * v, lambda v: np.sqrt(v * v + 1.0)][rng.integers(6)]


def random_program(seed: int):
    """``(f, x)``: a function of one float vector of length ``N`` and an input to differentiate it at."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(rng.integers(2, 6)):
        kind = int(rng.integers(11))
        if kind == 0:
            u = _unary(rng)
            steps.append(lambda v, u=u: u(v))
        elif kind == 1:
            k = int(rng.integers(1, 3))
            steps.append(lambda v, k=k: v[k:] * v[:-k] if len(v) > k else v * 2.0)
        elif kind == 2:
            idx = rng.integers(0, 64, size=64)
            steps.append(lambda v, idx=idx: v[idx[:len(v)] % len(v)] + v)
        elif kind == 3:
            steps.append(lambda v: np.cumsum(v))
        elif kind == 4:
            a = rng.standard_normal((64, 64)) * (rng.random((64, 64)) < 0.3)
            steps.append(lambda v, a=a: a[:len(v), :len(v)] @ v + v)
        elif kind == 5:
            steps.append(lambda v: np.concatenate([v[::2] * 3.0, np.flip(v)]))
        elif kind == 6:
            def assign(v):
                out = np.zeros(len(v) + 1)
                out[1:] = v * v
                out[0] = v[-1]
                return out
            steps.append(assign)
        elif kind == 7:
            def blocks(v):
                m = v[:len(v) - len(v) % 2].reshape(-1, 2)
                return np.concatenate([np.sum(m, axis=1), (m.T @ m).ravel()])
            steps.append(blocks)
        elif kind == 8:
            def loop(v):
                return gradc.fori_loop(0, 3, lambda i, c: np.sin(c) * c[0] + c, v)
            steps.append(loop)
        elif kind == 9:
            steps.append(lambda v: np.where(v > 0.1, v * v, np.roll(v, 1)))
        else:
            steps.append(lambda v: np.max(v.reshape(1, -1), axis=0) * np.prod(v[:2]))

    def f(x):
        v = x
        for step in steps:
            v = step(v)
        return v

    return f, rng.uniform(0.2, 1.2, size=N)
