"""``gradc.compile`` on pytree arguments (issue 23, item 1): flat emitted functions with readable leaf names, the
pytree wrappers beside them, and the compiled object taking and returning the user's structures.

References: the user's function itself (run by NumPy) and central finite differences of it, leaf by leaf;
the emitted module run standalone (a fresh namespace, and a subprocess with only NumPy importable).
"""
from __future__ import annotations

import ast
import keyword
import os
import subprocess
import sys
from collections import namedtuple

import numpy as np
import pytest

import gradc
from gradc.tree_util import tree_flatten, tree_leaves, tree_map, tree_unflatten

GOLDEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "golden")
RNG = np.random.default_rng(11)


def tree_fd(f, args, k, h=1e-6):
    """Central finite differences of scalar ``f`` with respect to every leaf of argument ``k`` (a pytree)."""
    leaves, treedef = tree_flatten(args[k])
    grads = []
    for j, leaf in enumerate(leaves):
        leaf = np.asarray(leaf, dtype=np.float64)
        g = np.zeros_like(leaf)
        for i in np.ndindex(leaf.shape):
            moved = []
            for sign in (1, -1):
                changed = [np.array(x, dtype=np.float64) for x in leaves]
                changed[j][i] += sign * h
                new = list(args)
                new[k] = tree_unflatten(treedef, [c if np.ndim(x) else float(c) for c, x in zip(changed, leaves)])
                moved.append(f(*new))
            g[i] = (moved[0] - moved[1]) / (2 * h)
        grads.append(g)
    return tree_unflatten(treedef, grads)


def assert_trees_close(got, want, rtol=1e-6, atol=1e-8):
    got_leaves, got_def = tree_flatten(got)
    want_leaves, want_def = tree_flatten(want)
    assert got_def == want_def, (got_def, want_def)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def linear(params, X, y):
    z = X @ params["w"] + params["b"]
    return np.mean((z - y) ** 2)


def mlp(layers, x):
    for layer in layers:
        x = np.tanh(x @ layer["w"] + layer["b"])
    return np.sum(x ** 2)


def example_linear():
    return {"w": RNG.normal(size=3), "b": 0.25}, RNG.normal(size=(5, 3)), RNG.normal(size=5)


def example_mlp():
    layers = [{"w": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4)},
              {"w": RNG.normal(size=(4, 2)), "b": RNG.normal(size=2)}]
    return layers, RNG.normal(size=3)


