"""An ODE solve as one differentiable value: the adjoint method in reverse mode, forward sensitivities in forward mode.

``solve(rhs, y0, ts, rtol, atol)`` integrates ``dy/dt = rhs(t, y, parameters)`` with Dormand and
Prince's pair (``gradc.integrate.dopri``) and marks the result with ``custom_call``, so that its
derivative is not the derivative of the integrator's steps (discretise, then differentiate) but
the continuous one (differentiate, then discretise), as SciPy users and JAX's ``odeint`` expect:

* **Reverse mode (the adjoint method).** With ``a(t)`` the adjoint of the state, the augmented
  state ``(y, a, g)`` is integrated backwards from the last output time to the first, with
  ``dy/dt = f``, ``da/dt = -a^T df/dy``, ``dg/dt = -a^T df/dp``, by the same integrator at the
  same tolerances; at each output time ``t_i`` the output's cotangent is added to ``a`` and ``y``
  is reset to the stored ``y(t_i)``. Then ``y0``'s cotangent is ``a(t_0)``, the parameters' is
  ``g(t_0)``, ``t_i``'s is ``ct_i . f(y_i, t_i)`` (``t_0``'s: ``-a(t_0^+) . f(y_0, t_0)``).
  ``a^T df/dy`` is one pull-back of the right-hand side's graph (``gradc.vjp``), so no Jacobian
  is formed.
* **Stiff solves** (``method`` "stiff" or "switching": ``gradc.integrate.rosenbrock``) take their reverse mode
  from forward sensitivities instead (``gradc.integrate.sensitivity_vjp``): the backward solve of ``y`` above
  is unstable on a stiff problem.
* **Forward mode (sensitivities).** ``(y, v)`` integrated forwards with ``dv/dt = df/dy v + df/dp p'``
  from ``v(t_0) = y0' - f(y_0, t_0) t_0'``; the output's tangent is ``v(t_i) + f(y_i, t_i) t_i'``.

Both are ordinary traced code (loops of the integrator calling the right-hand side's graph and
its derivative), so they are emitted, checked and compiled to C like any other code; a second
derivative differentiates that code.

>>> import numpy as np, gradc
>>> from gradc.integrate.rhs import closed_rhs
>>> def final(k):
...     rhs = closed_rhs(lambda y, t: -k * y, np.ones(1), 0.0, ())
...     return solve(rhs, np.ones(1), np.array([0.0, 1.0]), 1e-10, 1e-10)[-1, 0]
>>> bool(abs(gradc.grad(final)(0.5) + np.exp(-0.5)) < 1e-8)  # d/dk exp(-k) = -exp(-k)
True
"""
from __future__ import annotations

import hashlib
from functools import partial

import numpy as np

from gradc.derivatives.transforms import jvp, vjp
from gradc.integrate import dopri, rosenbrock
from gradc.integrate.rhs import ClosedRhs
from gradc.integrate.sensitivity_vjp import sensitivity_vjp
from gradc.ir.builder import Traced
from gradc.ir.graph import Const, subgraphs
from gradc.ir.printer import format_graph
from gradc.ops import autodiff
from gradc.trace.control import scan
from gradc.trace.tracer import Tracer


def _tracer(x):
    return Tracer(x.builder, x.atom) if isinstance(x, Traced) and not isinstance(x, Tracer) else x


def _is_float(x) -> bool:
    return np.dtype(getattr(getattr(x, "aval", None), "np_dtype", None) or np.asarray(x).dtype).kind in "fc"


METHODS = ("nonstiff", "stiff", "switching")  # Dormand-Prince; Rosenbrock 2(3); the first, then the second


def integrate(method: str, fun, y0: tuple, ts, rtol: float, atol, max_steps: int) -> tuple:
    """``fun``'s states at ``ts`` by ``method`` (one of ``METHODS``)."""
    if method == "nonstiff":
        return dopri.integrate(fun, y0, ts, rtol, atol, max_steps)
    return rosenbrock.integrate(fun, y0, ts, rtol, atol, max_steps, switch=method == "switching")


