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

from gradc.ir.builder import Traced


def sensitivity_vjp(rhs_at, integrate, is_float, tracer, ct, residuals, xs):
    """The cotangents of ``(y0, ts, *parameters)``; ``rhs_at(t, y, params)`` evaluates the right-hand side,
    ``integrate(fun, state, ts)`` is the solve (method and tolerances bound), ``is_float``/``tracer`` as
    ``gradc.integrate.adjoint``'s. The sensitivities are one matrix ``S`` (state entries by input directions),
    ``dS/dt = df/dy S + [0, df/dp]``, both Jacobians from one batched forward sweep per evaluation, so the
    traced program does not grow with the number of inputs."""
    from gradc.derivatives.jacobians import jacfwd

    (ys,) = [tracer(r) for r in residuals]
    y0, ts, *params = [tracer(x) for x in xs]
    ct = tracer(ct)
    floats = [k for k, p in enumerate(params) if is_float(p)]
    n = int(np.prod(y0.shape, dtype=np.int64))
    sizes = [int(np.prod(params[k].shape, dtype=np.int64)) for k in floats]
    flat_params = np.concatenate([np.reshape(params[k], (-1,)) for k in floats]) if floats else None

    def with_flat(flat):
        full, start = list(params), 0
        for k, size in zip(floats, sizes):
            full[k] = np.reshape(flat[start:start + size], params[k].shape)
            start += size
        return full

    def forwards(t, state):
        y, s = state
        if flat_params is None:
            f = rhs_at(t, y, params)
            j_y = jacfwd(lambda y_: np.reshape(rhs_at(t, np.reshape(y_, y0.shape), params), (-1,)))(
                np.reshape(y, (-1,)))
            return f, j_y @ s
        f = rhs_at(t, y, params)
        j_y, j_p = jacfwd(lambda y_, p_: np.reshape(rhs_at(t, np.reshape(y_, y0.shape), with_flat(p_)), (-1,)),
                          argnums=(0, 1))(np.reshape(y, (-1,)), flat_params)
        return f, j_y @ s + np.concatenate([np.zeros((n, n)), j_p], axis=1)

    directions = n + sum(sizes)
    start_s = np.concatenate([np.eye(n), np.zeros((n, directions - n))], axis=1)
    _, ss = integrate(forwards, (y0, start_s), ts)  # ss: (len(ts), n, directions)
    totals = np.einsum("ti,tij->j", np.reshape(ct, (ct.shape[0], n)), ss)
    a0 = np.reshape(totals[:n], y0.shape)
    ct_params: list = [None] * len(params)
    start = n
    for k, size in zip(floats, sizes):
        ct_params[k] = np.reshape(totals[start:start + size], params[k].shape)
        start += size
    ct_ts = None
    if isinstance(xs[1], Traced):
        count = ys.shape[0]
        f_all = [rhs_at(ts[i], ys[i], params) for i in range(count)]
        ct_ts = np.stack([-np.sum((a0 - ct[0]) * f_all[0])] + [np.sum(ct[i] * f_all[i]) for i in range(1, count)])
    return [a0, ct_ts, *ct_params]