# ---------------------------------------------------------------- the compiled object: pytrees in and out
@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("case", ["linear", "mlp"])
def test_gradients_nest_as_the_parameters_and_match_finite_differences(case, target):
    f, args = (linear, example_linear()) if case == "linear" else (mlp, example_mlp())
    compiled = gradc.compile(f, *args, target=target)
    np.testing.assert_allclose(compiled.forward(*args), f(*args), rtol=1e-12)
    want = tree_fd(f, args, 0)
    assert_trees_close(compiled.grad(*args), want)
    value, grads = compiled.value_and_grad(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    assert_trees_close(grads, want)
    # other values of the same structure and shapes: the compiled code is not tied to the example
    moved = (tree_map(lambda a: np.asarray(a) * 0.5 + 0.1, args[0]),) + tuple(args[1:])
    moved = (tree_map(lambda a, b: float(a) if np.ndim(b) == 0 else a, moved[0], args[0]),) + moved[1:]
    assert_trees_close(compiled.grad(*moved), tree_fd(f, moved, 0))


def test_a_tuple_of_arguments_and_keywords():
    def f(params, scale, X):
        return np.sum(np.sin(X @ params[0]) * params[1]["c"]) * scale
    params = (RNG.normal(size=3), {"c": RNG.normal(size=2)})
    X = RNG.normal(size=(2, 3))
    compiled = gradc.compile(f, params, 1.5, X, argnums=(1, 0))
    g_scale, g_params = compiled.grad(params, 1.5, X)
    np.testing.assert_allclose(g_scale, f(params, 1.0, X), rtol=1e-9)
    assert_trees_close(g_params, tree_fd(f, [params, 1.5, X], 0))
    assert_trees_close(compiled.grad(params, X=X, scale=1.5)[1], g_params, rtol=1e-12)


def test_a_wrong_structure_is_a_clear_error():
    params, X, y = example_linear()
    compiled = gradc.compile(linear, params, X, y)
    with pytest.raises(gradc.ArgumentError, match=r"does not have the expected structure.*keys \['b', 'w'\]"):
        compiled.grad({"w": params["w"]}, X, y)


def test_an_integer_leaf_cannot_be_differentiated():
    def f(p, x):
        return np.sum(x[p["i"]] * p["w"])
    with pytest.raises(gradc.ArgumentError, match=r"p\['i'\]: it is of dtype i64"):
        gradc.compile(f, {"i": np.array([0, 1]), "w": np.ones(2)}, np.ones(3))
    compiled = gradc.compile(f, {"i": np.array([0, 1]), "w": np.ones(2)}, np.arange(3.0), argnums=1)
    np.testing.assert_allclose(compiled.grad({"i": np.array([0, 1]), "w": np.ones(2)}, np.arange(3.0)),
                               [1.0, 1.0, 0.0])


# ---------------------------------------------------------------- the emitted module
def test_the_module_runs_standalone_with_flat_and_nested_arguments():
    args = example_mlp()
    compiled = gradc.compile(mlp, *args)
    namespace: dict = {}
    exec(compile(compiled.source, "mlp_grad.py", "exec"), namespace)  # noqa: S102 - gradc's module
    layers, x = args
    flat = [layers[0]["b"], layers[0]["w"], layers[1]["b"], layers[1]["w"], x]
    assert list(ast.parse(compiled.source).body[-1].args.args[i].arg for i in range(2)) == ["layers", "x"]
    want = tree_fd(mlp, args, 0)
    assert_trees_close(namespace["mlp_grad_tree"](layers, x), want)
    value, grads = namespace["mlp_value_and_grad_tree"](layers, x)
    assert_trees_close(grads, want)
    np.testing.assert_allclose(value, mlp(*args), rtol=1e-12)
    np.testing.assert_allclose(namespace["mlp_tree"](layers, x), mlp(*args), rtol=1e-12)
    flat_grads = namespace["mlp_grad"](*flat)
    assert_trees_close(list(flat_grads), tree_flatten(want)[0])
    signature = ast.parse(compiled.source)
    names = {node.name: [a.arg for a in node.args.args] for node in signature.body if isinstance(node, ast.FunctionDef)}
    assert names["mlp_grad"] == ["layers_0_b", "layers_0_w", "layers_1_b", "layers_1_w", "x"]


def test_the_module_imports_only_numpy(tmp_path):
    """The module runs in a fresh interpreter where importing anything but NumPy (and the stdlib it needs) fails."""
    params, X, y = example_linear()
    (tmp_path / "linear_grad.py").write_text(gradc.compile(linear, params, X, y).source)
    script = (
        "import builtins, sys\n"
        "import numpy as np\n"
        "real = builtins.__import__\n"
        "def guarded(name, *args, **kwargs):\n"
        "    top = name.split('.')[0]\n"
        "    if top not in ('numpy', 'linear_grad') and top not in sys.stdlib_module_names:\n"
        "        raise ImportError('the module imported ' + name)\n"
        "    return real(name, *args, **kwargs)\n"
        "builtins.__import__ = guarded\n"
        "import linear_grad\n"
        "g = linear_grad.linear_grad_tree({'w': np.array([1.0, 2.0, 3.0]), 'b': 0.5}, np.ones((5, 3)), np.ones(5))\n"
        "print(sorted(g), repr(float(g['b'])))\n")
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    want = tree_fd(linear, [{"w": np.array([1.0, 2.0, 3.0]), "b": 0.5}, np.ones((5, 3)), np.ones(5)], 0)
    assert proc.stdout.startswith("['b', 'w'] ")
    np.testing.assert_allclose(float(proc.stdout.split()[-1]), want["b"], rtol=1e-6)


def test_emitted_source_is_deterministic_across_hash_seeds(tmp_path):
    script = ("import numpy as np, gradc\n"
              "layers = [{'w': np.ones((3, 4)), 'b': np.ones(4)}, {'w': np.ones((4, 2)), 'b': np.ones(2)}]\n"
              "def mlp(layers, x):\n"
              "    for layer in layers:\n"
              "        x = np.tanh(x @ layer['w'] + layer['b'])\n"
              "    return np.sum(x ** 2)\n"
              "print(gradc.compile(mlp, layers, np.ones(3)).source)\n")
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=repo)
        proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]


