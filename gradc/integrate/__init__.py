"""ODE solves and quadrature on traced values: ``scipy.integrate``'s routed to gradc's.

``dopri`` and ``rosenbrock`` are the integrators (Dormand-Prince 5(4); Rosenbrock 2(3) for stiff problems and
the switch to it; every target runs them), ``sensitivity_vjp`` the stiff solves' reverse mode, ``rhs`` traces the
right-hand side into one function with its closure's traced values as parameters, ``adjoint``
gives the solve its derivatives (the adjoint method, forward sensitivities), ``scipy_api`` has
``odeint`` and ``solve_ivp`` with SciPy's signatures, ``quadrature`` has ``quad`` (the same
solve) and the trapezoid rules. The solvers route themselves even when no argument is traced
(the right-hand side may read traced values from its closure); with nothing traced at all
SciPy's own function runs.

>>> from gradc.trace import scipy_dispatch
>>> "scipy.integrate.odeint" in scipy_dispatch.SCIPY_FUNCTIONS
True
"""
from __future__ import annotations

from gradc.integrate import quadrature, scipy_api
from gradc.trace import scipy_dispatch

for _solver in (scipy_api.odeint, scipy_api.solve_ivp, quadrature.quad):
    _solver.closure_reads_traced = True  # type: ignore[attr-defined]  # routed on every call: see the docstring
    scipy_dispatch.register(f"scipy.integrate.{_solver.__name__}", _solver)
for _rule in (quadrature.trapezoid, quadrature.cumulative_trapezoid):
    scipy_dispatch.register(f"scipy.integrate.{_rule.__name__}", _rule)
