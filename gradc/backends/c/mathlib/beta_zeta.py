"""``polygamma``, ``betaln`` and ``beta`` (double and float) for the C math library: C99 has ``lgamma`` and
``tgamma`` but neither the Hurwitz zeta function nor the beta function.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.

``polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x)`` (n >= 1; n = 0 is ``digamma``). The Hurwitz zeta
``zeta(s, q) = sum_k (q + k)^-s`` is summed directly (the recurrence ``zeta(s, q) = q^-s + zeta(s, q + 1)``)
until ``q >= s + 12``, then the Euler-Maclaurin tail ``q^(1-s)/(s-1) + q^-s/2 + sum_j B_2j/(2j)! (s)_(2j-1)
q^(-s-2j+1)`` (twelve terms: each is below a quarter of the one before, the last below 1e-19 of the sum).
Special values as SciPy's: a pole (``+inf``) at ``q = 0``, the negative integers and ``-inf``, 0 at ``+inf``.

``betaln(a, b) = log|B(a, b)|`` and ``beta(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)``: with every argument
below 171 in magnitude (no ``tgamma`` overflows) the quotient of ``tgamma``'s, divided before it is multiplied;
beyond, ``log|Gamma|`` sums with the signs of the three gammas, and where the larger argument ``a`` is at
least 50 and ``b > 0`` the difference ``lgamma(a) - lgamma(a + b)`` is Stirling's series written without
cancellation, ``-b log(a + b) - (a - 1/2) log1p(b/a) + b + w(a) - w(a + b)`` (``w`` the series' correction
``1/(12z) - 1/(360z^3) + ...``, error below 1e-18 at 50): ``betaln(1e10, 1e-10)`` keeps its digits where
the three ``lgamma`` would cancel. SciPy's special values: ``B = 0`` (``-inf`` for ``betaln``) where ``a + b``
is a pole of Gamma and neither ``a`` nor ``b`` is; at a non-positive integer ``a`` the limit
``(-1)^b B(1 - a - b, b)`` for integers ``b < 1 - a``, ``+inf`` otherwise (and the same with ``a``, ``b`` swapped).

The float versions compute in double (as SciPy's float32 loops do) and round once.
"""

from gradc.backends.c.mathlib.in_double import float_twin, float_twins

HURWITZ_ZETA = """\
/* zeta(s, q) = sum over k >= 0 of (q + k)^-s, for s > 1: summed up to q >= s + 12, then Euler-Maclaurin */
static inline double gradc_hurwitz_zeta(double s, double q)
{
    static const double b2j[12] = {  /* B_2j / (2j)! */
        0.08333333333333333, -0.001388888888888889, 3.306878306878307e-05, -8.267195767195768e-07,
        2.08767569878681e-08, -5.284190138687493e-10, 1.3382536530684679e-11, -3.3896802963225827e-13,
        8.586062056277845e-15, -2.174868698558062e-16, 5.5090028283602295e-18, -1.3954464685812522e-19};
    if (isnan(q)) {
        return q;
    }
    if (q == INFINITY) {
        return 0.0;
    }
    if (q <= 0.0 && q == floor(q)) {
        return INFINITY;  /* a pole (also -inf, as SciPy's) */
    }
    double sum = 0.0;
    while (q < s + 12.0) {
        sum += pow(q, -s);
        q += 1.0;
    }
    const double qs = pow(q, -s);
    double tail = pow(q, 1.0 - s) / (s - 1.0) + 0.5 * qs;
    double term = s * qs / q;  /* (s)_(2j-1) q^(-s-2j+1) */
    for (int j = 0; j < 12; ++j) {
        tail += b2j[j] * term;
        term *= (s + 2.0 * j + 1.0) * (s + 2.0 * j + 2.0) / (q * q);
    }
    return sum + tail;
}"""

POLYGAMMA = """\
/* polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x), n >= 1 */
static inline double gradc_polygamma(int n, double x)
{
    const double sign = n % 2 ? 1.0 : -1.0;
    return sign * tgamma(n + 1.0) * gradc_hurwitz_zeta(n + 1.0, x);
}"""

