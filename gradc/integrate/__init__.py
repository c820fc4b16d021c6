"""ODE solves on traced values: ``scipy.integrate.odeint`` and ``solve_ivp`` routed to gradc's.

``dopri`` is the integrator (Dormand-Prince 5(4), every target runs it), ``rhs`` traces the
right-hand side into one function with its closure's traced values as parameters, ``adjoint``
gives the solve its derivatives (the adjoint method, forward sensitivities), ``scipy_api`` has
SciPy's signatures. The solvers route themselves even when no argument is traced (the
right-hand side may read traced values from its closure); with nothing traced at all SciPy's
own function runs.

>>> from gradc.trace import scipy_dispatch
>>> "scipy.integrate.odeint" in scipy_dispatch.SCIPY_FUNCTIONS
True
"""
from __future__ import annotations

from gradc.integrate import scipy_api
from gradc.trace import scipy_dispatch

for _name in ("odeint", "solve_ivp"):
    _solver = getattr(scipy_api, _name)
    _solver.closure_reads_traced = True  # routed on every call: see the docstring
    scipy_dispatch.register(f"scipy.integrate.{_name}", _solver)
