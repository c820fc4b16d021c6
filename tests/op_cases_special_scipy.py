"""Per-op table entries for SciPy's incomplete gamma and beta functions, Bessel functions and the other
``scipy.special`` functions of issue 24 (merged into ``op_cases``; see its docstring for the checks).

The orders are constants of the case (their derivatives are undefined: tests/ops/test_special_functions.py
checks the refusals); the incomplete functions' shape parameters are differentiated in the ``*_in_a`` cases
(after ``x``, so that the second-order test, in the first argument, stays in x); the differentiated argument
keeps away from the edges of the domain, where central differences step outside it.
"""
from __future__ import annotations

import numpy as np
import scipy.special
from op_cases import Case, NondiffCase, const, f32, positive, uniform
from op_cases_special import routed

from gradc.ops import special_incomplete_shape as shape_derivatives

A = np.array([0.7, 1.0, 2.5, 6.0])  # below, at and above 1 (x^(a-1) changes character)
B = np.array([3.0, 0.8, 1.0, 2.2])
S = scipy.special


def _of_order(fn, v):
    return lambda x: fn(v, x)

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
    # ---- derivatives in the shape parameters (the first argument is x: second order runs in x alone)
    Case("gammainc_da", lambda x: shape_derivatives.gammainc_da(A, x), [uniform(0.3, 8.0, 4)], ("gammainc_da",)),
    Case("gammainc_da_f32", lambda x: shape_derivatives.gammainc_da(np.float32(2.5), x), [f32(uniform(0.5, 4.0, 4))],
         ("gammainc_da",), rtol=1e-3),
    Case("betainc_da", lambda x: shape_derivatives.betainc_da(A, B, x), [uniform(0.1, 0.9, 4)], ("betainc_da",)),
    Case("betainc_db", lambda x: shape_derivatives.betainc_db(A, B, x), [uniform(0.1, 0.9, 4)], ("betainc_db",)),
    Case("gammainc_in_a", routed(lambda x, a: S.gammainc(a, x) + S.gammaincc(a, 2.0 * x)),
         [uniform(0.3, 8.0, 4), uniform(0.5, 6.0, 4)], ("gammainc_da",)),
    Case("gammaincinv_in_a", routed(lambda y, a: S.gammaincinv(a, y) + S.gammainccinv(a, y)),
         [uniform(0.1, 0.9, 4), uniform(0.5, 6.0, 4)], ("gammainc_da",)),
    Case("betainc_in_a_b", routed(lambda x, a, b: S.betainc(a, b, x)),
         [uniform(0.1, 0.9, 4), uniform(0.5, 5.0, 4), uniform(0.5, 5.0, 4)], ("betainc_da", "betainc_db")),
    Case("betaincinv_in_a_b", routed(lambda y, a, b: S.betaincinv(a, b, y)),
         [uniform(0.1, 0.9, 4), uniform(0.5, 5.0, 4), uniform(0.5, 5.0, 4)], ("betainc_da", "betainc_db")),
    # ---- Bessel functions: orders 0 and 1 (their derivatives call jv(2, .) and the like), any order
    *[Case(name, routed((lambda f: lambda x: f(x))(getattr(S, name))), [uniform(0.2, 9.0, 5)], (name,))
      for name in ("j0", "j1", "y0", "y1", "i0", "i1", "k0", "k1", "i0e", "i1e", "k0e", "k1e")],
    Case("i0e_i1e_negative", routed(lambda x: S.i0e(x) * S.i1e(x) + S.i1(x)), [uniform(-6.0, -0.3, 4)],
         ("i0e", "i1e", "i1", "iv")),
    Case("j0_f32", routed(lambda x: S.j0(x)), [f32(uniform(0.2, 9.0, 4))], ("j0",), rtol=1e-3),
    Case("k1e_f32", routed(lambda x: S.k1e(x)), [f32(uniform(0.2, 9.0, 4))], ("k1e",), rtol=1e-3),
    *[Case(f"{name}_order_{v}".replace("-", "minus_").replace(".", "_"),
           routed(_of_order(getattr(S, name), v)), [uniform(0.2, 9.0, 4)], (name,))
      for name in ("jv", "yv", "iv", "kv", "ive", "kve") for v in (0, 1, 3, -2)],
    *[Case(f"{name}_order_{v}".replace("-", "minus_").replace(".", "_"),
           routed(_of_order(getattr(S, name), v)), [uniform(0.2, 9.0, 4)], (name,))
      for name in ("jv", "yv", "iv", "kv", "ive", "kve") for v in (0.5, 2.25, -1.7)],
    Case("jn_yn", routed(lambda x: S.jn(2, x) + S.yn(3, x)), [uniform(0.5, 9.0, 4)], ("jv", "yv")),
    Case("ive_negative_x", routed(lambda x: S.ive(2, x) + S.iv(3, x)), [uniform(-5.0, -0.3, 4)], ("ive", "iv")),
    Case("iv_f32", routed(lambda x: S.iv(1.5, x)), [f32(uniform(0.3, 5.0, 4))], ("iv",), rtol=1e-3),
    # ---- rgamma, erfcx
    Case("rgamma", routed(lambda x: S.rgamma(x)), [uniform(-3.5, 5.0, 6)], ("rgamma", "digamma")),
    Case("rgamma_at_poles", routed(lambda x: S.rgamma(x + np.array([0.0, -1.0, -2.0]))), [const(np.zeros(3))],
         ("rgamma",)),
    Case("erfcx", routed(lambda x: S.erfcx(x)), [uniform(-3.0, 8.0, 6)], ("erfcx",)),
    Case("erfcx_f32", routed(lambda x: S.erfcx(x)), [f32(uniform(-2.0, 4.0, 4))], ("erfcx",), rtol=1e-3),
]

NONDIFF_CASES = [
    NondiffCase("gammasgn", routed(lambda x: S.gammasgn(x)), [const(np.array([-2.5, -1.5, -0.5, 0.5, 3.0, 7.2]))],
                ("gammasgn",)),
]

import op_cases_special_integrals  # noqa: E402  (merged here: one import in op_cases for the SciPy families)

DIFF_CASES.extend(op_cases_special_integrals.DIFF_CASES)
NONDIFF_CASES.extend(op_cases_special_integrals.NONDIFF_CASES)
import op_cases_special_owens  # noqa: E402

DIFF_CASES.extend(op_cases_special_owens.DIFF_CASES)
import op_cases_special_zeta  # noqa: E402

DIFF_CASES.extend(op_cases_special_zeta.DIFF_CASES)
import op_cases_special_sici  # noqa: E402

DIFF_CASES.extend(op_cases_special_sici.DIFF_CASES)
