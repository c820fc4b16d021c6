"""The max a log-sum-exp, softmax or log-softmax subtracts is held constant by reverse mode: same values and
gradients as differentiating through it (the unrewritten graph), and central differences, on random programs."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.ir.graph import Graph
from gradc.ir.interpret import evaluate
from gradc.passes import optimize
from gradc.transforms import reverse
from gradc.transforms.shift_invariance import zero_derivative_shifts
from tests.finite_differences import central_gradient


def _shift(x, op, axis, keepdims):
    return (np.max if op == "max" else np.min)(x, axis=axis, keepdims=keepdims)


def _back(m, x, axis):
    """``m`` (reduced without keepdims) with its axis back, to broadcast against ``x``."""
    return m if axis is None else np.expand_dims(m, axis)


def lse_keep(x, axis, op):
    m = _shift(x, op, axis, True)
    return np.log(np.sum(np.exp(x - m), axis=axis)) + np.squeeze(m, axis=axis)


def lse_index(x, axis, op):
    m = _shift(x, op, axis, True)
    picked = m[:, 0] if axis == 1 else m[0, :] if axis == 0 else m[0, 0]
    return np.log(np.sum(np.exp(x - m), axis=axis)) + picked


def lse_drop(x, axis, op):
    m = _shift(x, op, axis, False)
    return np.log(np.sum(np.exp(x - _back(m, x, axis)), axis=axis, keepdims=False)) + m


def softmax(x, axis, op):
    e = np.exp(x - _shift(x, op, axis, True))
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x, axis, op):
    shifted = x - _shift(x, op, axis, True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


def softmin(x, axis, op):
    e = np.exp(_shift(x, op, axis, True) - x)
    return e / np.mean(e, axis=axis, keepdims=True)


INVARIANT = [lse_keep, lse_index, lse_drop, softmax, log_softmax, softmin]


def not_invariant_sum(x, axis, op):  # sum(x - m) moves with m
    return np.sum(x - _shift(x, op, axis, True), axis=axis)


def not_invariant_exp(x, axis, op):  # exp(x - m) alone moves with m
    return np.exp(x - _shift(x, op, axis, True))


def not_invariant_lse_minus(x, axis, op):  # lse - m: the shift added back with the wrong sign
    m = _shift(x, op, axis, True)
    return np.log(np.sum(np.exp(x - m), axis=axis)) - np.squeeze(m, axis=axis)


def not_invariant_plus_one(x, axis, op):  # exp(x - m) + 1: the factor exp(-m) no longer divides out
    e = np.exp(x - _shift(x, op, axis, True)) + 1.0
    return e / np.sum(e, axis=axis, keepdims=True)


NOT_INVARIANT = [not_invariant_sum, not_invariant_exp, not_invariant_lse_minus, not_invariant_plus_one]


def _program(pattern, axis, op, weights):
    """``f(x, w)``, a scalar of the pattern's result, and a function of ``x`` alone (the weights ``w`` bound)."""
    def f(x, w):
        return np.sum(w * np.tanh(pattern(x * 1.5, axis, op)))
    f.__name__ = pattern.__name__
    f.weights = weights
    return f


def _graphs(graph):
    """``graph`` and the sub-graphs its equations hold (a helper called twice is a ``call`` of one)."""
    yield graph
    for e in graph.eqns:
        for p in e.params.values():
            for sub in (p if isinstance(p, tuple) else (p,)):
                if isinstance(sub, Graph):
                    yield from _graphs(sub)


def _ops(graph):
    return [e.op for g in _graphs(graph) for e in g.eqns]


def _value_and_grad(f, x, held):
    saved = reverse.SHIFTS_HELD_CONSTANT
    reverse.SHIFTS_HELD_CONSTANT = held
    try:
        g = gradc.trace(f, x, f.weights)
        vg = optimize(reverse.value_and_grad_graph(g, ["x"]), check=True)
    finally:
        reverse.SHIFTS_HELD_CONSTANT = saved
    value, grad = evaluate(vg, x, f.weights)
    return g, vg, float(value), np.asarray(grad)


