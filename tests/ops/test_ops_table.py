"""The per-op table (``op_cases``): every op's VJP against central differences, float32, interpreter agreement."""
from __future__ import annotations

import numpy as np
import pytest
from op_cases import (
    DIFF_CASES,
    NONDIFF_CASES,
    assert_close,
    compile_case,
    directional_derivative,
    make_inputs,
    make_loss,
    numpy_value,
    ops_in,
    seed_of,
)

import gradc
from gradc.ir.interpret import evaluate
from gradc.ops import OPS
from gradc.ops import elementwise as ew
from gradc.transforms import reverse as ad


@pytest.mark.parametrize("case", DIFF_CASES, ids=lambda c: c.id)
def test_vjp_matches_central_differences(case):
    args = make_inputs(case)
    _, ct, wrt, compiled = compile_case(case, args)
    grads = compiled.grad(*args, ct)
    assert isinstance(grads, tuple) and len(grads) == len(wrt)
    rng = np.random.default_rng(seed_of(case.id) + 2)
    for i, g in zip(wrt, grads):
        # the gradient has its input's type: float32 stays float32, a Python float gives a float
        if isinstance(args[i], float):
            assert np.ndim(g) == 0 and np.asarray(g).dtype == np.float64
        else:
            assert g.shape == args[i].shape and g.dtype == args[i].dtype, (g.shape, g.dtype)
    for _ in range(2):
        direction = [rng.standard_normal(np.shape(args[i])) for i in wrt]
        expected = directional_derivative(case.fn, args, ct, wrt, direction)
        actual = sum(float(np.sum(np.asarray(g, dtype=np.float64) * v)) for g, v in zip(grads, direction))
        assert abs(actual - expected) <= case.rtol * (1.0 + abs(expected)), (actual, expected)


@pytest.mark.parametrize("case", DIFF_CASES, ids=lambda c: c.id)
def test_interpreter_and_emitted_code_agree(case):
    args = make_inputs(case)
    loss, ct, wrt, compiled = compile_case(case, args)
    call_args = [*args, ct]
    raw = gradc.trace(loss, *call_args)
    tensor_args = [a for a, p in zip(call_args, raw.params) if p not in raw.static]
    raw_vg = ad.value_and_grad_graph(raw, [f"a{i}" for i in wrt])
    assert set(case.ops) <= ops_in(raw, raw_vg), f"{case.id} does not exercise {set(case.ops) - ops_in(raw, raw_vg)}"

    rtol = 1e-5 if case.rtol > 1e-6 else 1e-10
    expected_value = float(np.sum(numpy_value(case.fn, args) * ct))
    value, grads = compiled.value_and_grad(*call_args)
    assert_close(value, expected_value, rtol=rtol, atol=1e-10, what="emitted value vs NumPy")
    assert_close(compiled.forward(*call_args), value, what="forward vs value_and_grad")
    assert_close(evaluate(raw, *tensor_args)[0], value, rtol=rtol, what="interpreter (trace) vs emitted")
    for graph in (raw_vg, compiled.value_and_grad_graph):
        outs = evaluate(graph, *tensor_args)
        assert_close(outs[0], value, rtol=rtol, what=f"interpreter ({graph.name}) value")
        for k, g in enumerate(grads):
            assert_close(outs[1 + k], g, rtol=rtol, atol=1e-10, what=f"interpreter ({graph.name}) gradient {k}")
            assert np.asarray(outs[1 + k]).dtype == np.asarray(g).dtype
    for k, g in enumerate(compiled.grad(*call_args)):
        assert_close(g, grads[k], what="grad vs value_and_grad")


@pytest.mark.parametrize("case", NONDIFF_CASES, ids=lambda c: c.id)
def test_nondiff_ops_give_zero_gradient(case):
    args = make_inputs(case)
    for op in case.ops:
        if op != "astype":
            assert OPS[op].nondiff and OPS[op].vjp is None, f"{op} should be declared nondiff"
    loss, ct, wrt, compiled = compile_case(case, args)
    raw = gradc.trace(loss, *args, ct)
    assert set(case.ops) <= ops_in(raw)
    grads = compiled.grad(*args, ct)
    rng = np.random.default_rng(seed_of(case.id) + 2)
    for i, g in zip(wrt, grads):
        assert g.shape == args[i].shape and not np.any(g), g
        # finite differences agree: the function is locally constant at these inputs
        v = rng.standard_normal(args[i].shape)
        assert directional_derivative(case.fn, args, ct, [i], [v]) == 0.0
    value = compiled.forward(*args, ct)
    assert_close(value, np.sum(numpy_value(case.fn, args) * ct))
    assert_close(evaluate(raw, *args, ct)[0], value)


def test_gradient_flows_around_nondiff_ops():
    # x * (x > 0): the comparison contributes nothing, the product rule the rest
    def f(x):
        return np.sum(x * (x > 0) + np.floor(x) * x)

    x = np.array([-1.3, 0.4, 2.2])
    np.testing.assert_allclose(gradc.grad(f)(x), (x > 0) + np.floor(x))


