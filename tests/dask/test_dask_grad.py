"""gradc.dask: data-parallel value and gradient against closed-form NumPy gradients on the whole data.

Each loss has its gradient written by hand in NumPy (the independent reference),
computed on all rows at once; gradc.dask's chunked value and gradient must match
it to 1e-12 relative, with a ragged last chunk, a single chunk, many chunks
summed in a tree, the threaded scheduler and a dask.distributed LocalCluster.
Losses that are not sums over rows must be refused with the op named.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import gradc
import gradc.dask

da = pytest.importorskip("dask.array")


def logistic(w, X, y, lam):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + lam * np.sum(w * w)


def logistic_reference(w, X, y, lam):
    z = X @ w
    value = np.mean(np.logaddexp(0.0, z) - y * z) + lam * w @ w
    return value, X.T @ (1.0 / (1.0 + np.exp(-z)) - y) / len(y) + 2.0 * lam * w


def least_squares(w, b, X, y):
    r = X @ w + b - y
    return 0.5 * np.sum(r * r)


def least_squares_reference(w, b, X, y):
    r = X @ w + b - y
    return 0.5 * r @ r, (X.T @ r, np.sum(r))


def softmax_xent(W, X, Y):
    logits = X @ W
    m = np.max(logits, axis=1, keepdims=True)
    logz = np.log(np.sum(np.exp(logits - m), axis=1)) + m[:, 0]
    return np.mean(logz - np.sum(Y * logits, axis=1))


def softmax_xent_reference(W, X, Y):
    logits = X @ W
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    logz = np.log(np.sum(np.exp(logits), axis=1))
    return np.mean(logz - np.sum(Y * logits, axis=1)), X.T @ (p - Y) / len(X)


def data(n, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = (rng.random(n) < 0.4) * 1.0
    return rng.standard_normal(d), X, y


def close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14 * (1 + np.max(np.abs(expected))))


@pytest.mark.parametrize("n, chunk", [(103, 25), (40, 40), (40, 100), (1, 1), (97, 5)],
                         ids=["ragged", "one-chunk", "chunk-larger", "one-row", "tree-of-20"])
def test_logistic_matches_whole_data_gradient(n, chunk):
    w, X, y = data(n)
    vg = gradc.dask.value_and_grad(logistic, wrt="w", rows=("X", "y"), split_every=3)
    value, grad = vg(w, da.from_array(X, chunks=(chunk, 2)), da.from_array(y, chunks=chunk), 0.1)
    expected_value, expected_grad = logistic_reference(w, X, y, 0.1)
    close(value, expected_value)
    close(grad, expected_grad)
    assert isinstance(value, float) and isinstance(grad, np.ndarray)


def test_sum_loss_with_two_parameters_and_lazy_rows():
    w, X, y = data(60)
    Xd = da.from_array(X, chunks=(16, 4)) * 1.0  # a lazy expression, not a stored array
    vg = gradc.dask.value_and_grad(least_squares, wrt=("w", "b"), rows="X, y")
    value, (gw, gb) = vg(w, 0.3, Xd, da.from_array(y, chunks=7))  # y's chunks differ: rechunked to X's
    expected_value, (ew, eb) = least_squares_reference(w, 0.3, X, y)
    close(value, expected_value)
    close(gw, ew)
    close(gb, eb)
    assert len(vg.compiled) == 1  # one compile for chunks of 16 rows and the ragged last one of 12
    (compiled, _), = vg.compiled.values()
    assert "rows = X.shape[0]" in compiled.source


def test_per_row_reductions_over_other_axes():
    rng = np.random.default_rng(1)
    X, W = rng.standard_normal((50, 3)), rng.standard_normal((3, 4))
    Y = np.eye(4)[rng.integers(0, 4, 50)]
    vg = gradc.dask.value_and_grad(softmax_xent, rows=("X", "Y"))
    value, grad = vg(W, da.from_array(X, chunks=(12, 3)), da.from_array(Y, chunks=(12, 4)))
    expected_value, expected_grad = softmax_xent_reference(W, X, Y)
    close(value, expected_value)
    close(grad, expected_grad)


def test_distributed_local_cluster():
    distributed = pytest.importorskip("distributed")
    w, X, y = data(90)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cl, \
            distributed.Client(cl):
        vg = gradc.dask.value_and_grad(logistic, wrt="w", rows=("X", "y"))
        value, grad = vg(w, da.from_array(X, chunks=(20, 4)), da.from_array(y, chunks=20), 0.1)
    expected_value, expected_grad = logistic_reference(w, X, y, 0.1)
    close(value, expected_value)
    close(grad, expected_grad)


def test_one_task_per_chunk_and_one_parameter_key():
    w, X, y = data(100)
    vg = gradc.dask.value_and_grad(logistic, wrt="w", rows=("X", "y"), split_every=4)
    lazy = vg.lazy(w, da.from_array(X, chunks=(10, 4)), da.from_array(y, chunks=10), 0.1)
    names = [str(k[0] if isinstance(k, tuple) else k) for k in dict(lazy.dask)]
    assert sum(n.startswith("_chunk_value_and_grad") for n in names) == 10
    assert sum(n.startswith("_add") for n in names) == 4  # 10 -> 3 -> 1
    assert sum(n.startswith("dict-") for n in names) == 1  # the parameters, once


NOT_SEPARABLE = [
    (lambda w, X: np.sum((X - np.mean(X, axis=0)) @ w), "combines a sum or mean over all rows with per-row"),
    (lambda w, X: np.sum(np.concatenate([X, X]) @ w), "concatenate"),
    (lambda w, X: np.max(X @ w), "max"),
    (lambda w, X: np.sum((X.T @ X) ** 2 @ w), "not linear in the sums over the rows"),
    (lambda w, X: np.log(np.sum(np.exp(X @ w))), "not linear in the sums over the rows"),
    (lambda w, X: np.sum(X @ w) / X.shape[0], "reads the number of rows"),
    (lambda w, X: np.sum(X @ w) + np.mean(X @ w), "mixes sums and means"),
    (lambda w, X: X @ w, "returns per-row values"),
    (lambda w, X: np.sum(X[1:] @ w), "selects some rows"),
]


@pytest.mark.parametrize("loss, message", NOT_SEPARABLE, ids=[m.split()[0] for _, m in NOT_SEPARABLE])
def test_not_row_separable_is_refused(loss, message):
    w, X, _ = data(12)
    vg = gradc.dask.value_and_grad(loss, rows="X")
    with pytest.raises(gradc.TraceError, match=message) as info:
        vg(w, da.from_array(X, chunks=(5, 4)))
    assert "not a sum or mean over the rows" in str(info.value) or "number of rows" in str(info.value)
    assert "test_dask_grad.py" in str(info.value)  # points at the loss's definition


def test_argument_errors():
    w, X, y = data(10)
    Xd, yd = da.from_array(X, chunks=(5, 4)), da.from_array(y, chunks=5)
    with pytest.raises(gradc.ArgumentError, match="rows names Z: not a parameter"):
        gradc.dask.value_and_grad(logistic, rows="Z")(w, Xd, yd, 0.1)
    with pytest.raises(gradc.ArgumentError, match="wrt names the row argument 'X'"):
        gradc.dask.value_and_grad(logistic, wrt="X", rows=("X", "y"))(w, Xd, yd, 0.1)
    with pytest.raises(gradc.ArgumentError, match="different numbers of rows"):
        gradc.dask.value_and_grad(logistic, rows=("X", "y"))(w, Xd, yd[:9], 0.1)
    unknown = Xd[Xd[:, 0] > 0]
    with pytest.raises(gradc.ArgumentError, match="unknown chunk sizes"):
        gradc.dask.value_and_grad(logistic, rows=("X", "y"))(w, unknown, yd, 0.1)
    with pytest.raises(gradc.ArgumentError, match="split_every"):
        gradc.dask.value_and_grad(logistic, rows="X", split_every=1)


def test_gradc_imports_without_dask():
    """The core needs numpy and sympy only: with dask and array_api_compat unimportable, gradc still works."""
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("dask", "distributed", "array_api_compat", "array_api_strict"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import numpy as np, gradc
        assert gradc.grad(lambda x: np.sum(x * x))(np.ones(2)).tolist() == [2.0, 2.0]
        import gradc.dask
        assert "dask" not in sys.modules
        try:
            gradc.dask.value_and_grad(lambda w, X: np.sum(X @ w), rows="X")(np.ones(2), np.ones((3, 2)))
        except ImportError as e:
            print(e)
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "gradc.dask needs Dask: pip install 'gradc[dask]'" in out.stdout
