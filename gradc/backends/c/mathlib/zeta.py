"""``scipy.special.zeta(x, q)`` (double and float) for the C math library: gradc's Hurwitz zeta
(``beta_zeta.HURWITZ_ZETA``, valid for ``x > 1``) with SciPy's values elsewhere: NaN below ``x = 1`` and for NaN,
``+inf`` at ``x = 1``; at ``x = +inf`` 1 for ``q = 1``, ``+inf`` below, NaN above (SciPy's); a pole at
non-positive integer ``q``; NaN for negative ``q`` with a non-integer ``x`` (a negative base to a fractional power).

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.
"""

from gradc.backends.c.mathlib.in_double import float_twin

ZETA = """\
/* scipy.special.zeta(x, q): the Hurwitz zeta function with SciPy's special values */
static inline double gradc_zeta(double x, double q)
{
    if (isnan(x) || isnan(q) || x < 1.0) {
        return NAN;
    }
    if (x == 1.0) {
        return INFINITY;
    }
    if (isinf(x)) {
        return q == 1.0 ? 1.0 : (q < 1.0 ? INFINITY : NAN);
    }
    if (q < 0.0 && q != floor(q) && x != floor(x)) {
        return NAN;
    }
    return gradc_hurwitz_zeta(x, q);
}"""


# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_zeta": (ZETA, ("gradc_hurwitz_zeta",)),
    "gradc_zetaf": float_twin("zeta", "x, q"),
}
