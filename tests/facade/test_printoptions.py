"""``torch.set_printoptions`` on the facade: the same text as torch 2.13.0 for each setting (skipped without torch)."""
from __future__ import annotations

import numpy as np
import pytest

import gradc.torch as torch

real_torch = pytest.importorskip("torch")

RNG = np.random.default_rng(3)
VALUES = [RNG.normal(size=(3, 4)).astype(np.float32), np.arange(2000, dtype=np.float32).reshape(40, 50) / 7,
          np.array([1e-6, 1.0, 1e6]), np.array([1.0, 2.0, 3.0]), RNG.normal(size=(7,)) * 100,
          np.arange(30).reshape(5, 6)]
SETTINGS = [dict(precision=2), dict(precision=8), dict(profile="short"), dict(profile="full", linewidth=200),
            dict(threshold=10, edgeitems=1), dict(sci_mode=True), dict(sci_mode=False, precision=3),
            dict(linewidth=40)]


@pytest.fixture(autouse=True)
def _restore():
    yield
    torch.set_printoptions(profile="default")
    real_torch.set_printoptions(profile="default")


@pytest.mark.parametrize("setting", range(len(SETTINGS)))
@pytest.mark.parametrize("value", range(len(VALUES)))
def test_text_is_torchs(setting, value):
    torch.set_printoptions(**SETTINGS[setting])
    real_torch.set_printoptions(**SETTINGS[setting])
    assert repr(torch.tensor(VALUES[value])) == repr(real_torch.tensor(VALUES[value]))


def test_default_profile_restores():
    torch.set_printoptions(precision=1)
    torch.set_printoptions(profile="default")
    assert repr(torch.tensor([1 / 3])) == "tensor([0.3333])"
