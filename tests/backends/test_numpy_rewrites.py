"""Smaller rewrites for the emitted NumPy, each against the unrewritten graph (the interpreter) and NumPy itself.

``x ** 0`` folds to ones (IEEE pow: 1 for NaN and inf too; its derivative 0, not ``0 * x ** -1``); array
constants that are uniform or step evenly are written as ``np.zeros``/``np.full``/``np.arange``; a scatter at
a constant of distinct entries beside a 0-d index is ``t[...] += v`` (not ``np.add.at``); ``vmap`` of a gather
whose indices alone are batched reads the array once (no broadcast copy per row).
"""
from __future__ import annotations

import ast

import numpy as np
import pytest
from finite_differences import central_gradient as _central

import gradc
from gradc.backends.numpy.literals import array_constant_expr
from gradc.ir.graph import Const
from gradc.ir.interpret import evaluate
from gradc.passes import optimize
from gradc.transforms.batching import vmap_graph


def power_zero(x):
    return np.sum(x ** 0.0 * np.sin(x)) + np.sum(x ** 1.0)


def test_power_zero_folds_and_keeps_values():
    x = np.array([0.5, -1.5, 2.0, 0.25])
    graph = gradc.trace(power_zero, x)
    folded = optimize(graph)
    assert " pow " not in str(folded)
    np.testing.assert_allclose(evaluate(folded, x)[0], evaluate(graph, x)[0], rtol=1e-15)
    compiled = gradc.compile(power_zero, x)
    value, grad = compiled.value_and_grad(x)
    np.testing.assert_allclose(value, power_zero(x), rtol=1e-14)
    np.testing.assert_allclose(grad, _central(power_zero, x), rtol=1e-7, atol=1e-9)


def test_power_zero_is_one_at_nan_and_inf():
    x = np.array([np.nan, np.inf, -np.inf, 0.0])
    graph = gradc.trace(lambda v: v ** 0.0 + 0.0 * np.zeros(4), x)
    np.testing.assert_array_equal(evaluate(optimize(graph), x)[0], x ** 0.0)


@pytest.mark.parametrize("value", [
    np.zeros(2000), np.full((3, 400), 2.5), np.ones(7, dtype=np.int64) * -3, np.zeros(5, dtype=bool),
    np.arange(1, 1000), np.arange(3, 40, 4), np.arange(20, 2, -3), np.arange(6, dtype=np.int32) + 2,
    np.arange(12).reshape(3, 4) * 2 + 1, np.array([-0.0, 0.0, 0.0]), np.array([1.0, np.nan, np.nan]),
    np.full(4, np.inf), np.array([5, 5]), np.array([1, 2, 4]),
])
def test_array_constants_read_back_exactly(value):
    text = ast.unparse(array_constant_expr(Const(value)))
    back = eval(text, {"np": np})  # noqa: S307 - the emitted expression itself
    assert back.dtype == value.dtype and back.shape == value.shape
    assert back.tobytes() == value.tobytes(), text


def test_uniform_and_stepped_constants_are_short():
    assert ast.unparse(array_constant_expr(Const(np.zeros(2000)))) == "np.zeros((2000,), dtype=np.float64)"
    assert ast.unparse(array_constant_expr(Const(np.arange(1, 1000)))) == "np.arange(1, 1000)"
    assert ast.unparse(array_constant_expr(Const(np.arange(3, 40, 4)))) == "np.arange(3, 43, 4)"


def rows_scattered(x):  # a reverse sweep scatters a row of x[np.arange(3), i] per iteration
    total = 0.0
    for i in range(x.shape[1]):
        total = total + np.sum(np.sin(x[np.arange(3), i]) * total * 0.5 + x[np.arange(3), i])
    return total


def test_distinct_scatter_beside_a_counter_adds_in_place():
    x = np.random.default_rng(2).uniform(-1.0, 1.0, (3, 5))
    compiled = gradc.compile(rows_scattered, x)
    assert "np.add.at" not in compiled.source
    np.testing.assert_allclose(compiled.grad(x), _central(rows_scattered, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("index", ["x[i]", "x[:, i]", "x[i, 1:]"])
def test_vmap_of_a_gather_with_batched_indices_only(index):
    x = np.random.default_rng(3).uniform(-1.0, 1.0, (4, 4))
    f = eval(f"lambda x, i: {index} * 2.0")  # noqa: S307 - a test program
    graph = gradc.trace(f, x, np.array(1))
    batched = vmap_graph(graph, [None, 0], 3)
    assert "broadcast_to x" not in str(batched)
    indices = np.array([2, 0, 3])
    got = evaluate(batched, x, indices)[0]
    np.testing.assert_array_equal(got, np.stack([f(x, i) for i in indices]))
