"""Split mode through deep recursions (``gradc.transforms.call_residuals``): a helper whose calls nest deeper than
one level is split when its forward's costly work outweighs the residuals it passes (every level's forward then
runs once), its residuals packed into one array past PACK_LIMIT so their number stays bounded per level; the
gradients equal joint mode's, the user's function and central differences, on both targets."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.ir.graph import subgraphs
from gradc.passes import optimize
from gradc.transforms import call_residuals
from gradc.transforms.reverse import value_and_grad_graph

TARGETS = ["numpy"] + (["c"] if c_build.find_compiler() is not None else [])


def _module(source: str, name: str, tmp_path):
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _program(seed: int, depth: int) -> str:
    """A recursion on a static depth doing transcendental work at every level, from two call sites per level (one
    in a loop), called by ``main`` (seeded constants and functions)."""
    rng = np.random.default_rng(seed)
    fns = [str(rng.choice(["np.tanh", "np.sin", "np.exp"])) for _ in range(3)]
    a, b = (round(float(v), 3) for v in rng.uniform(0.2, 0.8, 2))
    return "\n".join([
        "import numpy as np", "",
        "def rec(v, w, depth):",
        "    if depth == 0:",
        f"        return {fns[0]}(v * {a}) * w",
        f"    u = {fns[1]}(rec(v * {b}, w, depth - 1) + v)",
        "    total = 0.0",
        "    for k in range(3):",
        f"        total = total + {fns[2]}(rec(u * 0.5 + w * k, v, depth - 1) * {a})",
        "    return np.tanh(u * total + w)", "",
        "def main(x, y):",
        f"    return np.sum(rec(x, y, {depth}) * x)", ""])


def _calls(graph):
    """``(call equation, inside an adjoint)`` for every call reachable from ``graph``."""
    found, pending, seen = [], [(graph, False)], set()
    while pending:
        g, in_adjoint = pending.pop()
        if id(g) in seen:
            continue
        seen.add(id(g))
        for e in g.eqns:
            if e.op == "call":
                found.append((e, in_adjoint))
            pending.extend((sub, in_adjoint or bool(e.params.get("adjoint"))) for sub in subgraphs(e))
    return found


@pytest.mark.parametrize("seed,depth", [(0, 3), (1, 4), (2, 5)])
def test_every_level_of_a_costly_recursion_runs_its_forward_once(seed, depth, tmp_path):
    main = _module(_program(seed, depth), f"deep_split_{seed}", tmp_path).main
    x, y = np.array([0.3, -0.5, 0.2]), np.array([0.4, 0.1, -0.3])
    g = optimize(value_and_grad_graph(gradc.trace(main, x, y), ["x", "y"]))
    found = _calls(g)
    assert found
    again = [e.params["helper"] for e, in_adjoint in found if in_adjoint and not e.params.get("adjoint")]
    assert again == []
    # each split forward passes a bounded number of residual arrays, whatever the depth below it (unpacked, this
    # program's grew as 3 ** depth: 55 outputs at depth 2, 4735 at 6)
    widest = max(len(e.params["body"].outputs) for e, _ in found if e.params["helper"].endswith("_forward"))
    assert widest <= 20, widest


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("target", TARGETS)
def test_deep_split_gradients_equal_joint_mode_and_differences(seed, target, tmp_path, monkeypatch):
    depth = 2 + seed % 3
    main = _module(_program(seed, depth), f"deep_split_values_{seed}", tmp_path).main
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(-0.6, 0.6, 3), rng.uniform(-0.6, 0.6, 3)
    value, grads = gradc.compile(main, x, y, argnums=(0, 1), target=target).value_and_grad(x, y)
    monkeypatch.setattr(call_residuals, "SPLIT", False)
    joint_value, joint_grads = gradc.compile(main, x, y, argnums=(0, 1), target=target).value_and_grad(x, y)
    np.testing.assert_allclose(value, main(x, y), rtol=1e-12, atol=1e-12)
    numeric = [central_gradient(lambda v: main(v, y), x), central_gradient(lambda v: main(x, v), y)]
    for grad, joint, fd in zip(grads, joint_grads, numeric):
        np.testing.assert_allclose(grad, joint, rtol=1e-11, atol=1e-12)
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("limit", [0, 2, 1000])
def test_packed_residuals_give_the_unpacked_gradients(limit, tmp_path, monkeypatch):
    """PACK_LIMIT 0 packs every residual of a dtype, 1000 none: the same numbers."""
    monkeypatch.setattr(call_residuals, "PACK_LIMIT", limit)
    main = _module(_program(7, 3), f"deep_split_pack_{limit}", tmp_path).main
    x, y = np.array([0.25, -0.35]), np.array([0.15, 0.45])
    grads = gradc.compile(main, x, y, argnums=(0, 1)).grad(x, y)
    np.testing.assert_allclose(grads[0], central_gradient(lambda v: main(v, y), x), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(grads[1], central_gradient(lambda v: main(x, v), y), rtol=1e-6, atol=1e-7)


def _cofactor(M):
    n = M.shape[0]
    if n == 1:
        return M[0, 0]
    total = 0.0
    for j in range(n):
        minor = np.delete(np.delete(M, 0, axis=0), j, axis=1)
        total = total + (-1.0) ** j * M[0, j] * _cofactor(minor)
    return total


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [3, 5, 6])
def test_cofactor_determinant_gradient(target, n):
    A = np.random.default_rng(n).uniform(-1, 1, (n, n))
    grad = gradc.compile(_cofactor, A, target=target).grad(A)
    np.testing.assert_allclose(grad, np.linalg.det(A) * np.linalg.inv(A).T, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(_cofactor, A), rtol=1e-6, atol=1e-8)
