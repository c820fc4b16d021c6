"""Per-op table entries for the sine and cosine integrals of ``scipy.special.sici`` (merged into ``op_cases``
through op_cases_special_scipy), on both sides of ``|x| = 4`` where the C code changes method; ``Ci`` keeps away
from 0, its logarithmic singularity."""
from __future__ import annotations

import scipy.special
from op_cases import Case, f32, uniform
from op_cases_special import routed

S = scipy.special

DIFF_CASES = [
    Case("sine_integral", routed(lambda x: S.sici(x)[0]), [uniform(-9.0, 9.0, 6)], ("sine_integral", "sinc")),
    Case("cosine_integral", routed(lambda x: S.sici(x)[1]), [uniform(0.3, 9.0, 6)], ("cosine_integral",)),
    Case("cosine_integral_negative", routed(lambda x: S.sici(x)[1]), [uniform(-9.0, -0.3, 4)], ("cosine_integral",)),
    Case("sici_f32", routed(lambda x: S.sici(x)[0] + S.sici(x)[1]), [f32(uniform(0.5, 6.0, 4))],
         ("sine_integral", "cosine_integral"), rtol=1e-3),
]

NONDIFF_CASES: list = []
