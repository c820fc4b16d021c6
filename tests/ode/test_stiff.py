"""Stiff ODE solves: ``solve_ivp(method="BDF"/"Radau"/"LSODA")`` and ``odeint`` on Robertson's chemical kinetics and
van der Pol's oscillator with mu = 1000, values and derivatives against SciPy's Radau at tight tolerances (central
differences of it for the derivatives), forward against reverse mode, both targets."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate as si

import gradc
from gradc.errors import TraceError

K = np.array([0.04, 3e7, 1e4])


def robertson(t, y, k):
    return np.stack([-k[0] * y[0] + k[2] * y[1] * y[2],
                     k[0] * y[0] - k[2] * y[1] * y[2] - k[1] * y[1] ** 2,
                     k[1] * y[1] ** 2])


def robertson_summary(ys):  # weights every species (y2 is ~1e-5)
    return ys[0] + 1e4 * ys[1] + 2.0 * ys[2]


def robertson_loss(k, method, t_end=40.0):
    sol = si.solve_ivp(robertson, (0.0, t_end), np.array([1.0, 0.0, 0.0]), method=method,
                       t_eval=np.array([0.3 * t_end, t_end]), args=(k,), rtol=1e-7, atol=1e-12)
    return np.sum(robertson_summary(sol.y))


def robertson_reference(k, t_end=40.0):
    sol = si.solve_ivp(robertson, (0.0, t_end), [1.0, 0.0, 0.0], method="Radau", t_eval=[0.3 * t_end, t_end],
                       args=(k,), rtol=1e-12, atol=1e-16)
    return np.sum(robertson_summary(sol.y))


def relative_differences(fn, p, h=1e-5):
    return np.array([(fn(p * (1 + h * e)) - fn(p * (1 - h * e))) / (2 * h * p @ e) for e in np.eye(len(p))])


@pytest.fixture(scope="module")
def robertson_expected():
    return robertson_reference(K), relative_differences(robertson_reference, K)


@pytest.mark.parametrize("method", ["BDF", "Radau", "LSODA"])
def test_robertson_value_and_gradient(method, robertson_expected):
    value, grad = robertson_expected
    got_value, got_grad = gradc.compile(lambda k: robertson_loss(k, method), K).value_and_grad(K)
    assert abs(got_value - value) < 1e-5 * abs(value)
    np.testing.assert_allclose(got_grad * K, grad * K, rtol=1e-3, atol=1e-6 * np.max(np.abs(grad * K)))


def test_robertson_odeint_and_forward_mode(robertson_expected):
    value, grad = robertson_expected

    def loss(k):
        ys = si.odeint(lambda y, t: robertson(t, y, k), np.array([1.0, 0.0, 0.0]), np.array([0.0, 12.0, 40.0]),
                       rtol=1e-7, atol=1e-12)
        return np.sum(robertson_summary(ys[1:].T))

    got_value, got_grad = gradc.compile(loss, K).value_and_grad(K)
    assert abs(got_value - value) < 1e-5 * abs(value)
    np.testing.assert_allclose(got_grad * K, grad * K, rtol=1e-3, atol=1e-6 * np.max(np.abs(grad * K)))
    jvp = gradc.compile(loss, K, mode="jvp")
    forward = np.array([jvp.jvp(K, e)[1] for e in np.eye(3)])
    np.testing.assert_allclose(forward * K, got_grad * K, rtol=1e-3, atol=1e-6 * np.max(np.abs(grad * K)))


def test_explicit_method_on_robertson_gives_nan_not_a_wrong_number():
    got = gradc.compile(lambda k: robertson_loss(k, "RK45", t_end=1e3), K).forward(K)
    assert np.isnan(got)


def van_der_pol(t, y, mu):
    return np.stack([y[1], mu * (1.0 - y[0] ** 2) * y[1] - y[0]])


def vdp_loss(p, method="Radau", t_end=500.0):
    sol = si.solve_ivp(van_der_pol, (0.0, t_end), np.stack([p[1], 0.0 * p[1]]), method=method,
                       t_eval=np.array([0.5 * t_end, t_end]), args=(p[0],), rtol=1e-8, atol=1e-10)
    return np.sum(sol.y[0]) + 1e-3 * np.sum(sol.y[1])


def vdp_reference(p, t_end=500.0):
    sol = si.solve_ivp(van_der_pol, (0.0, t_end), [p[1], 0.0], method="Radau", t_eval=[0.5 * t_end, t_end],
                       args=(p[0],), rtol=1e-12, atol=1e-12)
    return np.sum(sol.y[0]) + 1e-3 * np.sum(sol.y[1])


@pytest.mark.parametrize("method", ["BDF", "LSODA"])
def test_van_der_pol_mu_1000(method):
    p = np.array([1000.0, 2.0])
    got_value, got_grad = gradc.compile(lambda p: vdp_loss(p, method), p).value_and_grad(p)
    assert abs(got_value - vdp_reference(p)) < 1e-6 * abs(vdp_reference(p))
    np.testing.assert_allclose(got_grad, relative_differences(vdp_reference, p, 1e-4), rtol=1e-4)


def test_c_target_agrees_with_numpy_target():
    def loss(k):
        return robertson_loss(k, "BDF", t_end=1.0)

    numpy = gradc.compile(loss, K).value_and_grad(K)
    c = gradc.compile(loss, K, target="c").value_and_grad(K)
    np.testing.assert_allclose(c[0], numpy[0], rtol=1e-12)
    np.testing.assert_allclose(c[1], numpy[1], rtol=1e-8)


def _linear_loss(a, ct, method="Radau"):
    def loss(y0):
        sol = si.solve_ivp(lambda t, y: a @ y, (0.0, 1.0), y0, method=method, t_eval=[1.0], rtol=1e-8, atol=1e-11)
        return ct @ sol.y[:, -1]
    return loss


def test_random_stiff_linear_systems_against_the_matrix_exponential():
    """y' = A y with eigenvalues from -1 to -1e4: y(1) = expm(A) y0, d/dy0 = expm(A)^T ct."""
    import scipy.linalg
    for seed in range(3):
        rng = np.random.default_rng(seed + 71)
        q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
        a = q @ np.diag(-np.logspace(0, 4, 4)) @ q.T
        y0, ct = rng.standard_normal(4), rng.standard_normal(4)

        e = scipy.linalg.expm(a)
        value, grad = gradc.compile(_linear_loss(a, ct), y0).value_and_grad(y0)
        assert abs(value - ct @ e @ y0) < 1e-6
        np.testing.assert_allclose(grad, e.T @ ct, atol=1e-6)


