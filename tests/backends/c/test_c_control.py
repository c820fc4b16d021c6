"""Loops and branches in the C target: real ``for``/``while``/``if`` statements, tapes, the max_trips policy.

The control-flow corpus of the other test files (imported, not copied) runs through
``target="c"``: value and gradient equal the NumPy target's to ~1e-12 and central finite
differences; trip counts 0, 1, 2, 3 and 10, nested loops, ``while`` loops of data-dependent
length, branches taken either way, second order (``mode="hessian"``), the error of a run
past ``max_trips``, and the emitted source: loops stay loops, whatever the trip count.
"""
from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
from finite_differences import central_gradient
from op_cases import compile_case, make_inputs, make_loss  # (before op_cases_control, which it imports)

import gradc
from gradc.backends.c import build as c_build

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

TESTS = pathlib.Path(__file__).resolve().parents[2]
for sub in ("transforms", "trace"):  # the corpus lives beside its own tests
    if str(TESTS / sub) not in sys.path:
        sys.path.insert(0, str(TESTS / sub))

import op_cases_control  # noqa: E402
import test_capture_corpus as corpus  # noqa: E402
import test_control_flow as flow  # noqa: E402

traced = pytest.importorskip("test_capture_traced")  # (it needs hypothesis for its own tests)


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _close(c_result, numpy_result, rtol=1e-12, atol=1e-12, what=""):
    c_arr, np_arr = np.asarray(c_result, np.float64), np.asarray(numpy_result, np.float64)
    assert c_arr.shape == np_arr.shape, what
    scale = 1.0 + float(np.max(np.abs(np_arr), initial=0.0))
    np.testing.assert_allclose(c_arr, np_arr, rtol=rtol, atol=atol * scale, err_msg=what)


def _as_tuple(g):
    return g if isinstance(g, tuple) else (g,)


def _fd(f, args, k):
    """Central differences of scalar ``f`` with respect to argument ``k`` (the others held)."""
    def at(z):
        call = list(args)
        call[k] = z if np.ndim(z) else float(z)
        return float(f(*call))
    return central_gradient(at, np.asarray(args[k], dtype=np.float64))


def check(f, args, wrt=0, fd=True, rtol=1e-6, atol=1e-8, **options):
    """C against the NumPy target (value, gradient, forward) and, with ``fd``, against finite differences."""
    c = gradc.compile(f, *args, wrt=wrt, target="c", **options)
    n = gradc.compile(f, *args, wrt=wrt)
    value, grads = c.value_and_grad(*args)
    n_value, n_grads = n.value_and_grad(*args)
    _close(value, n_value, what="value")
    _close(c.forward(*args), n.forward(*args), what="forward")
    grads, n_grads = _as_tuple(grads), _as_tuple(n_grads)
    for k, (g, ng) in enumerate(zip(grads, n_grads)):
        _close(g, ng, what=f"gradient {k}")
    if fd:
        positions = [wrt] if isinstance(wrt, (int, str)) else list(wrt)
        names = list(c.value_and_grad_graph.params)
        for g, w in zip(grads, positions):
            k = names.index(w) if isinstance(w, str) else w
            np.testing.assert_allclose(g, _fd(f, args, k), rtol=rtol, atol=atol, err_msg=f"d/d{w}")
    return c


# ---------------------------------------------------------------- the corpus, through C
@pytest.mark.parametrize("case", op_cases_control.DIFF_CASES, ids=lambda c: c.id)
def test_op_table_control_cases(case):
    args = make_inputs(case)
    loss, ct, wrt, numpy_compiled = compile_case(case, args)
    c = gradc.compile(make_loss(case.fn, len(args)), *args, ct, wrt=tuple(f"a{i}" for i in wrt), target="c")
    value, grads = c.value_and_grad(*args, ct)
    n_value, n_grads = numpy_compiled.value_and_grad(*args, ct)
    _close(value, n_value)
    for k, (g, ng) in enumerate(zip(grads, n_grads)):
        _close(g, ng, what=f"gradient {k}")
        np.testing.assert_allclose(g, _fd(loss, list(args) + [ct], wrt[k]), rtol=1e-5, atol=1e-7)


