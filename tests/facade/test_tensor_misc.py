"""Rounding, remainders, logical ops, distances, running extremes, index grids, info objects and the torch.* aliases of
Tensor methods on the facade: against torch 2.13.0 and central differences."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as torch
from tests.facade.reference_check import check, real_torch

RNG = np.random.default_rng(21)
X = RNG.normal(size=(3, 4)) * 2
Y = RNG.uniform(0.5, 2.0, size=(3, 4))

CASES = {
    "remainder": (lambda T, a, b: T.remainder(a, b), [X, Y]),
    "remainder_scalar_method": (lambda T, a: a.remainder(1.5), [X]),
    "fmod": (lambda T, a, b: T.fmod(a, b), [X, Y]),
    "frac": (lambda T, a: T.frac(a), [X]),
    "fmax_fmin": (lambda T, a, b: (T.fmax(a, b), T.fmin(a, b)), [X, Y]),
    "clamp_min_max": (lambda T, a: (T.clamp_min(a, -0.5), a.clamp_max(0.5)), [X]),
    "nan_to_num": (lambda T, a: T.nan_to_num(a), [X]),
    "var_mean": (lambda T, a: T.var_mean(a, 1), [X]),
    "std_mean_unbiased": (lambda T, a: T.std_mean(a, 0, correction=0), [X]),
    "dist": (lambda T, a, b: T.dist(a, b, 3), [X, Y]),
    "cdist": (lambda T, a, b: T.cdist(a, b), [X, RNG.normal(size=(2, 4))]),
    "cdist_p1": (lambda T, a, b: T.cdist(a, b, p=1.0), [X, RNG.normal(size=(2, 4))]),
    "cosine_similarity": (lambda T, a, b: T.cosine_similarity(a, b), [X, Y]),
    "pairwise_distance": (lambda T, a, b: T.pairwise_distance(a, b), [X, Y]),
    "cummax": (lambda T, a: T.cummax(a, 1), [X]),
    "cummin": (lambda T, a: a.cummin(0), [X]),
    "logcumsumexp": (lambda T, a: T.logcumsumexp(a, 1), [X]),
    "diff": (lambda T, a: T.diff(a), [X]),
    "diff_n2_dim0": (lambda T, a, p: T.diff(a, n=2, dim=0, prepend=p), [X, RNG.normal(size=(1, 4))]),
    "cartesian_prod": (lambda T, a, b: T.cartesian_prod(a, b), [X[0], X[1, :2]]),
    "combinations": (lambda T, a: T.combinations(a, 2), [X[0]]),
    "baddbmm": (lambda T, c, a, b: T.baddbmm(c, a, b, beta=0.5, alpha=2), [RNG.normal(size=(2, 3, 2)),
                                                                         RNG.normal(size=(2, 3, 4)),
                                                                         RNG.normal(size=(2, 4, 2))]),
    "addmv": (lambda T, c, a, v: T.addmv(c, a, v), [X[:, 0], X, Y[0]]),
    "chain_matmul": (lambda T, a, b: T.chain_matmul(a, b, a), [X[:, :3], Y[:3, :3]]),
    "aliases": (lambda T, a: (T.chunk(a, 2, 1)[1], T.split(a, 1)[2], T.narrow(a, 1, 1, 2), T.unbind(a)[0],
                              T.movedim(a, 0, 1), T.swapaxes(a, 0, 1), T.select(a, 1, 2), T.std(a, 1), T.var(a),
                              T.cosh(a), T.sinh(a), T.atan(a), T.expm1(a), T.diagonal(a)), [X]),
    "where_method": (lambda T, a, b: a.where(a > 0, b), [X, Y]),
    "type_as": (lambda T, a, b: a.type_as(b), [X, Y]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch_and_central_differences(name):
    f, xs = CASES[name]
    check(f, *xs)


def test_integer_and_boolean_results():
    a, b = torch.tensor([-3, 4, 7]), torch.tensor([2, 3, -2])
    assert torch.floor_divide(a, b).tolist() == [-2, 1, -4]
    assert torch.remainder(a, b).tolist() == [1, 1, -1] and torch.fmod(a, b).tolist() == [-1, 1, 1]
    t, f = torch.tensor([True, False]), torch.tensor([True, True])
    assert torch.logical_and(t, f).tolist() == [True, False] and torch.logical_xor(t, f).tolist() == [False, True]
    assert torch.logical_not(torch.tensor([0.0, 2.0])).tolist() == [True, False]
    assert torch.heaviside(torch.tensor([-1.0, 0.0, 2.0]), torch.tensor(0.5)).tolist() == [0.0, 0.5, 1.0]
    assert torch.tril_indices(3, 3).tolist() == [[0, 1, 1, 2, 2, 2], [0, 0, 1, 0, 1, 2]]
    assert torch.triu_indices(2, 3, 1).tolist() == [[0, 0, 1], [1, 2, 2]]
    assert torch.nan_to_num(torch.tensor([float("nan"), float("inf")]), posinf=9.0).tolist() == [0.0, 9.0]
    if real_torch is not None:
        assert torch.tril_indices(4, 3, -1).tolist() == real_torch.tril_indices(4, 3, -1).tolist()
        assert torch.triu_indices(3, 4, 1).tolist() == real_torch.triu_indices(3, 4, 1).tolist()


def test_info_and_types_match_torch():
    assert torch.pi == np.pi and torch.e == np.e and torch.inf == np.inf and np.isnan(torch.nan)
    for dt in ("float32", "float64", "float16"):
        ours, theirs = torch.finfo(getattr(torch, dt)), (real_torch.finfo(getattr(real_torch, dt)) if real_torch
                                                          else None)
        assert ours.eps == float(np.finfo(dt).eps) and ours.bits == np.finfo(dt).bits
        if theirs is not None:
            assert (ours.eps, ours.max, ours.min, ours.tiny, ours.bits) == (theirs.eps, theirs.max, theirs.min,
                                                                           theirs.tiny, theirs.bits)
    assert torch.iinfo(torch.int32).max == 2**31 - 1 and torch.finfo().eps == torch.finfo(torch.float32).eps
    with pytest.raises(TypeError, match="floating point"):
        torch.finfo(torch.int64)
    assert torch.typename(torch.ones(1)) == "torch.FloatTensor"
    assert torch.typename(torch.ones(1, dtype=torch.float64)) == "torch.DoubleTensor"
    assert torch.result_type(torch.ones(1, dtype=torch.int64), 1.0) == torch.float32
    assert torch.promote_types(torch.int32, torch.float64) == torch.float64
    assert torch.is_floating_point(torch.ones(1)) and not torch.is_floating_point(torch.ones(1, dtype=torch.int64))
    assert not torch.is_complex(torch.ones(1))
    assert torch.ones(2, 3).nelement() == 6 and torch.ones(2, 3).ndimension() == 2
    assert torch.ones(2, dtype=torch.float64).element_size() == 8
