"""Batching (vmap): every case of the per-op table, batched, against a Python loop of NumPy calls.

For each case and each choice of batched inputs, the batched graph is run by the
reference interpreter and as emitted NumPy code (after the optimisation passes),
and each row is compared with the case's NumPy function called on that batch
element alone (the independent reference). Gradient graphs are batched too, and
checked against hand-derived gradients; nested vmap against a double loop.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from op_cases import DIFF_CASES, NONDIFF_CASES, Case, make_inputs, make_loss, normal, seed_of

import gradc
from gradc.backends.numpy.emit import Function, emit_module
from gradc.backends.numpy.load import load_source
from gradc.errors import ArgumentError, MissingRuleError
from gradc.ir.graph import Var
from gradc.ir.interpret import evaluate
from gradc.ir.registry import OPS, Op
from gradc.ir.verify import verify
from gradc.passes import optimize
from gradc.transforms.batching import batching_rule, vmap_graph
from gradc.transforms.reverse import value_and_grad_graph


def ints(high, *shape):
    return lambda rng: rng.integers(0, high, shape)


# Integer-array indexing where NumPy moves the indexed axes: the batch axis must follow them.
GATHER_LAYOUTS = [
    Case("gather_apart", lambda a: a[:, [0, 2, 2], :, 1], [normal(2, 3, 4, 2)], ("gather",)),
    Case("gather_int_first", lambda a: a[1, :, [0, 1, 1]], [normal(3, 4, 2)], ("gather",)),
    Case("gather_new_between", lambda a: a[[0, 1], None, [1, 0]], [normal(3, 2)], ("gather",)),
    Case("gather_2d_index_middle", lambda a, i: a[:, i], [normal(3, 5, 2), ints(5, 2, 3)], ("gather",)),
    Case("gather_ranks_apart", lambda a, i, j: a[i, :, j], [normal(4, 2, 5), ints(4, 2, 3), ints(5, 3)], ("gather",)),
    Case("gather_ranks_adjacent", lambda a, i, j: a[:, i, j], [normal(2, 4, 5), ints(4, 3), ints(5, 2, 3)],
         ("gather",)),
]
# Ops the per-op table does not reach (yet).
EXTRA_CASES = GATHER_LAYOUTS + [
    Case("stop_gradient_batched", lambda a: gradc.stop_gradient(a) * a, [normal(3)], ("stop_gradient",)),
]
CASES = DIFF_CASES + NONDIFF_CASES + EXTRA_CASES


def tensor_positions(graph):
    """Positions of the arguments that are graph inputs (the others are static Python ints)."""
    return [i for i, p in enumerate(graph.params) if p not in graph.static]


def batch_of(generators, seed, args, i, n):
    """``n`` different values for argument ``i``, stacked (row 0 is ``args[i]``)."""
    rows = [args[i]]
    for b in range(1, n):
        rng = np.random.default_rng(seed + 1000 * (i + 1) + b)
        rows.append(generators[i](rng))
    stacked = np.stack([np.asarray(r) for r in rows])
    if stacked.dtype.kind == "f" and n > 1 and np.all(stacked == stacked[:1]):
        # a constant generator (a Python float): vary it a little (the cases' domains allow 0.1)
        rng = np.random.default_rng(seed + 7)
        stacked = (stacked + rng.uniform(-0.1, 0.1, stacked.shape)).astype(stacked.dtype)
    return stacked


def subsets(positions):
    """Every non-empty subset of the inputs to batch (just the one set when there is one input)."""
    return [s for k in range(1, len(positions) + 1) for s in itertools.combinations(positions, k)]


pytestmark = pytest.mark.filterwarnings("ignore::gradc.errors.GradcWarning")  # a case reads a global array


def case_params():
    out = []
    for case in CASES:
        args = make_inputs(case)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            positions = tensor_positions(gradc.trace(case.fn, *args))
        for subset in subsets(positions):
            out.append(pytest.param(case, subset, id=f"{case.id}-{'_'.join(map(str, subset))}"))
    return out


def tolerance(dtype):
    return dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)


def run_emitted(graph, call_args):
    source = emit_module([Function("batched", graph, "The batched function.")])
    out = load_source(source, "test_batching")["batched"](*call_args)
    return list(out) if len(graph.outputs) > 1 else [out]


def check_batched(graph, batched_positions, args, stacked, n, expected_rows):
    """Batch ``graph`` (over the inputs at ``batched_positions``); compare both runs with ``expected_rows``."""
    positions = tensor_positions(graph)
    in_axes = [0 if i in batched_positions else None for i in positions]
    g = vmap_graph(graph, in_axes, n)
    verify(g)
    inputs = [stacked[i] if i in batched_positions else args[i] for i in positions]
    for k, out in enumerate(graph.outputs):
        assert g.outputs[k].type.shape == (n,) + out.type.shape
        assert g.outputs[k].type.dtype == out.type.dtype
    call_args = [stacked[i] if i in batched_positions else a for i, a in enumerate(args)]
    optimized = optimize(g, check=True)
    for how, results in (("interpreter", evaluate(g, *inputs)), ("emitted", run_emitted(optimized, call_args))):
        for k, (result, rows) in enumerate(zip(results, expected_rows)):
            expected = np.stack([np.asarray(r) for r in rows]) if len(rows) else np.asarray(rows)
            assert np.shape(result) == expected.shape, (how, k)
            np.testing.assert_allclose(np.asarray(result, np.float64), expected.astype(np.float64),
                                       err_msg=f"{how}, output {k}", **tolerance(np.asarray(result).dtype))
    return g


@pytest.mark.parametrize(("case", "subset"), case_params())
def test_every_case_batched_matches_a_loop(case, subset):
    args = make_inputs(case)
    graph = gradc.trace(case.fn, *args)
    for n in (3, 1, 0):
        stacked = {i: batch_of(case.inputs, seed_of(case.id), args, i, max(n, 1))[:n] for i in subset}
        rows = []
        for b in range(n):
            call = [stacked[i][b] if i in subset else a for i, a in enumerate(args)]
            rows.append(case.fn(*call))
        check_batched(graph, subset, args, stacked, n, [rows or np.zeros((0,) + graph.outputs[0].type.shape)])


def test_unbatched_outputs_are_broadcast():
    case = next(c for c in DIFF_CASES if c.id == "add")
    args = make_inputs(case)
    g = vmap_graph(gradc.trace(case.fn, *args), [None, None], 2)
    verify(g)
    (out,) = evaluate(g, *args)
    np.testing.assert_array_equal(out, np.stack([case.fn(*args)] * 2))
    assert g.outputs[0].type.shape == (2, 3, 4)
    # a constant output, and an input returned as it is
    g = vmap_graph(gradc.trace(lambda x, y: (x * 2.0, 1.5, y), np.ones(2), np.ones(3)), [0, None], 2)
    verify(g)
    doubled, constant, y = evaluate(g, np.array([[1.0, 2.0], [3.0, 4.0]]), np.arange(3.0))
    np.testing.assert_array_equal(doubled, [[2.0, 4.0], [6.0, 8.0]])
    np.testing.assert_array_equal(constant, [1.5, 1.5])
    np.testing.assert_array_equal(y, [np.arange(3.0)] * 2)


@pytest.mark.parametrize("case", DIFF_CASES + EXTRA_CASES, ids=lambda c: c.id)
def test_every_gradient_graph_batched(case):
    """vmap of each case's value-and-gradient graph, row by row against the unbatched graph.

    The unbatched gradient is checked against finite differences in the op table, so it
    is a reference independent of the batching rules; this covers the VJP rules' ops
    (index_grad, gather_grad, sum_to, ...) under vmap.
    """
    args = make_inputs(case)
    rng = np.random.default_rng(seed_of(case.id) + 3)
    value = np.asarray(case.fn(*args))
    ct = rng.standard_normal(value.shape)
    if value.dtype == np.float32:  # a float32 case stays float32, and is compared at float32's tolerance
        ct = ct.astype(np.float32)
    loss = make_loss(case.fn, len(args))
    raw = gradc.trace(loss, *args, ct)
    vg = value_and_grad_graph(raw, [v.name for v in raw.inputs if v.type.is_float and v.name != "ct"])
    full_args = [*args, ct]
    positions = tensor_positions(raw)
    n = 3
    generators = list(case.inputs) + [lambda r: r.standard_normal(np.shape(ct)).astype(ct.dtype)]
    stacked = {i: batch_of(generators, seed_of(case.id), full_args, i, n) for i in positions}
    rows = [[] for _ in vg.outputs]
    for b in range(n):
        inputs = [stacked[i][b] for i in positions]
        for k, value in enumerate(evaluate(vg, *inputs)):
            rows[k].append(value)
    check_batched(vg, set(positions), full_args, stacked, n, rows)


# ---------------------------------------------------------------- gradients of composite functions, per row
def sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def dense_tanh(x, w, b):
    return np.sum(np.tanh(x @ w + b))


def dense_tanh_grads(x, w, b):
    s = 1.0 - np.tanh(x @ w + b) ** 2  # by hand: d tanh = 1 - tanh**2
    return np.outer(x, s), s


def logistic(w, X, y):
    return np.mean(np.log1p(np.exp(-y * (X @ w))))


def logistic_grad(w, X, y):
    return X.T @ (-y * sigmoid(-y * (X @ w))) / len(y)


def softmax_xent(W, x, label):
    logits = x @ W
    return np.log(np.sum(np.exp(logits))) - logits[label]


def softmax_xent_grad(W, x, label):
    p = np.exp(x @ W)
    p /= p.sum()
    p[label] -= 1.0
    return np.outer(x, p)


def _emitted_rows(g, args):
    optimized = optimize(g, check=True)
    return run_emitted(optimized, args)


def test_per_example_gradients_of_a_dense_layer():
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal(3), rng.standard_normal((3, 2)), rng.standard_normal(2)
    vg = value_and_grad_graph(gradc.trace(dense_tanh, x, w, b), ["w", "b"])
    xs = rng.standard_normal((5, 3))  # five examples, one gradient each
    g = vmap_graph(vg, [0, None, None], 5)
    verify(g)
    for how, (values, w_bars, b_bars) in (("interpreter", evaluate(g, xs, w, b)),
                                          ("emitted", _emitted_rows(g, [xs, w, b]))):
        for k in range(5):
            w_bar, b_bar = dense_tanh_grads(xs[k], w, b)
            np.testing.assert_allclose(values[k], dense_tanh(xs[k], w, b), rtol=1e-12, err_msg=how)
            np.testing.assert_allclose(w_bars[k], w_bar, rtol=1e-12, atol=1e-14, err_msg=how)
            np.testing.assert_allclose(b_bars[k], b_bar, rtol=1e-12, atol=1e-14, err_msg=how)


def test_gradients_for_a_batch_of_weights():
    rng = np.random.default_rng(2)
    X, y = rng.standard_normal((6, 3)), rng.choice([-1.0, 1.0], 6)
    vg = value_and_grad_graph(gradc.trace(logistic, np.zeros(3), X, y), ["w"])
    ws = rng.standard_normal((4, 3))
    g = vmap_graph(vg, [0, None, None], 4)
    for how, (values, grads) in (("interpreter", evaluate(g, ws, X, y)), ("emitted", _emitted_rows(g, [ws, X, y]))):
        for k in range(4):
            np.testing.assert_allclose(values[k], logistic(ws[k], X, y), rtol=1e-12, err_msg=how)
            np.testing.assert_allclose(grads[k], logistic_grad(ws[k], X, y), rtol=1e-12, atol=1e-14, err_msg=how)


def test_per_example_gradients_with_batched_labels():
    # the label is an integer index input: gather, and gather_grad in the gradient, see a batched index
    rng = np.random.default_rng(3)
    W = rng.standard_normal((3, 4))
    vg = value_and_grad_graph(gradc.trace(softmax_xent, W, np.zeros(3), np.array(0)), ["W"])
    xs, labels = rng.standard_normal((5, 3)), np.array([0, 3, 3, 1, 2])
    g = vmap_graph(vg, [None, 0, 0], 5)
    verify(g)
    assert {"gather", "gather_grad"} <= {e.op for e in g.eqns}
    for how, (values, grads) in (("interpreter", evaluate(g, W, xs, labels)),
                                 ("emitted", _emitted_rows(g, [W, xs, labels]))):
        for k in range(5):
            np.testing.assert_allclose(values[k], softmax_xent(W, xs[k], labels[k]), rtol=1e-12, err_msg=how)
            np.testing.assert_allclose(grads[k], softmax_xent_grad(W, xs[k], labels[k]), rtol=1e-12, atol=1e-14,
                                       err_msg=how)


def test_jacobian_rows_by_batching_a_vjp():
    """A Jacobian as one batched reverse sweep over the basis cotangents, against central differences."""
    from gradc.transforms.reverse import vjp_graph

    def f(x):
        return np.concatenate([np.sin(x) * x[0], np.sum(x ** 2, keepdims=True)])

    x = np.array([0.3, -1.2, 0.8])
    g = vjp_graph(gradc.trace(f, x), ["x"])  # (x, out_bar) -> (out, x_bar)
    batched = vmap_graph(g, [None, 0], 4)
    _, jac = evaluate(batched, x, np.eye(4))
    h = 1e-6
    numeric = np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(3)], axis=1)
    np.testing.assert_allclose(jac, numeric, rtol=1e-8, atol=1e-9)


def test_gradient_of_a_batched_graph():
    """The batched graph is differentiable: reverse mode over it sums the per-example gradients."""
    from gradc.transforms.reverse import vjp_graph

    rng = np.random.default_rng(7)
    xs, w, b = rng.standard_normal((5, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)
    batched = vmap_graph(gradc.trace(dense_tanh, np.ones(3), w, b), [0, None, None], 5)
    weights = rng.standard_normal(5)  # the cotangent of the 5 losses
    g = vjp_graph(batched, ["x", "w", "b"])
    _, x_bar, w_bar, b_bar = evaluate(g, xs, w, b, weights)
    grads = [dense_tanh_grads(x, w, b) for x in xs]
    np.testing.assert_allclose(w_bar, sum(c * gw for c, (gw, _) in zip(weights, grads)), rtol=1e-12)
    np.testing.assert_allclose(b_bar, sum(c * gb for c, (_, gb) in zip(weights, grads)), rtol=1e-12)
    np.testing.assert_allclose(x_bar, [c * (w @ gb) for c, (_, gb) in zip(weights, grads)], rtol=1e-12)


# ---------------------------------------------------------------- nesting
def test_nested_vmap_matches_a_double_loop():
    rng = np.random.default_rng(4)

    def f(x, w):
        return np.tanh(x @ w)[::-1] * np.max(x)

    g = gradc.trace(f, np.ones(3), np.ones((3, 2)))
    inner = vmap_graph(g, [0, None], 4)          # over x: (4, 3)
    outer = vmap_graph(inner, [None, 0], 2)      # over w: (2, 3, 2)
    verify(outer)
    xs, ws = rng.standard_normal((4, 3)), rng.standard_normal((2, 3, 2))
    expected = np.array([[f(x, w) for x in xs] for w in ws])
    (out,) = evaluate(outer, xs, ws)
    assert out.shape == (2, 4, 2)
    np.testing.assert_allclose(out, expected, rtol=1e-12)
    (emitted,) = _emitted_rows(outer, [xs, ws])
    np.testing.assert_allclose(emitted, expected, rtol=1e-12)


def test_nested_vmap_of_a_gradient():
    rng = np.random.default_rng(5)
    vg = value_and_grad_graph(gradc.trace(dense_tanh, np.ones(3), np.ones((3, 2)), np.ones(2)), ["w"])
    twice = vmap_graph(vmap_graph(vg, [0, None, None], 3), [None, 0, None], 2)
    xs, ws, b = rng.standard_normal((3, 3)), rng.standard_normal((2, 3, 2)), rng.standard_normal(2)
    _, w_bars = evaluate(twice, xs, ws, b)
    for i in range(2):
        for k in range(3):
            np.testing.assert_allclose(w_bars[i, k], dense_tanh_grads(xs[k], ws[i], b)[0], rtol=1e-12, atol=1e-14)


def test_batched_graph_is_printed_with_the_original_names():
    vg = value_and_grad_graph(gradc.trace(lambda x: np.sum(np.sin(x)), np.ones(2)), ["x"])
    text = str(vmap_graph(vg, [0], 3))
    assert "x: f64[3,2]" in text and "x_bar: f64[3,2]" in text


# ---------------------------------------------------------------- user-written derivative rules under vmap
def test_a_custom_vjp_rule_applies_to_each_batch_element():
    from gradc.transforms.reverse import vjp_graph

    @gradc.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, ()), lambda res, g: (np.clip(g, -1.0, 1.0),))
    batched = vmap_graph(gradc.trace(lambda x: clip_gradient(x) * 5.0, np.ones(3)), [0], 4)
    verify(batched)
    ct = np.random.default_rng(6).standard_normal((4, 3))
    _, x_bar = evaluate(vjp_graph(batched, ["x"]), np.ones((4, 3)), ct)
    np.testing.assert_array_equal(x_bar, np.clip(5.0 * ct, -1.0, 1.0))  # the rule's, not 5 * ct


def test_a_custom_jvp_rule_applies_to_each_batch_element():
    from gradc.transforms.forward import jvp_graph
    from gradc.transforms.reverse import vjp_graph

    @gradc.custom_jvp
    def safe_norm(x):
        return np.sqrt(np.sum(x * x))

    def rule(primals, tangents):
        (x,), (dx,) = primals, tangents
        n = np.sqrt(np.sum(x * x))
        return n, np.sum(x * dx) / np.maximum(n, 1e-12)

    safe_norm.defjvp(rule)
    batched = vmap_graph(gradc.trace(safe_norm, np.ones(2)), [0], 3)
    xs = np.array([[3.0, 4.0], [0.0, 0.0], [0.0, 2.0]])  # at 0 the rule's tangent is 0, the plain one NaN
    dxs = np.array([[1.0, 0.0], [1.0, 1.0], [2.0, 3.0]])
    norms = np.maximum(np.sqrt(np.sum(xs * xs, axis=1)), 1e-12)
    out, out_dot = evaluate(optimize(jvp_graph(batched, ["x"])), xs, dxs)  # (no dead code dividing by 0)
    np.testing.assert_allclose(out, [5.0, 0.0, 2.0])
    np.testing.assert_allclose(out_dot, np.sum(xs * dxs, axis=1) / norms)
    _, x_bar = evaluate(vjp_graph(batched, ["x"]), xs, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(x_bar, xs / norms[:, None] * np.array([[1.0], [2.0], [3.0]]))


# ---------------------------------------------------------------- errors
def _simple_graph():
    return gradc.trace(lambda x, w: x * w, np.ones(2), np.ones(2))


@pytest.mark.parametrize(("in_axes", "size", "message"), [
    ([0], 3, "in_axes has 1 entries but lambda_ has 2 array inputs (x, w)"),
    ([1, None], 3, "in_axes for x is 1; gradc batches along a new leading axis only"),
    ([0, "0"], 3, "in_axes for w is '0'"),
    ([True, None], 3, "in_axes for x is True"),
    ([0, None], -1, "batch size -1 is not an int >= 0"),
    ([0, None], 2.0, "batch size 2.0 is not an int >= 0"),
])
def test_bad_arguments_are_clear_errors(in_axes, size, message):
    with pytest.raises(ArgumentError) as info:
        vmap_graph(_simple_graph(), in_axes, size, where="user.py:7")
    assert message in str(info.value) and "(user.py:7)" in str(info.value)
    assert "\n" not in str(info.value)


def test_one_axis_for_all_inputs():
    g = vmap_graph(_simple_graph(), 0, np.int64(2))
    assert [str(v.type) for v in g.inputs] == ["f64[2,2]", "f64[2,2]"]


# ---------------------------------------------------------------- registry completeness
def batched_ops(graph):
    """The ops of ``graph``'s equations that see a batched operand when every input is batched."""
    batched = {id(v) for v in graph.inputs}
    ops = set()
    for eqn in graph.eqns:
        if any(id(a) in batched for a in eqn.inputs if isinstance(a, Var)):
            batched.add(id(eqn.out))
            ops.add(eqn.op)
    return ops


