"""Pytrees as inputs and outputs of every run-time transform, against central differences of the user's function.

Results nest as JAX's: a gradient has its argument's structure; a Jacobian has the output's structure outside
and the argument's inside; a cotangent has the output's structure, a tangent its primal's.
"""
from __future__ import annotations

import collections
import dataclasses
from typing import Any, NamedTuple

import numpy as np
import pytest
from finite_differences import central_gradient
from hypothesis import given, settings
from hypothesis import strategies as st

import gradc
from gradc import tree_util as tu


class Pair(NamedTuple):
    left: Any
    right: Any


@tu.register_dataclass
@dataclasses.dataclass
class Affine:
    w: Any
    b: Any
    activation: str = dataclasses.field(default="tanh", metadata={"static": True})


def rng(seed=0):
    return np.random.default_rng(seed)


def tree_fd(f, tree):
    """Central differences of scalar ``f`` with respect to every float leaf of ``tree`` (the user's own code)."""
    leaves, treedef = tu.tree_flatten(tree)
    out = []
    for i, leaf in enumerate(leaves):
        def along(v, i=i, is_array=isinstance(leaf, np.ndarray)):
            moved = list(leaves)
            moved[i] = v if is_array else float(v)
            return f(tu.tree_unflatten(treedef, moved))
        out.append(central_gradient(along, leaf))
    return tu.tree_unflatten(treedef, out)


def assert_tree_close(got, expected, rtol=1e-6, atol=1e-7):
    assert tu.tree_structure(got) == tu.tree_structure(expected), (got, expected)
    for g, e in zip(tu.tree_leaves(got), tu.tree_leaves(expected)):
        if isinstance(e, str):
            assert g == e
            continue
        np.testing.assert_allclose(g, e, rtol=rtol, atol=atol)
        assert np.shape(g) == np.shape(e)


# ---------------------------------------------------------------- arguments of every kind of node
def sample(kind):
    r = rng(1)
    return {
        "dict": {"w": r.normal(size=(3,)), "b": 0.7},
        "list": [r.normal(size=(2,)), r.normal(size=(3,))],
        "tuple": (r.normal(size=(2, 2)), 0.3),
        "namedtuple": Pair(r.normal(size=(3,)), r.normal(size=(3,))),
        "none_inside": {"w": r.normal(size=(3,)), "unused": None},
        "dataclass": Affine(r.normal(size=(3,)), 0.2),
        "ordereddict": collections.OrderedDict([("z", r.normal(size=(3,))), ("a", 1.5)]),
        "nested": [{"w": r.normal(size=(3,)), "b": Pair(0.1, r.normal(size=(2,)))}, (r.normal(size=(3,)),)],
    }[kind]


KINDS = ["dict", "list", "tuple", "namedtuple", "none_inside", "dataclass", "ordereddict", "nested"]


def smooth_loss(tree, x):
    """A smooth scalar of every leaf of ``tree`` (written as a user would: the leaves, then NumPy)."""
    total = 0.0
    for k, leaf in enumerate(tu.tree_leaves(tree)):
        total = total + np.sum(np.sin(leaf * (k + 1)) * np.cos(x[0] * leaf)) + np.sum(leaf ** 2) * x[1]
    return total


@pytest.mark.parametrize("kind", KINDS)
def test_grad_of_a_pytree_argument(kind):
    tree, x = sample(kind), np.array([0.4, 1.3])
    g = gradc.grad(smooth_loss)(tree, x)
    assert_tree_close(g, tree_fd(lambda t: smooth_loss(t, x), tree))
    # twice: the cached code answers alike
    assert_tree_close(gradc.grad(smooth_loss)(tree, x), g)


@pytest.mark.parametrize("kind", KINDS)
def test_value_and_grad_with_respect_to_both(kind):
    tree, x = sample(kind), np.array([0.4, 1.3])
    value, (g_tree, g_x) = gradc.value_and_grad(smooth_loss, wrt=(0, 1))(tree, x)
    np.testing.assert_allclose(value, smooth_loss(tree, x))
    assert_tree_close(g_tree, tree_fd(lambda t: smooth_loss(t, x), tree))
    np.testing.assert_allclose(g_x, central_gradient(lambda v: smooth_loss(tree, v), x), rtol=1e-6)


