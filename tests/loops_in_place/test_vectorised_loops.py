"""Loops of independent iterations written as whole-array operations (``gradc.passes.vectorise_loops``).

Each program is compiled twice, with the pass (the NumPy target's default) and without it
(``loops_kept``): values and gradients agree (to rounding: a sum is taken pairwise), and agree with
the function run by NumPy and with central differences. The pass is checked on the IR too (the
interpreter on the graph before and after, ``verify`` after), and loops it must keep (a recurrence,
a read of the whole array, a write that wraps onto another iteration's slot) stay loops.
"""
from __future__ import annotations

import random

import numpy as np
import pytest
from fill_programs import program
from test_generated import _central

import gradc
from gradc.ir.interpret import evaluate
from gradc.ir.verify import verify
from gradc.passes import optimize
from gradc.passes.vectorise_loops import loops_kept, vectorise_loops
from gradc.transforms import reverse as ad


def shifted_product(x):  # GradBench ode's right-hand side
    n = x.shape[0]
    z = np.zeros(n)
    z[0] = x[0]
    for i in range(1, n):
        z[i] = x[i] * np.sin(x[i - 1])
    return np.sum(z * np.arange(n))


def running_total(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.tanh(x[i]) * x[i]
    return total


def rows(X):
    out = np.zeros_like(X)
    for i in range(X.shape[0]):
        out[i] = np.sin(X[i]) * X[i, 0]
    return np.sum(out ** 2)


def rows_of_a_scalar(X):
    out = np.ones_like(X)
    for i in range(1, X.shape[0]):
        out[i] = X[i, 1] * 2.0
    return np.sum(out * X)


def every_other(x):
    out = np.zeros(x.shape[0])
    for i in range(0, x.shape[0], 2):
        out[i] = np.exp(x[i]) + x[i + 1]
    return np.sum(out * x)


def backwards(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0] - 1, 0, -1):
        out[i - 1] = x[i] * x[i - 1]
    return np.sum(np.cos(out))


def with_scale(x, w):  # a value read by every iteration (handed through), an inner loop of static length
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        acc = x[i]
        for _ in range(3):
            acc = np.sin(acc) * w
        out[i] = acc
    return np.sum(out)


def recurrence(x):
    out = np.zeros(x.shape[0])
    out[0] = x[0]
    for i in range(1, x.shape[0]):
        out[i] = out[i - 1] * 0.5 + x[i]
    return np.sum(out)


def reads_all(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = np.sum(out) + x[i]
    return np.sum(out)


def wraps(x):  # out[i - 3] at i = 1 is out[-2]: the slot iteration n - 2 writes too
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i - 3] = x[i] * 2.0
    return np.sum(out * x)


def alternating(x):  # sign is computed ahead (it starts constant and reads only itself): the sum vectorises
    total = 0.0
    sign = 1.0
    for i in range(x.shape[0]):
        total = total + sign * np.sin(x[i])
        sign = -sign
    return total * sign


def minors(x):  # GradBench det's expansion by minors: np.delete checks its position in the body of a loop
    M = x.reshape(3, 3)
    total = 0.0
    sign = 1.0
    for j in range(3):
        minor = np.delete(M[1:], j, axis=1)
        total = total + sign * M[0, j] * (minor[0, 0] * minor[1, 1] - minor[0, 1] * minor[1, 0])
        sign = -sign
    return total


VECTORISED = [shifted_product, running_total, rows, rows_of_a_scalar, every_other, backwards]
FORWARD_VECTORISED = [alternating, minors]
KEPT = [recurrence, reads_all, wraps]


def _arguments(f, rng):
    if f in (rows, rows_of_a_scalar):
        return (rng.uniform(-1.0, 1.0, (6, 3)),)
    if f is minors:
        return (rng.uniform(-1.0, 1.0, 9),)
    if f is with_scale:
        return rng.uniform(-1.0, 1.0, 7), 0.7
    return (rng.uniform(-1.0, 1.0, 8),)


def _both(f, args, argnums=0):
    vectorised = gradc.compile(f, *args, argnums=argnums)
    with loops_kept():
        looped = gradc.compile(f, *args, argnums=argnums)
    return vectorised, looped


def _loops_in(source: str, name: str) -> int:
    """``for`` statements in the emitted functions ``name*`` and the helpers (everything but the checks)."""
    return sum(line.lstrip().startswith("for ") for line in source.splitlines())