def golden_source():
    def model(params, x):
        hidden = np.tanh(x @ params["layers"][0]["w"])
        return np.sum((hidden @ params["out"]) ** 2) + params["scale"] * np.sum(x)
    params = {"layers": [{"w": np.ones((3, 2))}], "out": np.ones(2), "scale": 1.0}
    return gradc.compile(model, params, np.ones(3)).source


def test_golden_module(update_golden):
    path = os.path.join(GOLDEN, "pytree_model.numpy.py.txt")
    text = golden_source()
    if update_golden:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    with open(path, encoding="utf-8") as fh:
        assert text == fh.read(), "the emitted module differs from tests/golden/pytree_model.numpy.py.txt; " \
                                  "review, then run pytest --update-golden"


# ---------------------------------------------------------------- names: escaped, distinct, never hiding gradc's
HOSTILE_KEYS = ["np", "lambda", "x y", "1", "loss_grad", "value", "flat_grads", "p_np", "_check_array", "float",
                "C0", "t0", "with_value", "a\nb", "'''\"\"\"", "\u00e9t\u00e9", "*/"]


def test_hostile_keys_become_distinct_safe_identifiers():
    def loss(p, x):
        total = 0.0
        for k, leaf in enumerate(tree_leaves(p)):
            total = total + (k + 1.0) * np.sum(np.sin(leaf) * x)
        return total
    p = {key: RNG.normal(size=2) for key in HOSTILE_KEYS}
    p["x"] = {"y": RNG.normal(size=2)}  # p["x"]["y"] and p["x y"] both read p_x_y
    x = RNG.normal(size=2)
    compiled = gradc.compile(loss, p, x)
    tree = ast.parse(compiled.source)
    flat = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "loss_grad")
    params = [a.arg for a in flat.args.args]
    assert len(set(params)) == len(params) == len(HOSTILE_KEYS) + 2
    assert all(name.isidentifier() and not keyword.iskeyword(name) for name in params)
    assert {"p_lambda", "p_1", "p_np", "p_loss_grad", "p_float"} <= set(params)
    assert params.index("p_x_y") < params.index("p_x_y_2")  # sorted keys: "x" (its "y") before "x y"
    assert_trees_close(compiled.grad(p, x), tree_fd(loss, [p, x], 0))
    namespace: dict = {}
    exec(compile(compiled.source, "hostile.py", "exec"), namespace)  # noqa: S102
    assert_trees_close(namespace["loss_grad_tree"](p, x), tree_fd(loss, [p, x], 0))
    comments = [line for line in compiled.source.splitlines() if line.startswith("#")]
    assert len(comments) == 3 and all(line.isprintable() for line in comments)  # keys stay inside the header
    c_compiled = gradc.compile(loss, p, x, target="c")
    assert_trees_close(c_compiled.grad(p, x), tree_fd(loss, [p, x], 0))


def test_parameters_named_like_the_generated_functions():
    def loss(loss_grad, loss, value):  # the wrapper's parameters hide loss_grad, loss and value
        return np.sum(loss_grad["a"] * loss) + value
    args = ({"a": RNG.normal(size=2)}, RNG.normal(size=2), 0.5)
    compiled = gradc.compile(loss, *args, wrt=("loss_grad", "value"))
    namespace: dict = {}
    exec(compile(compiled.source, "clash.py", "exec"), namespace)  # noqa: S102
    got = namespace["loss_grad_tree"](*args)
    assert_trees_close(got, (tree_fd(loss, list(args), 0), 1.0))
    assert_trees_close(compiled.grad(*args), got, rtol=1e-12)


def test_a_leaf_named_like_another_parameter_is_renamed():
    def f(params, params_w):
        return np.sum(params["w"] * params_w)
    compiled = gradc.compile(f, {"w": np.ones(2)}, np.arange(2.0), argnums=(0, 1))
    assert "def f_grad(params_w_2, params_w):" in compiled.source
    g_params, g_w = compiled.grad({"w": np.ones(2)}, np.arange(2.0))
    np.testing.assert_allclose(g_params["w"], [0.0, 1.0])
    np.testing.assert_allclose(g_w, [1.0, 1.0])


# ---------------------------------------------------------------- structures a standalone module cannot rebuild
Params = namedtuple("Params", ["w", "b"])


