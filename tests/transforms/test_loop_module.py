"""The emitted module of a loop: each sweep written once, scalars read unbroadcast in loop bodies, a size
independent of the trip count; gradients against the unrolled compile and finite differences.

Also the rule that lets the gradient function compute the value too (``with_value=True``): only where the
value adds next to nothing (``gradc.ir.cost``), never where it would cost a second matrix product.
"""
from __future__ import annotations

import ast

import numpy as np
import pytest
from finite_differences import central_gradient as central

import gradc
from gradc.ir.cost import work
from gradc.passes.vectorise_loops import loops_kept
from gradc.trace import trace
from gradc.trace.control_trace import unrolled_loops


def make_simulate(steps):
    """The issue's explicit-Euler ``simulate``."""
    def simulate(x0, k, dt):
        x = x0
        for _ in range(steps):
            x = x + dt * (-k * x ** 3 + np.sin(x))
        return np.sum(x ** 2)
    return simulate


def functions(source):
    return {node.name: node for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)}


def loops(node):
    return sum(isinstance(n, (ast.For, ast.While)) for n in ast.walk(node))


X0 = np.random.default_rng(0).uniform(-1.0, 1.0, 100)


def test_simulate_module_fits_100_lines_with_each_loop_written_once():
    c = gradc.compile(make_simulate(10_000), X0, 0.7, 1e-3, wrt=("x0", "k"))
    lines = c.source.splitlines()
    assert len(lines) <= 100, len(lines)
    defs = functions(c.source)
    assert loops(defs["simulate"]) == 1
    assert loops(defs["simulate_grad"]) == 2  # the forward sweep with its tape, the adjoint loop backwards
    assert loops(defs["simulate_value_and_grad"]) == 0  # it asks simulate_grad for the value too
    assert "return simulate_grad(x0, k, dt, with_value=True)" in c.source
    body = c.source[c.source.index("def simulate_grad"):c.source.index("def simulate_value_and_grad")]
    assert "np.broadcast_to(dt" not in body and "x_bar * dt" in body  # dt read as it is, inside the loops
    other = gradc.compile(make_simulate(300), X0, 0.7, 1e-3, wrt=("x0", "k"))
    assert len(other.source.splitlines()) == len(lines)  # the size does not depend on the trip count


def test_simulate_gradient_matches_the_unrolled_compile_and_finite_differences():
    steps, k, dt = 300, 0.7, 1e-3
    looped = gradc.compile(make_simulate(steps), X0, k, dt, wrt=("x0", "k"))
    with unrolled_loops():  # the loop run in Python at trace time: one straight-line recurrence
        unrolled = gradc.compile(make_simulate(steps), X0, k, dt, wrt=("x0", "k"))
    assert loops(ast.parse(unrolled.source)) == 0
    gx, gk = looped.grad(X0, k, dt)
    ux, uk = unrolled.grad(X0, k, dt)
    np.testing.assert_allclose(gx, ux, rtol=1e-12, atol=0)
    np.testing.assert_allclose(gk, uk, rtol=1e-12, atol=0)
    plain = make_simulate(steps)
    np.testing.assert_allclose(gk, central(lambda kk: plain(X0, float(kk), dt), k), rtol=1e-6)
    np.testing.assert_allclose(gx[:5], central(lambda x: plain(np.concatenate([x, X0[5:]]), k, dt), X0[:5]),
                               rtol=1e-6)
    value, (vx, vk) = looped.value_and_grad(X0, k, dt)
    assert value == looped.forward(X0, k, dt) and np.array_equal(vx, gx) and vk == gk
    value2, (wx, wk) = looped.grad(X0, k, dt, with_value=True)
    assert value2 == value and np.array_equal(wx, gx) and wk == gk


def test_each_function_names_itself_in_argument_errors():
    c = gradc.compile(make_simulate(10), X0, 0.7, 1e-3, wrt=("x0", "k"))
    for fn, name in [(c.grad, "simulate_grad"), (c.value_and_grad, "simulate_value_and_grad")]:
        with pytest.raises(ValueError, match=rf"^{name}: argument 'x0' must be float64 array of shape \(100,\)"):
            fn(X0[:3], 0.7, 1e-3)
        with pytest.raises(ValueError, match=rf"^{name}: argument 'k' must be a scalar"):
            fn(X0, X0, 1e-3)


def test_a_dear_value_is_not_computed_by_the_gradient():
    # d/dx sum(A @ x) is A.T @ 1: the value's own product would double the gradient's work
    def linear(x, A):
        return np.sum(A @ x) + np.sum(np.sin(x))
    A = np.random.default_rng(1).normal(size=(60, 60))
    x = np.linspace(-1.0, 1.0, 60)
    c = gradc.compile(linear, x, A)
    defs = functions(c.source)
    assert "with_value" not in c.source
    assert [a.arg for a in defs["linear_grad"].args.args] == ["x", "A"] and not defs["linear_grad"].args.kwonlyargs
    np.testing.assert_allclose(c.grad(x, A), central(lambda v: linear(v, A), x), rtol=1e-6, atol=1e-6)
    grad_source = c.source[c.source.index("def linear_grad"):c.source.index("def linear_value_and_grad")]
    assert "A @ x" not in grad_source and "A @ x" in c.source


