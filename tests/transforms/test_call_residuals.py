"""Split mode for helpers' adjoints (``gradc.transforms.call_residuals``): the helper's forward returns what its
adjoint reads, so no forward runs twice, and the results equal joint mode's (the adjoint recomputing the
forward), the user's function and central differences, on random programs of helpers called from loops, from
each other and recursively, on the NumPy and C targets, to second order."""
from __future__ import annotations

import importlib.util
import pathlib

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.ir.graph import subgraphs
from gradc.passes import optimize
from gradc.transforms import call_residuals
from gradc.transforms.reverse import value_and_grad_graph

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler")

UNARY = ["np.sin({})", "np.exp({} * 0.3)", "np.tanh({})", "({} ** 2 * 0.4)", "np.sqrt({} * {} + 1.0)"]
BINARY = ["({} + {})", "({} * {})", "({} - 0.7 * {})"]


def _expr(rng, names, depth=2) -> str:
    if depth == 0 or rng.random() < 0.25:
        return str(rng.choice(names))
    if rng.random() < 0.5:
        form = str(rng.choice(UNARY))
        inner = _expr(rng, names, depth - 1)
        return form.format(*([inner] * form.count("{}")))
    return str(rng.choice(BINARY)).format(_expr(rng, names, depth - 1), _expr(rng, names, depth - 1))


def program(seed: int) -> str:
    """A module: helpers (one calling another, one with a loop calling a helper per iteration, one recursive
    on a static depth) and ``main`` calling them from several places and from a loop."""
    rng = np.random.default_rng(seed)
    lines = ["import numpy as np", "",
             "def g(v, w):", f"    return np.tanh({_expr(rng, ['v', 'w'])})", "",
             "def h(v, w):", f"    a = g(v, w) * {_expr(rng, ['v', 'w'], 1)}",
             "    return np.tanh(a + g(a, v) * 0.5)", "",
             "def looped(v, w):", "    total = v * 0.0",
             "    for i in range(3):", f"        total = total + g(total * 0.5 + w, v) * {_expr(rng, ['v'], 1)}",
             "    return np.tanh(total)", "",
             "def rec(v, depth):", "    if depth == 0:", f"        return np.tanh({_expr(rng, ['v'])})",
             "    return np.tanh(rec(np.sin(v) * 0.9, depth - 1) * 0.5 + v * rec(v * 0.5, depth - 1))", "",
             "def main(x, y):", "    u = h(x, y)", "    u = u + looped(u, x)",
             f"    u = u * h(np.cos(x), {_expr(rng, ['y', 'u'], 1)})",
             f"    u = u + rec(u, {int(rng.integers(1, 3))})",
             "    s = 0.0", "    for k in range(2):", "        s = s + np.sum(g(u, y) * x)",
             "    return np.sum(u * u) * 0.1 + s", ""]
    return "\n".join(lines)


def load(seed: int, tmp_path):
    path = tmp_path / f"residuals_program_{seed}.py"
    path.write_text(program(seed))
    spec = importlib.util.spec_from_file_location(f"residuals_program_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _inputs(seed):
    rng = np.random.default_rng(500 + seed)
    return rng.uniform(-0.7, 0.7, 3), rng.uniform(-0.7, 0.7, 3)


def _value_and_grads(f, args, target, split, monkeypatch):
    monkeypatch.setattr(call_residuals, "SPLIT", split)
    compiled = gradc.compile(f, *args, argnums=(0, 1), target=target)
    value, grads = compiled.value_and_grad(*args)
    return value, grads


@pytest.mark.parametrize("seed", range(6))
def test_split_mode_equals_joint_mode_the_function_and_differences(seed, tmp_path, monkeypatch):
    f = load(seed, tmp_path)
    x, y = _inputs(seed)
    targets = ["numpy"] + (["c"] if seed < 3 and c_build.find_compiler() is not None else [])
    expected = f(x, y)
    numeric = [central_gradient(lambda v: f(v, y), x), central_gradient(lambda v: f(x, v), y)]
    for target in targets:
        value, grads = _value_and_grads(f, (x, y), target, True, monkeypatch)
        joint_value, joint_grads = _value_and_grads(f, (x, y), target, False, monkeypatch)
        np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-12)
        for g, joint, fd in zip(grads, joint_grads, numeric):
            np.testing.assert_allclose(g, joint, rtol=1e-12, atol=1e-13)
            np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


def _bodies(graph):
    """``(call equation, the graph holding it, inside an adjoint loop)`` for every call reachable from ``graph``."""
    found, pending, seen = [], [(graph, False)], set()
    while pending:
        g, in_adjoint = pending.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        for e in g.eqns:
            adjoint = bool(e.params.get("adjoint"))
            if e.op == "call":
                found.append((e, g, in_adjoint))
            pending.extend((sub, in_adjoint or adjoint) for sub in subgraphs(e))
    return found


def test_no_helper_forward_runs_in_an_adjoint(tmp_path):
    f = load(0, tmp_path)
    x, y = _inputs(0)
    g = optimize(value_and_grad_graph(gradc.trace(f, x, y), ["x", "y"]))
    found = _bodies(g)
    assert found
    # every call an adjoint (a helper's or a loop's reverse sweep) makes is to another adjoint: the forward values
    # it needs come in as arguments (residuals, or a loop's tape), never from running the forward again
    again = [e.params["helper"] for e, _, in_adjoint in found if in_adjoint and not e.params.get("adjoint")]
    assert again == []
    # the top level runs each helper's forward once, the one returning the residuals (merged with the value's)
    top = [e.params["helper"] for e in g.eqns if e.op == "call" and not e.params.get("adjoint")]
    assert all(name.endswith("_forward") for name in top), top
    assert top.count("h_forward") == 2 and top.count("looped_forward") == 1, top