def test_maximum_splits_ties_evenly():
    g = gradc.grad(lambda x, y: np.sum(np.maximum(x, y)), wrt=("x", "y"))(np.ones(2), np.ones(2))
    np.testing.assert_allclose(g[0], [0.5, 0.5])
    np.testing.assert_allclose(g[1], [0.5, 0.5])


def test_max_shares_ties_evenly():
    g = gradc.grad(lambda x: np.max(x))(np.array([1.0, 3.0, 3.0]))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5])


def test_repeated_labels_accumulate():
    def pick(logits, y):
        return np.sum(logits[np.arange(4), y] * 1.0) + np.sum(logits[y, 0])

    logits = np.zeros((4, 3))
    y = np.array([0, 0, 2, 0])
    g = gradc.grad(pick)(logits, y)
    expected = np.zeros((4, 3))
    np.add.at(expected, (np.arange(4), y), 1.0)
    np.add.at(expected, (y, 0), 1.0)
    np.testing.assert_allclose(g, expected)


def float32_version(case):
    args = make_inputs(case)
    if not any(isinstance(a, np.ndarray) and a.dtype == np.float64 for a in args):
        return None
    return [a.astype(np.float32) if isinstance(a, np.ndarray) and a.dtype == np.float64 else a for a in args]


@pytest.mark.parametrize("case", [c for c in DIFF_CASES if float32_version(c)], ids=lambda c: c.id)
def test_float32_inputs_give_float32_gradients(case):
    """With float32 inputs every gradient, and the value, stay float32 and match the float64 result."""
    args32 = float32_version(case)
    args64, ct, wrt, compiled64 = compile_case(case, make_inputs(case))
    ct32 = np.float32(ct) if np.ndim(ct) == 0 else ct.astype(np.float32)
    loss = make_loss(case.fn, len(args32))
    compiled = gradc.compile(loss, *args32, ct32, wrt=tuple(f"a{i}" for i in wrt))
    value, grads = compiled.value_and_grad(*args32, ct32)
    expected_value, expected = compiled64.value_and_grad(*make_inputs(case), ct)
    numpy_dtype = np.asarray(np.sum(case.fn(*args32) * ct32)).dtype  # float32 unless a float64 value joins in
    if any(isinstance(a, float) for a in args32):
        # by design a Python float argument is a traced float64 scalar, not a weak NumPy scalar
        numpy_dtype = np.result_type(numpy_dtype, np.float64)
    assert np.asarray(value).dtype == numpy_dtype
    assert_close(value, expected_value, rtol=1e-4, atol=1e-4, what="float32 value")
    for i, g, e in zip(wrt, grads, expected):
        if isinstance(args32[i], np.ndarray):
            assert g.dtype == args32[i].dtype and g.shape == args32[i].shape, (g.dtype, g.shape)
        scale = 1.0 + float(np.max(np.abs(e)))
        assert_close(g, e, rtol=1e-3, atol=1e-4 * scale, what="float32 gradient vs float64")
    for k, g in enumerate(compiled.grad(*args32, ct32)):
        assert np.asarray(g).dtype == np.asarray(grads[k]).dtype


def test_defaults_and_keywords_reach_the_compiled_code():
    f = gradc.grad(lambda a, b=2.0, n=2: np.sum(a[:n] * b))
    x = np.ones(3)
    np.testing.assert_array_equal(f(x), [2.0, 2.0, 0.0])
    np.testing.assert_array_equal(f(x, 3.0), [3.0, 3.0, 0.0])
    np.testing.assert_array_equal(f(x, b=4.0, n=1), [4.0, 0.0, 0.0])
    np.testing.assert_array_equal(f(a=x), [2.0, 2.0, 0.0])


def test_astype_of_a_python_float_scalar():
    # float64 scalars reach emitted code as Python floats, which have no .astype method
    a = np.array([1.0, 2.0, -0.5], np.float32)
    value, s_bar = gradc.value_and_grad(lambda s, a: np.sum(a * s.astype(np.float32)))(0.5, a)
    assert value.dtype == np.float32 and abs(value - 1.25) < 1e-6
    assert abs(s_bar - 2.5) < 1e-6



def test_the_check_catches_a_wrong_rule(monkeypatch):
    """The dot-product check is not vacuous: a VJP rule off by a sign or a factor fails it."""
    case = next(c for c in DIFF_CASES if c.id == "sin")
    monkeypatch.setattr(OPS["sin"], "vjp", lambda ct, out, x, needs: (ew.mul(ct, ew.sin(x)),))
    with pytest.raises(AssertionError):
        test_vjp_matches_central_differences(case)
    case = next(c for c in DIFF_CASES if c.id == "prod_with_zeros")
    monkeypatch.setattr(OPS["prod"], "vjp", lambda ct, out, x, needs, axes, keepdims: (
        ew.mul(ew.zeros_like(x), 1.0),))
    with pytest.raises(AssertionError):
        test_vjp_matches_central_differences(case)
