"""Per-op table entries for the exponential integrals ``expn``, ``exp1`` and ``expi``, for ``spence`` and
``dawsn``, and for functions gradc composes from other ops (Box-Cox, orthogonal polynomials, ``lpmv``, the
complete elliptic integrals: their cases name the ops they are made of), merged into ``op_cases`` through
op_cases_special_scipy.

The orders and degrees are constants of the case; the differentiated argument keeps away from ``x = 0``
(the integrals' singularity), where central differences step across it.
"""
from __future__ import annotations

import scipy.special
from op_cases import Case, f32, uniform
from op_cases_special import routed

S = scipy.special


def _of_order(fn, n):
    return lambda x: fn(n, x)


DIFF_CASES = [
    Case("exp1", routed(lambda x: S.exp1(x)), [uniform(0.2, 6.0, 5)], ("exp1",)),
    Case("exp1_f32", routed(lambda x: S.exp1(x)), [f32(uniform(0.3, 4.0, 4))], ("exp1",), rtol=1e-3),
    Case("expi", routed(lambda x: S.expi(x)), [uniform(0.5, 6.0, 5)], ("expi",)),  # sin(Ei) stays smooth
    Case("expi_negative", routed(lambda x: S.expi(x)), [uniform(-6.0, -0.2, 4)], ("expi",)),
    *[Case(f"expn_order_{n}", routed(_of_order(S.expn, n)), [uniform(0.2, 6.0, 4)], ("expn",)) for n in (0, 1, 2, 5)],
    Case("spence", routed(lambda z: S.spence(z)), [uniform(0.1, 3.0, 5)], ("spence",)),
    Case("dawsn", routed(lambda x: S.dawsn(x)), [uniform(-4.0, 9.0, 6)], ("dawsn",)),
    Case("boxcox_composed", routed(lambda x, lam: S.boxcox(x, lam) + S.inv_boxcox1p(x, lam)),
         [uniform(0.3, 3.0, 4), uniform(-1.0, 2.0, 4)], ("expm1", "log")),
    Case("orthogonal_polynomials", routed(lambda x, a: S.eval_jacobi(4, a, 0.5, x) + S.eval_gegenbauer(3, a, x)
                                          + S.eval_legendre(5, x) + S.lpmv(1, 3, x)),
         [uniform(-0.9, 0.9, 4), uniform(0.2, 2.0, 4)], ("mul", "sqrt")),
    Case("elliptic_complete", routed(lambda m: S.ellipk(m) + S.ellipe(m) + S.ellipkm1(m)),
         [uniform(0.05, 0.95, 4)], ("sqrt",)),
]

NONDIFF_CASES: list = []