CAPTURED = [c for c in traced.CASES if c[0] is not traced.write_loop]


@pytest.mark.parametrize("f,args,wrt,op", CAPTURED, ids=[f"{c[0].__name__}-{k}" for k, c in enumerate(CAPTURED)])
def test_captured_programs(f, args, wrt, op):
    c = check(f, args, wrt=wrt, rtol=1e-5, atol=1e-6)
    _close(c.forward(*args), f(*args), rtol=1e-10, what="the function itself")
    if op is not None:  # the loop or branch stayed one in C
        assert {"scan": "for (long j", "while_loop": "while (", "cond": "if ("}[op] in c.c_source


def convolve_loop(x):
    out = x
    for _ in range(3):
        out = np.convolve(out, x)[:3]
    return np.sum(out)


def test_an_op_without_c_inside_a_loop_is_named(monkeypatch):
    # (index_update and convolve, named here before, lower to C now: an op's C facet is taken away for the test)
    from gradc.ir.registry import OPS
    monkeypatch.setattr(OPS["convolve"], "c", None)
    with pytest.raises(gradc.GradcError, match="no C lowering for op convolve in convolve_loop"):
        gradc.compile(convolve_loop, np.array([0.3, -0.7, 1.1]), target="c")


def test_convolve_inside_a_loop_lowers_to_c():
    x = np.array([0.3, -0.7, 1.1])
    c = gradc.compile(convolve_loop, x, target="c")
    np.testing.assert_allclose(c.forward(x), convolve_loop(x), rtol=1e-13)
    np.testing.assert_allclose(c.grad(x), central_gradient(convolve_loop, x), rtol=1e-6)


@pytest.mark.parametrize("f,args", [(corpus.bisection, (2.0, 0.0, 2.0)), (corpus.newton_sqrt, (2.0,)),
                                    (corpus.newton_sqrt, (0.25,)), (corpus.huber, (0.3, 1.0)),
                                    (corpus.huber, (-3.0, 1.0))])
def test_capture_corpus_floats(f, args):
    c = check(f, args, fd=f is not corpus.bisection)  # bisection's lo is piecewise constant in c
    _close(c.forward(*args), f(*args), rtol=1e-12)


# ---------------------------------------------------------------- trip counts, overwrites, nesting
@pytest.mark.parametrize("n", [0, 1, 2, 3, 10])
def test_trip_counts(n):
    check(flow.power_loop, (0.7, n))


@pytest.mark.parametrize("n", [0, 1, 4])
def test_run_time_trip_count(n):
    def f(x, n):
        return gradc.fori_loop(0, n, lambda i, v: v * x + 1.0, 0.5)
    c = gradc.compile(f, 1.1, np.array(4), wrt="x", target="c")
    value, grad = c.value_and_grad(1.1, np.array(n))
    np.testing.assert_allclose(value, f(1.1, n), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(lambda z: f(float(z), n), 1.1), rtol=1e-6)


def test_overwritten_array_carry():
    check(flow.overwrite, (np.array([0.3, -0.2, 0.5, 0.1, 0.8, -0.6]),))


def test_swapped_and_reversed_carries_use_the_old_values():
    # the new values read carried values the update overwrites: a, b = b, a * x and v = v[::-1]
    def f(x, v0):
        def body(i, c):
            a, b, v = c
            return b, a * x + 0.1, np.sin(v[::-1]) * x + v
        a, b, v = gradc.fori_loop(0, 5, body, (x, 2.0 * x, v0))
        return a + b * np.sum(v)
    check(f, (0.7, np.array([0.1, -0.4, 0.9])), wrt=(0, 1))


def test_exact_swap_and_reversal_of_carries():
    def f(x, v0):
        def body(i, c):
            a, b, v = c
            return b, a, v[::-1]  # views of the carried values themselves
        a, b, v = gradc.fori_loop(0, 3, body, (x, 3.0 * x, v0 * x))
        return a * np.sum(v * np.arange(3.0)) + b
    c = check(f, (0.7, np.array([0.1, -0.4, 0.9])), wrt=(0, 1))
    assert "_next" in c.c_source  # the old values went through temporaries