def test_joint_mode_recomputes_what_split_mode_reads(tmp_path, monkeypatch):
    """The comparison the tests above rest on is not vacuous: joint mode does run forwards inside adjoints."""
    monkeypatch.setattr(call_residuals, "SPLIT", False)
    f = load(0, tmp_path)
    x, y = _inputs(0)
    g = optimize(value_and_grad_graph(gradc.trace(f, x, y), ["x", "y"]))
    assert any(in_adjoint and not e.params.get("adjoint") for e, _, in_adjoint in _bodies(g))


def _smooth(v):
    return np.sin(v) * v + np.exp(v * 0.5)


def _outer(v):
    total = v * 0.0
    for _ in range(3):
        total = total + _smooth(total + v)
    return np.sum(_smooth(v) * v) + np.sum(total)


@pytest.mark.parametrize("target", ["numpy", pytest.param("c", marks=needs_cc)])
def test_second_order_through_split_helpers(target):
    x = np.array([0.3, -0.4, 0.8])
    hess = gradc.compile(_outer, x, mode="hessian", target=target).hessian(x)
    grad = gradc.compile(_outer, x, target="numpy").grad
    numeric = np.stack([central_gradient(lambda v, k=k: grad(v)[k], x) for k in range(3)])
    np.testing.assert_allclose(hess, numeric, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grad(x), central_gradient(_outer, x), rtol=1e-7, atol=1e-8)


def _checked(v):
    if np.any(v < -1.0):
        raise ValueError("_checked needs v >= -1")
    return np.sqrt(v + 1.0)


def _uses_checked(v):
    total = 0.0
    for _ in range(2):
        total = total + np.sum(_checked(v) * v)
    return total + np.sum(_checked(v * 0.5))


@pytest.mark.parametrize("target", ["numpy", pytest.param("c", marks=needs_cc)])
def test_a_check_in_a_split_helper_still_raises(target):
    x = np.array([0.2, 0.5])
    c = gradc.compile(_uses_checked, x, target=target)
    np.testing.assert_allclose(c.grad(x), central_gradient(_uses_checked, x), rtol=1e-7)
    with pytest.raises(ValueError, match="_checked needs v >= -1"):
        c.grad(np.array([0.2, -3.0]))
    with pytest.raises(ValueError, match="_checked needs v >= -1"):
        c.value_and_grad(np.array([-3.0, 0.5]))


def _cheap(v, w):
    return v * w + v * 0.5 - (w * v) * v + w * 0.25


def _costly(v, w):
    return np.tanh(v * w) + np.exp(v * 0.1)


def _loop_over(helper):
    def f(x, y):
        total = x * 0.0
        for _ in range(4):
            total = helper(total * 0.5 + x, y) * 0.9
        return np.sum(total * total)
    return f


@pytest.mark.parametrize("helper,taped", [(_cheap, False), (_costly, True)])
def test_a_loop_tapes_a_helpers_residuals_when_recomputing_them_costs_more(helper, taped):
    f = _loop_over(helper)
    x, y = np.array([0.3, -0.2]), np.array([0.5, 0.8])
    g = optimize(value_and_grad_graph(gradc.trace(f, x, y), ["x", "y"]))
    assert _bodies(g)  # the helper is a function, not inlined
    again = [e for e, _, in_adjoint in _bodies(g) if in_adjoint and not e.params.get("adjoint")]
    # transcendental work is taped (the reverse sweep reads it); a few products are recomputed instead
    assert (again == []) is taped
    grads = gradc.compile(f, x, y, argnums=(0, 1)).grad(x, y)
    np.testing.assert_allclose(grads[0], central_gradient(lambda v: f(v, y), x), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(grads[1], central_gradient(lambda v: f(x, v), y), rtol=1e-7, atol=1e-9)


def _cofactor_det():
    spec = importlib.util.spec_from_file_location("cofactor_example", pathlib.Path(__file__).resolve().parents[2]
                                                  / "examples" / "cofactor.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.det


@pytest.mark.parametrize("target", ["numpy"] + (["c"] if c_build.find_compiler() is not None else []))
def test_a_deep_recursion_emits_code_linear_in_its_depth(target):
    """Splitting every level of a recursive helper multiplied the emitted code per level (det at size 11: 753 KB of
    NumPy, 3.1 MB of C, a minute of gcc): the module must grow by about the same amount per size, three functions
    per level at most."""
    import re
    det = _cofactor_det()
    sizes, functions = [], []
    for n in (6, 8, 10):
        source = gradc.compile(det, np.random.default_rng(n).standard_normal((n, n)), target=target).source
        sizes.append(len(source))
        functions.append(len(re.findall(r"^def \w+|^(?:static )?\w+ \w+\([^;]*\)\s*$", source, re.M)))
    assert sizes[2] - sizes[1] <= 1.5 * (sizes[1] - sizes[0]), sizes
    assert functions[2] - functions[1] <= 6 and functions[1] - functions[0] <= 6, functions