BETA_CORE = """\
/* the sign of Gamma(x) for x not a pole */
static inline double gradc_gamma_sign(double x)
{
    return x > 0.0 || fmod(floor(x), 2.0) == 0.0 ? 1.0 : -1.0;
}

/* log|B(a, b)|, its sign in *sign; *direct = B itself where the quotient of tgamma's gives it (else NAN) */
static double gradc_beta_core(double a, double b, double *sign, double *direct)
{
    *sign = 1.0;
    *direct = NAN;
    if (isnan(a) || isnan(b)) {
        *sign = NAN;
        return NAN;
    }
    const int a_pole = a <= 0.0 && a == floor(a), b_pole = b <= 0.0 && b == floor(b);
    if (a_pole != b_pole ? b_pole : fabs(b) > fabs(a)) {  /* a pole of Gamma first, else the larger first */
        const double t = a; a = b; b = t;
    }
    if (a <= 0.0 && a == floor(a)) {  /* a pole of Gamma(a): SciPy's limit for integer b < 1 - a */
        if (b == floor(b) && 1.0 - a - b > 0.0 && isfinite(a)) {
            double inner;
            const double log_abs = gradc_beta_core(1.0 - a - b, b, sign, &inner);
            if (fmod(b, 2.0) != 0.0) {
                *sign = -*sign;
                inner = -inner;
            }
            *direct = inner;
            return log_abs;
        }
        *direct = INFINITY;
        return INFINITY;
    }
    const double y = a + b;
    if (y <= 0.0 && y == floor(y)) {  /* Gamma(a + b) infinite: B = 0 */
        *direct = 0.0;
        return -INFINITY;
    }
    if (fabs(a) < 171.0 && fabs(b) < 171.0 && fabs(y) < 171.0) {
        const double ga = tgamma(a), gb = tgamma(b), gy = tgamma(y);
        const double q = fabs(ga) > fabs(gb) ? ga / gy * gb : gb / gy * ga;
        *direct = q;
        *sign = q < 0.0 ? -1.0 : 1.0;
        return log(fabs(q));
    }
    *sign = gradc_gamma_sign(a) * gradc_gamma_sign(b) * gradc_gamma_sign(y);
    if (a == INFINITY) {
        return b > 0.0 ? -INFINITY : NAN;
    }
    if (a >= 50.0 && b > 0.0) {  /* Stirling's series for lgamma(a) - lgamma(a + b), without cancellation */
        const double ra = 1.0 / a, ry = 1.0 / y;
        const double wa = ra * (1.0 / 12.0 - ra * ra * (1.0 / 360.0 - ra * ra * (1.0 / 1260.0
                          - ra * ra * (1.0 / 1680.0))));
        const double wy = ry * (1.0 / 12.0 - ry * ry * (1.0 / 360.0 - ry * ry * (1.0 / 1260.0
                          - ry * ry * (1.0 / 1680.0))));
        return lgamma(b) + (-b * log(y) - (a - 0.5) * log1p(b / a) + b + (wa - wy));
    }
    return lgamma(a) + lgamma(b) - lgamma(y);
}"""

BETALN = """\
/* betaln(a, b) = log|B(a, b)| */
static inline double gradc_betaln(double a, double b)
{
    double sign, direct;
    return gradc_beta_core(a, b, &sign, &direct);
}"""

BETA = """\
/* beta(a, b) = Gamma(a) Gamma(b) / Gamma(a + b) */
static inline double gradc_beta(double a, double b)
{
    double sign, direct;
    const double log_abs = gradc_beta_core(a, b, &sign, &direct);
    return isnan(direct) ? sign * exp(log_abs) : direct;
}"""


# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_hurwitz_zeta": (HURWITZ_ZETA, ()),
    "gradc_polygamma": (POLYGAMMA, ("gradc_hurwitz_zeta",)),
    "gradc_polygammaf": float_twin("polygamma", "int n, x"),
    "gradc_beta_core": (BETA_CORE, ()),
    "gradc_betaln": (BETALN, ("gradc_beta_core",)),
    "gradc_beta": (BETA, ("gradc_beta_core",)),
    **float_twins(("betaln", "beta"), "a, b"),
}
