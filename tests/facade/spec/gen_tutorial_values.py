"""Values the beginner tutorials print that depend on torch's exact float32/float64 arithmetic: ``torch.linspace``
(torch's halves-from-each-end formula with fused multiply-adds), full float32 ``sum``/``mean`` (torch's cascade
order, one thread), and the refusal of a non-Tensor ``.grad``. Values are recorded as their bit patterns.

    python tests/facade/spec/gen_tutorial_values.py torch > tests/facade/spec/tutorial_values.expected.txt
    python tests/facade/spec/gen_tutorial_values.py gradc.torch      # the same cases under gradc
"""
from __future__ import annotations

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()


def bits(t):
    """A tensor's values as hex bit patterns (exact equality, whatever the comparison tolerance)."""
    a = np.ascontiguousarray(t.detach().numpy())
    return [str(a.dtype), a.reshape(-1).view(np.uint32 if a.itemsize == 4 else np.uint64).tolist()]


def _linspace_args(seed):
    rng = np.random.default_rng(seed)
    return [(float(rng.standard_normal() * 10.0 ** rng.integers(-3, 4)),
             float(rng.standard_normal() * 10.0 ** rng.integers(-3, 4)), int(rng.integers(0, 300))) for _ in range(12)]


@case
def linspace_tutorial(T):
    return [bits(T.linspace(-math.pi, math.pi, 2000)), bits(T.linspace(-math.pi, math.pi, 2000, dtype=T.float64))]


@case
def linspace_edges(T):
    return [bits(T.linspace(a, b, n, dtype=dt)) for a, b, n in ((0, 1, 0), (0, 1, 1), (0, 1, 2), (2, 2, 5), (1, 0, 16),
                                                               (-10, 10, 101), (0.1, 3, 33))
            for dt in (T.float32, T.float64)]


@case
def linspace_random(T):
    return [bits(T.linspace(a, b, n, dtype=dt)) for seed in range(2) for a, b, n in _linspace_args(seed)
            for dt in (T.float32, T.float64)]


@case
def full_sum_and_mean_float32(T):
    T.set_num_threads(1)  # torch splits reductions of more than 32768 values among threads
    out = []
    for n in list(range(1, 300, 13)) + [1000, 2000, 4096, 9999, 40000]:
        for shape in ((n,), (3, n), (n, 2)):
            x = T.tensor(np.random.default_rng(n).standard_normal(shape).astype(np.float32))
            out.append([bits(x.sum()), bits(x.mean()), bits(T.sum(x)), bits((x * x).sum())])
    return out


@case
def tutorial_loss_sum(T):
    x = T.linspace(-math.pi, math.pi, 2000)
    return bits((x - T.sin(x) * 0 + 0.5).pow(2).sum())


@case
def broadcast_scalar_gradients(T):
    """Gradients of 0-d parameters broadcast over float32 data (torch reduces them with its sum)."""
    out = []
    for n in (7, 100, 2000, 5000):
        x = T.tensor(np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32))
        a = T.tensor(0.5, requires_grad=True)
        ((a + x * 0.25) ** 2 * x).sum().backward()
        out.append(bits(a.grad))
    return out


@case
def grad_assigned_a_number(T):
    a = T.ones((), requires_grad=True)
    out = []
    for value in (0.0, 1, [1.0]):
        try:
            a.grad = value
            out.append("ok")
        except TypeError as e:
            out.append(str(e))
    return out


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