def test_grad_by_name_of_a_dict_argument_and_a_none_argument():
    def loss(params, x, config=None):
        return np.sum(np.tanh(params["w"] * x) + params["b"])

    params, x = {"w": np.array([0.5, -1.0]), "b": np.array(0.25)}, np.array([1.0, 2.0])
    g = gradc.grad(loss, wrt="params")(params, x)
    assert_tree_close(g, tree_fd(lambda p: loss(p, x), params))
    assert_tree_close(gradc.grad(loss, wrt="params")(params, x, None), g)


def test_a_new_structure_retraces_and_the_old_one_stays_cached():
    g = gradc.grad(lambda p: sum(np.sum(v ** 2) for v in p.values()))
    a = {"x": np.ones(2)}
    b = {"x": np.ones(2), "y": np.arange(3.0)}
    assert_tree_close(g(a), {"x": 2 * np.ones(2)})
    assert_tree_close(g(b), {"x": 2 * np.ones(2), "y": 2 * np.arange(3.0)})
    assert_tree_close(g(a), {"x": 2 * np.ones(2)})
    assert len(g.cache) == 2


def test_int_and_static_leaves_of_arguments_not_differentiated_are_static():
    def loss(params, config):
        return np.sum(params["w"] ** config["power"]) * config["scale"]

    g = gradc.grad(loss)
    w = np.array([1.0, 2.0])
    assert_tree_close(g({"w": w}, {"power": 3, "scale": 2.0, "name": "cubic"}), {"w": 6 * w ** 2})
    assert_tree_close(g({"w": w}, {"power": 2, "scale": 2.0, "name": "square"}), {"w": 4 * w})  # re-traced


def test_an_int_leaf_of_a_differentiated_argument_is_a_clear_error():
    def loss(params):
        return np.sum(params["w"]) * params["n"]

    with pytest.raises(gradc.ArgumentError, match=r"params\['n'\]: it is a static int") as info:
        gradc.grad(loss)({"w": np.ones(2), "n": 3})
    assert "test_pytree_transforms.py" in str(info.value)


def test_grad_of_a_function_returning_a_dict_is_a_clear_error():
    with pytest.raises(gradc.ArgumentError, match="needs one scalar"):
        gradc.grad(lambda p: {"a": p["x"] * 2})({"x": 1.0})


# ---------------------------------------------------------------- outputs and the other transforms
def two_outputs(p, x):
    return {"energy": np.sum(p["w"] * x) ** 2 + p["b"], "field": Pair(np.sin(p["w"]) * x, p["b"] * x)}


def params_and_x():
    r = rng(2)
    return {"w": r.normal(size=(3,)), "b": 0.5}, r.normal(size=(3,))


def test_jvp_tangents_have_the_primals_structure():
    p, x = params_and_x()
    tp = {"w": rng(3).normal(size=(3,)), "b": 0.25}
    tx = rng(4).normal(size=(3,))
    out, dot = gradc.jvp(two_outputs, (p, x), (tp, tx))
    assert_tree_close(out, two_outputs(p, x))
    h = 1e-6
    plus = two_outputs(tu.tree_map(lambda a, t: a + h * t, p, tp), x + h * tx)
    minus = two_outputs(tu.tree_map(lambda a, t: a - h * t, p, tp), x - h * tx)
    assert_tree_close(dot, tu.tree_map(lambda a, b: (a - b) / (2 * h), plus, minus), rtol=1e-5, atol=1e-7)


def test_jvp_tangent_of_another_structure_is_a_clear_error():
    p, x = params_and_x()
    with pytest.raises(gradc.ArgumentError, match=r"the tangent of p does not have the expected structure.*'b'"):
        gradc.jvp(two_outputs, (p, x), ({"w": np.ones(3)}, np.ones(3)))


def test_vjp_cotangent_has_the_output_structure():
    p, x = params_and_x()
    out, pullback = gradc.vjp(two_outputs, p, x)
    assert_tree_close(out, two_outputs(p, x))
    ct = {"energy": 0.7, "field": Pair(rng(5).normal(size=(3,)), rng(6).normal(size=(3,)))}
    g_p, g_x = pullback(ct)

    def inner(p_, x_):
        o = two_outputs(p_, x_)
        return sum(float(np.sum(a * c)) for a, c in zip(tu.tree_leaves(o), tu.tree_leaves(ct)))

    assert_tree_close(g_p, tree_fd(lambda q: inner(q, x), p))
    np.testing.assert_allclose(g_x, central_gradient(lambda v: inner(p, v), x), rtol=1e-6)
    with pytest.raises(gradc.ArgumentError, match=r"the cotangent does not have the expected structure at "
                                                  r"\['field'\]"):
        pullback({"energy": 1.0, "field": (np.ones(3), np.ones(3))})


