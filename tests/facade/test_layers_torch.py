"""Layers and losses against torch 2.13.0's recorded numbers (``spec/gen_layers*.py``, ``spec/layers*.expected.txt``).

Each case builds seeded layers, runs a forward and a backward and returns initial weights,
outputs, gradients, running statistics, ``grad_fn`` names and ``print(model)`` text. Here the
same case runs under gradc: float32 cases agree to 1e-4 relative, ``_f64`` cases to 1e-10,
strings exactly.
"""
from __future__ import annotations

import pytest

import gradc.torch
from tests.facade.recorded import RUNNER, recorded

SCRIPTS = {name: recorded(name)
           for name in ("layers", "layers_extra")}
CASES = [(name, fn) for name, (gen, _) in SCRIPTS.items() for fn in gen.CASES]


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_every_case_is_recorded(name):
    gen, expected = SCRIPTS[name]
    assert sorted(expected) == sorted(fn.__name__ for fn in gen.CASES)


@pytest.mark.parametrize("script, fn", CASES, ids=lambda v: v if isinstance(v, str) else v.__name__)
def test_case_matches_torch(script, fn):
    expected = SCRIPTS[script][1][fn.__name__]
    assert "CASE RAISED" not in repr(expected), expected
    actual = RUNNER.run_case(fn, gradc.torch)
    rtol = 1e-10 if fn.__name__.endswith("_f64") else 1e-4
    diffs = RUNNER.compare(expected, actual, rtol)
    assert not diffs, "\n".join(diffs[:10])
