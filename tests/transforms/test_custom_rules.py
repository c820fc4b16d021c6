"""User-written derivative rules (custom_vjp, custom_jvp) and stop_gradient, checked against
finite differences or the rule's own formula evaluated in NumPy (never only against gradc)."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.errors import MissingRuleError, TraceError


def central_grad(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def make_softplus():
    @gradc.custom_vjp
    def softplus(x):
        return np.log1p(np.exp(x))

    def fwd(x):
        return np.log1p(np.exp(x)), (1.0 / (1.0 + np.exp(-x)),)

    softplus.defvjp(fwd, lambda res, g: (g * res[0],))
    return softplus


def test_custom_vjp_gradient_matches_finite_differences():
    softplus = make_softplus()
    f = lambda x: np.sum(softplus(x) * np.arange(1.0, 5.0))  # noqa: E731
    x = np.array([-2.0, -0.1, 0.3, 3.0])
    g = gradc.grad(f)(x)
    plain = lambda x: np.sum(np.log1p(np.exp(x)) * np.arange(1.0, 5.0))  # noqa: E731
    np.testing.assert_allclose(g, central_grad(plain, x), rtol=1e-8)


def test_custom_vjp_rule_is_used_not_the_ops_derivative():
    @gradc.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, ()), lambda res, g: (np.clip(g, -1.0, 1.0),))
    g = gradc.grad(lambda x: np.sum(clip_gradient(x) * np.array([5.0, -0.5, -3.0])))(np.ones(3))
    np.testing.assert_array_equal(g, np.clip([5.0, -0.5, -3.0], -1.0, 1.0))
    source = gradc.compile(lambda x: np.sum(clip_gradient(x) * np.sin(x)), np.ones(2)).source
    assert "np.clip" in source  # the user's rule is inlined in the emitted gradient


def test_custom_vjp_second_order_and_several_arguments():
    @gradc.custom_vjp
    def mul_add(x, y, k):
        return x * y + k

    mul_add.defvjp(lambda x, y, k: (x * y + k, (x, y)), lambda res, g: (g * res[1], g * res[0], None))
    f = lambda x, y: np.sum(mul_add(x, y, 2) ** 2)  # noqa: E731
    x, y = np.array([0.5, -1.0]), np.array([2.0, 0.25])
    gx, gy = gradc.grad(f, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(gx, 2 * (x * y + 2) * y)
    np.testing.assert_allclose(gy, 2 * (x * y + 2) * x)
    # second order through the rule's own (differentiable) NumPy code
    hx = gradc.grad(lambda x, y: np.sum(gradc.grad(f)(x, y) * y))(x, y)
    np.testing.assert_allclose(hx, 2 * y * y * y, rtol=1e-12)


def test_custom_vjp_under_forward_mode_is_a_clear_error():
    softplus = make_softplus()
    with pytest.raises(MissingRuleError, match="custom reverse-mode rule .* no forward-mode rule"):
        gradc.jvp(lambda x: softplus(x), (np.ones(2),), (np.ones(2),))
    with pytest.raises(MissingRuleError, match="custom_jvp"):
        gradc.hvp(lambda x: np.sum(softplus(x)), (np.ones(2),), (np.ones(2),))


def test_custom_vjp_mistakes_are_named():
    @gradc.custom_vjp
    def f(x):
        return x

    with pytest.raises(TraceError, match="without a rule"):
        gradc.grad(lambda x: np.sum(f(x)))(np.ones(2))
    f.defvjp(lambda x: x, lambda res, g: (g,))
    with pytest.raises(TraceError, match=r"must return \(value, residuals\)"):
        gradc.grad(lambda x: np.sum(f(x)))(np.ones(2))
    f.defvjp(lambda x: (x, ()), lambda res, g: (g[:1],))
    with pytest.raises(TraceError, match="has shape"):
        gradc.grad(lambda x: np.sum(f(x)))(np.ones(2))
    f.defvjp(lambda x: (x, ()), lambda res, g: (g, g))
    with pytest.raises(gradc.ArgumentError, match="returned 2 cotangents for 1 arguments"):
        gradc.grad(lambda x: np.sum(f(x)))(np.ones(2))


def make_safe_norm():
    @gradc.custom_jvp
    def safe_norm(x):
        return np.sqrt(np.sum(x * x))

    def rule(primals, tangents):
        (x,), (dx,) = primals, tangents
        n = np.sqrt(np.sum(x * x))
        return n, np.sum(x * dx) / np.maximum(n, 1e-12)

    safe_norm.defjvp(rule)
    return safe_norm


def test_custom_jvp_forward_and_transposed_reverse():
    safe_norm = make_safe_norm()
    x, v = np.array([3.0, -4.0, 1.0]), np.array([0.5, 1.0, -2.0])
    plain = lambda x: np.sqrt(np.sum(x * x))  # noqa: E731
    _, dot = gradc.jvp(safe_norm, (x,), (v,))
    np.testing.assert_allclose(dot, central_grad(plain, x) @ v, rtol=1e-8)
    np.testing.assert_allclose(gradc.grad(safe_norm)(x), central_grad(plain, x), rtol=1e-8)
    # at zero the rule (not the ops, whose derivative is nan there) gives the gradient
    assert np.all(np.isfinite(gradc.grad(safe_norm)(np.zeros(3))))
    # the vjp is the transpose of the jvp
    _, pullback = gradc.vjp(safe_norm, x)
    assert abs(float(pullback(1.7)[0] @ v) - 1.7 * float(dot)) < 1e-12


def test_custom_jvp_hessian_vector_product():
    safe_norm = make_safe_norm()
    x, v = np.array([1.0, 2.0, 2.0]), np.array([1.0, 0.0, -1.0])
    n = 3.0
    hess = (np.eye(3) - np.outer(x, x) / n ** 2) / n
    np.testing.assert_allclose(gradc.hvp(safe_norm, (x,), (v,)), hess @ v, rtol=1e-10)


def test_custom_jvp_with_a_static_argument():
    @gradc.custom_jvp
    def scaled(x, k):
        return np.sin(x) * k

    scaled.defjvp(lambda p, t: (np.sin(p[0]) * p[1], np.cos(p[0]) * t[0] * p[1]))
    x = np.array([0.2, 1.0])
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(scaled(x, 3)))(x), 3 * np.cos(x))
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(scaled(x, 5)))(x), 5 * np.cos(x))


def test_stop_gradient_in_both_modes():
    f = lambda x: np.sum(x * gradc.stop_gradient(x))  # noqa: E731
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(gradc.grad(f)(x), x)  # not 2x
    _, dot = gradc.jvp(f, (x,), (np.ones(2),))
    assert float(dot) == float(np.sum(x))
    np.testing.assert_array_equal(gradc.stop_gradient(x), x)  # on plain arrays: the value
    c = gradc.compile(f, x, target="c") if _have_cc() else None
    if c is not None:
        np.testing.assert_allclose(c.grad(x), x)


def _have_cc():
    import shutil

    return shutil.which("cc") is not None or shutil.which("gcc") is not None


def test_checkpoint_recomputes_the_block_in_the_backward_sweep():
    @gradc.checkpoint
    def block(x, w):
        h = np.tanh(x * w)
        return np.sin(h) * h

    def plain(x, w):
        h = np.tanh(x * w)
        return np.sin(h) * h

    f = lambda x, w: np.sum(block(x, w) ** 2)  # noqa: E731
    x, w = np.array([0.3, -0.5, 1.2]), np.array([1.5, 0.7, -0.2])
    gx = gradc.grad(f)(x, w)
    np.testing.assert_allclose(gx, central_grad(lambda v: np.sum(plain(v, w) ** 2), x), rtol=1e-8)
    compiled = gradc.compile(f, x, w, wrt=(0, 1))
    grad_source = compiled.source.split("def lambda__grad(")[1].split("\n\n\n")[0]
    forward, backward = grad_source.split("# backward")
    assert forward.count("np.tanh(") == 1 and backward.count("np.tanh(") == 1  # the block runs again
    # forward mode, second order and the Hessian treat the block like plain code
    _, dot = gradc.jvp(lambda v: block(v, w), (x,), (np.ones(3),))
    _, expected = gradc.jvp(lambda v: plain(v, w), (x,), (np.ones(3),))
    np.testing.assert_allclose(dot, expected, rtol=1e-13)
    np.testing.assert_allclose(gradc.hessian(lambda v: f(v, w))(x),
                               gradc.hessian(lambda v: np.sum(plain(v, w) ** 2))(x), rtol=1e-12)
    if _have_cc():
        c = gradc.compile(f, x, w, wrt=(0, 1), target="c")
        np.testing.assert_allclose(c.grad(x, w)[0], gx, rtol=1e-12)


def test_stop_gradient_on_the_eager_facade_tape():
    """A recorded composite holding stop_gradient: the tape tells the stopped copy from its input."""
    import gradc.torch as torch
    from gradc.facade.record import record
    from gradc.ops import elementwise as ew

    x = torch.tensor([0.5, 1.0], dtype=torch.float64, requires_grad=True)
    y = record("TestBackward0", lambda v: (lambda e: ew.add(e, gradc.stop_gradient(e)))(ew.exp(v)), [x])
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]), rtol=1e-15)  # not 2 exp(x), not None
