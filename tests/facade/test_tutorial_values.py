"""Values the beginner tutorials print, bit for bit as torch 2.13.0 gives them (``spec/gen_tutorial_values.py``):
``linspace``, full float32 ``sum``/``mean``, the refusal of a number assigned to ``.grad``; and ``linspace``
on seeded random arguments against torch's formula written out in float64 (an independent reference)."""
import numpy as np
import pytest

import gradc.torch as torch
from gradc.facade import fast_nodes
from tests.facade.recorded import RUNNER, recorded

GEN, EXPECTED = recorded("tutorial_values")


def test_every_case_is_recorded():
    assert [fn.__name__ for fn in GEN.CASES] == list(EXPECTED)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda f: f.__name__)
def test_matches_torch_bit_for_bit(fn, monkeypatch):
    # full float32 sums in torch's order are opt-in (GRADC_TORCH_EXACT_SUMS=1: they cost the eager path its speed)
    monkeypatch.setattr(fast_nodes, "EXACT_FLOAT32_SUMS", True)
    assert RUNNER.run_case(fn, torch) == EXPECTED[fn.__name__]


def test_full_float32_sums_take_numpys_order_by_default():
    """Off by default: the sum is NumPy's (equal to torch's up to the last bit), not torch's order."""
    x = np.random.default_rng(1).standard_normal(2000).astype(np.float32)
    assert not fast_nodes.EXACT_FLOAT32_SUMS
    assert torch.tensor(x).sum().item() == float(x.sum())


@pytest.mark.parametrize("seed", range(20))
def test_float32_linspace_is_one_rounding_of_torchs_formula(seed):
    rng = np.random.default_rng(seed)
    a, b = (float(v) for v in rng.standard_normal(2) * 10.0 ** rng.integers(-3, 4, 2))
    n = int(rng.integers(2, 500))
    s, e = np.float32(a), np.float32(b)
    step = np.float64((e - s) / np.float32(n - 1))
    i = np.arange(n)
    ref = np.where(i < n // 2, np.float64(s) + step * i, np.float64(e) - step * (n - 1 - i)).astype(np.float32)
    assert np.array_equal(torch.linspace(a, b, n).numpy(), ref)
