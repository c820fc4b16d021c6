"""Per-op table entries for SciPy's incomplete gamma and beta functions, Bessel functions and the other
``scipy.special`` functions of issue 24 (merged into ``op_cases``; see its docstring for the checks).

The shape parameters and orders are constants of the case (their derivatives are refused or undefined:
tests/ops/test_special_functions.py checks the refusals); the differentiated argument keeps away from
the edges of the domain, where central differences step outside it.
"""
from __future__ import annotations

import numpy as np
import scipy.special
from op_cases import Case, f32, positive, uniform
from op_cases_special import routed

A = np.array([0.7, 1.0, 2.5, 6.0])  # below, at and above 1 (x^(a-1) changes character)
B = np.array([3.0, 0.8, 1.0, 2.2])
S = scipy.special

DIFF_CASES = [
    Case("gammainc", routed(lambda x: S.gammainc(A, x)), [uniform(0.3, 8.0, 4)], ("gammainc", "xlogy", "gammaln")),
    Case("gammainc_f32", routed(lambda x: S.gammainc(np.float32(2.5), x)), [f32(uniform(0.5, 4.0, 4))],
         ("gammainc",), rtol=1e-3),
    Case("gammaincc", routed(lambda x: S.gammaincc(A, x)), [uniform(0.3, 8.0, 4)], ("gammaincc", "xlogy")),
    Case("gammaincc_scalar_a", routed(lambda x: S.gammaincc(3.0, x)), [positive(2, 3)], ("gammaincc",)),
    Case("gammaincinv", routed(lambda y: S.gammaincinv(A, y)), [uniform(0.1, 0.9, 4)], ("gammaincinv",)),
    Case("gammainccinv", routed(lambda y: S.gammainccinv(A, y)), [uniform(0.1, 0.9, 4)], ("gammainccinv",)),
    Case("betainc", routed(lambda x: S.betainc(A, B, x)), [uniform(0.1, 0.9, 4)], ("betainc",)),
    Case("betainc_broadcast", routed(lambda x: S.betainc(2.0, 3.0, x)), [uniform(0.1, 0.9, 2, 3)], ("betainc",)),
    Case("betaincinv", routed(lambda y: S.betaincinv(A, B, y)), [uniform(0.1, 0.9, 4)], ("betaincinv",)),
]

NONDIFF_CASES: list = []
