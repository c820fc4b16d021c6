"""``scipy.integrate.quad``, ``trapezoid`` and ``cumulative_trapezoid`` on traced values.

``quad(func, a, b)`` is the ODE ``dI/dx = func(x)`` from ``I(a) = 0`` solved to ``x = b`` by the
same integrator and rules as ``odeint`` (``gradc.integrate.adjoint``): adaptive, at ``epsabs`` and
``epsrel``, differentiable in the integrand's parameters (read from ``args`` or its closure) and
in both limits. Its second result is the error bound asked for, ``max(epsabs, epsrel * |I|)``, not
QUADPACK's estimate.

An infinite limit (a constant: ``np.inf``, ``-np.inf``) is mapped onto a finite interval, as QUADPACK's
``qagi`` does: ``x = a + t / (1 - t)`` for ``[a, inf)``, ``x = b - t / (1 - t)`` for ``(-inf, b]``
(``t`` in ``[0, 1)``, ``dx = dt / (1 - t)^2``) and ``x = t / (1 - t^2)`` for the whole line (``t`` in
``(-1, 1)``, ``dx = (1 + t^2) / (1 - t^2)^2 dt``); the transformed integrand is read at ``1 - 2^-26``
in place of the end ``t = 1`` itself (where it is a limit: ``0`` for an integrand decaying faster
than ``1/x^2``). The finite limit stays differentiable (``d/da`` of the integral over
``[a, inf)`` is ``-f(a)``). An integrand that decays slowly (``1/x^1.5``) or oscillates
(``sin(x)/x``) converges slowly, or not within the solver's steps (NaN then, never a wrong number).

>>> import numpy as np, scipy.integrate, gradc
>>> def area(k):
...     return scipy.integrate.quad(lambda x: np.exp(-k * x), 0.0, 1.0)[0]
>>> bool(np.isclose(gradc.grad(area)(1.0), -(1 - 2 * np.exp(-1.0)), rtol=1e-7))  # d/dk of (1 - e^-k) / k
True
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError, user_location
from gradc.integrate import dopri
from gradc.integrate.adjoint import solve
from gradc.integrate.rhs import closed_rhs
from gradc.ir.builder import Traced
from gradc.trace.calls import call

_QUAD_KNOWN = {"full_output", "epsabs", "epsrel", "limit", "points", "weight", "wvar", "wopts", "maxp1", "limlst",
               "complex_func"}


def quad(func, a, b, args=(), full_output=0, epsabs=1.49e-8, epsrel=1.49e-8, limit=50, points=None, weight=None,
         wvar=None, wopts=None, maxp1=50, limlst=50, complex_func=False):
    """``scipy.integrate.quad`` on traced values: ``(integral, error bound)`` (see the module docstring)."""
    what = "scipy.integrate.quad"
    for name, value, hint in (("full_output", full_output, "drop full_output"),
                              ("weight", weight, "multiply the integrand by the weight function"),
                              ("complex_func", complex_func, "integrate the real and imaginary parts apart"),
                              ("points", points, "split the interval at the points: one quad call per piece")):
        if value:
            raise TraceError(f"{what} with {name} is not supported by gradc", where=user_location(), hint=hint)
    args = args if isinstance(args, tuple) else (args,)
    if any(not isinstance(end, Traced) and np.isnan(end) for end in (a, b)):
        raise TraceError(f"{what}: a limit is NaN", where=user_location(), hint="check the limits")
    if any(not isinstance(end, Traced) and np.isinf(end) for end in (a, b)):
        return _infinite(func, a, b, args, epsabs, epsrel, limit)

    def rate(y, x, *extra):
        value = call(func, x, *extra)
        return y * 0.0 + value  # the integrand's value, shaped like the one-entry state

    ends = np.stack([a + 0.0 * b, b + 0.0 * a]) if isinstance(a, Traced) or isinstance(b, Traced) else \
        np.array([float(a), float(b)])
    if not isinstance(ends, Traced) and ends[1] < ends[0]:
        reversed_ = quad(func, b, a, args, epsabs=epsabs, epsrel=epsrel)
        return -reversed_[0], reversed_[1]
    rhs = closed_rhs(rate, np.zeros(1), ends[0], args, what=what)
    if rhs.graph is None:  # nothing traced: SciPy's own
        import scipy.integrate
        return scipy.integrate.quad(func, a, b, args=args, epsabs=epsabs, epsrel=epsrel, limit=limit)
    rtol = max(float(epsrel), 1e-13)
    ys = solve(rhs, np.zeros(1), ends, rtol, float(epsabs), dopri.MAX_STEPS)
    value = ys[-1, 0]
    return value, np.maximum(epsabs, epsrel * np.abs(value))


_LAST = 1.0 - 2.0 ** -26  # the transformed integrand is read here in place of its end t = 1 (a limit there)


def _infinite(func, a, b, args, epsabs, epsrel, limit):
    """``quad`` with an infinite limit, as an integral over a finite interval (see the module docstring)."""
    infinite = [not isinstance(end, Traced) and np.isinf(end) for end in (a, b)]
    if infinite[0] and infinite[1] and np.sign(a) == np.sign(b):
        return 0.0, 0.0
    if (infinite[0] and a > 0) or (infinite[1] and b < 0):  # (+inf, b] or [a, -inf): the reversed interval
        value, bound = _infinite(func, b, a, args, epsabs, epsrel, limit)
        return -value, bound
    kw = {"epsabs": epsabs, "epsrel": epsrel, "limit": limit}
    if infinite[0] and infinite[1]:
        def whole(t, *extra):
            t = np.clip(t, -_LAST, _LAST)
            return func(t / (1.0 - t * t), *extra) * ((1.0 + t * t) / (1.0 - t * t) ** 2)
        return quad(whole, -1.0, 1.0, args, **kw)
    finite, direction = (a, 1.0) if infinite[1] else (b, -1.0)  # [a, inf) or (-inf, b]

    def half(t, end, *extra):
        t = np.minimum(t, _LAST)
        return func(end + direction * (t / (1.0 - t)), *extra) / (1.0 - t) ** 2
    return quad(half, 0.0, 1.0, (finite, *args), **kw)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``scipy.integrate.trapezoid``: NumPy's ``trapezoid`` (``trapz`` before NumPy 2)."""
    return np.trapezoid(y, x=x, dx=dx, axis=axis) if hasattr(np, "trapezoid") else np.trapz(y, x=x, dx=dx, axis=axis)


