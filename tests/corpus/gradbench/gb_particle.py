"""GradBench ``particle`` (Pearlmutter & Siskind): steer a charged particle through the origin.

Charges at (10, 10 - w) and (10, 0); the particle starts at (0, 8) with velocity (0.75, 0);
naive Euler with dt = 0.1, acceleration ``-grad_x p(x; w)`` with ``p = sum_c 1 / |x - c|``, until the
particle would cross y = 0; then linear interpolation to the crossing. The cost is the crossing's
x squared; gradient descent (GradBench's solver) on w from ``w = 0``. Nested AD: the Euler loop
differentiates p in x, the descent differentiates the whole loop in w. Published answer:
``0.2071918746486116`` for all four variants (forward/reverse outside x forward/reverse inside).
"""
from __future__ import annotations

import numpy as np
from gb_solver import multivariate_argmin

W0 = 0.0
EXPECTED = 0.2071918746486116


def dist(u, v):
    return np.sqrt((u[0] - v[0]) * (u[0] - v[0]) + (u[1] - v[1]) * (u[1] - v[1]))


def accel(charges, x):
    a = 0.0
    for p in charges:
        a = a + 1 / dist(p, x)
    return a


def naive_euler(w, accel_grad):
    """``accel_grad(charges, x)`` is the gradient of ``accel`` in ``x`` (any AD)."""
    charges = [np.array([10.0, 10.0 - w]), np.array([10.0, 0.0])]
    x = np.array([0.0, 8.0])
    xdot = np.array([0.75, 0.0])
    delta_t = 1e-1
    while True:
        xddot = -1.0 * accel_grad(charges, x)
        x = x + delta_t * xdot
        if x[1] <= 0:
            delta_t_f = -x[1] / xdot[1]
            x_t_f = x + delta_t_f * xdot
            return x_t_f[0] * x_t_f[0]
        xdot = xdot + delta_t * xddot


def particle(outer_grad, inner_grad, w0):
    def cost(w):
        return naive_euler(w[0], inner_grad)

    return multivariate_argmin(cost, outer_grad(cost), np.array([w0]))[0]


def accel_grad_by_hand(charges, x):
    """d/dx sum_c 1/|x - c| = -sum_c (x - c) / |x - c|^3."""
    g = np.zeros(2)
    for c in charges:
        g = g - (x - c) / dist(c, x) ** 3
    return g


def central_difference_grad(f, h=1e-7):
    """The outer derivative by central differences (the reference path only)."""
    def gradient(w):
        e = np.zeros_like(w)
        e[0] = h
        return np.array([(f(w + e) - f(w - e)) / (2 * h)])
    return gradient
