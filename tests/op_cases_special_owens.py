"""Per-op table entries for Owen's T function ``owens_t(h, a)`` (merged into ``op_cases`` through
op_cases_special_scipy): differentiated in ``h`` (first, so the second-order test runs in ``h``) and in ``a``,
on both sides of ``|a| = 1`` where the C code changes method."""
from __future__ import annotations

import numpy as np
import scipy.special
import scipy.stats
from op_cases import Case, const, f32, uniform
from op_cases_special import routed

S = scipy.special
A = const(np.array([0.3, -0.8, 1.7, 4.0]))
H = const(np.array([0.2, -1.1, 2.5, 0.9]))

DIFF_CASES = [
    Case("owens_t_in_h", routed(lambda h, a: S.owens_t(h, a)), [uniform(-3.0, 3.0, 4), A], ("owens_t", "erf")),
    Case("owens_t_in_a", routed(lambda a, h: S.owens_t(h, a)), [uniform(-3.0, 3.0, 4), H], ("owens_t",)),
    Case("owens_t_both", routed(lambda h, a: S.owens_t(h, a)), [uniform(-2.0, 2.0, 3), uniform(-2.0, 2.0, 3)],
         ("owens_t",)),
    Case("owens_t_f32", routed(lambda h: S.owens_t(h, np.float32(0.7))), [f32(uniform(-2.0, 2.0, 4))],
         ("owens_t",), rtol=1e-3),
]

NONDIFF_CASES: list = []

DIFF_CASES += [
    Case("skewnorm_cdf_in_x", routed(lambda x, a: scipy.stats.skewnorm.cdf(x, a)), [uniform(-3.0, 3.0, 4), A],
         ("skewnorm_cdf", "ndtr")),
    Case("skewnorm_cdf_in_a", routed(lambda a, x: scipy.stats.skewnorm.cdf(x, a)), [uniform(-3.0, 3.0, 4), H],
         ("skewnorm_cdf",)),
]
