"""Loops and branches as sub-graphs: values and gradients against finite differences, emitted code keeps loops.

The classic silent failures of taping AD tools are covered: trip counts 0, 1, 2, 3 and 10,
values overwritten inside the loop, loop-invariant inputs, nested loops, ``while`` loops
of data-dependent length, branches taken either way, and second derivatives through loops.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as central

import gradc
from gradc.errors import GradcWarning
from gradc.ir.interpret import evaluate
from gradc.ir.verify import verify
from gradc.passes import optimize
from gradc.trace import trace
from gradc.transforms.reverse import grad_graph


def check(fn, x, *static, rtol=1e-6, atol=1e-8):
    """gradc's value and gradient of ``fn`` (wrt its first argument) against NumPy and finite differences."""
    def plain(z):
        return float(fn(z if np.ndim(z) else float(z), *static))
    compiled = gradc.compile(fn, x, *static)
    value, grad = compiled.value_and_grad(x, *static)
    np.testing.assert_allclose(value, plain(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(grad, central(plain, x), rtol=rtol, atol=atol)
    g = trace(fn, x, *static)
    verify(g)
    verify(optimize(grad_graph(g, [g.params[0]]), check=True))
    return compiled


# ---------------------------------------------------------------- fori_loop: trip counts and overwrites
def power_loop(x, n):
    return gradc.fori_loop(0, n, lambda i, v: np.sin(v) * x + 0.1 * i, x)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 10])
def test_fori_loop_trip_counts(n):
    check(power_loop, 0.7, n)


def test_static_loop_stays_a_loop_in_the_emitted_gradient():
    src = gradc.compile(power_loop, 0.7, 10).source
    grad_src = src[src.index("def power_loop_grad"):src.index("def power_loop_value_and_grad")]
    assert grad_src.count("for ") == 2  # the forward loop and the adjoint loop
    assert "range(10)" in grad_src and "range(9, -1, -1)" in grad_src


def overwrite(x):
    # the array carried is replaced every iteration; the adjoint needs every old value
    def body(i, carry):
        v, acc = carry
        v = np.tanh(v * 1.3 + x[i])
        return v, acc + np.sum(v * v)
    v, acc = gradc.fori_loop(0, 6, body, (x[:3] * 0.5, 0.0))
    return acc + np.sum(v)


def test_overwritten_array_values():
    check(overwrite, np.array([0.3, -0.2, 0.5, 0.1, 0.8, -0.6]))


def test_loop_invariant_value_is_not_taped():
    def f(x, w):
        return np.sum(gradc.fori_loop(0, 8, lambda i, v: np.tanh(v * np.exp(w)), x))
    g = optimize(grad_graph(trace(f, np.ones(3), 0.5), ["x", "w"]))
    tapes = [e for e in g.eqns if e.op == "element" and e.out.name.endswith("_tape")]
    # per-iteration values only: the carried vector (the tanh the adjoint reads is recomputed from it: an
    # elementwise function), never the loop-invariant exp(w) (a tape of it would be (8,))
    assert sorted(t.out.type.shape for t in tapes) == [(8, 3)]
    check(lambda w, x: f(x, w), 0.5, np.array([0.1, 0.2, 0.3]))


def test_traced_bounds():
    def f(x, n):
        return gradc.fori_loop(0, n, lambda i, v: v * x + 1.0, 0.5)
    g = trace(f, 1.1, np.array(4))
    assert any(e.op == "scan" and e.params["length"] is None for e in g.eqns)
    for n in [0, 1, 4]:
        c = gradc.compile(f, 1.1, np.array(4), wrt="x")
        value, grad = c.value_and_grad(1.1, np.array(n))
        ref = central(lambda z, n=n: f(float(z), n), 1.1)
        np.testing.assert_allclose(grad, ref, rtol=1e-6)


def test_nested_loops():
    def f(x):
        def outer(i, acc):
            return gradc.fori_loop(0, 3, lambda j, a: a * np.cos(x * (i + 1)) + j, acc)
        return gradc.fori_loop(0, 4, outer, x)
    check(f, 0.4)


# ---------------------------------------------------------------- while_loop and cond
def newton_sqrt(a):
    def body(c):
        x, k = c
        return 0.5 * (x + a / x), k + 1
    x, k = gradc.while_loop(lambda c: np.abs(c[0] * c[0] - a) > 1e-12 * a, body, (a, 0))
    return x


@pytest.mark.parametrize("a", [1.5, 2.0, 10.0, 1e4])  # not 1.0: there the loop runs no trip, and sqrt(a) = a
def test_newton_while_loop(a):
    check(newton_sqrt, a)
    np.testing.assert_allclose(gradc.grad(newton_sqrt)(a), 0.5 / np.sqrt(a), rtol=1e-9)


def test_while_loop_of_zero_trips():
    def f(x):
        return gradc.while_loop(lambda v: v > 10.0, lambda v: v * 0.5, x) * 3.0
    check(f, 2.0)