def test_a_parameter_named_like_the_flag_keeps_two_sweeps():
    def f(x, with_value):
        for _ in range(500):
            x = x + 1e-3 * np.sin(x * with_value)
        return np.sum(x * x)
    x = np.linspace(0.0, 1.0, 8)
    c = gradc.compile(f, x, 0.5)
    assert "*, with_value" not in c.source
    assert loops(functions(c.source)["f_value_and_grad"]) == 2
    np.testing.assert_allclose(c.grad(x, 0.5), central(lambda v: f(v, 0.5), x), rtol=1e-6)


def test_a_value_named_like_the_flag_is_renamed():
    def f(x):
        with_value = x
        for _ in range(500):
            with_value = with_value + 1e-3 * np.sin(with_value)
        return np.sum(with_value ** 2)
    x = np.linspace(0.0, 1.0, 8)
    c = gradc.compile(f, x)
    assert "def f_grad(x, *, with_value=False):" in c.source
    np.testing.assert_allclose(c.grad(x), central(f, x), rtol=1e-6)
    value, g = c.grad(x, with_value=True)
    np.testing.assert_allclose(value, f(x), rtol=1e-13)
    np.testing.assert_array_equal(g, c.grad(x))


def test_scalars_stay_unbroadcast_in_nested_loops():
    def nested(x, a):
        for _ in range(3):
            for _ in range(4):
                x = x * a + np.sin(x) * a
        return np.sum(x)
    x = np.linspace(0.1, 1.0, 4)
    c = gradc.compile(nested, x, 0.3, wrt=("x", "a"))
    assert "np.broadcast_to(a" not in c.source and "* a" in c.source
    gx, ga = c.grad(x, 0.3)
    np.testing.assert_allclose(gx, central(lambda v: nested(v, 0.3), x), rtol=1e-6)
    np.testing.assert_allclose(ga, central(lambda s: nested(x, float(s)), 0.3), rtol=1e-6)


def test_a_broadcast_the_loop_hands_out_whole_is_kept():
    # the body returns k spread to the state's shape as its per-step output: that one keeps its shape
    def f(x0, k):
        c, ys = gradc.scan(lambda c, x: (c + k * x, k * np.ones(3)), x0, np.linspace(0.0, 1.0, 5))
        return np.sum(c * c) + np.sum(ys * ys)
    x0 = np.ones(3)
    with loops_kept():  # (the loop's own emission is what is tested; by default its iterations are batched)
        c = gradc.compile(f, x0, 0.5, wrt=("x0", "k"))
    assert "np.full((3,), k)" in c.source  # (a small broadcast is a fresh array: gradc.backends.numpy.fresh_broadcast)
    gx, gk = c.grad(x0, 0.5)
    np.testing.assert_allclose(gx, central(lambda v: f(v, 0.5), x0), rtol=1e-6)
    np.testing.assert_allclose(gk, central(lambda s: f(x0, float(s)), 0.5), rtol=1e-6)


def test_work_counts_a_loop_times_its_trips():
    def f(x):
        return gradc.fori_loop(0, 50, lambda i, v: np.sin(v), x)
    once = work(trace(lambda x: np.sin(x), np.ones(10)))
    assert work(trace(f, np.ones(10))) == 50 * once


def test_a_20000_op_straight_line_chain_compiles():
    # the loop unrolled at trace time: 5,000 steps of four ops each, one straight-line program (the emitter
    # once nested it into one expression and hit Python's recursion limit at about 1,000 steps)
    def chain(x):
        for _ in range(5000):
            x = x + 1e-4 * np.sin(x) * x
        return np.sum(x)
    x = np.linspace(0.0, 1.0, 3)
    with unrolled_loops():
        flat = gradc.compile(chain, x)
    assert len(flat.graph.eqns) >= 20_000 and loops(ast.parse(flat.source)) == 0
    looped = gradc.compile(chain, x)
    np.testing.assert_allclose(flat.forward(x), chain(x), rtol=1e-13)
    np.testing.assert_allclose(flat.grad(x), looped.grad(x), rtol=1e-12)


def test_gradc_show_reports_every_tape_in_bytes_per_iteration(tmp_path):
    from gradc.passes.loops import loop_report

    c = gradc.compile(make_simulate(10_000), X0, 0.7, 1e-3, wrt=("x0", "k"))
    report = loop_report(c.grad_graph)
    assert "loop of 10000 trips; carries x: f64[100]; tapes x: 800 bytes per iteration; small body" in report[0]
    assert "adjoint loop (runs backwards) of 10000 trips" in report[1]

    def rnn(W, h0, xs):  # the tanh of a product is taped beside the state (recomputing it reruns the product)
        h = h0
        for t in range(xs.shape[0]):
            h = np.tanh(W @ h + xs[t])
        return np.sum(h * h)
    c = gradc.compile(rnn, np.eye(3) * 0.5, np.ones(3), np.ones((4, 3)))
    taped = [e for e in c.grad_graph.eqns if e.op == "element" and e.out.name.endswith("_tape")]
    assert len(taped) == 2 and loop_report(c.grad_graph)[0].endswith(": 48 bytes per iteration")

    source = tmp_path / "sim.py"
    source.write_text("import numpy as np\n\n\ndef simulate(x0, k, dt):\n    x = x0\n    for _ in range(10_000):\n"
                      "        x = x + dt * (-k * x ** 3 + np.sin(x))\n    return np.sum(x ** 2)\n")
    import subprocess
    import sys
    shown = subprocess.run([sys.executable, "-m", "gradc", "show", f"{source}:simulate", "--wrt", "x0,k", "--arg",
                            "x0=f64[100]", "--arg", "k=f64[]", "--arg", "dt=f64[]"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    assert "tapes x: 800 bytes per iteration" in shown.stdout
