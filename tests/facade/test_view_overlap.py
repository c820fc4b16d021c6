"""``views.apart``: the quick test that a view's elements occupy distinct memory, which lets an in-place write
through a view skip the exact search for repeated elements. It must never say "apart" for a view whose elements
share memory: checked against the byte offsets of every element on seeded random strided layouts, including
overlapping ``as_strided`` ones; the write through an overlapping view is still refused as torch refuses it."""
from __future__ import annotations

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import gradc.torch as torch
from gradc.facade import views


def _offsets_distinct(a):
    grids = np.indices(a.shape).reshape(a.ndim, -1) if a.ndim else np.zeros((0, 1), int)
    offsets = (grids * np.array(a.strides).reshape(-1, 1)).sum(axis=0)
    return np.unique(offsets).size == offsets.size


@pytest.mark.parametrize("seed", range(200))
def test_apart_never_claims_distinct_memory_wrongly(seed):
    rng = np.random.default_rng(seed)
    base = np.zeros(rng.integers(1, 200), dtype=rng.choice([np.float32, np.float64]))
    ndim = int(rng.integers(0, 4))
    shape = tuple(int(n) for n in rng.integers(0, 5, ndim))
    strides = tuple(int(s) * base.itemsize for s in rng.integers(-6, 7, ndim))
    span = sum(abs(st) * max(n - 1, 0) for st, n in zip(strides, shape)) // base.itemsize
    if span >= base.size:
        base = np.zeros(span + 1, base.dtype)
    start = sum(abs(st) * max(n - 1, 0) for st, n in zip(strides, shape) if st < 0) // base.itemsize
    view = as_strided(base[start:], shape, strides)
    distinct = _offsets_distinct(view)
    if views.apart(view):
        assert distinct, (shape, strides)


@pytest.mark.parametrize("seed", range(50))
def test_apart_accepts_basic_slices_and_transposes(seed):
    rng = np.random.default_rng(seed)
    x = np.zeros(tuple(int(n) for n in rng.integers(1, 6, rng.integers(1, 4))))
    key = tuple(slice(int(rng.integers(0, n)), None, int(rng.choice([1, 2, 3, -1]))) for n in x.shape)
    v = x[key]
    assert views.apart(v) and views.apart(v.T)
    assert views.apart(x[(0,) * x.ndim + (Ellipsis,)])  # a 0-d view


def test_write_through_an_expanded_view_is_still_refused():
    base = torch.zeros(3, requires_grad=True).clone()
    wide = base.expand(2, 3)
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        wide.mul_(torch.tensor(2.0, requires_grad=True))


def test_write_through_a_slice_keeps_its_gradient():
    w = torch.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    s = w * 1.0
    s[1:3] = w[0:2] * 3.0
    s.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), [4.0, 3.0, 0.0, 1.0])
