"""Binomial (Revolve) checkpointing of loops: the schedule on its own, then gradients through it.

The schedule is checked by replaying it on positions (every step reversed once, in order,
from the state it needs; never more than ``s`` slots) and its forward steps against an
independent dynamic program and Griewank's closed form. Gradients under
``checkpoint=gradc.binomial(s)`` must equal the taped ones to 1e-12 and central finite
differences, through loops with several carried values, nested loops, loop-invariant
reads, per-step inputs and outputs (``scan``), counters that step backwards, trip counts
0 to 100, and second order.
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from finite_differences import central_gradient as central

import gradc
from gradc.errors import GradcError, TraceError
from gradc.trace.checkpoint import Binomial, as_policy
from gradc.transforms.binomial import binomial_report
from gradc.transforms.revolve import (
    ACTIONS,
    ADVANCE,
    RESTORE,
    TAKESHOT,
    YOUTURN,
    forward_steps,
    revolve_schedule,
    schedule_table,
    sweeps,
)

GRID = [(T, s) for T in (1, 2, 3, 4, 7, 10, 20, 55, 100) for s in (1, 2, 3, 5)] + [(5, 5), (3, 8), (6, 6), (7, 6)]


# ---------------------------------------------------------------- the schedule on its own
def replay(T, s):
    """Run the schedule on positions: the order of the reversed steps, the slots used, the forward steps."""
    at, slots, reversed_steps, advanced = 0, {}, [], 0
    for action, step, target in revolve_schedule(T, s):
        if action == ADVANCE:
            assert at == step and target > step, (ACTIONS[action], step, target, at)
            advanced += target - step
            at = target
        elif action == TAKESHOT:
            assert at == step and 0 <= target < s
            slots[target] = step
        elif action == RESTORE:
            assert slots.get(target) == step
            at = step
        else:
            assert action == YOUTURN and at == step, (step, at)
            reversed_steps.append(step)
    return reversed_steps, slots, advanced


@functools.lru_cache(maxsize=None)
def fewest_steps(T, s):
    """The optimum by dynamic programming: advance m, store, reverse the tail with s - 1 slots, then the head."""
    if T <= 1:
        return 0
    if s == 1:
        return T * (T - 1) // 2
    return min(m + fewest_steps(T - m, s - 1) + fewest_steps(m, s) for m in range(1, T))


@pytest.mark.parametrize("T, s", GRID)
def test_schedule_reverses_every_step_once_in_order_within_the_snapshots(T, s):
    reversed_steps, slots, _ = replay(T, s)
    assert reversed_steps == list(range(T - 1, -1, -1))
    assert len(slots) <= s and all(0 <= k < s for k in slots)


@pytest.mark.parametrize("T, s", GRID)
def test_schedule_advances_the_fewest_steps_there_are(T, s):
    advanced = replay(T, s)[2]
    assert advanced == fewest_steps(T, s) == forward_steps(T, s)
    if T >= 2:  # Griewank's closed form: t*T - C(s+t, t-1), t the smallest with C(s+t, s) >= T
        t = next(t for t in range(T + 1) if math.comb(s + t, s) >= T)
        assert t == sweeps(T, s)
        assert advanced == t * T - math.comb(s + t, t - 1)


@pytest.mark.parametrize("T, s", [(3, 5), (5, 5), (2, 9)])
def test_with_as_many_snapshots_as_steps_one_forward_sweep(T, s):
    assert replay(T, s)[2] == T - 1


def test_schedule_edges_and_a_large_one():
    assert list(revolve_schedule(0, 3)) == []
    assert list(revolve_schedule(1, 3)) == [(YOUTURN, 0, 0)]
    assert schedule_table(0, 2).shape == (0, 3)
    table = schedule_table(10_000, 10)  # made without recursion, quickly
    assert (table[:, 0] == YOUTURN).sum() == 10_000
    assert table[table[:, 0] == ADVANCE][:, 2].max() == 9_999
    assert forward_steps(10_000, 10) == 57_624  # 5.8 forward steps per step for 10 states instead of 10,000
    assert table[table[:, 0] == TAKESHOT][:, 2].max() == 9


# ---------------------------------------------------------------- gradients
def euler(steps):
    def simulate(x0, k):
        x = x0
        for _ in range(steps):
            x = x + 0.05 * (-k * x + np.sin(x))
        return np.sum(x ** 2)
    return simulate


def assert_same_gradient(f, args, wrt, policy, fd_of=None, scheduled=True):
    """The gradient under ``policy`` equals the taped one (and finite differences); the schedule was used."""
    compiled = gradc.compile(f, *args, wrt=wrt, checkpoint=policy)
    assert bool(binomial_report(compiled.grad_graph)) == scheduled
    taped = gradc.grad(f, wrt=wrt)(*args)
    binomial = gradc.grad(f, wrt=wrt, checkpoint=policy)(*args)
    for a, b in zip(np.atleast_1d(taped) if len(wrt) == 1 else taped, np.atleast_1d(binomial) if len(wrt) == 1
                    else binomial):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-14)
    if fd_of is not None:
        first = binomial[0] if len(wrt) > 1 else binomial
        np.testing.assert_allclose(first, central(fd_of, args[0]), rtol=1e-6, atol=1e-8)
    return binomial


@pytest.mark.parametrize("steps", [0, 1, 2, 3, 10, 100])
@pytest.mark.parametrize("s", [1, 2, 3, 5])
def test_euler_loop_gradient_equals_the_taped_one_and_finite_differences(steps, s):
    x0 = np.linspace(-1.0, 1.0, 4)
    f = euler(steps)
    assert_same_gradient(f, (x0, 0.4), ("x0", "k"), gradc.binomial(snapshots=s), fd_of=lambda z: f(z, 0.4),
                         scheduled=steps >= 2)  # 0 or 1 trips: no loop is kept


def test_string_form_and_compile_argument():
    x0 = np.linspace(-1.0, 1.0, 3)
    f = euler(12)
    taped = gradc.compile(f, x0, 0.4, wrt=("x0", "k")).grad(x0, 0.4)
    compiled = gradc.compile(f, x0, 0.4, wrt=("x0", "k"), checkpoint="binomial:2")
    got = compiled.grad(x0, 0.4)
    np.testing.assert_allclose(got[0], taped[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], taped[1], rtol=1e-12)
    value, grads = gradc.value_and_grad(f, wrt=("x0", "k"), checkpoint=gradc.binomial(4))(x0, 0.4)
    np.testing.assert_allclose(value, f(x0, 0.4), rtol=1e-12)
    np.testing.assert_allclose(grads[1], taped[1], rtol=1e-12)
    assert as_policy("binomial:7") == Binomial(7)


def oscillator(x, v, w):
    """Several carried values (position, velocity, an energy sum, an int counter) and a loop-invariant read (w)."""
    energy, count = 0.0, 0
    for _ in range(30):
        a = -w * np.sin(x)
        v = v + 0.1 * a
        x = x + 0.1 * v
        energy = energy + np.sum(v ** 2)
        count = count + 1
    return np.sum(x * v) + 0.01 * energy + 0.001 * count


@pytest.mark.parametrize("s", [1, 3, 5])
def test_several_carried_values(s):
    x, v, w = np.array([0.3, -0.5]), np.array([0.1, 0.2]), np.array([1.5, 0.7])
    assert_same_gradient(oscillator, (x, v, w), ("x", "v", "w"), gradc.binomial(s),
                         fd_of=lambda z: oscillator(z, v, w))


def rnn(h0, W, b, xs):
    """A body reading loop-invariant values (W, b) and per-step rows (xs[t]) through the counter."""
    h = h0
    for t in range(xs.shape[0]):
        h = np.tanh(W @ h + xs[t] + b)
    return np.sum(h ** 2)


@pytest.mark.parametrize("s", [2, 4])
def test_loop_invariant_and_per_step_reads(s):
    rng = np.random.default_rng(0)
    h0, W, b, xs = rng.standard_normal(3), 0.5 * rng.standard_normal((3, 3)), rng.standard_normal(3), \
        rng.standard_normal((17, 3))
    got = assert_same_gradient(rnn, (h0, W, b, xs), ("h0", "W", "b", "xs"), gradc.binomial(s))
    np.testing.assert_allclose(got[1], central(lambda z: rnn(h0, z, b, xs), W), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got[3], central(lambda z: rnn(h0, W, b, z), xs), rtol=1e-6, atol=1e-8)


def nested(x, c):
    for i in range(6):
        for j in range(5):
            x = x + 0.1 * np.sin(x * c + 0.1 * j)
        x = x * 0.9 + 0.01 * i
    return np.sum(x ** 2)


@pytest.mark.parametrize("s", [1, 2, 3])
def test_nested_loops_under_a_default_binomial_policy(s):
    x, c = np.array([0.2, -0.4, 0.9]), 1.3
    assert_same_gradient(nested, (x, c), ("x", "c"), gradc.binomial(s), fd_of=lambda z: nested(z, c))


def test_per_loop_policy_on_fori_loop_with_a_backward_counter():
    def f(x, c):
        def body(i, v):
            return v * (1.0 + 0.02 * np.sin(v * c)) + 0.001 * i
        return np.sum(gradc.fori_loop(40, 0, body, x, step=-3, checkpoint=gradc.binomial(snapshots=2)) ** 2)

    def taped(x, c):
        return np.sum(gradc.fori_loop(40, 0, lambda i, v: v * (1.0 + 0.02 * np.sin(v * c)) + 0.001 * i, x,
                                         step=-3) ** 2)
    x = np.array([0.1, 0.7])
    got = gradc.grad(f, wrt=("x", "c"))(x, 0.8)
    assert "revolve_schedule(14, 2)" in gradc.compile(f, x, 0.8, wrt=("x", "c")).source
    ref = gradc.grad(taped, wrt=("x", "c"))(x, 0.8)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-12)
    np.testing.assert_allclose(got[0], central(lambda z: f(z, 0.8), x), rtol=1e-6)


def scanned(policy):
    def loss(init, xs, a):
        carry, ys = gradc.scan(lambda c, x: (np.tanh(a * c + x), c * x), init, xs, checkpoint=policy)
        return np.sum(carry ** 2) + np.sum(np.sin(ys))
    return loss


@pytest.mark.parametrize("length", [2, 3, 10])
def test_scan_with_per_step_inputs_and_outputs(length):
    rng = np.random.default_rng(1)
    init, xs = rng.standard_normal(2), rng.standard_normal((length, 2))
    got = gradc.grad(scanned(gradc.binomial(2)), wrt=("init", "xs", "a"))(init, xs, 0.7)
    compiled = gradc.compile(scanned(gradc.binomial(2)), init, xs, 0.7, wrt=("init", "xs", "a"))
    assert f"revolve_schedule({length}, 2)" in compiled.source
    ref = gradc.grad(scanned(None), wrt=("init", "xs", "a"))(init, xs, 0.7)
    for g, r in zip(got, ref):
        np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got[1], central(lambda z: scanned(None)(init, z, 0.7), xs), rtol=1e-6, atol=1e-8)


def test_second_order_through_a_binomial_loop():
    def f(x):
        return gradc.fori_loop(0, 8, lambda i, v: np.sin(v) * x + 0.1, x, checkpoint=gradc.binomial(2))

    def plain(x):
        return gradc.fori_loop(0, 8, lambda i, v: np.sin(v) * x + 0.1, x)
    d2 = gradc.grad(gradc.grad(f))(0.7)
    np.testing.assert_allclose(d2, gradc.grad(gradc.grad(plain))(0.7), rtol=1e-10)
    h = 1e-5
    fd = (gradc.grad(plain)(0.7 + h) - gradc.grad(plain)(0.7 - h)) / (2 * h)
    np.testing.assert_allclose(d2, fd, rtol=1e-6)


def test_jvp_and_hessian_still_work():
    f = euler(9)
    x0 = np.array([0.2, -0.3])

    def loss(x):
        return f(x, 0.5)
    hess = gradc.hessian(loss)(x0)
    binomial_grad = gradc.grad(loss, checkpoint=gradc.binomial(2))
    np.testing.assert_allclose(gradc.jacfwd(binomial_grad)(x0), hess, rtol=1e-10)  # forward over the schedule
    np.testing.assert_allclose(gradc.jacrev(binomial_grad)(x0), hess, rtol=1e-10)  # reverse over the schedule
    out, tangent = gradc.jvp(lambda x: gradc.fori_loop(0, 6, lambda i, v: np.sin(v) * x, x,
                                                         checkpoint=gradc.binomial(2)), (0.7,), (1.0,))
    ref_out, ref_tangent = gradc.jvp(lambda x: gradc.fori_loop(0, 6, lambda i, v: np.sin(v) * x, x), (0.7,), (1.0,))
    np.testing.assert_allclose([out, tangent], [ref_out, ref_tangent], rtol=1e-12)


def test_jacobians_batch_the_schedule():
    def body(i, v, x):
        return np.tanh(v[::-1] * 1.1 + 0.1 * i) * x

    def f(x):
        return gradc.fori_loop(0, 7, lambda i, v: body(i, v, x), x, checkpoint=gradc.binomial(2))

    def taped(x):
        return gradc.fori_loop(0, 7, lambda i, v: body(i, v, x), x)
    x = np.array([0.3, -0.2, 0.5])
    ref = gradc.jacrev(taped)(x)
    np.testing.assert_allclose(gradc.jacrev(f)(x), ref, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(gradc.jacfwd(f)(x), ref, rtol=1e-12, atol=1e-15)


# ---------------------------------------------------------------- emitted code
def grad_source(steps, s=3):
    x0 = np.linspace(-1.0, 1.0, 4)
    src = gradc.compile(euler(steps), x0, 0.4, wrt=("x0", "k"), checkpoint=gradc.binomial(s)).source
    return src[src.index("def simulate_grad"):src.index("def simulate_value_and_grad")], src


def test_module_size_does_not_grow_with_the_trip_count():
    short, short_module = grad_source(100)
    long, long_module = grad_source(10_000)
    assert len(short_module.splitlines()) == len(long_module.splitlines())
    assert len(long_module) < len(short_module) + 100  # no table of the schedule: its generator
    assert "revolve_schedule(10000, 3)" in long
    assert "np.empty((" not in long  # no per-step tape
    assert "x_snapshots" in long and "(3, 4)" in long  # the snapshots: (s, *state)
    assert "elif is_takeshot:" in long and "elif is_restore:" in long


def test_emitted_gradient_agrees_with_the_interpreter_and_the_taped_gradient():
    x0 = np.linspace(-1.0, 1.0, 4)
    f = euler(57)
    compiled = gradc.compile(f, x0, 0.4, wrt=("x0", "k"), checkpoint=gradc.binomial(3))
    ref = gradc.compile(f, x0, 0.4, wrt=("x0", "k")).grad(x0, 0.4)
    got = compiled.grad(x0, 0.4)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-12)
    from gradc.ir.interpret import evaluate
    interpreted = evaluate(compiled.grad_graph, x0, 0.4)
    np.testing.assert_allclose(interpreted[0], ref[0], rtol=1e-12)
    assert binomial_report(compiled.grad_graph)[0].count("3 x 32 = 96 bytes") == 1


SHOWN = """\
import numpy as np
import gradc