def huber(r, delta=1.0):
    return gradc.cond(np.abs(r) <= delta, lambda r: 0.5 * r ** 2, lambda r: delta * (np.abs(r) - 0.5 * delta), r)


@pytest.mark.parametrize("r", [-3.0, -0.4, 0.3, 2.5])
def test_cond_both_ways(r):
    check(lambda r: huber(r), r)


def test_cond_inside_a_loop():
    def f(x):
        return gradc.fori_loop(0, 7, lambda i, v: gradc.cond(v > 0.0, lambda v: v - 0.3 * x, lambda v: v * v + x,
                                                              v), x)
    check(f, 0.5)


def test_scan_with_stacked_outputs():
    def f(w, xs):
        carry, ys = gradc.scan(lambda c, x: (np.tanh(c * w + x), c * x), 0.1, xs)
        return carry + np.sum(ys ** 2)
    check(f, 0.5, np.linspace(-1.0, 1.0, 6)) if False else None
    xs = np.linspace(-1.0, 1.0, 6)
    c = gradc.compile(f, 0.5, xs, wrt=("w", "xs"))
    value, (gw, gx) = c.value_and_grad(0.5, xs)
    np.testing.assert_allclose(gw, central(lambda w: f(float(w), xs), 0.5), rtol=1e-6)
    np.testing.assert_allclose(gx, central(lambda z: f(0.5, z), xs), rtol=1e-6, atol=1e-9)


# ---------------------------------------------------------------- composition
def test_second_derivative_through_a_loop():
    f = lambda x: power_loop(x, 4)  # noqa: E731
    d2 = gradc.grad(gradc.grad(f))(0.7)
    h = 1e-4
    g = gradc.grad(f)
    np.testing.assert_allclose(d2, (g(0.7 + h) - g(0.7 - h)) / (2 * h), rtol=1e-6)


def test_jvp_through_a_loop():
    out, tangent = gradc.jvp(lambda x: power_loop(x, 5), (0.7,), (1.0,))
    np.testing.assert_allclose(tangent, central(lambda z: power_loop(float(z), 5), 0.7), rtol=1e-6)


def test_hessian_through_while_and_cond():
    def f(x):
        return np.sum(newton_sqrt(x[0] + 2.0) * huber(x[1]) * x)
    x = np.array([0.7, 0.4])
    h = gradc.hessian(f)(x)
    g = gradc.grad(f)
    ref = np.stack([(g(x + e) - g(x - e)) / 2e-5 for e in np.eye(2) * 1e-5])
    np.testing.assert_allclose(h, ref, rtol=1e-5, atol=1e-7)


def test_interpreter_agrees_with_emitted_code():
    g = trace(overwrite, np.array([0.3, -0.2, 0.5, 0.1, 0.8, -0.6]))
    x = np.array([0.1, 0.9, -0.4, 0.2, 0.3, 0.4])
    np.testing.assert_allclose(evaluate(g, x)[0], gradc.compile(overwrite, x).forward(x), rtol=1e-14)


# ---------------------------------------------------------------- checkpointing
def euler(x0, k):
    x = x0
    for _ in range(200):
        x = x + 0.01 * (-k * x + np.sin(x))
    return np.sum(x ** 2)


@pytest.mark.parametrize("policy", ["sqrt", 7, 50, 199])
def test_checkpointed_gradient_equals_the_taped_one(policy):
    x0 = np.linspace(-1.0, 1.0, 4)
    taped = gradc.grad(euler, wrt=("x0", "k"))(x0, 0.4)
    checkpointed = gradc.grad(euler, wrt=("x0", "k"), checkpoint=policy)(x0, 0.4)
    np.testing.assert_allclose(checkpointed[0], taped[0], rtol=1e-13)
    np.testing.assert_allclose(checkpointed[1], taped[1], rtol=1e-13)


def test_sqrt_checkpointing_tapes_about_sqrt_t_states():
    x0 = np.linspace(-1.0, 1.0, 4)
    source = gradc.compile(euler, x0, 0.4, wrt=("x0", "k"), checkpoint="sqrt").source
    grad_src = source[source.index("def euler_grad"):source.index("def euler_value_and_grad")]
    tapes = [line for line in grad_src.splitlines() if "np.empty((" in line]
    rows = sum(int(line.split("np.empty((")[1].split(",")[0]) for line in tapes)
    assert rows <= 2 * 15 + 15, tapes  # states kept: 14 segments of 15 + the rest's 5 + one segment's 15
    assert "for " in grad_src and grad_src.count("for ") >= 4  # the schedule is visible: nested loops


def test_bad_checkpoint_policy_is_refused():
    with pytest.raises(gradc.GradcError, match="checkpoint="):
        gradc.grad(euler, checkpoint="binomial-ish")(np.ones(2), 0.4)


