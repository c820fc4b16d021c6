"""The reverse-mode derivative of a stiff ODE solve by forward sensitivities (stable where the adjoint's backward
solve is not).

The adjoint method of ``gradc.integrate.adjoint`` integrates the state ``y`` backwards alongside the adjoint. For
a stiff problem that is unstable: the modes that decay fast forwards grow as fast backwards (``exp(1e4 t)`` for
Robertson's problem), and the result is a huge finite number, not the derivative. So the solves of
``solve_ivp(method="BDF"/"Radau"/"LSODA")`` and ``odeint`` take their reverse-mode derivative from the
sensitivity equations, integrated forwards by the same solver at the derivative's tolerances:
``dS_j/dt = df/dy S_j + df/dp e_j`` for every input direction ``j`` (each entry of ``y0`` and of the
parameters), ``S_j(t_0) = e_j``; then an input's cotangent is ``sum_i ct_i . S_j(t_i)``. The cost grows with the
number of inputs (one tangent state each), which suits stiff problems, typically small.

>>> import numpy as np, scipy.integrate, gradc
>>> def final(k):
...     sol = scipy.integrate.solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.ones(1), method="BDF",
...                                     t_eval=np.array([1.0]), rtol=1e-8, atol=1e-10)
...     return sol.y[0, -1]
>>> bool(abs(gradc.grad(final)(2.0) + np.exp(-2.0)) < 1e-5)
True
"""
from __future__ import annotations

import numpy as np

from gradc.derivatives.transforms import jvp
from gradc.ir.builder import Traced


def sensitivity_vjp(rhs_at, integrate, is_float, tracer, ct, residuals, xs):
    """The cotangents of ``(y0, ts, *parameters)``; ``rhs_at(t, y, params)`` evaluates the right-hand side,
    ``integrate(fun, state, ts)`` is the solve (method and tolerances bound), ``is_float``/``tracer`` as
    ``gradc.integrate.adjoint``'s."""
    (ys,) = [tracer(r) for r in residuals]
    y0, ts, *params = [tracer(x) for x in xs]
    ct = tracer(ct)
    floats = [k for k, p in enumerate(params) if is_float(p)]
    n = int(np.prod(y0.shape, dtype=np.int64))
    directions = [(None, i) for i in range(n)]  # (parameter or None for y0, flat index)
    for k in floats:
        directions += [(k, i) for i in range(int(np.prod(params[k].shape, dtype=np.int64)))]

    def unit(shape, i):
        e = np.zeros(int(np.prod(shape, dtype=np.int64)))
        e[i] = 1.0
        return e.reshape(shape)

    def forwards(t, state):
        y, tangents = state[0], state[1:]
        outs = [None]
        for (k, i), s in zip(directions, tangents):
            def at(y_, p_, k=k):
                full = list(params)
                if k is not None:
                    full[k] = p_
                return rhs_at(t, y_, full)
            p_k = params[k] if k is not None else np.zeros(())
            p_dot = unit(params[k].shape, i) if k is not None else np.zeros(())
            f, ds = jvp(at, (y, p_k), (s, p_dot))
            outs[0] = f
            outs.append(ds)
        if outs[0] is None:  # no direction (nothing to differentiate)
            outs[0] = rhs_at(t, y, params)
        return tuple(outs)

    starts = [unit(y0.shape, i) if k is None else np.zeros(y0.shape) for k, i in directions]
    solved = integrate(forwards, (y0, *starts), ts)
    totals = [np.sum(ct * s) for s in solved[1:]]
    a0 = np.reshape(np.stack(totals[:n]), y0.shape) if n else np.zeros(y0.shape)
    ct_params: list = [None] * len(params)
    start = n
    for k in floats:
        size = int(np.prod(params[k].shape, dtype=np.int64))
        ct_params[k] = np.reshape(np.stack(totals[start:start + size]), params[k].shape)
        start += size
    ct_ts = None
    if isinstance(xs[1], Traced):
        count = ys.shape[0]
        f_all = [rhs_at(ts[i], ys[i], params) for i in range(count)]
        ct_ts = np.stack([-np.sum((a0 - ct[0]) * f_all[0])] + [np.sum(ct[i] * f_all[i]) for i in range(1, count)])
    return [a0, ct_ts, *ct_params]