def test_adjoint_tolerances_are_an_argument():
    def loss(k, tol):
        sol = si.solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.ones(1), method="BDF", t_eval=[1.0], rtol=1e-8,
                           atol=1e-10, adjoint_rtol=tol, adjoint_atol=tol)
        return sol.y[0, -1]

    exact = -np.exp(-2.0)
    loose = gradc.grad(lambda k: loss(k, 1e-2))(2.0)
    tight = gradc.grad(lambda k: loss(k, 1e-10))(2.0)
    assert abs(tight - exact) < 1e-7 < abs(loose - exact)
    with pytest.raises(TraceError, match=r"adjoint_rtol=-1\.0 is not a positive constant") as e:
        gradc.grad(lambda k: loss(k, -1.0))(2.0)
    assert "test_stiff.py" in str(e.value)


def test_odeint_adjoint_tolerances_and_unknown_keywords():
    def loss(k, **options):
        return si.odeint(lambda y, t: -k * y, np.ones(1), np.array([0.0, 1.0]), **options)[-1, 0]

    assert abs(gradc.grad(lambda k: loss(k, adjoint_rtol=1e-10, adjoint_atol=1e-12))(2.0) + np.exp(-2.0)) < 1e-8
    with pytest.raises(TraceError, match=r"unexpected keyword argument 'adjoint_tol'"):
        gradc.grad(lambda k: loss(k, adjoint_tol=1e-3))(2.0)


