"""Random programs whose helpers are called from several places, from each other and recursively (on a static
depth), checked against the user's Python function and central differences under every transform."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.numpy.calls import helper_bodies

UNARY = ["np.sin({})", "np.tanh({})", "({} * 0.5)", "np.cos({})", "({} ** 2 * 0.3)"]
BINARY = ["({} + {})", "({} * {})", "({} - 0.5 * {})"]


def _expr(rng, names, depth=2):
    if depth == 0 or rng.random() < 0.3:
        return str(rng.choice(names))
    if rng.random() < 0.5:
        return str(rng.choice(UNARY)).format(_expr(rng, names, depth - 1))
    return str(rng.choice(BINARY)).format(_expr(rng, names, depth - 1), _expr(rng, names, depth - 1))


def program(seed: int) -> str:
    """Source of a module: helpers h0..h2 (a loop, calls to earlier helpers), a recursive helper and ``main``."""
    rng = np.random.default_rng(seed)
    lines = ["import numpy as np", ""]
    for k in range(3):
        lines += [f"def h{k}(v, w):", f"    a = {_expr(rng, ['v', 'w'])}"]
        if k and rng.random() < 0.7:
            lines.append(f"    a = a + h{int(rng.integers(0, k))}(w, a) * 0.5")
        lines += ["    total = a * 0.0", "    for i in range(v.shape[0]):",
                  f"        total = total + {_expr(rng, ['a[i]', 'w[i]', 'v[i]'], 1)} * a",
                  "    return total * 0.1", ""]
    lines += ["def rec(v, depth):", "    if depth == 0:", f"        return {_expr(rng, ['v'])}",
              f"    return rec({_expr(rng, ['v'], 1)} * 0.9, depth - 1) * 0.5 + v * 0.3", ""]
    body = ["def main(x, y):", "    u = h0(x, y)", f"    u = u + h{int(rng.integers(0, 3))}(y, u)",
            f"    u = u * h{int(rng.integers(0, 3))}(np.sin(x), y)", "    u = u + h2(u, x)",
            f"    u = u + rec(u, {int(rng.integers(1, 4))}) + rec(x, 2)",
            "    return np.sum(u * u) + np.sum(u * y)", ""]
    return "\n".join(lines + body)


def load(seed: int, tmp_path):
    path = tmp_path / f"calls_program_{seed}.py"
    path.write_text(program(seed))
    spec = importlib.util.spec_from_file_location(f"calls_program_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


SEEDS = list(range(8))


def _inputs(seed):
    rng = np.random.default_rng(100 + seed)
    return rng.uniform(-0.8, 0.8, 4), rng.uniform(-0.8, 0.8, 4)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_program_keeps_helpers_and_agrees_in_reverse_mode(seed, tmp_path):
    main = load(seed, tmp_path)
    x, y = _inputs(seed)
    g = gradc.trace(main, x, y)
    names = {b.name.split("_")[0] for b in helper_bodies([g])}
    assert {"h0", "h2", "rec"} <= names, names
    compiled = gradc.compile(main, x, y, wrt=("x", "y"))
    assert "def h0(" in compiled.source
    value, (gx, gy) = compiled.value_and_grad(x, y)
    np.testing.assert_allclose(value, main(x, y), rtol=1e-10)
    np.testing.assert_allclose(gx, central_gradient(lambda a: main(a, y), x), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gy, central_gradient(lambda b: main(x, b), y), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("seed", SEEDS[:4])
def test_random_program_under_jvp_vjp_hessian_and_vmap(seed, tmp_path):
    main = load(seed, tmp_path)
    x, y = _inputs(seed)
    t = np.random.default_rng(seed).standard_normal(4)
    h = 1e-6
    value, tangent = gradc.jvp(main, (x, y), (t, np.zeros(4)))
    np.testing.assert_allclose(value, main(x, y), rtol=1e-10)
    np.testing.assert_allclose(tangent, (main(x + h * t, y) - main(x - h * t, y)) / (2 * h), rtol=1e-5, atol=1e-7)
    value, pull = gradc.vjp(main, x, y)
    gx, gy = pull(np.float64(1.0))
    np.testing.assert_allclose(gx, central_gradient(lambda a: main(a, y), x), rtol=1e-5, atol=1e-7)
    hess = gradc.hessian(main)(x, y)
    grad_x = gradc.grad(main)
    fd = np.stack([(grad_x(x + h * e, y) - grad_x(x - h * e, y)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(hess, fd, rtol=1e-4, atol=1e-6)
    xs = np.stack([x, x * 0.5, -x])
    np.testing.assert_allclose(gradc.vmap(main, in_axes=(0, None))(xs, y), [main(r, y) for r in xs], rtol=1e-10)
