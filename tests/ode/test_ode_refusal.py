"""scipy.integrate's ODE solvers are not yet differentiable (issue 24.5, adjoint method pending).

Until the adjoint-method op lands, tracing odeint/solve_ivp must be refused clearly, naming the
public SciPy function and the user's file:line. The explicit fixed-step RK4 loop below is the
reference the adjoint rule will be checked against; its gradient is checked here against the
closed form exp(-k t) y0 so that the reference itself is trustworthy.
"""

import numpy as np
import pytest
import scipy.integrate as si

import gradc
from gradc.errors import TraceError


def _odeint_user(y0):
    return si.odeint(lambda y, t: -y, y0, np.array([0.0, 1.0]))[-1].sum()


def _solve_ivp_user(y0):
    return si.solve_ivp(lambda t, y: -y, (0.0, 1.0), y0).y[:, -1].sum()


@pytest.mark.parametrize(
    "user, public_name",
    [(_odeint_user, "scipy.integrate.odeint"), (_solve_ivp_user, "scipy.integrate.solve_ivp")],
)
def test_ode_solver_is_refused_with_user_line(user, public_name):
    with pytest.raises(TraceError) as info:
        gradc.grad(user)(np.ones(2))
    message = str(info.value)
    assert public_name in message
    line = user.__code__.co_firstlineno + 1
    assert f"test_ode_refusal.py:{line}" in message


def _rk4_decay(params):
    # y' = -k y from y(0) = y0, 20 fixed RK4 steps to t = 1.
    y0, k = params[0], params[1]
    h = 1.0 / 20
    y = y0
    for _ in range(20):
        s1 = -k * y
        s2 = -k * (y + 0.5 * h * s1)
        s3 = -k * (y + 0.5 * h * s2)
        s4 = -k * (y + h * s3)
        y = y + h / 6.0 * (s1 + 2 * s2 + 2 * s3 + s4)
    return y


def test_rk4_reference_gradient_matches_closed_form():
    params = np.array([1.3, 0.7])
    grad = gradc.grad(_rk4_decay)(params)
    y0, k = params
    exact = np.array([np.exp(-k), -y0 * np.exp(-k)])
    np.testing.assert_allclose(grad, exact, rtol=1e-6)