def test_nested_loops_and_a_branch_inside():
    def f(x, w):
        def outer(i, acc):
            inner = gradc.fori_loop(0, 3, lambda j, a: a * np.cos(x * (i + 1)) + j * w, acc)
            return gradc.cond(np.sum(inner) > 0.0, lambda a: a * w, lambda a: a - x, inner)
        return np.sum(gradc.fori_loop(0, 4, outer, x * np.ones(2)))
    check(f, (0.4, 0.9), wrt=(0, 1))


def test_scan_with_stacked_outputs():
    def f(w, xs):
        carry, ys = gradc.scan(lambda c, x: (np.tanh(c * w + x), c * x), 0.1, xs)
        return carry + np.sum(ys ** 2)
    check(f, (0.5, np.linspace(-1.0, 1.0, 6)), wrt=(0, 1), atol=1e-9)


# ---------------------------------------------------------------- while loops and branches
@pytest.mark.parametrize("a", [1.5, 2.0, 10.0, 1e4])
def test_newton_sqrt_to_tolerance(a):
    c = check(flow.newton_sqrt, (a,))
    np.testing.assert_allclose(c.grad(a), 0.5 / np.sqrt(a), rtol=1e-9)


def test_while_loop_of_zero_trips():
    check(lambda x: gradc.while_loop(lambda v: v > 10.0, lambda v: v * 0.5, x) * 3.0, (2.0,))


def test_while_loop_of_a_thousand_trips():
    c = check(flow.ode_until, (1.3,))
    assert "while (" in c.c_source and len(c.c_source.splitlines()) < 400


@pytest.mark.parametrize("r", [-3.0, -0.4, 0.3, 2.5])
def test_huber_if_else(r):
    c = check(flow.huber, (r, 1.0), wrt=(0, 1))
    assert "if (" in c.c_source and "} else {" in c.c_source


# ---------------------------------------------------------------- second order and other modes
def test_hessian_through_while_cond_and_scan():
    def f(x):
        return np.sum(flow.newton_sqrt(x[0] + 2.0) * flow.huber(x[1]) * x) + flow.power_loop(x[0], 4)
    x = np.array([0.7, 0.4])
    c = gradc.compile(f, x, target="c", mode="hessian")
    n = gradc.compile(f, x, mode="hessian")
    _close(c.hessian(x), n.hessian(x), rtol=1e-11)
    g = gradc.grad(f)
    reference = np.stack([(g(x + e) - g(x - e)) / 2e-5 for e in np.eye(2) * 1e-5])
    np.testing.assert_allclose(c.hessian(x), reference, rtol=1e-5, atol=1e-7)


def test_jvp_through_a_loop():
    f = lambda x: flow.power_loop(x, 5)  # noqa: E731
    out, tangent = gradc.compile(f, 0.7, target="c", mode="jvp").jvp(0.7, 1.0)
    np.testing.assert_allclose(tangent, central_gradient(lambda z: f(float(z)), 0.7), rtol=1e-6)


@pytest.mark.parametrize("mode", ["jacobian", "jvp", "vjp", "hessian", "hvp"])
def test_modes_through_a_batched_while_loop_and_a_branch(mode):
    def f(x):
        y = gradc.while_loop(lambda v: np.sum(v * v) > 0.05, lambda v: v * 0.5 + 0.01 * np.sin(v), x)
        return gradc.cond(np.sum(x) > 0.0, lambda y: y * x, lambda y: np.exp(y) - x, y)

    fn = (lambda x: np.sum(f(x) ** 2)) if mode in ("hessian", "hvp") else f
    x = np.array([0.7, 1.2, 0.9])
    args = (x,) if mode in ("jacobian", "hessian") else (x, np.array([1.0, -0.5, 2.0]))
    c, n = gradc.compile(fn, x, target="c", mode=mode), gradc.compile(fn, x, mode=mode)
    for got, want in zip(_as_tuple(getattr(c, mode)(*args)), _as_tuple(getattr(n, mode)(*args))):
        _close(got, want, rtol=1e-11)
    if mode == "hessian":  # its tapes are bounded too: a run past the bound is the same clear error
        small = gradc.compile(fn, x, target="c", mode=mode, max_trips=2)
        with pytest.raises(ValueError, match="while loop .* ran past max_trips=2"):
            small.hessian(x)


