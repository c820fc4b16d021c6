"""Helpers kept as functions in the C target: each distinct ``call`` body one ``static`` C function.

Helpers here are plain Python functions of more than ``gradc.trace.calls.INLINE_MAX_EQNS``
operations, so the front end keeps each as a call equation. Value and gradient of the C target
are checked against the user's Python function run by NumPy and central finite differences, on
random programs whose helpers are called several times, call each other, run inside loops and
recurse on shapes (GradBench's det); one C function per distinct body (the source is read);
byte-identical C for the same input; a check raising inside a helper returns its status through
the chain of calls and Python raises the user's exception.
"""
from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.emit import emit_c
from gradc.errors import EmitError
from gradc.ir.graph import Eqn, Graph, Var, subgraphs
from gradc.ir.types import TensorType, TupleType

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _fd(f, args, k):
    def at(z):
        call = list(args)
        call[k] = z if np.ndim(args[k]) else float(z)
        return float(f(*call))
    return central_gradient(at, np.asarray(args[k], dtype=np.float64))


def check(f, args, wrt=(0,), rtol=1e-6, atol=1e-8, reference=None):
    """The C target's value and gradient against the user's function run by NumPy and central differences."""
    reference = reference or f
    c = gradc.compile(f, *args, wrt=tuple(wrt), target="c")
    value, grads = c.value_and_grad(*args)
    expected = float(reference(*args))
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12 * (1 + abs(expected)))
    np.testing.assert_allclose(c.forward(*args), expected, rtol=1e-12, atol=1e-12 * (1 + abs(expected)))
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, _fd(reference, args, k), rtol=rtol, atol=atol, err_msg=f"d/d argument {k}")
    return c


def static_functions(source: str) -> list:
    """The names of the static helper functions a C source defines (each definition's first line)."""
    return re.findall(r"^static (?:void|int) (gradc_call\w*)\(", source, flags=re.M)


def function_text(source: str, name: str) -> str:
    """The definition of the C function ``name`` in ``source`` (to its closing brace at the start of a line)."""
    start = re.search(rf"^(?:static )?(?:void|int) {name}\(", source, flags=re.M).start()
    return source[start:source.index("\n}\n", start) + 3]


def calls_of(source: str, name: str) -> int:
    """How many times the C ``source`` calls the function ``name`` (its definition not counted)."""
    return len(re.findall(rf"(?<!static void )(?<!static int ){name}\(", source))


# ---------------------------------------------------------------- fixed programs
def smooth(a, b):
    return np.tanh(a) * b + np.sum(a * a) * 0.1


def smooth2(a, b):
    return np.sin(a) * np.cos(b), np.sum(a * b) + 1.0


def mid(a, b):
    u, s = smooth2(a, b)
    v, t = smooth2(u, a)
    return u * t + v * s


X, Y = np.array([0.3, -0.2, 0.5]), np.array([1.1, 0.4, -0.7])


def three_calls(a, b):
    return np.sum(smooth(smooth(a, b), b) * smooth(b, a))


@needs_cc
def test_a_helper_called_three_times_is_one_function():
    c = check(three_calls, (X, Y), wrt=(0, 1))
    forward = function_text(c.source, "gradc_fn_three_calls")
    assert calls_of(forward, "gradc_call_smooth") == 3
    names = static_functions(c.source)
    # each body once: the value's, the gradient's forward (returning what the adjoint reads), the adjoint
    assert sorted(names) == ["gradc_call_smooth", "gradc_call_smooth_adjoint", "gradc_call_smooth_forward"]
    grad = function_text(c.source, "gradc_fn_three_calls_grad")
    assert calls_of(grad, "gradc_call_smooth_adjoint") == 3
    # split mode: each helper's forward runs once in the gradient, its adjoint reads its values (no recompute)
    assert calls_of(grad, "gradc_call_smooth_forward") == 3
    assert calls_of(grad, "gradc_call_smooth") == 0


@needs_cc
def test_helpers_calling_helpers_and_several_outputs():
    def f(a, b):
        return np.sum(mid(a, b) * mid(b, a)) + np.sum(mid(mid(a, b), b))

    c = check(f, (X, Y), wrt=(0, 1))
    assert {"gradc_call_mid", "gradc_call_smooth2"} <= set(static_functions(c.source))
    # callees first: smooth2 is defined before mid, which calls it
    assert c.source.index("static void gradc_call_smooth2(") < c.source.index("static void gradc_call_mid(")
    assert calls_of(function_text(c.source, "gradc_call_mid"), "gradc_call_smooth2") == 2
    assert calls_of(function_text(c.source, "gradc_fn_f"), "gradc_call_mid") == 3  # mid(a, b) twice: one call (CSE)


