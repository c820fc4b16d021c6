"""Seeded sweeps (tests/fuzz/sweep.py, tests/fuzz/control.py) on both targets against NumPy and
central differences.

CI-sized by default (a few hundred cases, a few C units); ``GRADC_FUZZ_LONG=1`` runs twenty times
as many and ``GRADC_FUZZ_SEED=N`` other cases. A case gradc refuses with a clear ``GradcError`` is
skipped (a refusal is not a wrong result); the refusals are counted so a sweep that refuses
everything fails.
"""
import os
import warnings

import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler

from . import control, sweep
from .checks import check_c, check_hvp, check_numpy

LONG = os.environ.get("GRADC_FUZZ_LONG") == "1"
SEED = int(os.environ.get("GRADC_FUZZ_SEED", 20261128))
SCALE = 20 if LONG else 1
C_BATCH = 60  # cases per C unit: one build each
needs_cc = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")


def accepted(cases):
    """The cases the NumPy target compiles and gets right (asserting on any wrong one)."""
    kept, refused = [], 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            try:
                check_numpy(case)
            except gradc.GradcError:
                refused += 1
                continue
            kept.append(case)
    assert refused <= len(kept) // 4, f"{refused} refused, {len(kept)} accepted"
    return kept


def check_c_batches(cases):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for start in range(0, len(cases), C_BATCH):
            check_c(cases[start:start + C_BATCH])


@pytest.mark.parametrize("part", range(2))
def test_op_sweep_numpy_target(part):
    accepted(sweep.generate(250 * SCALE, SEED + part))


@needs_cc
def test_op_sweep_c_target():
    check_c_batches(accepted(sweep.generate(C_BATCH * 2 * SCALE, SEED + 100)))


def test_control_flow_numpy_target():
    accepted(control.generate(150 * SCALE, SEED + 200))


@needs_cc
def test_control_flow_c_target():
    check_c_batches(accepted(control.generate(C_BATCH * SCALE, SEED + 300)))


def test_hessian_vector_products_on_a_sample():
    """``gradc.hvp`` on every float64 case of a small sample of both generators."""
    rng = np.random.default_rng(SEED)
    cases = accepted(sweep.generate(40 * SCALE, SEED + 400)) + accepted(control.generate(20 * SCALE, SEED + 500))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for case in cases:
            check_hvp(case, rng)
