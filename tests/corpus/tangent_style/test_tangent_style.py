"""The Tangent-style corpus (cases_*.py) through every applicable gradc transform.

Each case runs grad, value_and_grad, jvp, vjp and (order 2) hessian where they apply, against
central differences of the function itself (tests/corpus/transform_checks.py). Today's refusals
are strict xfails in ``known_refusals_tangent.py`` naming their part of issue 26.
"""
from __future__ import annotations

import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # transform_checks, beside the corpora

import cases_calls  # noqa: E402
import cases_control  # noqa: E402
import cases_loops  # noqa: E402
from known_refusals_tangent import KNOWN  # noqa: E402
from transform_checks import check, parametrize  # noqa: E402

CASES = cases_control.CASES + cases_calls.CASES + cases_loops.CASES


@pytest.mark.parametrize("case,transform", parametrize(CASES, KNOWN))
def test_tangent_style(case, transform):
    check(case, transform)
