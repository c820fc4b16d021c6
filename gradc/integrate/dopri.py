"""Dormand and Prince's explicit Runge-Kutta 5(4) pair with error control, written once for arrays and tracers.

The integrator gradc uses for ``scipy.integrate.odeint`` and ``solve_ivp`` (the forward solve, and
the adjoint solve of their derivative), in every target: the NumPy target runs this loop, the C
target compiles it. It is the method of ``solve_ivp(method="RK45")`` (Hairer, Norsett and Wanner,
*Solving ODEs I*, II.4 and II.5): seven stages, the last one reused as the next step's first
(FSAL), the step accepted when the scaled RMS norm of the embedded error estimate is at most one,
``err_i / (atol + rtol * max(|y_i|, |y_new_i|))``, the next step ``h * clip(0.9 * err ** -0.2, 0.2,
10)``. The first step is Hairer's estimate from ``f(t0, y0)`` and one Euler step.

The state is a tuple of arrays (the ODE's state; in the adjoint also the adjoint state and
the parameters' accumulated cotangents); time runs forwards (``t1 > t0``: the adjoint reverses
time itself). A step count above ``max_steps`` per interval stops the loop, and the interval's
result is NaN, so a stiff or blowing-up problem shows as NaN, never as a wrong finite number.

>>> import numpy as np
>>> ys = integrate(lambda t, s: (-s[0],), (np.array([1.0]),), np.array([0.0, 1.0]), 1e-10, 1e-10)
>>> bool(abs(ys[0][1, 0] - np.exp(-1.0)) < 1e-9)
True
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from gradc.trace.control import scan, while_loop

# the Butcher tableau (Hairer, Norsett, Wanner; Table II.5.2): a[i] are stage i+1's weights on k_1..k_i
_C = (0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0)
_A = (
    (),
    (1 / 5,),
    (3 / 40, 9 / 40),
    (44 / 45, -56 / 15, 32 / 9),
    (19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729),
    (9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656),
    (35 / 384, 0.0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84),
)
# the fifth-order solution is the last stage's row (FSAL); the error is it minus the embedded fourth order
_E = (71 / 57600, 0.0, -71 / 16695, 71 / 1920, -17253 / 339200, 22 / 525, -1 / 40)
MAX_STEPS = 10_000  # per output interval

Fun = Callable[[object, tuple], tuple]  # f(t, state) -> d state / dt, a tuple shaped like state


def _combine(base, h, weights, stages):
    """``base + h * sum(w_j * k_j)`` leafwise (zero weights skipped)."""
    out = []
    for k, leaf in enumerate(base):
        acc = None
        for w, stage in zip(weights, stages):
            if w != 0.0:
                term = w * stage[k]
                acc = term if acc is None else acc + term
        out.append(leaf if acc is None else leaf + h * acc)
    return tuple(out)


def _rms(leaves, scales):
    """The RMS over every entry of every leaf of ``leaf / scale``."""
    total, count = 0.0, 0
    for leaf, scale in zip(leaves, scales):
        r = leaf / scale
        total = total + np.sum(r * r)
        count += int(np.size(r))
    return np.sqrt(total / max(count, 1))


def _scales(y, y_new, rtol, atol):
    return [atol + rtol * np.maximum(np.abs(a), np.abs(b)) for a, b in zip(y, y_new)]


def first_step(fun: Fun, t0, y0: tuple, f0: tuple, t1, rtol: float, atol: float):
    """Hairer's starting step (II.4): from the sizes of ``y0``, ``f0`` and a second derivative estimate.

    >>> import numpy as np
    >>> h = first_step(lambda t, s: (-s[0],), 0.0, (np.ones(1),), (-np.ones(1),), 1.0, 1e-6, 1e-6)
    >>> 0.0 < float(h) < 1.0
    True
    """
    scale = _scales(y0, y0, rtol, atol)
    d0, d1 = _rms(y0, scale), _rms(f0, scale)
    h0 = np.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / np.maximum(d1, 1e-300))
    h0 = np.minimum(h0, t1 - t0)
    y1 = tuple(a + h0 * b for a, b in zip(y0, f0))
    f1 = fun(t0 + h0, y1)
    d2 = _rms(tuple(b - a for a, b in zip(f0, f1)), scale) / h0
    big = np.maximum(d1, d2)
    h1 = np.where(big <= 1e-15, np.maximum(1e-6, h0 * 1e-3), (0.01 / np.maximum(big, 1e-300)) ** 0.2)
    return np.minimum(100.0 * h0, h1)


def _step(fun: Fun, t, y: tuple, f: tuple, h, rtol: float, atol: float, stiffness: bool = False):
    """One attempted step of size ``h``: ``(y_new, f_new, error norm)``, and with ``stiffness`` Hairer's estimate
    ``h |lambda|`` of the step against the dominant eigenvalue (from the last two stages, as DOPRI5 does)."""
    stages = [f]
    points = []
    for i in range(1, 7):
        y_i = _combine(y, h, _A[i], stages)
        points.append(y_i)
        stages.append(fun(t + _C[i] * h, y_i))
    y_new = y_i  # the seventh stage's point is the fifth-order solution (FSAL)
    err = _combine(tuple(np.zeros_like(leaf) for leaf in y), h, _E, stages)
    norm = _rms(err, _scales(y, y_new, rtol, atol))
    if not stiffness:
        return y_new, stages[6], norm
    top = sum(np.sum((a - b) ** 2) for a, b in zip(stages[6], stages[5]))
    bottom = sum(np.sum((a - b) ** 2) for a, b in zip(y_new, points[4]))
    return y_new, stages[6], norm, np.abs(h) * np.sqrt(top / np.maximum(bottom, 1e-300))


def steps(fun: Fun, t0, t1, y: tuple, f: tuple, h, rtol: float, atol: float, max_steps: int, active=True,
          detect_stiffness: bool = False):
    """Steps from ``t0`` towards ``t1``, at most ``max_steps`` (none unless ``active``): ``(t reached, y, f, h,
    steps taken)``; ``t < t1`` when the budget ran out or, with ``detect_stiffness``, when Hairer's test found the
    problem stiff (``h |lambda| > 3.25`` on 15 accepted steps with no 6 non-stiff ones between, as DOPRI5's):
    ``gradc.integrate.rosenbrock`` then takes over."""

    def going(carry):
        t, _, _, _, n, stiff_count, _ = carry
        return (t < t1) & (n < max_steps) & active & (stiff_count < 15)

    def attempt(carry):
        t, y, f, h, n, stiff_count, calm_count = carry
        last = h >= t1 - t
        h_now = np.where(last, t1 - t, h)
        if detect_stiffness:
            y_new, f_new, err, h_lambda = _step(fun, t, y, f, h_now, rtol, atol, stiffness=True)
        else:
            y_new, f_new, err = _step(fun, t, y, f, h_now, rtol, atol)
        ok = err <= 1.0  # False for NaN: a blow-up is never accepted, the step shrinks until max_steps
        grow = np.where(err > 0.0, 0.9 * np.maximum(err, 1e-300) ** -0.2, 10.0)
        t_next = np.where(ok, np.where(last, t1, t + h_now), t)
        y_next = tuple(np.where(ok, a, b) for a, b in zip(y_new, y))
        f_next = tuple(np.where(ok, a, b) for a, b in zip(f_new, f))
        if detect_stiffness:
            stiff_step = ok & (h_lambda > 3.25)
            calm_step = ok & ~(h_lambda > 3.25)
            calm_count = np.where(stiff_step, 0, np.where(calm_step, calm_count + 1, calm_count))
            stiff_count = np.where(stiff_step, stiff_count + 1, np.where(calm_count >= 6, 0, stiff_count))
        return t_next, y_next, f_next, h_now * np.clip(grow, 0.2, 10.0), n + 1, stiff_count, calm_count

    t, y, f, h, n, _, _ = while_loop(going, attempt, (t0 + 0.0 * t1, y, f, h, 0, 0, 0))
    return t, y, f, h, n


def _interval(fun: Fun, t0, t1, y: tuple, f: tuple, h, rtol: float, atol: float, max_steps: int):
    """Integrate from ``t0`` to ``t1``: ``(y(t1) or NaN, f there, next step size)``."""
    t, y, f, h, _ = steps(fun, t0, t1, y, f, h, rtol, atol, max_steps)
    reached = t >= t1
    return tuple(np.where(reached, leaf, np.nan) for leaf in y), f, h


def integrate(fun: Fun, y0: tuple, ts, rtol: float, atol: float, max_steps: int = MAX_STEPS) -> tuple:
    """The state at each of the increasing times ``ts``: a tuple of arrays, each ``(len(ts),) + leaf shape``.

    >>> import numpy as np
    >>> (ys,) = integrate(lambda t, s: (np.cos(t) + 0.0 * s[0],), (np.zeros(()),), np.linspace(0, 1, 3), 1e-9, 1e-9)
    >>> bool(np.allclose(ys, np.sin(np.linspace(0, 1, 3)), atol=1e-8))
    True
    """
    y0 = tuple(y0)
    f0 = fun(ts[0], y0)
    h0 = first_step(fun, ts[0], y0, f0, ts[-1], rtol, atol)

    def advance(carry, span):
        y, f, h = carry
        y, f, h = _interval(fun, span[0], span[1], y, f, h, rtol, atol, max_steps)
        return (y, f, h), y

    spans = np.stack([ts[:-1], ts[1:]], axis=1) if len(ts) > 1 else None
    if spans is None:
        return tuple(leaf[None] for leaf in y0)
    _, rest = scan(advance, (y0, f0, h0), spans)
    return tuple(np.concatenate([leaf[None], more], axis=0) for leaf, more in zip(y0, rest))