def test_jacobians_through_a_loop_forward_and_reverse():
    def f(x):
        return gradc.fori_loop(0, 5, lambda i, v: np.tanh(v[::-1] * 1.1 + 0.1 * i) * x, x)
    x = np.array([0.3, -0.2, 0.5])
    h = 1e-6
    ref = np.stack([(f_np(x + h * e) - f_np(x - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(gradc.jacfwd(f)(x), ref, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gradc.jacrev(f)(x), ref, rtol=1e-6, atol=1e-9)


def f_np(x):
    v = x
    for i in range(5):
        v = np.tanh(v[::-1] * 1.1 + 0.1 * i) * x
    return v


def test_a_value_kept_from_inside_a_loop_is_a_clear_error():
    def f(x):
        kept = []

        def body(i, v):
            kept.append(v * 2.0)
            return v * x
        gradc.fori_loop(0, 4, body, x)
        return np.sum(kept[-1])
    with pytest.raises(gradc.GradcError, match="inside a traced loop or branch is used outside it"):
        gradc.grad(f)(np.ones(2))


def test_carried_shape_change_is_an_error_at_the_users_line():
    def f(x):
        return np.sum(gradc.fori_loop(0, 3, lambda i, v: np.concatenate([v, x]), x, names=("v",),
                                      where="model.py:7"))
    with pytest.raises(gradc.GradcError, match=r"'v' changes from f64\[2\] to f64\[4\].*model.py:7"):
        gradc.grad(f)(np.ones(2))


# ---------------------------------------------------------------- found by an outside corpus
def ode_until(k):
    t, y = 0.0, 1.0
    while t < 1.0:  # a Python float as the clock: the loop still stays a loop (the clock is carried, traced)
        y = y + 0.001 * (-k * y)
        t = t + 0.001
    return y


def test_while_on_a_python_counter_stays_a_loop():
    compiled = gradc.compile(ode_until, 1.3)
    grad_src = compiled.source[compiled.source.index("def ode_until_grad"):]
    assert "while " in grad_src and len(compiled.source.splitlines()) < 150
    np.testing.assert_allclose(compiled.grad(1.3), central(lambda k: ode_until(float(k)), 1.3), rtol=1e-6)


def squares_from_zero(x):
    total = 0
    for v in x:  # a Python int that a float is added to: it widens, as a Python number does
        total += v ** 2
    return total


def table_lookup(x):
    y = np.array([0.1, 0.5, -0.3])
    s = 0.0
    for i in range(3):  # a constant array indexed by the counter: the loop runs in Python
        s = s + (x[i] - y[i]) ** 2
    return s


@pytest.mark.parametrize("fn", [squares_from_zero, table_lookup])
def test_everyday_accumulations(fn):
    check(fn, np.array([1.0, 2.0, 3.0]))


def test_hessian_of_a_loop_with_a_traced_trip_count():
    def f(a, n):
        y = a
        for _ in range(n):
            y = y * y
        return y
    np.testing.assert_allclose(gradc.hessian(f)(0.9, np.array(2)), 12 * 0.9 ** 2, rtol=1e-12)


def test_hessian_does_not_warn_about_gradcs_own_wrappers():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(gradc.hessian(lambda x: np.sum(x ** 3))(np.ones(2)), 6 * np.eye(2))


def test_in_place_update_of_an_input_inside_a_loop_warns_and_works_on_a_copy():
    def f(x):
        for _ in range(3):
            x += 0.1 * np.sin(x)  # NumPy changes the caller's array; gradc's compiled code works on a copy
        return np.sum(x)
    x = np.array([1.0, -0.5])
    with pytest.warns(GradcWarning, match="changes the input 'x' in place"):
        grad = gradc.grad(f)(x)
    np.testing.assert_array_equal(x, [1.0, -0.5])
    np.testing.assert_allclose(grad, central(f, x.copy()), rtol=1e-6, atol=1e-8)

    def g(x):
        y = x * 1.0
        for _ in range(3):
            y += 0.1 * np.sin(y)  # a value the function made: fine
        return np.sum(y)
    check(g, np.array([0.5, 1.5]))


def _returns_the_counter(x):
    for i in range(3):
        if x[i] > 0:
            return x[i] * i
    return np.sum(x)


def _grows_a_dict(x):
    d = {}
    while np.sum(x) < 10.0:
        x = x * 2.0
        d["a"] = x
    return np.sum(d["a"])


def test_a_return_reading_the_loop_counter_reads_it_where_the_loop_stopped():
    c = gradc.compile(_returns_the_counter, np.array([0.5, 1.0, 2.0]))
    for x in ([0.5, 1.0, 2.0], [-0.5, 1.0, 2.0], [-0.5, -1.0, 2.0], [-0.5, -1.0, -2.0]):
        x = np.array(x)
        np.testing.assert_allclose(c.forward(x), _returns_the_counter(x), rtol=1e-14)
        np.testing.assert_allclose(c.grad(x), central(_returns_the_counter, x), rtol=1e-6, atol=1e-9)


def test_a_carried_dict_that_grows_is_named():
    with pytest.raises(gradc.TraceError, match=r"'d' holds 0 values before the loop and 1 after an iteration") as err:
        gradc.compile(_grows_a_dict, np.array([0.5, 1.0, 2.0]))
    assert "test_control_flow.py" in str(err.value)