@needs_cc
def test_a_helper_called_in_a_loop():
    def f(a, b):
        return np.sum(gradc.fori_loop(0, 4, lambda i, c: smooth(c, b) * 0.5 + c, a))

    def reference(a, b):
        c = a
        for _ in range(4):
            c = smooth(c, b) * 0.5 + c
        return np.sum(c)

    c = check(f, (X, Y), wrt=(0, 1), reference=reference)
    forward = function_text(c.source, "gradc_fn_f")
    assert re.search(r"for \(long j0 = 0; j0 < 4; \+\+j0\) \{\n\s*/\* .* \*/\n\s*gradc_call_smooth\(", forward)


@needs_cc
def test_a_helper_called_in_a_python_loop():
    def f(a, b):
        c = a
        for k in range(5):
            c = smooth(c, b) * 0.5 + c * k
        return np.sum(c)

    check(f, (X, Y), wrt=(0, 1))


def det(A):
    """GradBench's det: cofactor expansion along the first row, by recursion (each minor by slicing)."""
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.concatenate([A[1:, :j], A[1:, j + 1:]], axis=1)
        total = total + (-1.0) ** j * A[0, j] * det(minor)
    return total


@needs_cc
@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_det_by_recursion_one_function_per_size(n):
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n))
    c = check(det, (A,))
    np.testing.assert_allclose(c.grad(A)[0], np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9, atol=1e-12)
    sizes = {e.params["body"].inputs[0].type.shape for e in _all_calls(c.graph)}
    names = static_functions(c.source)
    forward = [name for name in names if "adjoint" not in name and not name.endswith("_forward")]
    assert len(forward) == len(sizes)  # one function per size the recursion reaches
    # and one forward returning the adjoint's residuals per size, each called where the value's was (split mode)
    assert len([name for name in names if name.endswith("_forward")]) == len(sizes)
    assert sorted(sizes, reverse=True) == [(k, k) for k in range(n - 1, n - 1 - len(sizes), -1)]


def _all_calls(graph):
    """Every call equation reachable from ``graph`` (each body looked at once)."""
    found, pending, seen = [], [graph], set()
    while pending:
        g = pending.pop()
        for e in g.eqns:
            if e.op == "call":
                found.append(e)
            for sub in subgraphs(e):  # a loop's body, a branch, a helper's body
                if id(sub) not in seen:
                    seen.add(id(sub))
                    pending.append(sub)
    return found


# ---------------------------------------------------------------- random programs
UNARY = [np.sin, np.cos, np.tanh, lambda v: np.exp(-v * v), lambda v: v * v * 0.3, lambda v: np.log1p(v * v)]


def random_helper(rng, name):
    """A helper of two vectors returning a vector (a random composition of smooth ops)."""
    u1, u2 = (UNARY[k] for k in rng.integers(len(UNARY), size=2))
    c1, c2 = (float(v) for v in rng.uniform(-1.5, 1.5, size=2))
    reduce_first = bool(rng.integers(2))

    def helper(a, b):
        out = u1(a) * c1 + u2(b) * a + c2
        if reduce_first:
            out = out + np.sum(a * b) * 0.2
        return out
    helper.__name__ = helper.__qualname__ = name
    return helper


def random_program(seed):
    """A function calling random helpers (called several times, some calling another, some inside loops)."""
    rng = np.random.default_rng(seed)
    helpers = [random_helper(rng, f"h{k}") for k in range(int(rng.integers(1, 4)))]
    if rng.integers(2):  # a helper calling an earlier one twice
        def nested(a, b, first=helpers[0]):
            return first(first(a, b), a) * 0.5
        helpers.append(nested)
    steps = [(int(rng.integers(len(helpers))), int(rng.integers(3)), int(rng.integers(3)), bool(rng.integers(3) == 0))
             for _ in range(int(rng.integers(2, 6)))]

    def program(x, y):
        pool = [x, y, x * y]
        for k, i, j, in_loop in steps:
            a, b = pool[i % len(pool)], pool[j % len(pool)]
            if in_loop:
                c = a
                for _ in range(3):
                    c = helpers[k](c, b) * 0.25 + c * 0.5
                value = c
            else:
                value = helpers[k](a, b)
            pool.append(np.tanh(value))
        return np.sum(pool[-1] * pool[-2]) + np.sum(pool[-1])
    return program