@pytest.mark.parametrize("transform", [gradc.jacfwd, gradc.jacrev, gradc.jacobian])
def test_jacobian_nests_output_outside_argument_inside(transform):
    p, x = params_and_x()
    J = transform(two_outputs, argnums=(0, 1))(p, x)
    assert set(J) == {"energy", "field"} and isinstance(J["field"], Pair)
    out = two_outputs(p, x)
    for path_out, leaf_out in tu.tree_leaves_with_path(out):
        block = J
        for key in path_out:
            block = block[key.key] if isinstance(key, tu.DictKey) else getattr(block, key.name)
        d_p, d_x = block
        for path_in, leaf_in in tu.tree_leaves_with_path(p):
            got = d_p[path_in[0].key]
            assert np.shape(got) == np.shape(leaf_out) + np.shape(leaf_in)

            def entry(v, path_in=path_in, path_out=path_out, is_array=np.ndim(leaf_in) > 0):
                q = dict(p)
                q[path_in[0].key] = v if is_array else float(v)
                o = two_outputs(q, x)
                for key in path_out:
                    o = o[key.key] if isinstance(key, tu.DictKey) else getattr(o, key.name)
                return o

            fd = _jacobian_fd(entry, leaf_in)
            np.testing.assert_allclose(got, fd, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(d_x, _jacobian_fd(lambda v, path_out=path_out: _get(two_outputs(p, v), path_out), x),
                                   rtol=1e-5, atol=1e-7)


def _get(tree, path):
    for key in path:
        tree = tree[key.key] if isinstance(key, tu.DictKey) else getattr(tree, key.name)
    return tree


def _jacobian_fd(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    out_shape = np.shape(f(x if x.shape else float(x)))
    J = np.zeros(out_shape + x.shape)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        J[(...,) + i] = (np.asarray(f(x + e if x.shape else float(x + e))) -
                         np.asarray(f(x - e if x.shape else float(x - e)))) / (2 * h)
    return J


def test_hessian_of_a_dict_taking_loss():
    def loss(p):
        return np.sum(np.sin(p["w"]) * p["b"]) + p["b"] ** 3

    p = {"w": np.array([0.3, -0.8]), "b": 1.2}
    H = gradc.hessian(loss)(p)
    g = gradc.grad(loss)
    for outer in ("w", "b"):
        for inner in ("w", "b"):
            def gi(v, outer=outer, inner=inner):
                q = dict(p)
                q[inner] = v if np.ndim(p[inner]) else float(v)
                return g(q)[outer]
            np.testing.assert_allclose(H[outer][inner], _jacobian_fd(gi, p[inner]), rtol=1e-5, atol=1e-7)


def test_hvp_with_pytrees():
    def loss(p, x):
        return np.sum(np.sin(p["w"] * x)) * p["b"] ** 2

    p, x = {"w": np.array([0.3, -0.8]), "b": 1.2}, np.array([1.0, 2.0])
    t = {"w": np.array([1.0, -1.0]), "b": 0.5}
    hv = gradc.hvp(loss, (p, x), (t, None), argnums=0)
    H = gradc.hessian(loss)(p, x)
    expected = {k: sum(np.tensordot(H[k][j], t[j], axes=np.ndim(t[j])) for j in ("w", "b")) for k in ("w", "b")}
    assert_tree_close(hv, expected, rtol=1e-10, atol=1e-12)


def test_grad_of_grad_with_pytrees():
    def loss(p):
        return np.sum(p["w"] ** 3) * p["b"]

    def grad_norm(p):
        g = gradc.grad(loss)(p)
        return np.sum(g["w"] ** 2) + g["b"] ** 2

    p = {"w": np.array([0.5, -1.0]), "b": 0.75}
    assert_tree_close(gradc.grad(grad_norm)(p), tree_fd(grad_norm, p), rtol=1e-5)


# ---------------------------------------------------------------- has_aux
def loss_with_aux(p, x):
    pred = np.tanh(p["w"] * x)
    loss = np.sum((pred - 0.5) ** 2) + p["b"] ** 2
    return loss, {"pred": pred, "mean": np.mean(pred), "tag": "mse", "steps": 3, "constant": np.ones(2)}


def expected_aux(p, x):
    return loss_with_aux(p, x)[1]


def test_grad_and_value_and_grad_has_aux():
    p, x = {"w": np.array([0.5, -1.0, 2.0]), "b": 0.3}, np.array([1.0, 0.5, -0.25])
    g, aux = gradc.grad(loss_with_aux, has_aux=True)(p, x)
    assert_tree_close(g, tree_fd(lambda q: loss_with_aux(q, x)[0], p))
    assert_tree_close(aux, expected_aux(p, x))
    (value, aux2), g2 = gradc.value_and_grad(loss_with_aux, has_aux=True)(p, x)
    np.testing.assert_allclose(value, loss_with_aux(p, x)[0])
    assert_tree_close(aux2, expected_aux(p, x))
    assert_tree_close(g2, g)
    # a second call of another point reads the arrays of the aux afresh (only the non-array leaves are static)
    x2 = 2 * x
    (_, aux3), _ = gradc.value_and_grad(loss_with_aux, has_aux=True)(p, x2)
    assert_tree_close(aux3, expected_aux(p, x2))


def test_has_aux_runs_one_emitted_function_that_returns_the_aux():
    vg = gradc.value_and_grad(loss_with_aux, has_aux=True)
    p, x = {"w": np.ones(3), "b": 0.3}, np.ones(3)
    source = vg.compiled(p, x).source
    assert "def loss_with_aux_value_and_grad(p_b, p_w, x):" in source
    for function in source.split("\ndef ")[1:]:  # the forward once per function: the aux is no second run of f
        assert function.count("np.tanh(") <= 1, function


def test_jacobians_and_hessian_has_aux():
    x = np.array([0.5, -1.0])

    def f(x):
        y = x ** 2
        return y, {"norm": np.sqrt(np.sum(y)), "kind": "square"}

    for transform in (gradc.jacfwd, gradc.jacrev, gradc.jacobian):
        J, aux = transform(f, has_aux=True)(x)
        np.testing.assert_allclose(J, np.diag(2 * x))
        assert aux["kind"] == "square"
        np.testing.assert_allclose(aux["norm"], np.sqrt(np.sum(x ** 2)))
    H, aux = gradc.hessian(lambda x: (np.sum(x ** 3), x * 2), has_aux=True)(x)
    np.testing.assert_allclose(H, np.diag(6 * x))
    np.testing.assert_allclose(aux, 2 * x)


def test_jvp_and_vjp_has_aux():
    x = np.array([0.5, -1.0])

    def f(x):
        return {"y": np.sin(x)}, (np.cos(x), "label")

    out, dot, aux = gradc.jvp(f, (x,), (np.ones(2),), has_aux=True)
    assert_tree_close(out, {"y": np.sin(x)})
    assert_tree_close(dot, {"y": np.cos(x)})
    assert_tree_close(aux, (np.cos(x), "label"))
    out, pullback, aux = gradc.vjp(f, x, has_aux=True)
    assert_tree_close(out, {"y": np.sin(x)})
    assert_tree_close(pullback({"y": np.ones(2)}), (np.cos(x),))
    assert_tree_close(aux, (np.cos(x), "label"))


@pytest.mark.parametrize("make", [
    lambda f: gradc.grad(f, has_aux=True),
    lambda f: gradc.value_and_grad(f, has_aux=True),
    lambda f: gradc.jacfwd(f, has_aux=True),
    lambda f: gradc.jacrev(f, has_aux=True),
    lambda f: gradc.hessian(f, has_aux=True),
    lambda f: (lambda x: gradc.vjp(f, x, has_aux=True)),
    lambda f: (lambda x: gradc.jvp(f, (x,), (x,), has_aux=True)),
], ids=["grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vjp", "jvp"])
def test_has_aux_without_a_pair_is_an_error_at_the_def(make):
    def no_pair(x):  # the line reported
        return np.sum(x ** 2)

    line = no_pair.__code__.co_firstlineno
    with pytest.raises(gradc.TraceError, match="must return a pair") as info:
        make(no_pair)(np.ones(2))
    assert f"test_pytree_transforms.py:{line}" in str(info.value)


def test_aux_inside_an_outer_trace():
    def inner(w):
        return np.sum(w ** 2), {"twice": 2 * w}

    def outer(w):
        g, aux = gradc.grad(inner, has_aux=True)(w)
        return np.sum(g * aux["twice"])  # 2w * 2w

    w = np.array([0.5, -1.5])
    np.testing.assert_allclose(gradc.grad(outer)(w), 8 * w)


# ---------------------------------------------------------------- the JAX-style MLP
def test_mlp_training_with_pytrees_and_aux():
    r = rng(7)
    X = r.normal(size=(64, 3))
    y = (X @ np.array([1.0, -2.0, 0.5]) > 0).astype(np.float64)
    params = [{"w": 0.5 * r.normal(size=(3, 8)), "b": np.zeros(8)},
              {"w": 0.5 * r.normal(size=(8,)), "b": np.zeros(())}]

    def loss(params, X, y):
        h = np.tanh(X @ params[0]["w"] + params[0]["b"])
        logits = h @ params[1]["w"] + params[1]["b"]
        p = 1.0 / (1.0 + np.exp(-logits))
        nll = -np.mean(y * np.log(p + 1e-12) + (1 - y) * np.log(1 - p + 1e-12))
        return nll, {"accuracy": np.mean((p > 0.5) == (y > 0.5))}

    step = gradc.value_and_grad(loss, has_aux=True)
    (first, aux), grads = step(params, X, y)
    assert tu.tree_structure(grads) == tu.tree_structure(params)
    assert_tree_close(grads, tree_fd(lambda q: loss(q, X, y)[0], params), rtol=1e-5, atol=1e-7)
    for _ in range(100):
        (value, aux), grads = step(params, X, y)
        params = tu.tree_map(lambda w, g: w - 0.5 * g, params, grads)
    assert value < 0.5 * first
    np.testing.assert_allclose(aux["accuracy"], loss(params, X, y)[1]["accuracy"], atol=0.05)
    # one trace per signature: the 0-d bias turns from an array into a NumPy scalar after the first step
    assert len(step.cache) <= 2


# ---------------------------------------------------------------- random nested structures
arrays = st.builds(lambda seed, n: np.random.default_rng(seed).normal(size=(n,)), st.integers(0, 99),
                   st.integers(1, 3))
floats = st.floats(-2.0, 2.0)
trees = st.recursive(
    st.one_of(arrays, floats),
    lambda children: st.one_of(st.lists(children, min_size=1, max_size=3),
                               st.lists(children, min_size=1, max_size=3).map(tuple),
                               st.dictionaries(st.sampled_from("abc"), children, min_size=1, max_size=3),
                               st.tuples(children, children).map(lambda t: Pair(*t))),
    max_leaves=6)


@settings(max_examples=25, deadline=None)
@given(trees)
def test_random_structures_grad_and_jvp(tree):
    def f(t):
        return sum(np.sum(np.sin(leaf) * (k + 1)) for k, leaf in enumerate(tu.tree_leaves(t)))

    g = gradc.grad(f)(tree)
    expected = tu.tree_unflatten(tu.tree_structure(tree), [np.cos(leaf) * (k + 1)
                                                           for k, leaf in enumerate(tu.tree_leaves(tree))])
    assert_tree_close(g, expected, rtol=1e-12, atol=1e-12)
    tangent = tu.tree_map(lambda leaf: np.ones_like(leaf) if isinstance(leaf, np.ndarray) else 1.0, tree)
    _, dot = gradc.jvp(f, (tree,), (tangent,))
    np.testing.assert_allclose(dot, sum(np.sum(e) for e in tu.tree_leaves(expected)), rtol=1e-12)


# ---------------------------------------------------------------- inside an outer trace, and determinism
def test_vjp_jvp_and_jacobian_with_pytrees_inside_grad():
    p = {"w": np.array([0.5, -1.0]), "b": 0.75}

    def f(p):
        return {"y": np.sin(p["w"]) * p["b"]}

    def outer(p):
        _, pullback = gradc.vjp(f, p)
        (g,) = pullback({"y": np.ones(2)})
        _, dot = gradc.jvp(f, (p,), ({"w": np.ones(2), "b": 1.0},))
        J = gradc.jacrev(f)(p)
        return np.sum(g["w"] ** 2) + g["b"] ** 2 + np.sum(dot["y"]) + np.sum(J["y"]["w"]) * np.sum(J["y"]["b"])

    assert_tree_close(gradc.grad(outer)(p), tree_fd(outer, p), rtol=1e-5)


def test_emitted_source_is_identical_across_hash_seeds():
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    script = (
        "import numpy as np, gradc\n"
        "def loss(params, x):\n"
        "    h = np.tanh(x @ params['layer']['w'] + params['layer']['b'])\n"
        "    return np.sum(h * params['scale']), {'h': h, 'name': 'tanh'}\n"
        "p = {'scale': 2.0, 'layer': {'w': np.ones((3, 2)), 'b': np.zeros(2)}}\n"
        "print(gradc.value_and_grad(loss, has_aux=True).compiled(p, np.ones(3)).source)\n")

    def run(seed):
        env = dict(os.environ, PYTHONHASHSEED=str(seed), PYTHONPATH=root)
        proc = subprocess.run([sys.executable, "-c", script], env=env, cwd=root, capture_output=True, timeout=120)
        assert proc.returncode == 0, proc.stderr.decode()
        return proc.stdout

    first = run(1)
    assert b"def loss_value_and_grad(params_layer_b, params_layer_w, params_scale, x):" in first
    assert first == run(2)


def test_caches_do_not_keep_a_function_alive():
    import gc
    import weakref

    refs = []
    for _ in range(3):
        f = lambda x: {"y": np.sin(x) * 2}  # noqa: E731
        gradc.jvp(f, (np.ones(2),), (np.ones(2),))
        gradc.jacobian(f)(np.ones(2))
        gradc.vjp(f, np.ones(2))
        refs.append(weakref.ref(f))
    del f
    gc.collect()
    assert all(r() is None for r in refs)


SCALE = np.array([1.0, 2.0])


def scaled_loss(p):
    return np.sum(p["w"] * SCALE) + p["b"]


def test_a_global_read_by_a_pytree_taking_loss_warns_and_is_guarded():
    global SCALE
    g = gradc.grad(scaled_loss)
    p = {"w": np.ones(2), "b": 1.0}
    with pytest.warns(gradc.GradcWarning, match="SCALE"):
        assert_tree_close(g(p), {"b": 1.0, "w": SCALE})
    old = SCALE
    try:
        SCALE = np.array([3.0, 4.0])
        with pytest.raises(gradc.StaleStateError, match="SCALE"):
            g(p)
        g2 = gradc.grad(scaled_loss, static_globals=False)
        assert_tree_close(g2(p), {"b": 1.0, "w": SCALE})
    finally:
        SCALE = old


aux_leaves = st.sampled_from(["sin", "square", "sum", "text", "int", "const"])
aux_trees = st.recursive(aux_leaves, lambda c: st.one_of(st.lists(c, max_size=3), st.lists(c, max_size=3).map(tuple),
                                                          st.dictionaries(st.sampled_from("pq"), c, max_size=2)),
                         max_leaves=6)


@settings(max_examples=20, deadline=None)
@given(aux_trees)
def test_random_aux_is_returned_as_computed(recipe):
    def aux_of(x):
        make = {"sin": lambda: np.sin(x), "square": lambda: x ** 2, "sum": lambda: np.sum(x), "text": lambda: "t",
                "int": lambda: 7, "const": lambda: np.arange(2.0)}
        return tu.tree_map(lambda kind: make[kind](), recipe)

    def f(x):
        return np.sum(np.cos(x)), aux_of(x)

    x = np.array([0.3, -1.2])
    (value, aux), g = gradc.value_and_grad(f, has_aux=True)(x)
    np.testing.assert_allclose(value, np.sum(np.cos(x)))
    np.testing.assert_allclose(g, -np.sin(x))
    assert_tree_close(aux, aux_of(x), rtol=1e-12, atol=0)
    out, dot, aux2 = gradc.jvp(f, (x,), (np.ones(2),), has_aux=True)
    assert_tree_close(aux2, aux_of(x), rtol=1e-12, atol=0)
