"""``scipy.integrate.odeint`` and ``solve_ivp`` with SciPy's signatures, on traced values.

``solve_ivp(method="RK45"/"RK23"/"DOP853")`` integrates with Dormand and Prince's 5(4) pair
(``gradc.integrate.dopri``), ``method="BDF"/"Radau"`` with the Rosenbrock 2(3) pair for stiff problems
(``gradc.integrate.rosenbrock``), ``method="LSODA"`` and ``odeint`` with the first switching to the second when
an interval takes too many steps: the values agree with SciPy's to the tolerance, not bit for bit. Their
derivatives are the adjoint method and forward sensitivities (``gradc.integrate.adjoint``); the tolerances of the
derivative's solves are the forward's unless ``adjoint_rtol=``/``adjoint_atol=`` (gradc's keywords) are given.
With nothing traced (no traced argument, nothing traced read by ``func``) SciPy's own function runs.

Supported: ``odeint(func, y0, t, args=(), rtol=, atol=, h0=, hmax=, mxstep=, tfirst=)`` (``Dfun``,
``col_deriv``, ``ml``, ``mu`` and the LSODA-only options are accepted and do not change the
result); ``solve_ivp(fun, t_span, y0, method=, t_eval=, args=, rtol=, atol=, first_step=,
max_step=)`` with ``t_eval`` given (its result's ``t``, ``y``, ``success``; ``jac`` is accepted and unused: the
Jacobian is exact, by forward mode). Without ``t_eval`` the output times would depend on the data: refused,
saying to pass them. Times must be monotonic; traced times must increase (a decreasing traced pair gives NaN).
A solve that needs more than ``mxstep`` steps (default 10,000) between two output times gives NaN from there
on, never a wrong finite number.

>>> import numpy as np, scipy.integrate, gradc
>>> def final(k):
...     return scipy.integrate.odeint(lambda y, t: -k * y, np.ones(1), np.array([0.0, 2.0]))[-1, 0]
>>> bool(np.isclose(gradc.grad(final)(0.5), -2.0 * np.exp(-1.0), rtol=1e-6))
True
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.integrate import dopri
from gradc.integrate.adjoint import solve
from gradc.integrate.rhs import as_state, closed_rhs
from gradc.ir.builder import Traced
from gradc.trace.calls import call  # the user's function as the trace calls it: captured, SciPy routed

ODEINT_TOL = 1.49012e-8  # odeint's default rtol and atol
_LSODA_ONLY = ("Dfun", "col_deriv", "ml", "mu", "hmin", "ixpr", "mxhnil", "mxordn", "mxords", "printmessg")


def _refuse(what: str, option: str, hint: str):
    raise TraceError(f"{what} with {option} is not supported by gradc", where=user_location(), hint=hint)


def _times(t, what: str):
    """``(times as increasing values, direction)``: a concrete decreasing sequence is integrated in ``-t``."""
    if isinstance(t, Traced):
        if len(t.shape) != 1:
            raise TraceError(f"{what}: the times have shape {tuple(t.shape)}, not one axis", where=user_location(),
                             hint="pass a 1-D sequence of output times")
        return t, 1.0
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise TraceError(f"{what}: the times have shape {t.shape}, not one axis of at least one entry",
                         where=user_location(), hint="pass a 1-D sequence of output times")
    steps = np.diff(t)
    if np.all(steps >= 0):
        return t, 1.0
    if np.all(steps <= 0):
        return -t, -1.0
    raise TraceError(f"{what}: the output times are not monotonic", where=user_location(),
                     hint="sort the times (increasing or decreasing)")


def _state(y0, what: str):
    if isinstance(y0, (list, tuple)):
        from gradc.trace import array_like_dispatch as array_likes
        y0 = array_likes.build(list(y0)) if array_likes.has_traced(y0) else np.asarray(y0)
    if isinstance(y0, Traced):
        y0 = y0.astype(np.float64) if y0.dtype != np.float64 else y0
        return y0.reshape(-1)
    return np.asarray(y0, dtype=np.float64).reshape(-1)


def _solve(user, y0, t, args, rtol, atol, max_steps, hmax, what, method, adjoint_tolerances):
    """``(len(t), n)`` states of ``dy/dt = user(y, t, *args)`` by ``method`` (``gradc.integrate.adjoint.METHODS``)."""
    ts, direction = _times(t, what)
    y0 = _state(y0, what)
    if direction > 0:
        def rate(y, s, *a):
            return user(y, s, *a)
    else:  # y(t) = z(-t): dz/ds = -f(z, -s)
        def rate(y, s, *a):
            return -as_state(user(y, -s, *a), y, what)
    rhs = closed_rhs(rate, y0, ts[0], tuple(args), what=what)
    if rhs.graph is None:
        return rhs, None
    return rhs, solve(rhs, y0, ts, rtol, atol, max_steps, hmax, method=method, adjoint_tolerances=adjoint_tolerances)


def _adjoint_tolerances(options: dict, rtol, atol, what: str):
    """gradc's ``adjoint_rtol=``/``adjoint_atol=`` (the derivative's solves; default the forward's), checked."""
    d_rtol, d_atol = options.pop("adjoint_rtol", None), options.pop("adjoint_atol", None)
    if d_rtol is None and d_atol is None:
        return None
    d_rtol, d_atol = (rtol if d_rtol is None else d_rtol), (atol if d_atol is None else d_atol)
    for name, value in (("adjoint_rtol", d_rtol), ("adjoint_atol", d_atol)):
        if isinstance(value, Traced) or not np.all(np.asarray(value, dtype=np.float64) > 0):
            raise TraceError(f"{what}: {name}={value!r} is not a positive constant", where=user_location(),
                             hint=f"pass {name} as a positive Python float (a tolerance of the adjoint solve)")
    return float(d_rtol), d_atol


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None, rtol=None,  # noqa: N803
           atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0, mxhnil=0, mxordn=12,
           mxords=5, printmessg=0, tfirst=False, **gradc_options):
    """``scipy.integrate.odeint`` on traced values (see the module docstring)."""
    what = "scipy.integrate.odeint"
    unknown = sorted(set(gradc_options) - {"adjoint_rtol", "adjoint_atol"})
    if unknown:
        raise TraceError(f"{what} got an unexpected keyword argument {unknown[0]!r}", where=user_location(),
                         hint="see scipy.integrate.odeint's parameters (gradc adds adjoint_rtol=, adjoint_atol=)")
    if full_output:
        _refuse(what, "full_output", "drop full_output: gradc's solve has no LSODA diagnostics")
    if tcrit is not None:
        _refuse(what, "tcrit", "split the integration at the critical times (one odeint call per piece)")
    if not isinstance(args, tuple):
        args = (args,)
    user = (lambda y, s, *a: call(func, s, y, *a)) if tfirst else (lambda y, s, *a: call(func, y, s, *a))
    rtol = ODEINT_TOL if rtol is None else rtol
    atol = ODEINT_TOL if atol is None else atol
    adjoint = _adjoint_tolerances(dict(gradc_options), rtol, atol, what)
    rhs, ys = _solve(user, y0, t, args, rtol, atol, int(mxstep) or dopri.MAX_STEPS, hmax, what, "switching",
                     adjoint)
    if ys is None:  # nothing traced: SciPy's own solver
        import scipy.integrate
        return scipy.integrate.odeint(func, y0, t, args=args, Dfun=Dfun, col_deriv=col_deriv, ml=ml, mu=mu,
                                      rtol=rtol, atol=atol, h0=h0, hmax=hmax, hmin=hmin, ixpr=ixpr,
                                      mxstep=mxstep, mxhnil=mxhnil, mxordn=mxordn, mxords=mxords,
                                      printmessg=printmessg, tfirst=tfirst)
    return ys


