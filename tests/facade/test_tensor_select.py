"""Selection, scatter, sorting and arrangement functions (``gather``, ``scatter_add``, ``sort``, ``topk``, ``roll``,
``meshgrid``, ``hstack``, ...) on the facade: values and gradients against torch 2.13.0 and central differences."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as torch
from tests.facade.reference_check import check

RNG = np.random.default_rng(8)
X = RNG.normal(size=(3, 4))
IDX = np.array([[0, 2], [1, 1], [3, 0]])

CASES = {
    "gather": (lambda T, x: T.gather(x, 1, T.tensor(IDX)), [X]),
    "gather_dim0_method": (lambda T, x: x.gather(0, T.tensor([[2, 0, 1, 1]])), [X]),
    "scatter_add": (lambda T, x, s: T.scatter_add(x, 1, T.tensor(IDX), s), [X, RNG.normal(size=(3, 2))]),
    "scatter_src": (lambda T, x, s: T.scatter(x, 1, T.tensor([[0, 2], [1, 3], [3, 0]]), s),
                    [X, RNG.normal(size=(3, 2))]),
    "scatter_value": (lambda T, x: x.scatter(0, T.tensor([[1, 0, 2, 1]]), 0.5), [X]),
    "scatter_add_in_place": (lambda T, x, s: x.clone().scatter_add_(1, T.tensor(IDX), s), [X, RNG.normal(size=(3, 2))]),
    "index_select": (lambda T, x: T.index_select(x, 1, T.tensor([3, 0, 3])), [X]),
    "index_add": (lambda T, x, s: T.index_add(x, 0, T.tensor([2, 2]), s, alpha=0.5), [X, RNG.normal(size=(2, 4))]),
    "index_add_in_place": (lambda T, x, s: x.clone().index_add_(1, T.tensor([0, 0, 3]), s),
                           [X, RNG.normal(size=(3, 3))]),
    "masked_fill": (lambda T, x: T.masked_fill(x, T.tensor(X > 0), 1.5), [X]),
    "masked_fill_tensor_value": (lambda T, x, v: x.masked_fill(T.tensor(X > 0), v), [X, np.array(0.25)]),
    "masked_fill_in_place": (lambda T, x: x.clone().masked_fill_(T.tensor(X < 0), -2.0), [X]),
    "masked_select": (lambda T, x: T.masked_select(x, T.tensor(X > 0)), [X]),
    "take": (lambda T, x: T.take(x, T.tensor([[0, 11], [5, 5]])), [X]),
    "take_along_dim": (lambda T, x: T.take_along_dim(x, T.tensor(IDX), 1), [X]),
    "sort": (lambda T, x: T.sort(x, 1, descending=True), [X]),
    "sort_dim0": (lambda T, x: x.sort(dim=0), [X]),
    "argsort": (lambda T, x: T.argsort(x, 0), [X]),
    "topk": (lambda T, x: T.topk(x, 2), [X]),
    "topk_smallest": (lambda T, x: x.topk(2, dim=0, largest=False), [X]),
    "kthvalue": (lambda T, x: T.kthvalue(x, 2, 0), [X]),
    "median_all": (lambda T, x: T.median(x), [X]),
    "median_dim": (lambda T, x: x.median(1, keepdim=True), [X]),
    "roll": (lambda T, x: T.roll(x, (1, -1), (0, 1)), [X]),
    "roll_flat": (lambda T, x: x.roll(5), [X]),
    "tile": (lambda T, x: T.tile(x, (2, 1, 2)), [X]),
    "broadcast_to": (lambda T, x: T.broadcast_to(x[:1], (2, 3, 4)), [X]),
    "broadcast_tensors": (lambda T, x, y: T.broadcast_tensors(x, y), [X[:, :1], X[:1]]),
    "meshgrid_ij": (lambda T, a, b: T.meshgrid(a, b, indexing="ij"), [X[0], X[1, :3]]),
    "meshgrid_xy": (lambda T, a, b: T.meshgrid(a, b, indexing="xy"), [X[0], X[1, :3]]),
    "hstack": (lambda T, a, b: T.hstack([a, b]), [X, X[:, :2]]),
    "hstack_vectors": (lambda T, a, b: T.hstack((a, b)), [X[0], X[1]]),
    "vstack": (lambda T, a, b: T.vstack([a, b]), [X[0], X[1]]),
    "dstack": (lambda T, a, b: T.dstack([a, b]), [X, X]),
    "column_stack": (lambda T, a, b: T.column_stack([a, b]), [X[0], X.T[:, :2].copy()]),
    "concat": (lambda T, a, b: T.concat([a, b], dim=1), [X, X]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch_and_central_differences(name):
    f, xs = CASES[name]
    check(f, *xs)


@pytest.mark.parametrize("seed", range(6))
def test_random_gathers_and_scatters(seed):
    """Seeded random shapes, dims and indices (repeated indices included)."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1, 4, size=int(rng.integers(1, 4))))
    dim = int(rng.integers(0, len(shape)))
    idx_shape = tuple(int(rng.integers(1, s + 1)) for s in shape)
    idx = rng.integers(0, shape[dim], size=idx_shape)
    x, src = rng.normal(size=shape), rng.normal(size=idx_shape)
    check(lambda T, a, s: (T.gather(a, dim, T.tensor(idx)), T.scatter_add(a, dim, T.tensor(idx), s)), x, src)


def test_integer_results():
    x = torch.tensor([[0.0, 1.5], [2.0, 0.0]])
    assert torch.nonzero(x).tolist() == [[0, 1], [1, 0]]
    assert [t.tolist() for t in torch.nonzero(x, as_tuple=True)] == [[0, 1], [1, 0]]
    assert torch.count_nonzero(x).item() == 2 and torch.count_nonzero(x, dim=0).tolist() == [1, 1]
    values, inverse, counts = torch.unique(torch.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)
    assert (values.tolist(), inverse.tolist(), counts.tolist()) == ([1, 2, 3], [2, 0, 2, 1], [1, 1, 2])
    assert torch.bincount(torch.tensor([0, 2, 2])).tolist() == [1, 0, 2]
    assert torch.sort(torch.tensor([3, 1, 2])).indices.dtype == torch.int64


def test_bad_indices_are_torchs_errors():
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.gather(torch.ones(2, 2), 1, torch.tensor([[2], [0]]))
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        torch.gather(torch.ones(2, 2), 1, torch.tensor([0, 1]))
    with pytest.raises(RuntimeError, match="k out of range"):
        torch.topk(torch.ones(3), 4)
