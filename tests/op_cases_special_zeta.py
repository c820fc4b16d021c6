"""Per-op table entries for the Hurwitz zeta ``zeta(x, q)`` (merged into ``op_cases`` through
op_cases_special_scipy), differentiated in ``q`` with ``x`` a constant of the case (its derivative in ``x`` is
refused: tests/ops/test_special_zeta.py)."""
from __future__ import annotations

import numpy as np
import scipy.special
from op_cases import Case, f32, uniform
from op_cases_special import routed

S = scipy.special
X = np.array([1.5, 2.0, 3.3, 7.0])

DIFF_CASES = [
    Case("zeta_in_q", routed(lambda q: S.zeta(X, q)), [uniform(0.3, 5.0, 4)], ("zeta",)),
    Case("zeta_scalar_x", routed(lambda q: S.zeta(2.5, q)), [uniform(0.5, 3.0, 2, 3)], ("zeta",)),
    Case("zeta_f32", routed(lambda q: S.zeta(np.float32(3.0), q)), [f32(uniform(0.5, 3.0, 4))], ("zeta",), rtol=1e-3),
]

NONDIFF_CASES: list = []
