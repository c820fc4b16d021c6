"""scipy.integrate.odeint and solve_ivp: values as SciPy's, derivatives by the adjoint method / sensitivities.

References, all independent of gradc's rule: the user's function run by SciPy itself under central
differences, closed forms (exp(-k t), linear systems through scipy.linalg.expm), and gradc's own
derivative of an explicit fixed-step RK4 loop (discretise-then-differentiate, which converges to
the same derivative as the step shrinks).
"""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.linalg
from scipy.integrate import odeint, solve_ivp

import gradc
from gradc.errors import TraceError

TIMES = np.linspace(0.0, 2.0, 5)


def central(fun, x, eps=1e-5):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (fun(x + e) - fun(x - e)) / (2 * eps)
    return g


def lotka_volterra(y, t, a, b):
    return np.array([a * y[0] - b * y[0] * y[1], -y[1] + 0.5 * y[0] * y[1]])


def loss_params(p):
    ys = odeint(lotka_volterra, np.array([1.0, 0.5]), TIMES, args=(p[0], p[1]), rtol=1e-10, atol=1e-10)
    return np.sum(ys ** 2)


def loss_closure_and_state(y0, k):
    ys = si.odeint(lambda y, t: -k * y + np.sin(t), y0, np.array([0.0, 0.5, 1.5]), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1] * np.arange(1.0, 3.0))


def loss_times(ts):
    ys = odeint(lambda y, t: np.cos(t) * y, np.array([1.0]), ts, rtol=1e-10, atol=1e-10)
    return np.sum(ys[:, 0] * np.arange(1.0, 1.0 + ts.shape[0]))


def test_gradient_in_parameters_matches_scipy_under_central_differences():
    p = np.array([1.1, 0.7])
    np.testing.assert_allclose(gradc.grad(loss_params)(p), central(loss_params, p), rtol=1e-6)


def test_gradient_through_closure_and_initial_state():
    y0, k = np.array([1.0, 2.0]), 0.3
    g_y0, g_k = gradc.grad(loss_closure_and_state, argnums=(0, 1))(y0, k)
    np.testing.assert_allclose(g_y0, central(lambda y: loss_closure_and_state(y, k), y0), rtol=1e-6)
    np.testing.assert_allclose(g_k, central(lambda kk: loss_closure_and_state(y0, kk[0]), [k])[0], rtol=1e-6)


def test_gradient_in_the_output_times_including_the_first():
    ts = np.array([0.2, 0.9, 1.4, 2.5])
    np.testing.assert_allclose(gradc.grad(loss_times)(ts), central(loss_times, ts), rtol=1e-6, atol=1e-8)


def test_value_matches_scipy_to_tolerance():
    p = np.array([1.1, 0.7])
    compiled = gradc.compile(loss_params, p)
    assert abs(compiled.forward(p) - loss_params(p)) < 1e-7 * abs(loss_params(p))


def test_decay_closed_form_and_tfirst_and_decreasing_times():
    def final(k):
        ys = odeint(lambda t, y: -k * y, np.array([2.0]), np.array([1.0, 0.0]), tfirst=True, rtol=1e-11,
                    atol=1e-11)
        return ys[-1, 0]  # integrated backwards from t=1 to t=0: 2 exp(k)
    k = 0.4
    assert abs(gradc.compile(final, k).forward(k) - 2.0 * np.exp(k)) < 1e-8
    assert abs(gradc.grad(final)(k) - 2.0 * np.exp(k)) < 1e-8


def _rk4_loss(p, steps=400):
    # the explicit fixed-step integrator of the same Lotka-Volterra problem, differentiated by gradc as a loop
    y, h = np.array([1.0, 0.5]), 2.0 / steps
    total = np.sum(y ** 2)
    for i in range(steps):
        t = i * h
        k1 = lotka_volterra(y, t, p[0], p[1])
        k2 = lotka_volterra(y + 0.5 * h * k1, t, p[0], p[1])
        k3 = lotka_volterra(y + 0.5 * h * k2, t, p[0], p[1])
        k4 = lotka_volterra(y + h * k3, t, p[0], p[1])
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
        if (i + 1) % 100 == 0:
            total = total + np.sum(y ** 2)
    return total


