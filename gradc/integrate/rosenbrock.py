"""A stiff integrator: Shampine and Reichelt's Rosenbrock 2(3) pair (MATLAB's ``ode23s``), written for arrays and
tracers, and the automatic switch from Dormand-Prince to it (as LSODA switches from Adams to BDF).

Used for ``solve_ivp(method="BDF"/"Radau")`` (this method alone), ``solve_ivp(method="LSODA")`` and ``odeint``
(the switch), forwards and in the adjoint solve of their derivatives. A Rosenbrock method is linearly implicit:
each step solves three linear systems with ``W = I - h d J`` (``J = df/dy`` at the step's start, exact, by
forward-mode differentiation of the right-hand side's graph; ``d = 1 / (2 + sqrt 2)``), so there are no Newton
iterations to fail; it is L-stable, second order, with a third-order error estimate (Shampine and Reichelt,
*The MATLAB ODE Suite*, SIAM J. Sci. Comput. 18, 1997):

    k1 = W^-1 (f(t, y) + h d T),  T = df/dt
    k2 = W^-1 (f(t + h/2, y + h/2 k1) - k1) + k1,  y_new = y + h k2
    k3 = W^-1 (f(t + h, y_new) - e32 (k2 - F1) - 2 (k1 - F0) + h d T),  e32 = 6 + sqrt 2
    error = h / 6 (k1 - 2 k2 + k3)

A step is accepted when the scaled RMS error (as Dormand-Prince's, ``gradc.integrate.dopri``) is at most one; the
next step is ``h * clip(0.9 err^(-1/3), 0.2, 5)``. As there, a step count above ``max_steps`` per interval gives
NaN, never a wrong finite number.

The switch (``auto_interval``): each interval runs Dormand-Prince until it reaches the end or Hairer's stiffness
test fires (DOPRI5's: ``h |lambda| > 3.25``, ``lambda`` the dominant eigenvalue estimated from the last two
stages, on 15 accepted steps; ``gradc.integrate.dopri.steps``); the rest of the interval, and every later one,
runs this method (the state carries a ``stiff`` flag). A non-stiff problem is integrated as by ``RK45``, however
many steps it takes; a stiff one pays a few dozen explicit steps once.

>>> import numpy as np
>>> fun = lambda t, s: (np.stack([-1000.0 * (s[0][0] - np.cos(t)), -s[0][1]]),)  # stiff first component
>>> (ys,) = integrate(fun, (np.array([0.0, 1.0]),), np.array([0.0, 1.0]), 1e-6, 1e-9)
>>> bool(abs(ys[1, 0] - np.cos(1.0)) < 1e-3 and abs(ys[1, 1] - np.exp(-1.0)) < 1e-5)
True
"""
from __future__ import annotations

import math

import numpy as np

from gradc.integrate import dopri
from gradc.trace.control import scan, while_loop

_D = 1.0 / (2.0 + math.sqrt(2.0))
_E32 = 6.0 + math.sqrt(2.0)


def _flat(state: tuple):
    return np.concatenate([np.reshape(leaf, (-1,)) for leaf in state])


def _unflat(v, like: tuple) -> tuple:
    out, start = [], 0
    for leaf in like:
        size = int(np.prod(np.shape(leaf), dtype=np.int64))
        out.append(np.reshape(v[start:start + size], np.shape(leaf)))
        start += size
    return tuple(out)


def _linearised(fun, t, y: tuple):
    """``(J, T)``: ``d f/d y`` of the flattened state and ``d f/d t`` at ``(t, y)``, by forward mode."""
    from gradc.derivatives.jacobians import jacfwd
    from gradc.derivatives.transforms import jvp

    v = _flat(y)
    jac = jacfwd(lambda w: _flat(fun(t, _unflat(w, y))))(v)
    _, dt = jvp(lambda s: _flat(fun(s, y)), (t + 0.0 * v[0],), (1.0 + 0.0 * v[0],))
    return jac, dt


