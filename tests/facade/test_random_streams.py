"""Random streams against torch 2.13.0's recorded draws (``spec/gen_random.py``, ``spec/random.expected.txt``).

``randn``/``rand``/``randint``/``randperm``, ``normal_``/``uniform_``/``random_``/``bernoulli_``/
``exponential_``, ``torch.normal``/``bernoulli``/``multinomial``, generators and ``nn.init`` must give
torch's values bit for bit after the same seed (sizes 1..40, 100, 1000; float32 and float64).
Where torch itself is importable, seeded random seeds and sizes are compared with it live too.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("random")


def test_every_case_is_recorded():
    assert sorted(EXPECTED) == sorted(fn.__name__ for fn in GEN.CASES)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda fn: fn.__name__)
def test_stream_matches_torch(fn):
    expected = EXPECTED[fn.__name__]
    assert "CASE RAISED" not in repr(expected), expected
    actual = RUNNER.run_case(fn, gradc.torch)
    if isinstance(expected, dict):
        bad = [k for k in expected if actual.get(k) != expected[k]]
        assert not bad, f"{len(bad)} of {len(expected)} differ, first {bad[0]}: {actual.get(bad[0])!r} != " \
                        f"{expected[bad[0]]!r}"
    else:
        assert actual == expected


def test_vectorised_normal_differs_from_numpy_math():
    """The recorded float32 draws need torch's own log/sincos: NumPy's float32 functions miss some bits."""
    from gradc.facade import normal_float32
    gen = gradc.torch.Generator().manual_seed(0)
    u = gen.uniform(1 << 14).reshape(-1, 16)
    ours = normal_float32.box_muller_blocks(u)
    u1, u2 = np.float32(1) - u[:, :8], u[:, 8:]
    plain = np.sqrt(np.float32(-2) * np.log(u1)) * np.cos(np.float32(6.283185307179586) * u2)
    assert np.abs(ours[:, :8] - plain).max() < 1e-5  # the same numbers to rounding ...
    assert (ours[:, :8] != plain).any()  # ... but not the same bits: this test would catch a silent fallback


def test_fma32_rounds_once():
    from gradc.facade.normal_float32 import fma32
    a = np.float32(1 + 2 ** -12)
    # a*a = 1 + 2**-11 + 2**-24: plus -1 - 2**-11 exactly 2**-24, representable; rounding twice would keep it too
    assert fma32(a, a, np.float32(-(1 + 2 ** -11))) == np.float32(2 ** -24)
    x = np.float32(1 + 2 ** -23)
    # x*x = 1 + 2**-22 + 2**-46: halfway cases in float64 are resolved by the exact error term
    assert fma32(x, x, np.float32(0)) == np.float32(1 + 2 ** -22)


def test_init_errors_are_torch_errors():
    init = gradc.torch.nn.init
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.kaiming_uniform_(gradc.torch.empty(4))
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(RuntimeError, match="normal expects std >= 0.0"):
        gradc.torch.empty(3).normal_(0, -1)
    with pytest.raises(RuntimeError, match="random_ expects 'from' to be less than 'to'"):
        gradc.torch.empty(3).random_(5, 2)
    with pytest.raises(RuntimeError, match="set_state"):
        gradc.torch.set_rng_state(gradc.torch.zeros(3, dtype=gradc.torch.int64))


def test_init_of_parameter_records_nothing():
    torch = gradc.torch
    layer = torch.nn.Linear(4, 3)
    torch.nn.init.xavier_uniform_(layer.weight)
    assert layer.weight.grad_fn is None and layer.weight.requires_grad and layer.weight.is_leaf


def test_random_sizes_and_seeds_match_live_torch():
    """Seeded random (seed, size, dtype, mean, std) draws compared with torch itself, when it is installed."""
    real = pytest.importorskip("torch")
    rnd = np.random.default_rng(2026)
    for _ in range(60):
        seed = int(rnd.integers(0, 2 ** 31))
        n = int(rnd.choice([int(rnd.integers(1, 64)), int(rnd.integers(64, 5000))]))
        mean, std = float(rnd.normal()), float(rnd.uniform(0.1, 3))
        for name in ("float32", "float64"):
            for draw in (lambda T, d, n=n: T.randn(n, dtype=d), lambda T, d, n=n: T.rand(n, dtype=d),
                         lambda T, d, n=n, m=mean, s=std: T.empty(n, dtype=d).normal_(m, s),
                         lambda T, d, n=n, m=mean, s=std: T.empty(n, dtype=d).uniform_(m - s, m + s)):
                got = []
                for T in (gradc.torch, real):
                    T.manual_seed(seed)
                    got.append(draw(T, getattr(T, name)).numpy())
                assert got[0].tobytes() == got[1].tobytes(), (seed, n, name, mean, std)
