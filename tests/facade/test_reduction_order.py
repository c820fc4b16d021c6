"""float32 sums and means over dims in torch's summation order (``gradc/facade/torch_sum.py``).

Recorded torch 2.13.0 results (``spec/gen_reductions.py``, ``spec/reductions.expected.txt``) must
match bit for bit; where torch is installed, seeded random shapes and dims are compared live.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch
from gradc.facade import torch_sum
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("reductions")


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda fn: fn.__name__)
def test_reduction_matches_torch(fn):
    expected = EXPECTED[fn.__name__]
    actual = RUNNER.run_case(fn, gradc.torch)
    if isinstance(expected, dict):
        bad = [k for k in expected if actual.get(k) != expected[k]]
        assert not bad, f"{len(bad)} differ, first {bad[0]}"
    else:
        assert actual == expected


def test_values_are_sums_and_gradients_unchanged():
    """The order changes rounding only: the value is the float64 sum to float32 accuracy, the gradient is ones."""
    torch = gradc.torch
    x = torch.randn(37, 53, requires_grad=True)
    for dim in (0, 1):
        got = x.sum(dim)
        want = x.detach().numpy().astype(np.float64).sum(dim)
        assert np.allclose(got.detach().numpy(), want, rtol=1e-5, atol=1e-5)
    x.mean(0).sum().backward()
    assert np.allclose(x.grad.numpy(), np.full((37, 53), 1 / 37, np.float32))


def test_orders_it_does_not_claim_fall_back_to_numpy():
    x = np.random.default_rng(0).standard_normal((4, 5, 6)).astype(np.float32)
    assert torch_sum.torch_order_sum(x, (0, 2), False) is None  # dims not adjacent
    assert torch_sum.torch_order_sum(x.astype(np.float64), (1,), False) is None
    assert torch_sum.torch_order_sum(np.asfortranarray(x), (1,), False) is None


def test_random_shapes_match_live_torch():
    real = pytest.importorskip("torch")
    threads = real.get_num_threads()
    real.set_num_threads(1)
    try:
        rnd = np.random.default_rng(7)
        for _ in range(80):
            ndim = int(rnd.integers(1, 4))
            shape = tuple(int(rnd.choice([int(rnd.integers(1, 20)), int(rnd.integers(20, 300))])) for _ in range(ndim))
            dim = int(rnd.integers(0, ndim))
            x = (rnd.standard_normal(shape) * 10).astype(np.float32)
            for op in ("sum", "mean"):
                want = getattr(real.from_numpy(x), op)(dim).numpy()
                got = getattr(gradc.torch.tensor(x), op)(dim).numpy()
                assert got.tobytes() == want.tobytes(), (shape, dim, op)
    finally:
        real.set_num_threads(threads)


def test_full_sums_in_torch_order_match_live_torch():
    """``torch_order_sum`` over all elements (not wired into ``x.sum()``: see docs/facade.md) is torch's."""
    real = pytest.importorskip("torch")
    threads = real.get_num_threads()
    real.set_num_threads(1)
    try:
        rnd = np.random.default_rng(11)
        for n in list(range(1, 200)) + [511, 512, 513, 1000, 4096, 20000]:
            x = (rnd.standard_normal(n) * 10).astype(np.float32)
            got = torch_sum.torch_order_sum(x, None, False)
            assert got.tobytes() == real.from_numpy(x).sum().numpy().tobytes(), n
    finally:
        real.set_num_threads(threads)
