"""Forward mode and the derivative API: jvp, vjp and hvp against finite differences and each other.

Every case of the per-op table (``op_cases``) is checked three ways:
``jvp`` against a central difference of the NumPy function along a random
tangent; ``vjp`` against the same directional derivative through the
dot-product identity ``<vjp(u), v> = <u, jvp(v)>``; and the emitted code against
the reference interpreter on the same graphs.
"""
from __future__ import annotations

import numpy as np
import pytest
from op_cases import DIFF_CASES, NONDIFF_CASES, as_float64, assert_close, is_float_input, make_inputs, seed_of

import gradc
from gradc.errors import ArgumentError
from gradc.passes import optimize
from gradc.trace import trace
from gradc.transforms import forward


def central(fn, args, direction, h=1e-6):
    """d/dt fn(args + t v) at 0, float64 NumPy (the independent reference)."""
    def at(t):
        shifted = [as_float64(a) + t * v if v is not None else as_float64(a) for a, v in zip(args, direction)]
        return np.asarray(fn(*shifted), dtype=np.float64)
    return (at(h) - at(-h)) / (2 * h)


def random_tangents(args, rng):
    return [rng.standard_normal(np.shape(a)).astype(np.asarray(a).dtype) if is_float_input(a) else None
            for a in args]


def tangent_args(args, tangents):
    """What ``jvp`` takes: a tangent for every primal (zeros of the primal's kind for non-float ones)."""
    out = []
    for a, t in zip(args, tangents):
        if t is None:
            out.append(np.zeros_like(a) if isinstance(a, np.ndarray) else 0)
        else:
            out.append(float(t) if isinstance(a, float) else t)
    return out


# a custom_vjp rule has no forward mode (a clear error, tested in test_custom_rules.py)
FORWARD_CASES = [c for c in DIFF_CASES if c.id != "custom_vjp_rule"]


@pytest.mark.parametrize("case", FORWARD_CASES, ids=lambda c: c.id)
def test_jvp_matches_central_differences(case):
    args = make_inputs(case)
    rng = np.random.default_rng(seed_of(case.id) + 7)
    tangents = random_tangents(args, rng)
    out, out_dot = gradc.jvp(case.fn, tuple(args), tuple(tangent_args(args, tangents)))
    assert_close(out, case.fn(*args), rtol=1e-12, atol=1e-12, what="jvp's value")
    expected = central(case.fn, args, tangents)
    scale = 1.0 + float(np.max(np.abs(expected))) if np.size(expected) else 1.0
    assert np.shape(out_dot) == np.shape(expected)
    assert_close(out_dot, expected, rtol=max(case.rtol, 1e-6) * 10, atol=max(case.rtol, 1e-6) * 10 * scale,
                 what="jvp against central differences")


@pytest.mark.parametrize("case", FORWARD_CASES, ids=lambda c: c.id)
def test_vjp_and_jvp_are_transposes(case):
    """<vjp(u), v> == <u, jvp(v)> to rounding, and both agree with a central difference of <u, f>."""
    args = make_inputs(case)
    rng = np.random.default_rng(seed_of(case.id) + 8)
    tangents = random_tangents(args, rng)
    out, pullback = gradc.vjp(case.fn, *args)
    u = rng.standard_normal(np.shape(out))
    u = float(u) if np.ndim(out) == 0 else u.astype(np.asarray(out).dtype)
    grads = pullback(u)
    assert len(grads) == len(args)
    lhs = sum(float(np.sum(np.asarray(g, np.float64) * t)) for g, t in zip(grads, tangents) if t is not None)
    _, out_dot = gradc.jvp(case.fn, tuple(args), tuple(tangent_args(args, tangents)))
    rhs = float(np.sum(np.asarray(u, np.float64) * np.asarray(out_dot, np.float64)))
    tol = 1e-10 if all(np.asarray(a).dtype != np.float32 for a in args) else 1e-4
    assert abs(lhs - rhs) <= tol * (1.0 + abs(lhs)), (lhs, rhs)
    fd = float(np.sum(np.asarray(u, np.float64) * central(case.fn, args, tangents)))
    assert abs(lhs - fd) <= max(case.rtol, 1e-6) * 10 * (1.0 + abs(fd)), (lhs, fd)


