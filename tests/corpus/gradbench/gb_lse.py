"""GradBench ``lse``: LogSumExp with the max shift, and its gradient (the eval's ``gradient``).

Definition (GradBench evals/lse): ``LSE(x) = a + log(sum_i exp(x_i - a))`` with ``a = max(x)``.
Inputs: ``x = rand(n)``, seed 31337, ``n`` from 2,500 to 1,280,000 (default sizes). The gradient has
a closed form, ``softmax(x)``.
"""
from __future__ import annotations

import numpy as np

DEFAULT_SIZE = 2500  # the eval's smallest default n
SMALL_SIZE = 7


def logsumexp(x):
    """LSE the way the Python tools write it: a max, then one vectorised reduction."""
    a = np.max(x)
    return a + np.log(np.sum(np.exp(x - a)))


def logsumexp_loops(x):
    """LSE the way the C++ reference writes it: a running max, then a running sum."""
    a = x[0]
    for i in range(1, x.shape[0]):
        a = np.maximum(a, x[i])
    s = 0.0
    for i in range(x.shape[0]):
        s += np.exp(x[i] - a)
    return np.log(s) + a


def generate(n=SMALL_SIZE, seed=31337):
    """The eval's input: ``x = rand(n)``."""
    rng = np.random.RandomState(seed)
    return {"x": rng.rand(n)}


def closed_form_gradient(x):
    """d LSE / dx = softmax(x)."""
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
