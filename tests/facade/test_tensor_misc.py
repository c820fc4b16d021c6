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


MORE = {
    "quantile": (lambda T, a: (T.quantile(a, T.tensor([0.25, 0.9], dtype=a.dtype), dim=1), T.quantile(a, 0.3)), [X]),
    "quantile_keepdim": (lambda T, a: a.quantile(0.5, dim=0, keepdim=True), [X]),
    "unfold": (lambda T, a: (a.unfold(1, 2, 1), a.unfold(0, 2, 2)), [X]),
    "round_decimals": (lambda T, a: T.round(a, decimals=1), [X]),
    "fill_diagonal_": (lambda T, a: a.clone().fill_diagonal_(0.5), [X]),
    "fill_diagonal_wrap": (lambda T, a: a.clone().fill_diagonal_(0.5, wrap=True), [RNG.normal(size=(7, 3))]),
    "in_place_math": (lambda T, a, b: (a.clone().lerp_(b, 0.3), a.clone().clamp_min_(0.1), a.clone().remainder_(1.5),
                                       a.clone().clip_(-1, 1)), [X, Y]),
    "scatter_in_place_chain": (lambda T, a, s: (a * 2).scatter_add_(1, T.tensor([[0, 0], [1, 3], [2, 2]]), s).exp(),
                               [X / 4, RNG.normal(size=(3, 2))]),
}


@pytest.mark.parametrize("name", sorted(MORE))
def test_more_against_torch(name):
    f, xs = MORE[name]
    check(f, *xs)


def test_layout_methods():
    x = torch.arange(12.0).reshape(3, 4)
    assert x.stride() == (4, 1) and x.stride(0) == 4 and x.is_contiguous() and not x.t().is_contiguous()
    assert x.share_memory_() is x and x.pin_memory() is x
    np.testing.assert_allclose(torch.logspace(0, 2, 3).numpy(), [1.0, 10.0, 100.0])


# The names PyTorch's tutorials and examples use most (top-level and Tensor methods), audited against torch
# 2.13.0's; the random samplers (multinomial, bernoulli, normal, randint_like, uniform_, normal_, ...) belong to
# the facade's random-stream work and are not listed here.
COMMON_TOP = """tensor zeros ones randn rand arange linspace cat stack matmul mm bmm sum mean max min argmax argmin exp
log sqrt abs clamp where no_grad manual_seed save load from_numpy sigmoid tanh relu softmax log_softmax transpose
reshape flatten squeeze unsqueeze eq ne gt lt allclose randint randperm topk sort argsort chunk split narrow gather
index_select masked_fill full eye zeros_like ones_like empty norm dist cdist std var cumsum tril triu einsum clip floor
ceil round sign pow square lerp outer diag numel is_tensor set_grad_enabled inference_mode meshgrid broadcast_to
broadcast_tensors flip roll nonzero unique bincount logical_and logical_or logical_not logical_xor isnan isinf isfinite
erf lgamma rsqrt cos sin atan2 hstack vstack concat concatenate tile repeat_interleave unbind movedim permute t
as_tensor finfo iinfo pi e inf nan typename result_type promote_types masked_select count_nonzero std_mean var_mean
nan_to_num fmod remainder floor_divide trunc frac maximum minimum fmax fmin amax amin median quantile logspace
full_like randn_like rand_like triu_indices tril_indices cartesian_prod combinations diff cosine_similarity
pairwise_distance kthvalue baddbmm addmm addmv chain_matmul detach clone ge le greater less not_equal
is_floating_point is_complex dstack column_stack swapaxes moveaxis take take_along_dim select scatter scatter_add
index_add addcmul addcdiv neg reciprocal sinh cosh tan asin acos atan expm1 log2 log10 log1p exp2 sgn heaviside
logsumexp logcumsumexp cummax cummin cumprod prod all any linalg fft special det inverse logdet slogdet cross
matrix_exp pinverse trace kron tensordot""".split()
COMMON_METHODS = """item tolist numpy size shape dim view reshape permute transpose contiguous unsqueeze squeeze expand
repeat sum mean max argmax to cpu cuda detach clone requires_grad_ backward grad zero_ fill_ copy_ add_ mul_ data float
long int bool double half type type_as masked_fill masked_fill_ gather scatter scatter_ scatter_add_ index_select topk
sort argsort chunk split narrow flatten view_as expand_as eq ne all any nonzero norm pow sqrt exp log abs clamp clamp_
new_zeros new_ones numel element_size is_contiguous stride masked_select unique ceil floor round sign t T mT cumsum tril
triu softmax log_softmax lerp_ index_add_ fill_diagonal_ sub_ div_ pow_ sqrt_ exp_ neg_ clamp_min clamp_max unfold roll
flip fliplr std var min argmin prod sigmoid tanh relu mm bmm matmul dot outer diag diagonal trace logsumexp unbind
movedim swapaxes ndim nelement ndimension is_leaf grad_fn retain_grad register_hook requires_grad device dtype
share_memory_ pin_memory isnan isinf isfinite nan_to_num remainder fmod floor_divide logical_not logical_and where clip
clip_ add sub mul div true_divide new_empty new_full new_tensor abs_ cos sin tile repeat_interleave amax amin addmm
baddbmm erf lgamma det inverse cross quantile cummax""".split()
def test_common_names_exist():
    assert [n for n in COMMON_TOP if not hasattr(torch, n)] == []
    assert [n for n in COMMON_METHODS if not hasattr(torch.Tensor, n)] == []


@pytest.mark.skipif(real_torch is None, reason="torch 2.13.0 not installed")
def test_common_names_are_torchs():
    assert [n for n in COMMON_TOP if not hasattr(real_torch, n)] == []
    assert [n for n in COMMON_METHODS if not hasattr(real_torch.Tensor, n)] == []