def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """``scipy.integrate.cumulative_trapezoid``: the running trapezoid sums along ``axis``.

    >>> import numpy as np
    >>> cumulative_trapezoid(np.array([0.0, 1.0, 2.0]), initial=0)
    array([0. , 0.5, 2. ])
    """
    y = np.moveaxis(y, axis, -1)
    n = y.shape[-1]
    if x is None:
        steps = dx
    else:
        x = np.asarray(x) if not isinstance(x, Traced) else x
        if x.ndim == 1:
            steps = x[1:] - x[:-1]
        else:
            x = np.moveaxis(x, axis, -1)
            steps = x[..., 1:] - x[..., :-1]
    pieces = (y[..., 1:] + y[..., :-1]) * steps / 2.0
    total = np.cumsum(pieces, axis=-1) if n > 1 else pieces
    if initial is not None:
        if not isinstance(initial, Traced) and np.ndim(initial) == 0 and float(initial) != 0.0:
            raise TraceError("scipy.integrate.cumulative_trapezoid: initial must be 0 or None (SciPy's rule)",
                             where=user_location(), hint="add the constant to the result instead")
        total = np.concatenate([np.zeros(total.shape[:-1] + (1,)) + 0.0 * y[..., :1], total], axis=-1)
    return np.moveaxis(total, -1, axis)