@pytest.mark.parametrize("f", VECTORISED + KEPT + FORWARD_VECTORISED + [with_scale], ids=lambda f: f.__name__)
def test_agrees_with_the_loop_numpy_and_finite_differences(f):
    rng = np.random.default_rng(7)
    args = _arguments(f, rng)
    vectorised, looped = _both(f, args)
    value, grad = vectorised.value_and_grad(*args)
    value_loop, grad_loop = looped.value_and_grad(*args)
    np.testing.assert_allclose(value, value_loop, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(grad, grad_loop, rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(value, f(*(np.copy(a) for a in args)), rtol=1e-12, atol=1e-14)
    rest = args[1:]
    np.testing.assert_allclose(grad, _central(lambda v: f(v, *rest), args[0]), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", VECTORISED, ids=lambda f: f.__name__)
def test_independent_iterations_leave_no_loop(f):
    args = _arguments(f, np.random.default_rng(0))
    vectorised, looped = _both(f, args)
    assert _loops_in(vectorised.source, f.__name__) == 0, vectorised.source
    assert _loops_in(looped.source, f.__name__) > 0


@pytest.mark.parametrize("f", FORWARD_VECTORISED, ids=lambda f: f.__name__)
def test_precomputed_carries_and_checks_leave_no_forward_loop(f):
    args = _arguments(f, np.random.default_rng(0))
    graph = optimize(gradc.trace(f, *args))
    assert any(e.op == "scan" for e in graph.eqns)
    after = vectorise_loops(graph)
    verify(after)
    assert not any(e.op == "scan" for e in after.eqns), after
    np.testing.assert_allclose(evaluate(after, *args)[0], f(*args), rtol=1e-13)


def test_a_check_in_a_vectorised_body_still_raises():
    def bad(x):
        total = 0.0
        for i in range(x.shape[0]):
            if x[i] > 5.0:
                raise ValueError("too large")
            total = total + x[i] * 2.0
        return total
    x = np.arange(4.0)
    compiled = gradc.compile(bad, x)
    assert compiled.value_and_grad(x)[0] == bad(x)
    with pytest.raises(ValueError, match="too large"):
        compiled.value_and_grad(np.array([0.0, 9.0, 1.0, 2.0]))


@pytest.mark.parametrize("f", KEPT, ids=lambda f: f.__name__)
def test_dependent_iterations_stay_a_loop(f):
    args = _arguments(f, np.random.default_rng(0))
    vectorised, _ = _both(f, args)
    assert _loops_in(vectorised.source, f.__name__) > 0, vectorised.source


def test_the_inner_loop_is_batched_and_the_outer_removed():
    args = _arguments(with_scale, np.random.default_rng(0))
    vectorised, looped = _both(with_scale, args, argnums=(0, 1))
    assert _loops_in(vectorised.source, "with_scale") < _loops_in(looped.source, "with_scale")
    for a, b in zip(vectorised.value_and_grad(*args)[1], looped.value_and_grad(*args)[1]):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("f", VECTORISED + KEPT, ids=lambda f: f.__name__)
def test_the_pass_on_the_graph_keeps_its_values(f):
    """The interpreter on the value-and-gradient graph before and after the pass; ``verify`` after."""
    args = _arguments(f, np.random.default_rng(3))
    graph = gradc.trace(f, *args)
    vg = optimize(ad.value_and_grad_graph(graph, [graph.inputs[0].name], name="vg"))
    after = vectorise_loops(vg)
    verify(after)
    for a, b in zip(evaluate(vg, *args), evaluate(after, *args)):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14)
    assert str(vectorise_loops(vg)) == str(after)  # deterministic


def test_a_batch_too_large_keeps_the_loop(monkeypatch):
    from gradc.passes import vectorise_loops as module
    monkeypatch.setattr(module, "MAX_BATCH_ELEMENTS", 4)
    args = _arguments(shifted_product, np.random.default_rng(0))
    graph = optimize(gradc.trace(shifted_product, *args))
    assert str(vectorise_loops(graph)) == str(graph)


@pytest.mark.parametrize("seed", range(100, 116))
def test_random_fill_programs_agree_with_their_loops(tmp_path, seed):
    """The fill-program generator's programs (``fill_programs.py``), vectorised or not, agree."""
    import importlib.util
    import sys
    path = tmp_path / f"vectorised_program_{seed}.py"
    path.write_text(program(random.Random(seed)))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (5, 4) if "def f(X)" in path.read_text() else 9)
    vectorised, looped = _both(module.f, (x,))
    value, grad = vectorised.value_and_grad(x)
    value_loop, grad_loop = looped.value_and_grad(x)
    np.testing.assert_allclose(value, value_loop, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(grad, grad_loop, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(value, module.f(x.copy()), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, _central(module.f, x), rtol=1e-5, atol=1e-6)


def branch_after_fill(x, y, m):  # found by tests/test_random_integer_programs.py: the branch's cotangent is a
    n = x.shape[0]               # broadcast constant on one side, and was written in place (read-only)
    v1 = np.zeros(n)
    for i in range(n):
        v1[i] = np.tanh(x[-1 - i]) * (i & 1) + y[(i + m) % n]
    if m > 0:
        v2 = x ** 2 * 2.0
    else:
        v2 = v1 * 3.5
    return np.sum(v2) + np.sum(y)


@pytest.mark.parametrize("m", [5, -2])
def test_a_branch_result_that_is_a_broadcast_constant_is_not_written_in_place(m):
    rng = np.random.default_rng(1)
    x, y, traced_m = rng.uniform(-1.0, 1.0, 6), rng.uniform(-1.0, 1.0, 6), np.array(m)
    compiled = gradc.compile(branch_after_fill, x, y, traced_m, argnums=(0, 1))
    value, (gx, gy) = compiled.value_and_grad(x, y, traced_m)
    np.testing.assert_allclose(value, branch_after_fill(x, y, m), rtol=1e-12)
    np.testing.assert_allclose(gx, _central(lambda v: branch_after_fill(v, y, m), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, _central(lambda v: branch_after_fill(x, v, m), y), rtol=1e-6, atol=1e-8)