def _cases(seed, count):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        rows, cols = int(rng.integers(1, 5)), int(rng.integers(1, 6))
        axis = [0, 1, None][int(rng.integers(0, 3))]
        op = ["max", "min"][int(rng.integers(0, 2))]
        x = rng.standard_normal((rows, cols))
        if rng.random() < 0.3:
            x = np.round(x)  # ties in the max: the unrewritten adjoint shares among them, and still adds to 0
        yield axis, op, x, rng


@pytest.mark.parametrize("pattern", INVARIANT, ids=lambda p: p.__name__)
def test_invariant_shifts_are_held_constant_with_the_same_gradient(pattern):
    for axis, op, x, rng in _cases(len(pattern.__name__), 12):
        if pattern is lse_index and axis is None:
            continue
        out_shape = np.shape(pattern(x, axis, op))
        f = _program(pattern, axis, op, rng.standard_normal(out_shape))
        g, rewritten, value, grad = _value_and_grad(f, x, True)
        assert [e.op for h in _graphs(g) for e in h.eqns if any(e.out is v for v in zero_derivative_shifts(h))] \
            == [op]
        assert "equal" not in _ops(rewritten), "the max's adjoint was written"
        _, plain, plain_value, plain_grad = _value_and_grad(f, x, False)
        assert len(_ops(rewritten)) < len(_ops(plain))
        assert value == pytest.approx(f(x, f.weights), rel=1e-12, abs=1e-12) and value == plain_value
        np.testing.assert_allclose(grad, plain_grad, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(grad, central_gradient(lambda v, f=f: f(v, f.weights), x), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("pattern", NOT_INVARIANT, ids=lambda p: p.__name__)
def test_shifts_that_change_the_result_are_differentiated_through(pattern):
    for axis, op, x, rng in _cases(7 + len(pattern.__name__), 8):
        x = x + 0.01 * np.arange(x.size).reshape(x.shape)  # no ties: the max is differentiable
        f = _program(pattern, axis, op, rng.standard_normal(np.shape(pattern(x, axis, op))))
        g, _, value, grad = _value_and_grad(f, x, True)
        assert all(zero_derivative_shifts(h) == [] for h in _graphs(g))
        assert value == pytest.approx(f(x, f.weights), rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(grad, central_gradient(lambda v, f=f: f(v, f.weights), x), rtol=1e-6, atol=1e-7)


def test_a_shift_returned_or_transposed_is_no_claim():
    def returned(x):
        m = np.max(x, axis=1, keepdims=True)
        return np.sum(np.log(np.sum(np.exp(x - m), axis=1))) + np.sum(m)

    def transposed(x):
        m = np.max(x, axis=1, keepdims=True)
        return np.sum(np.log(np.sum(np.exp(x.T - m.T), axis=0)) + m[:, 0])

    x = np.random.default_rng(3).standard_normal((3, 4))
    assert zero_derivative_shifts(gradc.trace(returned, x)) == []
    assert zero_derivative_shifts(gradc.trace(transposed, x)) == []
    for f in (returned, transposed):
        np.testing.assert_allclose(gradc.grad(f)(x), central_gradient(f, x), rtol=1e-6, atol=1e-7)


def test_compiled_mlp_loss_has_no_max_adjoint_and_matches_the_hand_written_gradient():
    from benchmarks import workloads
    params, consts = workloads.make_data("mlp")
    f, lead, wrt = workloads.gradc_problem("mlp", params, consts)
    compiled = gradc.compile(f, *lead, *params, wrt=list(wrt))
    ops = [e.op for e in compiled.grad_graph.eqns]
    assert "equal" not in ops and "where" not in ops and "np.where" not in compiled.source
    assert len(ops) <= 32  # 44 when the max's adjoint path was written (issue 27)
    loss, grads = workloads.reference("mlp", consts)(*params)
    for got, want in zip(compiled.grad(*lead, *params), grads):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