class _Result(dict):
    """``solve_ivp``'s result: a dict whose keys are also attributes (as SciPy's ``OdeResult``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"solve_ivp's result has no {name!r} under gradc (it has {sorted(self)})") \
                from None


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None, vectorized=False,
              args=None, **options):
    """``scipy.integrate.solve_ivp`` on traced values, with ``t_eval`` (see the module docstring)."""
    what = "scipy.integrate.solve_ivp"
    if dense_output:
        return _dense(fun, t_span, y0, method, t_eval, events, vectorized, args, options)
    if t_eval is None:
        _refuse(what, "no t_eval", "pass t_eval= the times you need (t_eval=[t0, t1] for the final state, "
                                   "then read sol.y[:, -1]): the solver's own time points are not fixed in advance")
    if events is not None:
        _refuse(what, "events", "gradc has no event location: integrate to fixed times (t_eval)")
    known = {"rtol", "atol", "first_step", "max_step", "jac", "jac_sparsity", "lband", "uband", "min_step",
             "adjoint_rtol", "adjoint_atol"}
    unknown = sorted(set(options) - known)
    if unknown:
        _refuse(what, f"option {unknown[0]!r}", f"use only {sorted(known)}")
    kind = _METHODS.get(method) if isinstance(method, str) else None
    if kind is None:
        _refuse(what, f"method={method!r}", f"pass one of {sorted(_METHODS)} by name (gradc has its own solvers: "
                                             f"see the module docstring of gradc.integrate.scipy_api)")
    rtol, atol = options.get("rtol", 1e-3), options.get("atol", 1e-6)
    options = dict(options)
    adjoint = _adjoint_tolerances(options, rtol, atol, what)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    t0, t1 = t_span
    if not isinstance(t_eval, Traced):
        t_eval = np.asarray(t_eval, dtype=np.float64)
        if not isinstance(t0, Traced) and (t_eval.size and (np.min(t_eval) < min(t0, t1) or
                                                           np.max(t_eval) > max(t0, t1))):
            raise TraceError(f"{what}: t_eval has values outside t_span {tuple(t_span)}", where=user_location(),
                             hint="keep t_eval within t_span")
    times = _with_start(t0, t_eval)
    rhs, ys = _solve(lambda y, t, *a: call(fun, t, y, *a), y0, times, args, rtol, atol, dopri.MAX_STEPS,
                     options.get("max_step", np.inf), what, kind, adjoint)
    if ys is None:
        import scipy.integrate
        options = {k: v for k, v in options.items() if k not in ("adjoint_rtol", "adjoint_atol")}
        sol = scipy.integrate.solve_ivp(fun, t_span, y0, method=method, t_eval=t_eval, vectorized=vectorized,
                                        args=args or None, **options)
        return sol
    ys = ys[1:]  # the start time was added in front
    return _Result(t=t_eval, y=ys.T, success=np.all(np.isfinite(ys)), status=0,
                   message=f"gradc: integrated with {_DESCRIPTIONS[kind]}", t_events=None, y_events=None, sol=None)


def _dense(fun, t_span, y0, method, t_eval, events, vectorized, args, options):
    """``dense_output=True``: ``sol(t)`` integrates again from ``t_span[0]`` to the times asked for (SciPy
    interpolates its steps instead: both are within the tolerances of the solution, not equal to each other's
    rounding). Without ``t_eval`` the result has ``sol`` only (SciPy's ``t``, ``y`` are its own step points)."""
    def solve(times):
        return solve_ivp(fun, t_span, y0, method, times, False, events, vectorized, args, **options)

    def sol(t):
        if isinstance(t, Traced):  # traced times: integrated in the order given (increasing away from t0)
            return solve(t).y if t.ndim else solve(np.reshape(t, (1,)) + 0.0).y[:, 0]
        t = np.asarray(t, dtype=np.float64)
        order = np.argsort(t.ravel(), kind="stable")
        if t_span[1] < t_span[0]:  # integrating backwards: the times decreasing
            order = order[::-1]
        ys = solve(t.ravel()[order]).y
        out = ys[:, np.argsort(order, kind="stable")]
        return out[:, 0] if t.ndim == 0 else out

    if t_eval is None:
        return _Result(sol=sol, success=True, status=0, message="gradc: dense output by integrating to the times "
                                                                "sol(t) is given", t_events=None, y_events=None)
    result = solve(t_eval)
    return _Result(**{**dict(result), "sol": sol})


# solve_ivp's methods -> gradc.integrate.adjoint.METHODS
_METHODS = {"RK45": "nonstiff", "RK23": "nonstiff", "DOP853": "nonstiff", "BDF": "stiff", "Radau": "stiff",
            "LSODA": "switching"}
_DESCRIPTIONS = {"nonstiff": "Dormand-Prince 5(4)", "stiff": "Rosenbrock 2(3) (stiff)",
                 "switching": "Dormand-Prince 5(4), switching to Rosenbrock 2(3) when stiff"}


def _with_start(t0, t_eval):
    """The output times with the start time in front (the solve starts at ``t_span[0]``, not at ``t_eval[0]``)."""
    if isinstance(t_eval, Traced) or isinstance(t0, Traced):
        return np.concatenate([np.reshape(t0, (1,)) + 0.0 * t_eval[:1], t_eval])
    return np.concatenate([[float(t0)], t_eval])