def solve(rhs: ClosedRhs, y0, ts, rtol: float, atol, max_steps: int = dopri.MAX_STEPS, hmax: float = np.inf,
          method: str = "nonstiff", adjoint_tolerances: tuple | None = None):
    """The states at the increasing times ``ts``, shape ``(len(ts),) + y0.shape`` (see the module docstring);
    ``adjoint_tolerances``: ``(rtol, atol)`` of the derivative's solves (default: the forward's)."""
    params = list(rhs.parameters)
    (ys,) = integrate(method, lambda t, s: (rhs(t, s[0], params),), (y0,), ts, rtol, atol, max_steps)
    if not isinstance(ys, Traced):
        return ys
    d_rtol, d_atol = adjoint_tolerances or (rtol, atol)
    options = (float(rtol), np.asarray(atol, dtype=np.float64).tobytes(), int(max_steps), method,
               float(d_rtol), np.asarray(d_atol, dtype=np.float64).tobytes())
    key = _rule_key(rhs, options)
    if key not in autodiff.RULES:
        autodiff.RULES[key] = autodiff.Rule(
            "scipy.integrate ODE solve",
            vjp=(partial(_adjoint, rhs.graph, d_rtol, d_atol, max_steps, method) if method == "nonstiff" else
                 partial(_stiff_vjp, rhs.graph, d_rtol, d_atol, max_steps, method)),
            jvp=partial(_sensitivities, rhs.graph, d_rtol, d_atol, max_steps, method),
            tolerance=max(float(rtol), float(np.max(atol)), float(d_rtol), float(np.max(d_atol))))
    return _tracer(autodiff.custom_call(ys, [ys], [y0, ts, *params], key))


def _rule_key(rhs: ClosedRhs, options) -> str:
    """A key naming the rule by what it computes (the right-hand side's graph and the options): the same
    program gives the same IR text in every process and on every trace."""
    digest = hashlib.sha256((format_graph(rhs.graph) + repr(options)).encode())
    for value in _constants(rhs.graph):  # the IR text abbreviates array constants: their bytes tell them apart
        digest.update(repr((value.dtype.str, value.shape)).encode() + np.ascontiguousarray(value).tobytes())
    return "ode_" + digest.hexdigest()[:12]


def _constants(graph):
    """Every constant operand of ``graph`` and its sub-graphs, in order (a loop over a work list: no recursion)."""
    found, pending = [], [graph]
    while pending:
        g = pending.pop()
        for eqn in g.eqns:
            found.extend(atom.value for atom in eqn.inputs if isinstance(atom, Const))
            pending.extend(reversed(subgraphs(eqn)))
        found.extend(atom.value for atom in g.outputs if isinstance(atom, Const))
    return found


def _rhs_at(graph, t, y, params):
    return ClosedRhs(graph, params)(t, y, params)


def _stiff_vjp(graph, rtol, atol, max_steps, method, ct, residuals, xs):
    """A stiff solve's cotangents, by forward sensitivities (``gradc.integrate.sensitivity_vjp``)."""
    def solve_all(fun, state, ts):
        return integrate(method, fun, state, ts, rtol, float(np.min(atol)), max_steps)
    return sensitivity_vjp(partial(_rhs_at, graph), solve_all, _is_float, _tracer, ct, residuals, xs)