def test_adjoint_agrees_with_the_differentiated_explicit_integrator():
    p = np.array([1.1, 0.7])
    np.testing.assert_allclose(gradc.grad(loss_params)(p), gradc.grad(_rk4_loss)(p), rtol=1e-7)


def test_forward_mode_and_second_order():
    p = np.array([1.1, 0.7])
    g = central(loss_params, p)
    np.testing.assert_allclose(gradc.jacfwd(loss_params)(p), g, rtol=1e-6)
    hess = gradc.hessian(loss_params)(p)
    gradient = gradc.grad(loss_params)
    fd_hess = np.stack([central(lambda q, i=i: gradient(q)[i], p) for i in range(2)])
    np.testing.assert_allclose(hess, fd_hess, rtol=1e-5)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-6)


@pytest.mark.parametrize("seed", range(4))
def test_random_linear_systems_against_matrix_exponential(seed):
    # dy/dt = A y: y(t) = expm(A t) y0, its derivative in A by central differences of the closed form
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 4))
    A = rng.normal(size=(n, n)) - 1.5 * np.eye(n)
    y0, w, t = rng.normal(size=n), rng.normal(size=n), float(rng.uniform(0.5, 2.0))

    def loss(A, y0):
        ys = odeint(lambda y, s: A @ y, y0, np.array([0.0, t]), rtol=1e-11, atol=1e-11)
        return np.sum(w * ys[-1])

    def exact(A, y0):
        return float(w @ scipy.linalg.expm(A * t) @ y0)
    assert abs(gradc.compile(loss, A, y0).forward(A, y0) - exact(A, y0)) < 1e-8
    g_A, g_y0 = gradc.grad(loss, argnums=(0, 1))(A, y0)
    np.testing.assert_allclose(g_A, central(lambda a: exact(a, y0), A), rtol=1e-5, atol=1e-8)
    np.testing.assert_allclose(g_y0, central(lambda y: exact(A, y), y0), rtol=1e-5, atol=1e-8)


def test_solve_ivp_with_t_eval_and_args():
    def loss(p):
        sol = solve_ivp(lambda t, y, a: -a * y, (0.0, 2.0), np.array([1.0, 3.0]), t_eval=[1.0, 2.0], args=(p,),
                        rtol=1e-10, atol=1e-12)
        return np.sum(sol.y[:, -1]) + np.sum(sol.y[:, 0])
    p = 0.7
    exact = 4.0 * (np.exp(-p) + np.exp(-2 * p))
    assert abs(gradc.compile(loss, p).forward(p) - exact) < 1e-8
    assert abs(gradc.grad(loss)(p) + 4.0 * (np.exp(-p) + 2 * np.exp(-2 * p))) < 1e-8


def test_c_target_agrees_with_numpy_target():
    p = np.array([1.1, 0.7])
    numpy_grad = gradc.compile(loss_params, p).grad(p)
    c_grad = gradc.compile(loss_params, p, target="c").grad(p)
    np.testing.assert_allclose(c_grad, numpy_grad, rtol=1e-10)


def test_too_many_steps_gives_nan_not_a_wrong_number():
    def stiff(k):
        return odeint(lambda y, t: -k * y, np.ones(1), np.array([0.0, 1.0]), mxstep=3)[-1, 0]
    assert np.isnan(gradc.compile(stiff, 1e4).forward(1e4))


def test_nothing_traced_runs_scipy_itself():
    def f(x):
        ys = odeint(lambda y, t: -y, np.ones(2), np.array([0.0, 1.0]))  # a constant of f
        return x * ys[-1, 0]
    expected = odeint(lambda y, t: -y, np.ones(2), np.array([0.0, 1.0]))[-1, 0]
    assert gradc.grad(f)(2.0) == expected


