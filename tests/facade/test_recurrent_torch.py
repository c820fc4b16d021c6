"""nn.LSTM/GRU/RNN and their cells against torch 2.13.0's recorded numbers (``spec/gen_recurrent.py``).

Each case seeds, builds a recurrent layer, runs a forward and a backward and returns the initial
parameters (torch's initialisation stream), ``print(layer)``, parameter names, ``state_dict`` keys,
outputs, ``grad_fn`` names and every gradient; here the same case runs under gradc. Initial
parameters must be equal (not close); float32 numbers agree to 1e-4 relative, ``_f64`` cases to
1e-10, strings exactly, except the differences listed in ``KNOWN``.
"""
from __future__ import annotations

import pytest

import gradc.torch
from tests.facade.recorded import RUNNER, recorded

KNOWN = {}  # (case, key, index): (torch's value, the facade's), differences accepted and explained


GEN, EXPECTED = recorded("recurrent")


def test_every_case_is_recorded():
    assert sorted(EXPECTED) == sorted(fn.__name__ for fn in GEN.CASES)


@pytest.mark.parametrize("fn", GEN.CASES, ids=lambda fn: fn.__name__)
def test_case_matches_torch(fn):
    expected = EXPECTED[fn.__name__]
    assert "CASE RAISED" not in repr(expected), expected
    actual = RUNNER.run_case(fn, gradc.torch)
    assert "CASE RAISED" not in repr(actual), actual
    if isinstance(expected, dict) and "init" in expected:
        assert actual["init"] == expected["init"], "initial parameters differ from torch's for the same seed"
        for (case, key, i), (theirs, ours) in KNOWN.items():
            if case == fn.__name__:
                assert (expected[key][i], actual[key][i]) == (theirs, ours)
                actual[key][i] = theirs
    rtol = 1e-10 if fn.__name__.endswith("_f64") else 1e-4
    diffs = RUNNER.compare(expected, actual, rtol)
    assert not diffs, "\n".join(diffs[:10])