def _adjoint(graph, rtol, atol, max_steps, method, ct, residuals, xs):
    """The cotangents of ``(y0, ts, *parameters)`` (see the module docstring)."""
    (ys,) = [_tracer(r) for r in residuals]
    y0, ts, *params = [_tracer(x) for x in xs]
    ct = _tracer(ct)
    floats = [k for k, p in enumerate(params) if _is_float(p)]
    atol_aug = float(np.min(atol))

    def f_and_pull(t, y, a):
        def at(y_, moving):
            full = list(params)
            for k, p in zip(floats, moving):
                full[k] = p
            return _rhs_at(graph, t, y_, full)
        f, pull = vjp(at, y, tuple(params[k] for k in floats))
        a_y, a_p = pull(a)
        return f, (a_y, *a_p)

    def backwards(s, state):  # s = -t: time runs forwards for the integrator
        y, a = state[0], state[1]
        f, (a_y, *a_p) = f_and_pull(-s, y, a)
        return (-f, a_y, *a_p)

    n = ys.shape[0]
    g0 = tuple(np.zeros(params[k].shape) for k in floats)
    state = (ys[n - 1], ct[n - 1], *g0)
    if n == 1:
        return [ct[0], None, *[None] * len(params)]
    s_first = -ts[n - 1]
    h = dopri.first_step(backwards, s_first, state, backwards(s_first, state), -ts[0], rtol, atol_aug)

    def interval(carry, row):
        state, h, stiff = carry
        t_hi, t_lo, y_lo, ct_lo = row[0], row[1], row[2], row[3]
        f = backwards(-t_hi, state)
        if method == "nonstiff":
            reached, _, h = dopri._interval(backwards, -t_hi, -t_lo, state, f, h, rtol, atol_aug, max_steps)
        elif method == "stiff":
            reached, _, h = rosenbrock.interval(backwards, -t_hi, -t_lo, state, f, h, rtol, atol_aug, max_steps)
        else:
            reached, _, h, stiff = rosenbrock.auto_interval(backwards, -t_hi, -t_lo, state, f, h, stiff, rtol,
                                                            atol_aug, max_steps)
        state = (y_lo, reached[1] + ct_lo, *reached[2:])
        return (state, h, stiff), reached[1]

    rows = (ts[1:][::-1], ts[:-1][::-1], ys[:-1][::-1], ct[:-1][::-1])
    (state, _, _), _ = scan(interval, (state, h, np.asarray(False)), rows)
    a0 = state[1]
    ct_ts = None
    if isinstance(xs[1], Traced):
        f_all = [_rhs_at(graph, ts[i], ys[i], params) for i in range(n)]
        ct_ts = np.stack([-np.sum((a0 - ct[0]) * f_all[0])] + [np.sum(ct[i] * f_all[i]) for i in range(1, n)])
    ct_params = [None] * len(params)
    for k, g in zip(floats, state[2:]):
        ct_params[k] = g
    return [a0, ct_ts, *ct_params]


def _sensitivities(graph, rtol, atol, max_steps, method, tangents, residuals, xs, out):
    """The tangent of the states (see the module docstring)."""
    (ys,) = [_tracer(r) for r in residuals]
    y0, ts, *params = [_tracer(x) for x in xs]
    y0_dot, ts_dot, *p_dot = [None if d is None else _tracer(d) for d in tangents]
    moving = [k for k, d in enumerate(p_dot) if d is not None and _is_float(params[k])]

    def forwards(t, state):
        y, v = state

        def at(y_, changing):
            full = list(params)
            for k, p in zip(moving, changing):
                full[k] = p
            return _rhs_at(graph, t, y_, full)
        return jvp(at, (y, tuple(params[k] for k in moving)), (v, tuple(p_dot[k] for k in moving)))

    v0 = y0_dot if y0_dot is not None else np.zeros(y0.shape)
    if ts_dot is not None:
        v0 = v0 - _rhs_at(graph, ts[0], y0, params) * ts_dot[0]
    _, vs = integrate(method, forwards, (y0, v0), ts, rtol, float(np.min(atol)), max_steps)
    if ts_dot is not None:
        n = ys.shape[0]
        vs = vs + np.stack([_rhs_at(graph, ts[i], ys[i], params) * ts_dot[i] for i in range(n)])
    return vs
