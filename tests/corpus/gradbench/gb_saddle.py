"""GradBench ``saddle`` (Pearlmutter & Siskind): min over x of max over y of f(x, y) by nested gradient descent.

``f(p1, p2) = (p1_0^2 + p1_1^2) - (p2_0^2 + p2_1^2)``; every descent starts at ``start``. The cost
of ``p1`` is the inner maximum (its own descent, with its own derivative); the outer descent
differentiates that cost, through the inner solver. Four variants: the outer and inner derivatives
each forward (jvp, one unit tangent per coordinate) or reverse (grad). The eval's input is
``start = [1, 1]``; its published answer is ``[8.246324826140356e-06] * 4`` for every variant.
"""
from __future__ import annotations

import numpy as np
from gb_solver import multivariate_argmax, multivariate_argmin, multivariate_max

START = np.array([1.0, 1.0])
EXPECTED = [8.246324826140356e-06] * 4


def objective(p1, p2):
    return (p1[0] * p1[0] + p1[1] * p1[1]) - (p2[0] * p2[0] + p2[1] * p2[1])


def saddle(outer_grad, inner_grad, start):
    """``outer_grad(f)`` is the gradient function of ``f(p1)`` (any AD); ``inner_grad(p1, p2)`` is df/dp2."""
    def r1_cost(p1):
        return multivariate_max(lambda p2: objective(p1, p2), lambda p2: inner_grad(p1, p2), start)

    r1 = multivariate_argmin(r1_cost, outer_grad(r1_cost), start)
    r2 = multivariate_argmax(lambda p2: objective(r1, p2), lambda p2: inner_grad(r1, p2), start)
    return np.concatenate([r1, r2])


def inner_grad_by_hand(p1, p2):
    return -2 * p2


def outer_grad_by_hand(f):
    """The inner descent's path does not depend on p1 (df/dp2 = -2 p2), so d r1_cost / d p1 = 2 p1."""
    return lambda p1: 2 * p1