@pytest.mark.parametrize("method", ["Euler", si.Radau])
def test_unknown_or_class_methods_are_refused_at_the_users_line(method):
    def loss(k):
        return si.solve_ivp(lambda t, y: -k * y, (0.0, 1.0), np.ones(1), method=method, t_eval=[1.0]).y[0, -1]

    with pytest.raises(TraceError, match=r"solve_ivp with method=.* is not supported") as e:
        gradc.grad(loss)(2.0)
    assert "test_stiff.py" in str(e.value) and "LSODA" in str(e.value)


@pytest.mark.parametrize("method", ["RK45", "BDF"])
def test_right_hand_sides_differing_only_in_an_array_constant_keep_their_own_derivatives(method):
    # the derivative rule is keyed by the right-hand side's graph: the IR text abbreviates array constants
    import scipy.linalg
    y0 = np.array([1.0, 0.5])
    for scale in (1.0, 3.0):
        a = scale * np.array([[-1.0, 0.2], [0.1, -2.0]])
        loss = _linear_loss(a, np.ones(2), method)
        np.testing.assert_allclose(gradc.grad(loss)(y0), scipy.linalg.expm(a).T @ np.ones(2), rtol=1e-5)


def _fixed_step_vdp_loss(p, steps=2000, t_end=1.0):
    """The same quantity by a fixed-step linearly implicit trapezoidal rule (second order, A-stable), written out as
    a user would and differentiated through its steps by gradc (discretise, then differentiate)."""
    mu, h = p[0], t_end / steps

    def step(i, y):
        jac = np.stack([np.stack([0.0 * mu, 1.0 + 0.0 * mu]),
                        np.stack([-2.0 * mu * y[0] * y[1] - 1.0, mu * (1.0 - y[0] ** 2)])])
        return y + h * np.linalg.solve(np.eye(2) - 0.5 * h * jac, van_der_pol(0.0, y, mu))

    y0 = np.stack([p[1], 0.0 * p[1]])
    half = gradc.fori_loop(0, steps // 2, step, y0)
    end = gradc.fori_loop(0, steps // 2, step, half)
    return half[0] + end[0] + 1e-3 * (half[1] + end[1])


def test_van_der_pol_against_a_differentiated_fixed_step_implicit_integrator():
    p = np.array([1000.0, 2.0])
    fixed_value, fixed_grad = gradc.compile(_fixed_step_vdp_loss, p).value_and_grad(p)
    value, grad = gradc.compile(lambda p: vdp_loss(p, "BDF", t_end=1.0), p).value_and_grad(p)
    assert abs(value - fixed_value) < 1e-6 * abs(value)  # the fixed step's error: O(h^2)
    np.testing.assert_allclose(grad, fixed_grad, rtol=1e-5)


def test_a_long_non_stiff_interval_stays_explicit_under_odeint():
    """An oscillator over 30 periods in one interval (thousands of explicit steps): no switch to the second-order
    stiff method, so the tight tolerance is still met; the derivative in the frequency as well."""
    def final(w):
        return si.odeint(lambda y, t: np.stack([y[1], -w ** 2 * y[0]]), np.array([1.0, 0.0]),
                         np.array([0.0, 60.0 * np.pi]), rtol=1e-10, atol=1e-12)[-1, 0]

    w = 1.0
    value, grad = gradc.compile(final, w).value_and_grad(w)
    assert abs(value - np.cos(w * 60.0 * np.pi)) < 1e-7
    assert abs(grad + 60.0 * np.pi * np.sin(w * 60.0 * np.pi)) < 1e-5