def simulate(x0: "f64[4]", k: "f64[]"):
    def step(i, x):
        return x + 0.1 * (-k * x + np.sin(x))
    return np.sum(gradc.fori_loop(0, 1000, step, x0, checkpoint=gradc.binomial(snapshots=5)) ** 2)
"""


def test_gradc_show_reports_the_snapshots_memory(tmp_path, capsys):
    from gradc.cli.commands import main
    path = tmp_path / "model.py"
    path.write_text(SHOWN)
    assert main(["show", f"{path}:simulate"]) == 0
    out = capsys.readouterr().out
    report = [line for line in out.splitlines() if "binomial checkpointing" in line]
    assert len(report) == 1, out[-2000:]
    assert "1000 steps with 5 snapshots: 5 x 32 = 160 bytes of stored states" in report[0]
    assert f"{forward_steps(1000, 5)} forward steps recomputed" in report[0]
    assert "c0_snapshots: f64[5,4]" in out  # the loop report shows the snapshot array itself


# ---------------------------------------------------------------- errors
@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "3"])
def test_bad_snapshot_counts_are_refused(bad):
    with pytest.raises(TraceError, match="snapshots"):
        gradc.binomial(bad)


@pytest.mark.parametrize("bad", ["binomial:", "binomial:x", "binomial:0", "binomial-ish"])
def test_bad_string_forms_are_refused(bad):
    with pytest.raises(GradcError, match="binomial|checkpoint"):
        gradc.grad(euler(5), checkpoint=bad)(np.ones(2), 0.4)


def test_while_loop_with_binomial_is_refused_at_the_users_line():
    def f(x):
        return gradc.while_loop(lambda v: v < 10.0, lambda v: v * 1.5, x, checkpoint=gradc.binomial(3))
    with pytest.raises(TraceError, match="trip count known at trace time") as info:
        gradc.grad(f)(1.0)
    assert "sqrt" in str(info.value) and "test_checkpoint_binomial.py" in str(info.value)


def test_run_time_trip_count_with_binomial_is_refused():
    def f(x, n):
        total = x
        for _ in range(n):
            total = total * 1.1
        return total
    with pytest.raises(TraceError, match="trip count") as info:
        gradc.grad(f, checkpoint=gradc.binomial(2))(1.0, np.array(5))
    assert "test_checkpoint_binomial.py" in str(info.value)