def test_every_op_is_exercised_batched():
    covered = set()
    for case in CASES:
        args = make_inputs(case)
        covered |= batched_ops(gradc.trace(case.fn, *args))
        if case not in NONDIFF_CASES:
            ct = np.ones(np.shape(case.fn(*args)))
            raw = gradc.trace(make_loss(case.fn, len(args)), *args, ct)
            covered |= batched_ops(value_and_grad_graph(raw, [v.name for v in raw.inputs if v.type.is_float]))
    missing = sorted(set(OPS) - covered - {"custom_call"})  # custom_call: the tests of user rules above
    assert not missing, f"ops no test batches: {missing}"


@pytest.mark.parametrize("name", sorted(OPS))
def test_every_op_has_a_batching_rule(name):
    assert batching_rule(OPS[name]) is not None, (
        f"{name}: not elementwise, not a reduction typed like sum, and no batch= rule at its defop")


def test_an_op_without_a_rule_is_reported(monkeypatch):
    """The completeness check is not vacuous, and vmap names an op it cannot batch."""
    monkeypatch.setitem(OPS, "unbatchable", Op("unbatchable", infer=lambda t, p: t[0], impl=np.negative,
                                                nondiff=True, doc="test"))
    with pytest.raises(AssertionError, match="unbatchable"):
        test_every_op_has_a_batching_rule("unbatchable")
    from gradc.ir.graph import Eqn, Graph
    from gradc.ir.types import TensorType

    x, y = Var("x", TensorType((2,), "f64")), Var("t0", TensorType((2,), "f64"))
    g = Graph("f", [x], [Eqn("unbatchable", (x,), {}, y)], [y], origin="f.py:f")
    with pytest.raises(MissingRuleError, match=r"op unbatchable \(computing t0 in f\) has no batching rule"):
        vmap_graph(g, [0], 2)


def test_batched_graph_and_source_are_deterministic():
    import os
    import subprocess
    import sys

    script = (
        "import numpy as np, gradc\n"
        "from gradc.backends.numpy.emit import Function, emit_module\n"
        "from gradc.passes import optimize\n"
        "from gradc.transforms.batching import vmap_graph\n"
        "from gradc.transforms.reverse import value_and_grad_graph\n"
        "def f(W, x, label):\n"
        "    logits = x @ W\n"
        "    return np.log(np.sum(np.exp(logits))) - logits[label]\n"
        "vg = value_and_grad_graph(gradc.trace(f, np.ones((3, 4)), np.zeros(3), np.array(0)), ['W'])\n"
        "g = vmap_graph(vmap_graph(vg, [None, 0, 0], 5), [0, None, None], 2)\n"
        "print(g)\n"
        "print(emit_module([Function('f', optimize(g), 'f.')]))\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outputs = []
    for seed in ("0", "123"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=root)
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
        outputs.append(run.stdout)
    assert outputs[0] == outputs[1] and "gather_grad" in outputs[0]