# ---------------------------------------------------------------- the max_trips policy
def test_while_tape_past_max_trips_is_a_clear_error():
    c = gradc.compile(flow.newton_sqrt, 2.0, target="c", max_trips=3)
    np.testing.assert_allclose(c.forward(2.0), np.sqrt(2.0), rtol=1e-12)  # no tape: no bound
    for call in (c.grad, c._slow_grad):  # the extension's path and the ctypes path
        with pytest.raises(ValueError, match=r"newton_sqrt_grad: the while loop carrying .* ran past max_trips=3 "
                                             r"trips .*gradc.compile\(\.\.\., target='c', max_trips=N\)"):
            call(2.0)
    assert "return 1;" in c.c_source and "int gradc_fn_newton_sqrt_grad(" in c.header
    assert "newton_sqrt_grad returns 1: the while loop" in c.header
    np.testing.assert_allclose(c.grad(1.0001), 0.5 / np.sqrt(1.0001), rtol=1e-9)  # 2 trips: within the bound


def test_default_max_trips_puts_the_tape_in_the_work_buffer():
    c = gradc.compile(flow.newton_sqrt, 2.0, target="c")
    assert "double *work" in c.header and "* 10000" not in c.c_source
    assert "if (trips >= 10000) return 1;" in c.c_source


def test_max_trips_of_the_loop_itself():
    def f(x):
        return gradc.while_loop(lambda v: v < 100.0, lambda v: v * 1.5, x, max_trips=5)
    c = gradc.compile(f, 40.0, target="c")
    np.testing.assert_allclose(c.forward(40.0), f(40.0))
    with pytest.raises(ValueError, match=r"ran past max_trips=5 .*gradc.while_loop\(\.\.\., max_trips=N\)"):
        c.forward(1.0)


def test_run_time_length_tape_past_max_trips():
    def f(x, n):
        return gradc.fori_loop(0, n, lambda i, v: np.sin(v) * x, x)
    c = gradc.compile(f, 0.5, np.array(4), wrt="x", target="c", max_trips=8)
    np.testing.assert_allclose(c.grad(0.5, np.array(8)), central_gradient(lambda z: f(float(z), 8), 0.5), rtol=1e-6)
    with pytest.raises(ValueError, match="for loop of run-time length .* ran past max_trips=8"):
        c.grad(0.5, np.array(9))


# ---------------------------------------------------------------- the emitted source
def test_loops_stay_loops_whatever_the_trip_count():
    small = gradc.compile(flow.power_loop, 0.7, 10, target="c")
    large = gradc.compile(flow.power_loop, 0.7, 10_000, target="c")
    for c in (small, large):
        assert "for (long j0 = 0; j0 < " in c.c_source and "for (long j0 = " in c.c_source
    assert abs(len(large.c_source) - len(small.c_source)) < 200
    assert len(large.c_source.splitlines()) <= len(small.c_source.splitlines()) + 2
    assert "double *work" in large.header  # a 10,000-row tape is not on the stack
    _close(large.value_and_grad(0.7, 10_000), gradc.compile(flow.power_loop, 0.7, 10_000).value_and_grad(0.7, 10_000))


def test_emitted_c_is_deterministic():
    script = ("import sys; sys.path[:0] = sys.argv[1:]\n"
              "import test_control_flow as flow\n"
              "from gradc.backends.c.build import emit_sources_for\n"
              "print(emit_sources_for(lambda x: flow.newton_sqrt(x) + flow.huber(x) + flow.power_loop(x, 7), 2.0)[0])")
    outputs = set()
    for seed in ("0", "1"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        proc = subprocess.run([sys.executable, "-c", script, str(TESTS / "transforms"), str(TESTS)],
                              capture_output=True, text=True, env=env, check=True)
        outputs.add(proc.stdout)
    (source,) = outputs
    assert "while (1) {" in source and "if (" in source and "for (long j0" in source