def test_a_named_tuple_works_in_process_and_the_module_says_why_it_has_no_wrapper():
    def f(p, x):
        return np.sum(np.sin(x * p.w) + p.b)
    p = Params(RNG.normal(size=2), RNG.normal(size=2))
    x = RNG.normal(size=2)
    compiled = gradc.compile(f, p, x)
    grads = compiled.grad(p, x)
    assert isinstance(grads, Params)
    assert_trees_close(grads, tree_fd(f, [p, x], 0))
    assert "# No pytree wrappers: p (PyTreeDef(CustomNode(namedtuple[Params]" in compiled.source
    assert "def f_grad_tree" not in compiled.source
    namespace: dict = {}
    exec(compile(compiled.source, "nt.py", "exec"), namespace)  # noqa: S102 - the flat functions still run
    np.testing.assert_allclose(namespace["f_grad"](p.w, p.b, x)[1], grads.b)  # a named tuple's leaves: field order


def test_other_modes_refuse_pytrees_clearly():
    params, X, y = example_linear()
    with pytest.raises(gradc.ArgumentError, match="mode='jvp' takes arrays"):
        gradc.compile(linear, params, X, y, mode="jvp")


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_gradc_check_takes_the_pytrees(target):
    args = example_mlp()
    assert gradc.check(gradc.compile(mlp, *args, target=target), mlp, *args).passed

    def frozen_first_layer(layers, x):
        first = {"w": gradc.stop_gradient(layers[0]["w"]), "b": layers[0]["b"]}
        return mlp([first] + layers[1:], x)
    wrong = gradc.compile(frozen_first_layer, *args, target=target)
    report = gradc.check(wrong, mlp, *args, raise_on_failure=False)
    assert not report.passed and all("layers_0_w" in c.what for c in report.failures)


# ---------------------------------------------------------------- random structures (seeded generator)
def random_tree(rng, depth=0):
    """A random pytree of float leaves: dicts with awkward keys, lists, tuples, None, arrays and floats."""
    kind = rng.integers(0, 5) if depth < 3 else 4
    if kind == 0:
        keys = rng.choice(["w", "b", "x y", "1", "lambda", "np", "w_b", "_"], size=rng.integers(1, 4), replace=False)
        return {str(k): random_tree(rng, depth + 1) for k in keys}
    if kind == 1:
        return [random_tree(rng, depth + 1) for _ in range(rng.integers(1, 3))]
    if kind == 2:
        return tuple(random_tree(rng, depth + 1) for _ in range(rng.integers(1, 3))) + (None,) * int(rng.integers(0, 2))
    if kind == 3 and depth > 0:
        return float(rng.normal())
    return rng.normal(size=tuple(rng.integers(1, 4, size=rng.integers(1, 3))))


def weighted_loss(tree, x):
    total = np.sum(x ** 2)
    for k, leaf in enumerate(tree_leaves(tree)):
        total = total + np.sum(np.sin(leaf * (k + 1.0)) * np.cos(leaf)) * x[k % 2]
    return total


@pytest.mark.parametrize("seed", range(8))
def test_random_structures_against_finite_differences(seed):
    rng = np.random.default_rng(seed)
    tree, x = random_tree(rng), rng.normal(size=2)
    if tree_flatten(tree)[1].num_nodes == 1 or not tree_leaves(tree):  # a bare leaf, or no leaves: a dict of one
        tree = {"w": tree if tree_leaves(tree) else rng.normal(size=2)}
    args = [tree, x]
    want = tree_fd(weighted_loss, args, 0)
    for target in ("numpy", "c"):
        compiled = gradc.compile(weighted_loss, tree, x, target=target)
        assert_trees_close(compiled.grad(tree, x), want, rtol=1e-5, atol=1e-7)
    namespace: dict = {}
    exec(compile(compiled.source if target == "numpy" else gradc.compile(weighted_loss, tree, x).source,
                 f"random_{seed}.py", "exec"), namespace)  # noqa: S102 - the standalone module
    assert_trees_close(namespace["weighted_loss_grad_tree"](tree, x), want, rtol=1e-5, atol=1e-7)
    g_tree, g_x = gradc.compile(weighted_loss, tree, x, argnums=(0, 1)).grad(tree, x)
    assert_trees_close(g_tree, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(g_x, tree_fd(weighted_loss, args, 1), rtol=1e-5, atol=1e-7)
