"""NumPy's shape functions on traced values (``gradc.trace.shape_dispatch``), ``np.array``/``np.r_`` routing
(``gradc.trace.array_routing``) and the ``index_update`` op: values against NumPy, gradients against
central differences, refusals with clear errors. The per-op table (``op_cases_shape``) covers the rest."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as numeric_grad
from numpy import array as imported_array

import gradc
from gradc.errors import ShapeError, TraceError
from gradc.ir.interpret import evaluate
from gradc.ops.shape_extra import index_update
from gradc.transforms.batching import vmap_graph

rng = np.random.default_rng(3)
X = rng.standard_normal(3)
M = rng.standard_normal((3, 4))




def check(f, x):
    value, g = gradc.value_and_grad(f)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(g, numeric_grad(f, x), rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- np.array, np.asarray, np.r_, np.c_
def array_of_scalars(x):
    v = np.array([x[0] * x[1], 2.0, np.sin(x[2])])
    return np.sum(v ** 2)


def nested_array_with_dtype(x):
    m = np.array([[x[0], 1.0], [x[1], x[2]]], dtype=np.float64, ndmin=3)
    return np.sum(m ** 3)


def asarray_of_rows(x):
    return np.sum(np.asarray([x, x * 2.0]) @ np.asarray(x))


def r_and_c(x):
    r = np.r_[x, x[0], [1.0, 2.0], 0:2]
    c = np.c_[x, x ** 2]
    return np.sum(r ** 2) + np.sum(c ** 3)


def from_imported_array(x):
    return np.sum(imported_array([x[2], x[0]]) ** 2)


@pytest.mark.parametrize("f", [array_of_scalars, nested_array_with_dtype, asarray_of_rows, r_and_c,
                               from_imported_array], ids=lambda f: f.__name__)
def test_array_constructors_of_traced_values(f):
    check(f, X)


def _helper_using_array(x):
    return np.array([x[0], x[1]])


def calls_a_helper(x):
    return np.sum(_helper_using_array(x))


def test_array_in_a_helper_of_the_same_module_is_routed():
    check(calls_a_helper, X)  # the module's functions see the routed numpy too


def test_array_of_unequal_shapes_is_refused():
    def f(x):
        return np.sum(np.array([x, x[:2]]))

    with pytest.raises(TraceError, match="different shapes"):
        gradc.grad(f)(X)


def test_concrete_array_calls_stay_numpys():
    def f(x):
        table = np.array([[1, 2], [3, 4]])  # no traced value inside: NumPy's own array
        assert type(table) is np.ndarray and table.dtype == np.int64
        return np.sum(x[:2] * table[0])

    np.testing.assert_allclose(gradc.grad(f)(X), [1.0, 2.0, 0.0])


# ---------------------------------------------------------------- shape functions: spelled as plain NumPy
def test_flip_and_roll_read_as_slices():
    source = gradc.compile(lambda x: np.sum(np.flip(x) * np.roll(x, 1)), X).source
    assert "x[::-1]" in source and "np.concatenate((x[-1:], x[:-1])" in source


def test_pad_constant_reads_as_a_concatenation_of_fills():
    source = gradc.compile(lambda x: np.sum(np.pad(x, (1, 2), constant_values=3.0) ** 2), X).source
    assert "np.full((1,), 3.0)" in source


# ---------------------------------------------------------------- refusals
@pytest.mark.parametrize(("f", "error", "match"), [
    (lambda x: np.split(x, 2), ShapeError, "equal parts"),
    (lambda x: np.pad(x, 1, mode="mean"), TraceError, "mode='mean'"),
    (lambda x: np.take(x, [0, 5]), ShapeError, "out of bounds"),
    (lambda x: np.repeat(x, [1, 2]), ShapeError, "repeats"),
    (lambda x: np.block([[x], x]), ShapeError, "depths"),
    (lambda x: np.roll(x, np.sum(x)), TraceError, "one integer"),  # a float shift (an integer one is traced)
    (lambda x: x[np.array([True, False])], ShapeError, "boolean index"),
    (lambda x: x[x > 0], TraceError, "np.where"),
], ids=["split_unequal", "pad_mode", "take_bounds", "repeat_count", "block_depth", "roll_traced", "mask_shape",
        "traced_mask"])
def test_clear_errors(f, error, match):
    with pytest.raises(error, match=match):
        gradc.trace(f, X)


# ---------------------------------------------------------------- index_update: the op itself
def test_index_update_vjp_by_hand():
    # y = x with v written at rows [0, 2] (column reversed); x_bar zero there, v_bar the cotangent read there
    def f(x, v):
        return np.sum(index_update(x, v, [np.array([0, 2])], (("array", 0), ("slice", None, None, -1))) * ct)

    ct = rng.standard_normal((3, 2))
    gx, gv = gradc.grad(f, wrt=("x", "v"))(np.zeros((3, 2)), np.zeros(2))
    expected_x = ct.copy()
    expected_x[[0, 2]] = 0.0
    np.testing.assert_allclose(gx, expected_x)
    np.testing.assert_allclose(gv, (ct[0] + ct[2])[::-1])


def test_index_update_batches():
    def f(x, v, i):
        y = x * 1.0
        y[i] = v
        return y

    x, v = rng.standard_normal((4, 3)), rng.standard_normal((4,))
    graph = gradc.trace(f, x[0], v[0], 1)  # i static: a Python int
    batched = vmap_graph(graph, [0, 0], 4)
    out = evaluate(batched, x, v)[0]
    expected = x.copy()
    expected[:, 1] = v
    np.testing.assert_allclose(out, expected)


def test_index_update_needs_matching_dtypes_and_shapes():
    with pytest.raises(ShapeError, match="broadcast"):
        gradc.trace(lambda x: index_update(x, x, [], (("int", 0),)), M)
    with pytest.raises(ShapeError, match="f32"):
        gradc.trace(lambda x: index_update(x, x[0].astype(np.float32), [], (("int", 0),)), M)