@needs_cc
@pytest.mark.parametrize("seed", range(8))
def test_random_programs_agree_with_python_and_finite_differences(seed):
    f = random_program(seed)
    rng = np.random.default_rng(100 + seed)
    x, y = rng.uniform(-1, 1, size=3), rng.uniform(-1, 1, size=3)
    c = check(f, (x, y), wrt=(0, 1), rtol=1e-5, atol=1e-7)
    names = static_functions(c.source)
    assert len(names) == len(set(names))
    bodies = {id(e.params["body"]) for g in (c.graph, c.value_and_grad_graph) for e in _all_calls(g)}
    assert len(names) == len(bodies)  # one C function per distinct body


# ---------------------------------------------------------------- the emitted source
def test_emitted_c_is_deterministic():
    first = c_build.emit_sources_for(three_calls, X, Y, wrt=(0, 1))
    second = c_build.emit_sources_for(three_calls, X, Y, wrt=(0, 1))  # traced again: new graphs, new ids
    assert first == second
    assert "static void gradc_call_smooth(" in first[0]
    assert "gradc_call" not in first[1]  # the header declares only the unit's symbols


def test_emitted_c_is_deterministic_across_hash_seeds():
    code = ("import sys; sys.path[:0] = ['tests', 'tests/backends/c']; import test_c_calls as t; "
            "from gradc.backends.c import build; print(''.join(build.emit_sources_for(t.det, t.np.ones((4, 4)))))")
    outs = []
    root = str(pathlib.Path(__file__).resolve().parents[3])
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
        outs.append(subprocess.run([sys.executable, "-c", code], cwd=root, env=env, capture_output=True, text=True,
                                   check=True).stdout)
    assert outs[0] == outs[1] and re.search(r"^static void gradc_call_det(_\d+)?\(", outs[0], flags=re.M)


def printf(a):
    return np.sin(a) * 2.0 + np.sum(a)


def gradc_sin_scalar(a):
    return np.cos(a) * 3.0 + np.sum(a * a)


def test_names_never_collide_with_the_users_or_libc():
    def f(a):
        return np.sum(printf(gradc_sin_scalar(a)))

    source, _ = c_build.emit_sources_for(f, X)
    assert {"gradc_call_printf", "gradc_call_gradc_sin_scalar"} <= set(static_functions(source))
    assert not re.search(r"(?<![\w])printf\(", source)