@pytest.mark.parametrize("case", NONDIFF_CASES, ids=lambda c: c.id)
def test_nondiff_ops_have_zero_tangents(case):
    args = make_inputs(case)
    tangents = random_tangents(args, np.random.default_rng(3))
    _, out_dot = gradc.jvp(case.fn, tuple(args), tuple(tangent_args(args, tangents)))
    assert not np.any(out_dot)
    assert not np.any(central(case.fn, args, tangents))


def test_jvp_is_one_forward_sweep_without_the_placeholder():
    """The emitted tangent code is what one would write: no zero cotangent, no dead arithmetic."""
    g = optimize(forward.jvp_graph(trace(lambda x, w: np.tanh(x @ w), np.ones((3, 4)), np.ones((4, 2))), ["w"]))
    ops = [e.op for e in g.eqns]
    assert ops.count("matmul") == 2 and "broadcast_to" not in ops[:3]
    assert all(not (e.op == "mul" and any(getattr(a, "value", 1) == 0 for a in e.inputs)) for e in g.eqns)
    names = [e.out.name for e in g.eqns]
    assert names.index("t0_dot") < names.index("t1")  # interleaved: each tangent right after its primal


def test_multiple_outputs_and_static_arguments():
    def f(x, n):
        return np.sin(x[:n]), np.sum(x ** 2)

    x, v = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    (s, q), (s_dot, q_dot) = gradc.jvp(f, (x, 2), (v, 0))
    assert_close(s_dot, np.cos(x[:2]) * v[:2])
    assert_close(q_dot, np.sum(2 * x * v))
    out, pullback = gradc.vjp(f, x, 2)
    gx, gn = pullback((np.ones(2), 1.0))
    assert gn is None
    assert_close(gx, np.array([np.cos(0.3), np.cos(-1.2), 0.0]) + 2 * x)


@pytest.mark.parametrize("fn, x", [
    (lambda x: np.sum(np.sin(x) * x ** 2), np.array([0.3, -0.7, 1.1])),
    (lambda x: np.log(np.sum(np.exp(x))), np.array([0.1, 2.0, -1.0, 0.5])),
    (lambda x: np.sum((x[1:] - x[:-1] ** 2) ** 2 * 100 + (1 - x[:-1]) ** 2), np.array([0.5, 1.5, -0.3, 0.9])),
    (lambda x: np.prod(np.tanh(x) + 2.0), np.array([0.2, -0.4, 0.9])),
])
def test_hvp_matches_differences_of_the_gradient(fn, x):
    rng = np.random.default_rng(0)
    v = rng.standard_normal(x.shape)
    grad = gradc.grad(fn)
    h = 1e-5
    expected = (grad(x + h * v) - grad(x - h * v)) / (2 * h)
    assert_close(gradc.hvp(fn, (x,), (v,)), expected, rtol=1e-6, atol=1e-7)
    # the full Hessian by second differences of f itself (no gradc in the reference)
    n = x.size
    eye = np.eye(n)
    hess = np.array([[(fn(x + h * eye[i] + h * eye[j]) - fn(x + h * eye[i] - h * eye[j])
                       - fn(x - h * eye[i] + h * eye[j]) + fn(x - h * eye[i] - h * eye[j])) / (4 * h * h)
                      for j in range(n)] for i in range(n)])
    assert_close(gradc.hvp(fn, (x,), (v,)), hess @ v, rtol=1e-4, atol=1e-4)


def test_third_order_jvp_of_hvp():
    f = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    x, v = np.array([0.4, 1.3]), np.array([1.0, -0.5])
    # d/dt H(x + t v) v = third derivative contracted twice; for this separable f:
    # f''' = -3 sin(x) - x cos(x) elementwise
    _, third = gradc.jvp(lambda y: gradc.hvp(f, (y,), (v,)), (x,), (v,))
    assert_close(third, (-3 * np.sin(x) - x * np.cos(x)) * v * v, rtol=1e-10)