def _step(fun, t, y: tuple, f: tuple, h, rtol: float, atol: float):
    """One attempted step of size ``h``: ``(y_new, f_new, error norm)``."""
    jac, dt = _linearised(fun, t, y)
    n = jac.shape[0]
    w = np.eye(n) - (h * _D) * jac
    f0, v = _flat(f), _flat(y)
    hdt = (h * _D) * dt
    k1 = np.linalg.solve(w, f0 + hdt)
    f1 = _flat(fun(t + 0.5 * h, _unflat(v + (0.5 * h) * k1, y)))
    k2 = np.linalg.solve(w, f1 - k1) + k1
    v_new = v + h * k2
    y_new = _unflat(v_new, y)
    f2_state = fun(t + h, y_new)
    f2 = _flat(f2_state)
    k3 = np.linalg.solve(w, f2 - _E32 * (k2 - f1) - 2.0 * (k1 - f0) + hdt)
    err = (h / 6.0) * (k1 - 2.0 * k2 + k3)
    scale = rtol * np.maximum(np.abs(v), np.abs(v_new)) + atol
    return y_new, f2_state, np.sqrt(np.mean((err / scale) ** 2))


def _attempt(fun, t1, rtol, atol):
    def attempt(carry):
        t, y, f, h, n = carry
        last = h >= t1 - t
        h_now = np.where(last, t1 - t, h)
        y_new, f_new, err = _step(fun, t, y, f, h_now, rtol, atol)
        ok = err <= 1.0  # False for NaN: never accepted
        grow = np.where(err > 0.0, 0.9 * np.maximum(err, 1e-300) ** (-1.0 / 3.0), 5.0)
        t_next = np.where(ok, np.where(last, t1, t + h_now), t)
        y_next = tuple(np.where(ok, a, b) for a, b in zip(y_new, y))
        f_next = tuple(np.where(ok, a, b) for a, b in zip(f_new, f))
        return t_next, y_next, f_next, h_now * np.clip(grow, 0.2, 5.0), n + 1
    return attempt


def _run(fun, t0, t1, y: tuple, f: tuple, h, rtol, atol, max_steps, n0=0, active=True):
    """This method's loop from ``t0`` towards ``t1``: ``(t reached, y, f, h)``; ``active`` False skips it."""
    def going(carry):
        t, _, _, _, n = carry
        return (t < t1) & (n < max_steps) & active

    t, y, f, h, _ = while_loop(going, _attempt(fun, t1, rtol, atol), (t0 + 0.0 * t1, y, f, h, n0))
    return t, y, f, h


def interval(fun, t0, t1, y: tuple, f: tuple, h, rtol: float, atol: float, max_steps: int):
    """Integrate from ``t0`` to ``t1`` with this method: ``(y(t1) or NaN, f there, next step size)``."""
    t, y, f, h = _run(fun, t0, t1, y, f, h, rtol, atol, max_steps)
    return tuple(np.where(t >= t1, leaf, np.nan) for leaf in y), f, h


def auto_interval(fun, t0, t1, y: tuple, f: tuple, h, stiff, rtol: float, atol: float, max_steps: int):
    """Dormand-Prince until the budget, then this method (see the module docstring): ``(y(t1) or NaN, f, h,
    stiff)``."""
    t, y, f, h, n = dopri.steps(fun, t0, t1, y, f, h, rtol, atol, max_steps, active=~stiff, detect_stiffness=True)
    stiff = stiff | (t < t1)
    t, y, f, h = _run(fun, t, t1, y, f, h, rtol, atol, max_steps, n0=n, active=stiff)
    return tuple(np.where(t >= t1, leaf, np.nan) for leaf in y), f, h, stiff


def integrate(fun, y0: tuple, ts, rtol: float, atol: float, max_steps: int = dopri.MAX_STEPS,
              switch: bool = False) -> tuple:
    """The state at each of the increasing times ``ts`` (as ``dopri.integrate``); ``switch``: start with
    Dormand-Prince and switch when it struggles (LSODA's behaviour), else this method throughout."""
    y0 = tuple(y0)
    f0 = fun(ts[0], y0)
    h0 = dopri.first_step(fun, ts[0], y0, f0, ts[-1], rtol, atol)
    if len(ts) == 1:
        return tuple(leaf[None] for leaf in y0)
    spans = np.stack([ts[:-1], ts[1:]], axis=1)

    def advance(carry, span):
        y, f, h, stiff = carry
        if switch:
            y, f, h, stiff = auto_interval(fun, span[0], span[1], y, f, h, stiff, rtol, atol, max_steps)
        else:
            y, f, h = interval(fun, span[0], span[1], y, f, h, rtol, atol, max_steps)
        return (y, f, h, stiff), y

    _, rest = scan(advance, (y0, f0, h0, np.asarray(not switch)), spans)
    return tuple(np.concatenate([leaf[None], more], axis=0) for leaf, more in zip(y0, rest))