def test_same_program_same_ir_text():
    p = np.array([1.1, 0.7])
    assert str(gradc.trace(loss_params, p)) == str(gradc.trace(loss_params, p))


def _odeint_full_output(y0):
    return odeint(lambda y, t: -y, y0, np.array([0.0, 1.0]), full_output=1)[0][-1].sum()


def _solve_ivp_no_t_eval(y0):
    return solve_ivp(lambda t, y: -y, (0.0, 1.0), y0).y[:, -1].sum()


def _rhs_wrong_shape(y0):
    return odeint(lambda y, t: np.ones(3), y0, np.array([0.0, 1.0]))[-1].sum()


@pytest.mark.parametrize("user, words", [
    (_odeint_full_output, "full_output"),
    (_solve_ivp_no_t_eval, "t_eval"),
    (_rhs_wrong_shape, "shape (3,)"),
])
def test_refusals_name_the_option_and_the_users_line(user, words):
    with pytest.raises(TraceError) as info:
        gradc.grad(user)(np.ones(2))
    message = str(info.value)
    assert words in message
    assert f"test_scipy_integrate.py:{user.__code__.co_firstlineno + 1}" in message


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_check_against_the_users_function_allows_the_solvers_tolerance(target):
    # the user's function runs SciPy's LSODA, the compiled code Dormand-Prince: equal to the tolerance
    p = np.array([1.1, 0.7])
    report = gradc.check(gradc.compile(loss_params, p, target=target), loss_params, p)
    assert report.passed
    def scaled(p):  # off by 1e-4 relative: well outside the solver's tolerance, so the check must fail
        return loss_params(p) * (1 + 1e-4)
    wrong = gradc.compile(scaled, p, target=target)
    assert not gradc.check(wrong, loss_params, p, raise_on_failure=False).passed


def piecewise_rate(y, t, k):
    if t < 1.0:  # a branch on the traced time: captured like the user's own control flow
        return -k * y
    return k * y


def test_right_hand_side_with_a_branch_on_the_time():
    def loss(k):
        return odeint(piecewise_rate, np.ones(1), np.array([0.0, 0.5, 2.0]), args=(k,), rtol=1e-11,
                      atol=1e-11)[-1, 0]
    k = 0.3
    assert abs(gradc.compile(loss, k).forward(k) - np.exp(0.0 * k)) < 1e-7  # exp(-k) exp(k)
    np.testing.assert_allclose(gradc.grad(loss)(k), central(lambda q: loss(q[0]), [k])[0], atol=1e-6)


def test_quad_in_parameters_and_limits():
    def area(k, b):
        return si.quad(lambda x, c: np.exp(-c * x) * np.sin(x), 0.0, b, args=(k,))[0]
    k, b = 0.7, 2.0
    assert abs(gradc.compile(area, k, b).forward(k, b) - area(k, b)) < 1e-8
    g_k, g_b = gradc.grad(area, argnums=(0, 1))(k, b)
    np.testing.assert_allclose(g_k, central(lambda q: area(q[0], b), [k])[0], rtol=1e-6)
    assert abs(g_b - np.exp(-k * b) * np.sin(b)) < 1e-8  # the integrand at the upper limit


def test_cumulative_trapezoid_matches_scipy():
    x = np.sort(np.random.default_rng(0).uniform(0, 3, size=7))

    def f(w):
        return np.sum(si.cumulative_trapezoid(np.sin(w * x), x, initial=0) ** 2)
    assert abs(gradc.compile(f, 1.3).forward(1.3) - f(1.3)) < 1e-12
    np.testing.assert_allclose(gradc.grad(f)(1.3), central(lambda q: f(q[0]), [1.3])[0], rtol=1e-7)
