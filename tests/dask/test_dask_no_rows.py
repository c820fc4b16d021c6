"""gradc.dask over no rows, or with chunks of no rows: as gradc.value_and_grad on the whole data, following NumPy.

A sum over no rows is 0 (gradient 0 from the rows); a mean over no rows is NumPy's mean of an
empty array, nan with NumPy's "Mean of empty slice" RuntimeWarning, and the rows add 0 to the
gradient, as in the whole-data gradient gradc emits. The terms without rows keep their value.
"""
from __future__ import annotations

import random
import warnings

import numpy as np
import pytest

import gradc
import gradc.dask

da = pytest.importorskip("dask.array")


def mean_loss(w, X, y, lam):
    return np.mean((X @ w - y) ** 2) + lam * np.sum(w * w)


def sum_loss(w, X, y, lam):
    return np.sum((X @ w - y) ** 2) + lam * np.sum(w * w)


def _whole(f, w, X, y, lam):
    """The references: the function run by NumPy, and gradc's whole-data gradient (central differences when
    there are rows)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = f(w, X, y, lam)
        grad = gradc.value_and_grad(f)(w, X, y, lam)[1]
    if len(X):
        h = 1e-6
        grad = np.array([(f(w + h * e, X, y, lam) - f(w - h * e, X, y, lam)) / (2 * h) for e in np.eye(len(w))])
    return value, grad


@pytest.mark.parametrize("f", [mean_loss, sum_loss])
def test_no_rows(f):
    w, lam = np.array([0.5, -0.5]), 0.1
    X, y = np.zeros((0, 2)), np.zeros(0)
    vg = gradc.dask.value_and_grad(f, wrt="w", rows=("X", "y"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value, grad = vg(w, da.from_array(X, chunks=2), da.from_array(y, chunks=2), lam)
    expected_value, expected_grad = _whole(f, w, X, y, lam)
    np.testing.assert_array_equal(value, expected_value)  # nan for the mean, as NumPy; 0.05 for the sum
    np.testing.assert_allclose(grad, expected_grad)
    np.testing.assert_allclose(grad, 2 * lam * w)  # the rows add nothing
    messages = [str(c.message) for c in caught if issubclass(c.category, RuntimeWarning)]
    assert (messages == ["Mean of empty slice"]) == (f is mean_loss), messages
    if f is mean_loss:
        assert caught[0].filename == __file__  # attributed to the user's call


def test_random_chunkings_with_empty_chunks_match_the_whole_data():
    rng = random.Random(22)
    nrng = np.random.default_rng(22)
    for _ in range(12):
        chunks = tuple(rng.choice([0, 0, 1, 2, 3]) for _ in range(rng.randint(1, 4)))
        n = sum(chunks)
        X, y = nrng.normal(size=(n, 2)), nrng.normal(size=n)
        w, lam = nrng.normal(size=2), 0.3
        for f in (mean_loss, sum_loss):
            vg = gradc.dask.value_and_grad(f, wrt="w", rows=("X", "y"))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                value, grad = vg(w, da.from_array(X, chunks=(chunks, (2,))), da.from_array(y, chunks=(chunks,)), lam)
            expected_value, expected_grad = _whole(f, w, X, y, lam)
            np.testing.assert_allclose(value, expected_value, rtol=1e-12, err_msg=str(chunks))
            np.testing.assert_allclose(grad, expected_grad, rtol=1e-6, atol=1e-8, err_msg=str(chunks))