def test_compositions_grad_of_jvp_and_jvp_of_grad():
    v = np.array([0.5, -1.0, 2.0])
    f = lambda x: np.sum(np.exp(0.3 * x) * x)  # noqa: E731
    x = np.array([0.1, 0.7, -0.4])
    d2 = (0.09 * x + 0.6) * np.exp(0.3 * x)  # f'' elementwise
    g = gradc.grad(lambda y: gradc.jvp(f, (y,), (v,))[1])(x)  # d/dx <grad f, v> = H v
    assert_close(g, d2 * v, rtol=1e-12)
    _, hv = gradc.jvp(gradc.grad(f), (x,), (v,))
    assert_close(hv, d2 * v, rtol=1e-12)
    _, pullback = gradc.vjp(gradc.grad(f), x)
    assert_close(pullback(v)[0], d2 * v, rtol=1e-12)


def test_jvp_errors_name_the_problem():
    with pytest.raises(ArgumentError, match="tangent of 'x' has shape"):
        gradc.jvp(lambda x: np.sin(x), (np.ones(3),), (np.ones(2),))
    with pytest.raises(ArgumentError, match="one tangent per primal"):
        gradc.jvp(lambda x, y: x * y, (1.0, 2.0), (1.0,))
    with pytest.raises(ArgumentError, match="must be a tuple"):
        gradc.jvp(lambda x: x, np.ones(2), np.ones(2))
    with pytest.raises(gradc.ShapeError, match="hvp needs a scalar output"):
        gradc.hvp(lambda x: x * 2, (np.ones(2),), (np.ones(2),))
    _, pullback = gradc.vjp(lambda x: (x, x), np.ones(2))
    with pytest.raises(ArgumentError, match="has 3 parts, the output 2"):
        pullback((np.ones(2), np.ones(2), np.ones(2)))


def test_emitted_jvp_is_cached_and_readable():
    def f(x):
        return np.sum(np.sin(x))

    x = np.ones(3)
    gradc.jvp(f, (x,), (x,))
    from gradc.derivatives.transforms import _CACHE

    entries = list(_CACHE[f].values())
    assert len(entries) == 1
    gradc.jvp(f, (2 * x,), (x,))
    assert len(_CACHE[f]) == 1
    source = entries[0].source
    assert "def f_jvp(x, x_dot):" in source and "np.cos(x)" in source
    compile(source, "<jvp>", "exec")


def _constants(graph):
    from gradc.ir.graph import Const, subgraphs
    found, todo = [], [graph]
    while todo:
        g = todo.pop()
        for e in g.eqns:
            found += [a for a in e.inputs if isinstance(a, Const)]
            todo.extend(subgraphs(e))
    return found


def test_tangents_of_large_values_hold_no_constant_the_size_of_the_data():
    """A derived tangent rule broadcasts ones to its output's shape; replayed onto the trace, that broadcast is
    recorded, not computed: compile time and memory do not grow with the data (GradBench ht's 10,000 vertices
    took 13 GB to compile when the ones were dense constants)."""
    def f(p, data):
        moved = np.transpose(data * p[0]) + p[1]
        return np.sum(np.tanh(moved), axis=0)
    data = np.random.default_rng(3).standard_normal((500, 3))
    jg = forward.jvp_graph(trace(f, np.array([0.4, -0.2]), data), ["p"])
    assert max((c.value.size for c in _constants(jg)), default=0) <= 64
    got = gradc.jacfwd(f)(np.array([0.4, -0.2]), data)
    h = 1e-6
    want = np.stack([(f(np.array([0.4 + h * (k == 0), -0.2 + h * (k == 1)]), data)
                      - f(np.array([0.4 - h * (k == 0), -0.2 - h * (k == 1)]), data)) / (2 * h) for k in range(2)], 1)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)