@needs_cc
def test_emitted_c_compiles_without_warnings(tmp_path):
    def f(a, b):
        return three_calls(a, b) + det(np.outer(a, b)) + np.sum(mid(a, b))

    source, _ = c_build.emit_sources_for(f, X, Y, wrt=(0, 1))
    path = tmp_path / "m.c"
    path.write_text(source)
    cc = shutil.which("gcc") or c_build.find_compiler()
    proc = subprocess.run([cc, "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-O2", "-c", str(path), "-o",
                           str(tmp_path / "m.o")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# ---------------------------------------------------------------- work arrays and named sizes
def wide(a):
    b = np.sin(a) * np.cos(a)
    return np.exp(b) + b, np.sum(b)


def uses_wide(a):
    u, s = wide(a)
    v, t = wide(u * 0.1)
    return np.sum(v) + s * t


@needs_cc
@pytest.mark.parametrize("spec", ["fixed", "named"])
def test_large_work_arrays_are_lent_by_the_caller(spec):
    x = np.linspace(0.0, 1.0, 3000)
    example = x if spec == "fixed" else gradc.spec("f64[n]")
    c = gradc.compile(uses_wide, example, target="c")
    assert re.search(r"static void gradc_call_wide\([^)]*double \*work\)", c.source)  # its arrays in lent work
    np.testing.assert_allclose(c.forward(x), uses_wide(x), rtol=1e-12)
    np.testing.assert_allclose(c.grad(x), gradc.compile(uses_wide, x).grad(x), rtol=1e-9, atol=1e-12)
    if spec == "named":
        short = np.linspace(0.0, 1.0, 7)
        np.testing.assert_allclose(c.forward(short), uses_wide(short), rtol=1e-12)
        np.testing.assert_allclose(c.grad(short), _fd(uses_wide, (short,), 0), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- statuses through the chain of calls
def positive_root(a):
    if np.any(a < 0):
        raise ValueError("positive_root needs a >= 0")
    return np.sqrt(a) + np.sum(a) * 0.0


def scaled(a, b):
    assert np.sum(b) < 100.0, "b is too large"
    return positive_root(a) * b


def checked(a, b):
    c = a
    for _ in range(2):
        c = positive_root(c) + 1.0
    return np.sum(scaled(a, b)) + np.sum(c)


@needs_cc
def test_a_check_inside_a_helper_raises_the_users_exception_through_the_calls():
    x, y = np.array([0.1, 0.2, 0.3]), np.array([1.0, 2.0, 3.0])
    c = check(checked, (x, y), wrt=(0, 1))
    assert re.search(r"static int gradc_call_positive_root\(", c.source)
    assert re.search(r"static int gradc_call_scaled\(", c.source)
    assert re.search(r"if \((q\d+)\) return \1 \+ \d+;", c.source)  # a callee's status moved into the caller's range
    for entry in (c.forward, c.grad, c.value_and_grad, c._slow_forward, c._slow_grad):
        with pytest.raises(ValueError, match="positive_root needs a >= 0"):
            entry(-x, y)
        with pytest.raises(AssertionError, match="b is too large"):
            entry(x, 100.0 * y)
        with pytest.raises(ValueError, match="positive_root needs a >= 0"):
            entry(np.array([0.1, -0.2, 0.3]), 100.0 * y)  # the first check to run wins, as in Python
    with pytest.raises(ValueError, match="positive_root needs a >= 0"):
        checked(np.array([0.1, -0.2, 0.3]), 100.0 * y)
    jitted = gradc.jit(checked, target="c")
    np.testing.assert_allclose(jitted(x, y), checked(x, y), rtol=1e-12)
    with pytest.raises(ValueError, match="positive_root needs a >= 0"):
        jitted(-x, y)


# ---------------------------------------------------------------- a body reaching itself
def test_a_body_calling_itself_is_a_clear_error():
    t = TensorType((), "f64")
    x, out = Var("x", t), Var("t0", TupleType((t,)))
    body = Graph("loop", [x], [], [x])
    body.eqns = [Eqn("call", (x,), {"body": body, "helper": "loop"}, out)]
    top = Graph("f", [x], [Eqn("call", (x,), {"body": body, "helper": "loop"}, out)], [x])
    with pytest.raises(EmitError, match="calling itself"):
        emit_c([(top, "gradc_fn_f", ["value"], "f")], ["test"], "G")


# ---------------------------------------------------------------- the other derivative modes
@needs_cc
@pytest.mark.parametrize("mode", ["jvp", "vjp", "hessian", "jacobian"])
def test_derivative_modes_call_derived_bodies(mode):
    def vector(a, b):
        return mid(a, b) * np.sum(mid(b, a))

    def scalar(a, b):
        return np.sum(vector(a, b) ** 2)

    f = scalar if mode == "hessian" else vector
    extra = {"jvp": (0.5 * X, -Y), "vjp": (np.array([1.0, -2.0, 0.5]),)}.get(mode, ())
    c = gradc.compile(f, X, Y, wrt=(0, 1), mode=mode, target="c")
    n = gradc.compile(f, X, Y, wrt=(0, 1), mode=mode)
    got, expected = getattr(c, mode)(X, Y, *extra), getattr(n, mode)(X, Y, *extra)
    got, expected = gradc.tree_util.tree_leaves(got), gradc.tree_util.tree_leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    names = static_functions(c.source)
    assert len(names) == len(set(names)) and "gradc_call_mid" in names
    assert any(name.startswith("gradc_call") and "_mid_" in name for name in names)  # mid's derivative: a function


@needs_cc
def test_a_deep_chain_of_calls_keeps_its_arrays_in_work_past_the_stack_budget(monkeypatch):
    from gradc.backends.c import calls as c_calls

    A = np.random.default_rng(7).normal(size=(5, 5))
    roomy = gradc.compile(det, A, target="c")
    monkeypatch.setattr(c_calls, "CHAIN_STACK_LIMIT", 256)  # bytes: the innermost bodies fill it
    tight = gradc.compile(det, A, target="c")
    on_stack = lambda source: re.findall(r"^static \w+ (gradc_call\w*)\((?![^)]*double \*work\))", source,  # noqa: E731
                                         flags=re.M)
    assert len(on_stack(tight.source)) < len(on_stack(roomy.source))
    assert re.search(r"^static void gradc_call\w*det(_\d+)?\([^)]*double \*work\)", tight.source, flags=re.M)
    np.testing.assert_allclose(tight.forward(A), det(A), rtol=1e-12)
    np.testing.assert_allclose(tight.grad(A), roomy.grad(A), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(tight.grad(A), np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-9, atol=1e-12)


def shifted(a, b):
    return np.sin(a) * b + np.sum(a * b) * 0.5


def uses_shifted(x):
    return np.sum(shifted(x[1:], x[:-1])) + np.sum(shifted(x, x))


@needs_cc
def test_named_sizes_of_a_body_are_the_callers():
    c = gradc.compile(uses_shifted, gradc.spec("f64[n]"), target="c")
    assert re.search(r"static void gradc_call_shifted\(long n, ", c.source)  # f64[n-1]: takes n
    for size in (2, 3, 9):
        x = np.linspace(-0.5, 1.0, size)
        np.testing.assert_allclose(c.forward(x), uses_shifted(x), rtol=1e-12)
        np.testing.assert_allclose(c.grad(x), _fd(uses_shifted, (x,), 0), rtol=1e-6, atol=1e-8)


def branchy(a, b):
    if np.sum(a) > 0.0:
        return np.sum(smooth(a, b))
    return np.sum(smooth(b, a) * 2.0)


def until_small(a, b):
    c = a
    while np.sum(c * c) > 0.05:
        c = smooth(c, b) * 0.5
    return np.sum(c)


@needs_cc
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_helpers_in_branches_and_while_loops(sign):
    c = check(branchy, (sign * X, Y), wrt=(0, 1))
    assert calls_of(function_text(c.source, "gradc_fn_branchy"), "gradc_call_smooth") == 2  # one in each arm
    c = check(until_small, (sign * X, Y), wrt=(0, 1))
    loop = function_text(c.source, "gradc_fn_until_small_grad")
    # the loop calls the helper's forward returning its adjoint's residuals (taped for the reverse sweep)
    assert re.search(r"while \(1\) \{(.|\n)*gradc_call_smooth_forward\(", loop)


def halve_roots(a):
    c = a
    while np.sum(c) > 0.5:
        c = positive_root(c) * 0.3
    return np.sum(c)


@needs_cc
def test_statuses_of_bounded_loops_and_helpers_stay_apart():
    x = np.array([2.0, 1.0, 0.5])
    c = gradc.compile(halve_roots, x, target="c", max_trips=3)
    np.testing.assert_allclose(c.grad(x), _fd(halve_roots, (x,), 0), rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="positive_root needs a >= 0"):
        c.grad(np.array([2.0, -0.1, 0.5]))
    with pytest.raises(ValueError, match="max_trips=3"):
        c.grad(np.array([2e6, 1e6, 5e5]))  # more than 3 halvings of the roots
    np.testing.assert_allclose(c.forward(np.array([2e6, 1e6, 5e5])), halve_roots(np.array([2e6, 1e6, 5e5])))


def reversed_too(a, b):
    d = np.sin(a) * b + a[0]
    return d * d + 1.0


def same_shape_other_constant(a, b):
    d = np.sin(a) * b + a[0]
    return d * d + 2.0


@needs_cc
def test_bodies_computing_the_same_are_one_function():
    def f(a, b):
        return (np.sum(reversed_too(a, b)) + np.sum(reversed_too(a[::-1], b)) + np.sum(reversed_too(a * 2.0, b))
                + np.sum(same_shape_other_constant(a, b)))

    c = check(f, (X, Y), wrt=(0, 1))
    bodies = {id(e.params["body"]) for e in _all_calls(c.graph)}
    names = static_functions(c.source)
    forward = [n for n in names if "adjoint" not in n]
    # one function for reversed_too (however many bodies the front end traced), one for the other constant, and
    # each one's forward returning its adjoint's residuals (split mode)
    assert sorted(forward) == ["gradc_call_reversed_too", "gradc_call_reversed_too_forward",
                               "gradc_call_same_shape_other_constant",
                               "gradc_call_same_shape_other_constant_forward"], (forward, bodies)
    assert calls_of(function_text(c.source, "gradc_fn_f"), "gradc_call_reversed_too") == 3


def _shifted_products(x, y):
    z = np.zeros(x.shape[0])
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * y[i - 1]
    return z


def _two_fills(x):
    """GradBench ode's pattern: a helper that fills an array in a loop, called several times."""
    a = _shifted_products(x, x)
    b = _shifted_products(x, np.sin(a))
    return np.sum(b * b) + a[-1]


@needs_cc
def test_a_helper_body_accumulates_its_scatters_in_place():
    """The adjoint of a fill loop in a helper adds each slot's derivative at its index (O(1) an iteration): the
    helper bodies are marked as the unit's own functions are, so no loop body zeroes a whole array."""
    x = np.random.default_rng(4).uniform(0.2, 1.0, 40)
    compiled = gradc.compile(_two_fills, x, target="c")
    assert "gather_grad" not in compiled.source and "index_add" in compiled.source
    np.testing.assert_allclose(compiled.grad(x), central_gradient(_two_fills, x), rtol=1e-6, atol=1e-8)
