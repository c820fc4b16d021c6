"""Outside loops, ``acc + scatter`` of a gather at provably distinct positions is written ``acc[rows, labels] += v``
(no zero array, no whole-array addition, a constant cotangent added as a scalar): same gradients as without the
rewrite and as central differences, on random gathers; repeated positions keep ``np.add.at``; a basic index's
scatter is left as it was."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.ir.graph import Const, Var
from gradc.ir.types import TensorType
from gradc.ops.index_add import distinct_positions
from gradc.passes import in_place
from tests.finite_differences import central_gradient


def _atom(value):
    return Const(np.asarray(value))


def test_distinct_positions_needs_a_constant_of_distinct_entries_and_one_shape():
    labels = Var("labels", TensorType((4,), "i64"))
    assert distinct_positions([])
    assert distinct_positions([_atom(np.arange(4)), labels])
    assert not distinct_positions([_atom([0, 1, 1, 2]), labels])  # a row twice
    assert not distinct_positions([_atom([0, -1, 1, 2]), labels])  # -1 may be the last row again
    assert not distinct_positions([labels, labels])
    assert not distinct_positions([_atom(np.arange(4)[:, None]), labels])  # broadcast against each other


def _loss(kind):
    def picked(x, w, labels):
        rows = np.arange(x.shape[0])
        h = np.tanh(x @ w)
        return np.mean(np.sum(h * h, axis=1) - 3.0 * h[rows, labels])

    def repeated(x, w, labels):
        h = np.tanh(x @ w)
        rows = np.array([0, 0, 1, 1] * (x.shape[0] // 4 + 1))[: x.shape[0]]
        return np.sum(h * h) - np.sum(h[rows, labels])

    def sliced(x, w, labels):
        h = np.tanh(x @ w)
        return np.sum(h * h) + 2.0 * np.sum(h[1:, 0]) - np.sum(h[0])

    return {"picked": picked, "repeated": repeated, "sliced": sliced}[kind]


@pytest.mark.parametrize("kind", ["picked", "repeated", "sliced"])
def test_accumulating_in_place_gives_the_same_gradient(kind):
    rng = np.random.default_rng(len(kind))
    f = _loss(kind)
    for _ in range(4):
        n, d, k = int(rng.integers(4, 9)), int(rng.integers(2, 5)), int(rng.integers(2, 5))
        x, w = rng.standard_normal((n, d)), rng.standard_normal((d, k))
        labels = rng.integers(0, k, n)
        grads = {}
        for on in (True, False):
            saved = in_place.TOP_LEVEL_ACCUMULATION
            in_place.TOP_LEVEL_ACCUMULATION = on
            try:
                compiled = gradc.compile(f, x, w, labels, argnums=1)
            finally:
                in_place.TOP_LEVEL_ACCUMULATION = saved
            grads[on] = compiled.grad(x, w, labels)
            if on and kind == "picked":
                assert "np.add.at" not in compiled.source and "np.zeros" not in compiled.source
            if kind == "repeated":
                assert "np.add.at" in compiled.source  # a position may be picked twice
        np.testing.assert_array_equal(grads[True], grads[False])
        numeric = central_gradient(lambda v, x=x, labels=labels: f(x, v, labels), w)
        np.testing.assert_allclose(grads[True], numeric, rtol=1e-6, atol=1e-8)
