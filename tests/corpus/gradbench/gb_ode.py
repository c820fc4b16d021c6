"""GradBench ``ode`` (cmpad's an_ode): s steps of classical Runge-Kutta on y_0' = x_0, y_i' = x_i y_{i-1}.

``y(0) = 0``, final time 2, ``h = 2 / s``. The eval's ``gradient`` is the gradient of the last
component of ``y(2)`` in ``x``. Inputs: ``x = rand(n)``, seed 31337, n in {1000, 10000, 100000},
s in {1, 10, 100}; ``s`` is an integer, not differentiated.
"""
from __future__ import annotations

import numpy as np

DEFAULT_SIZE = (1000, 1)  # (n, s): the eval's smallest default
SMALL_SIZE = (4, 3)


def ode_fun(x, y):
    """z_0 = x_0, z_i = x_i y_{i-1}: an array filled in a loop, as the C++ reference fills it."""
    n = x.shape[0]
    z = np.zeros(n)
    z[0] = x[0]
    for i in range(1, n):
        z[i] = x[i] * y[i - 1]
    return z


def primal(x, s):
    tf = 2.0
    h = tf / s
    yf = np.zeros(x.shape[0])
    for _ in range(s):
        k1 = ode_fun(x, yf)
        k2 = ode_fun(x, yf + h * k1 / 2)
        k3 = ode_fun(x, yf + h * k2 / 2)
        k4 = ode_fun(x, yf + h * k3)
        yf = yf + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return yf


def last(x, s):
    """What the eval differentiates: the last component of the solution."""
    return primal(x, s)[-1]


def ode_fun_vectorised(x, y):
    return np.concatenate([x[:1], x[1:] * y[:-1]])


def primal_vectorised(x, s):
    h = 2.0 / s
    yf = np.zeros(x.shape[0])
    for _ in range(s):
        k1 = ode_fun_vectorised(x, yf)
        k2 = ode_fun_vectorised(x, yf + h / 2 * k1)
        k3 = ode_fun_vectorised(x, yf + h / 2 * k2)
        k4 = ode_fun_vectorised(x, yf + h * k3)
        yf = yf + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return yf[-1]


def generate(size=SMALL_SIZE, seed=31337):
    n, s = size
    rng = np.random.RandomState(seed)
    return {"x": rng.rand(n), "s": s}
