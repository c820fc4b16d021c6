"""``spence(z) = Li2(1 - z)`` (double and float), the dilogarithm of SciPy's convention, and Dawson's integral
``dawsn(x) = e^(-x^2) integral_0^x e^(t^2) dt``, for the C math library.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.

Method: ``Li2(y) = S(u)`` with ``u = -log(1 - y)`` for ``0 <= y <= 1/2``, where ``S(u) = u - u^2/4 + sum_k
B_2k / (2k+1)! u^(2k+1)`` (the Bernoulli series; ``|u| <= log 2``, so eleven terms reach 1e-19), and the
reflections (DLMF 25.12.6 and the inversion ``Li2(y) + Li2(1/y)``) written in ``z`` itself, so ``1 - x = z`` is never
rounded:

    z < 1/2:       pi^2/6 - log(z) log1p(-z) - S(-log1p(-z))
    1/2 <= z <= 1: S(-log z)
    1 < z <= 2:    -S(log z) - log(z)^2 / 2
    z > 2:         -pi^2/6 - log(z-1)^2 / 2 + S(log z - log(z-1)) + log(z / (z-1))^2 / 2

SciPy's special values: NaN for ``z < 0``, NaN and ``+inf``; ``pi^2/6`` at 0.

``dawsn``: up to ``|x| = 7`` the series ``e^(-x^2) sum_k x^(2k+1) / (k! (2k+1))`` of positive terms (the same rounded
``x^2`` in the exponential and the terms: its rounding cancels to first order), beyond the asymptotic series
``1/(2x) sum_k (2k-1)!! / (2x^2)^k`` up to its smallest term (below 1e-19 relative from 7 on). Odd in ``x``.

The float versions compute in double.
"""

from gradc.backends.c.mathlib.in_double import float_twins

SPENCE = """\
/* spence(z) = integral_1^z log(t) / (1 - t) dt = Li2(1 - z), for z >= 0 */
static inline double gradc_dilog_series(double u)
{
    static const double c[11] = {  /* B_2k / (2k+1)! */
        0.027777777777777776, -0.0002777777777777778, 4.72411186696901e-06, -9.185773074661964e-08,
        1.8978869988971e-09, -4.0647616451442256e-11, 8.921691020456452e-13, -1.9939295860721074e-14,
        4.518980029619918e-16, -1.0356517612181247e-17, 2.395218621026187e-19};
    const double u2 = u * u;
    double sum = 0.0;
    for (int k = 10; k >= 0; k--) {
        sum = sum * u2 + c[k];
    }
    return u - 0.25 * u2 + u * u2 * sum;
}

static inline double gradc_spence(double z)
{
    const double pi2_6 = 1.6449340668482264;
    if (isnan(z) || z < 0.0 || z == INFINITY) {
        return NAN;
    }
    if (z < 0.5) {
        const double l = log1p(-z);
        return z == 0.0 ? pi2_6 : pi2_6 - log(z) * l - gradc_dilog_series(-l);
    }
    if (z <= 1.0) {
        return gradc_dilog_series(-log(z));
    }
    if (z <= 2.0) {
        const double l = log(z);
        return -gradc_dilog_series(l) - 0.5 * l * l;
    }
    const double lz = log(z);
    const double lm = log(z - 1.0);
    const double ratio = lz - lm;
    return -pi2_6 - 0.5 * lm * lm + gradc_dilog_series(ratio) + 0.5 * ratio * ratio;
}"""

DAWSN = """\
/* Dawson's integral: a series of positive terms up to |x| = 7, the asymptotic series beyond */
static inline double gradc_dawsn(double x)
{
    const double a = fabs(x);
    if (isnan(x) || x == 0.0) {
        return x;
    }
    double value;
    if (a <= 7.0) {
        const double square = a * a;
        double term = a;
        double sum = a;
        for (int k = 1; k < 400; k++) {
            term *= square / k;
            const double part = term / (2 * k + 1);
            sum += part;
            if (part < sum * 1e-17) {
                break;
            }
        }
        value = exp(-square) * sum;
    } else if (a == INFINITY) {
        value = 0.0;
    } else {
        const double step = 1.0 / (2.0 * a * a);
        double term = 1.0;
        double sum = 1.0;
        for (int k = 1; k < 200; k++) {
            const double next = term * (2 * k - 1) * step;
            if (next >= term || next < 1e-19 * sum) {
                break;
            }
            term = next;
            sum += term;
        }
        value = sum / (2.0 * a);
    }
    return copysign(value, x);
}"""

# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_dawsn": (DAWSN, ()),
    "gradc_spence": (SPENCE, ()),
    **float_twins(("dawsn", "spence")),
}
