"""Property tests: random compositions of ops, gradients against finite differences.

hypothesis builds expression trees over two inputs ``x: (2, 3)`` and ``y: (3,)``
from elementwise ops (each kept on a safe domain) and reductions; the gradient
gradc emits for ``sum(tree * ct)`` must match central differences of the same
tree run by NumPy, and the reference interpreter must agree with the emitted code.
"""
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gradc
from gradc.ir.interpret import evaluate

UNARY = {
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "arctan": np.arctan,
    "neg": lambda a: -a,
    "exp_tanh": lambda a: np.exp(np.tanh(a)),
    "log1p_sq": lambda a: np.log1p(a * a),
    "sqrt_1p": lambda a: np.sqrt(1.0 + a ** 2),
    "square": np.square,
    "scale": lambda a: 0.5 * a - 0.25,
    "expm1_small": lambda a: np.expm1(np.sin(a)),
    "sinh_small": lambda a: np.sinh(np.tanh(a)),
    "clip_wide": lambda a: np.clip(a, -50.0, 50.0),
    "cube": lambda a: a ** 3,
}
BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (1.0 + b * b),
    "logaddexp": np.logaddexp,
    "maximum": np.maximum,
    "minimum": np.minimum,
    "where": lambda a, b: np.where(a > b, a * b, a - b),
    "pow": lambda a, b: (1.0 + a * a) ** np.tanh(b),
}
REDUCE = {  # (2, 3) -> (3,), (3,) -> ()
    "sum": lambda a: np.sum(a, axis=0),
    "mean": lambda a: np.mean(a, axis=0),
    "max": lambda a: np.max(a, axis=0),
    "min": lambda a: a.min(axis=0),
    "prod": lambda a: np.prod(a, axis=0),
    "sum_keep": lambda a: np.sum(a, axis=0, keepdims=True)[0],
    "logsumexp": lambda a: np.log(np.sum(np.exp(a - np.max(a, axis=0)), axis=0)) + np.max(a, axis=0),
}

leaves = st.sampled_from(["x", "y", "x.T[:, 0]", "x[1]", "y[::-1]"])


def extend(children):
    return st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), children),
        st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), children, children),
        st.tuples(st.just("reduce"), st.sampled_from(sorted(REDUCE)), children),
    )


trees = st.recursive(leaves, extend, max_leaves=6)


def build(tree, x, y):
    if isinstance(tree, str):
        return {"x": x, "y": y, "x.T[:, 0]": x.T[:, 0], "x[1]": x[1], "y[::-1]": y[::-1]}[tree]
    kind, name, *kids = tree
    args = [build(k, x, y) for k in kids]
    if kind == "unary":
        return UNARY[name](args[0])
    if kind == "binary":
        return BINARY[name](*args)
    a = args[0]
    return REDUCE[name](a) if np.ndim(a) > 0 else a


def make_loss(tree):
    def loss(x, y, ct):
        return np.sum(build(tree, x, y) * ct)
    return loss


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees, seed=st.integers(0, 2 ** 32 - 1))
def test_random_composition_gradient_matches_finite_differences(tree, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, (2, 3))
    y = rng.uniform(-1.5, 1.5, 3)
    ct = rng.standard_normal(np.shape(build(tree, x, y)))
    loss = make_loss(tree)
    compiled = gradc.compile(loss, x, y, ct, wrt=("x", "y"))
    value, (gx, gy) = compiled.value_and_grad(x, y, ct)
    assert gx.shape == x.shape and gy.shape == y.shape
    np.testing.assert_allclose(value, loss(x, y, ct), rtol=1e-10, atol=1e-12)

    vx, vy = rng.standard_normal(x.shape), rng.standard_normal(y.shape)
    h = 1e-6
    fd = (loss(x + h * vx, y + h * vy, ct) - loss(x - h * vx, y - h * vy, ct)) / (2 * h)
    ad = float(np.sum(gx * vx) + np.sum(gy * vy))
    assert abs(ad - fd) <= 1e-5 * (1 + abs(fd)), (tree, ad, fd)

    outs = evaluate(compiled.value_and_grad_graph, x, y, ct)
    np.testing.assert_allclose(outs[1], gx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outs[2], gy, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- shape ops: trees of (2, 3) arrays
W = np.array([[0.5, -1.0, 0.25], [1.5, 0.3, -0.7], [0.2, 0.9, 1.1]])
IDX = np.array([[2, 0, 0], [1, 1, 2]])
SHAPE_OPS = {  # each maps a (2, 3) array to a (2, 3) array
    "flip_columns": lambda a: a[:, ::-1],
    "flip_rows": lambda a: a[::-1],
    "roll": lambda a: np.concatenate([a[:, 1:], a[:, :1]], axis=1),
    "reshape_transpose": lambda a: a.reshape(3, 2).T.reshape(2, 3),
    "stack_rows": lambda a: np.stack([a[1], a[0] * 0.5]),
    "broadcast_sum": lambda a: np.broadcast_to(a.sum(axis=0, keepdims=True), (2, 3)) + a,
    "matmul": lambda a: a @ W,
    "matmul_t": lambda a: (W @ a.T).T,
    "take_along": lambda a: np.take_along_axis(a, IDX, axis=1),
    "gather_rows": lambda a: a[np.array([1, 1])] + a,
    "expand_squeeze": lambda a: np.squeeze(np.expand_dims(a, 0), axis=0) * 2.0,
    "normalize": lambda a: a - np.mean(a, axis=1, keepdims=True),
    "softmax": lambda a: np.exp(a - np.max(a, axis=1, keepdims=True)) / np.sum(
        np.exp(a - np.max(a, axis=1, keepdims=True)), axis=1, keepdims=True),
    "outer_rows": lambda a: np.outer(a[0, :2], a[1]) * 0.5,
    "column_scale": lambda a: a * a[:, 1:2],
    "ellipsis": lambda a: a[..., ::-1][None][0],
}


def extend_shaped(children):
    return st.one_of(
        st.tuples(st.just("unary"), st.sampled_from(sorted(UNARY)), children),
        st.tuples(st.just("shape"), st.sampled_from(sorted(SHAPE_OPS)), children),
        st.tuples(st.just("binary"), st.sampled_from(sorted(BINARY)), children, children),
    )


shaped_trees = st.recursive(st.just("x"), extend_shaped, max_leaves=4)


def build_shaped(tree, x):
    if tree == "x":
        return x
    kind, name, *kids = tree
    args = [build_shaped(k, x) for k in kids]
    if kind == "unary":
        return UNARY[name](args[0])
    if kind == "shape":
        return SHAPE_OPS[name](args[0])
    return BINARY[name](*args)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=shaped_trees, seed=st.integers(0, 2 ** 32 - 1))
def test_random_shape_op_composition_gradient_matches_finite_differences(tree, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.5, 1.5, (2, 3))
    ct = rng.standard_normal((2, 3))

    def loss(x, ct):
        return np.sum(build_shaped(tree, x) * ct)

    compiled = gradc.compile(loss, x, ct)
    value, gx = compiled.value_and_grad(x, ct)
    np.testing.assert_allclose(value, loss(x, ct), rtol=1e-10, atol=1e-12)
    v = rng.standard_normal(x.shape)
    h = 1e-6
    fd = (loss(x + h * v, ct) - loss(x - h * v, ct)) / (2 * h)
    ad = float(np.sum(gx * v))
    assert abs(ad - fd) <= 1e-5 * (1 + abs(fd)), (tree, ad, fd)
    np.testing.assert_allclose(evaluate(compiled.value_and_grad_graph, x, ct)[1], gx, rtol=1e-10, atol=1e-12)

