"""``digamma``, ``erfinv``, ``erfcinv``, ``ndtri``, ``log_ndtr`` and ``erfcx`` (double and float) for the C math
library: C99 has ``lgamma`` but not its derivative, ``erf`` but not its inverse, the log of the normal distribution
or the scaled ``erfc``.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used. Method: for
negative ``x`` the reflection ``psi(x) = psi(1 - x) - pi / tan(pi x)`` (``tan`` of the exact fractional
part nearest 0), then the recurrence ``psi(x) = psi(x + 1) - 1/x`` up to ``x >= 10``, where the asymptotic series
``log x - 1/(2x) - sum B_2k / (2k x^2k)`` to ``x^-14`` is below half an ulp. Special values as SciPy's:
``psi(+0) = -inf``, ``psi(-0) = +inf``, NaN at the negative integers and ``-inf``, ``+inf`` at ``+inf``.

``erfinv``: Giles' single-precision approximation (``w = -log(1 - y^2) < 5``) or the asymptotic
``x^2 = -log(q x sqrt(pi))`` of ``erfc(x) = q`` (iterated twice from ``x^2 = -log q``), then three Halley steps
on ``erf(x) - p``, written as ``q - erfc(x)`` for ``p > 1/2`` where ``q = 1 - p`` is exact: within an ulp or
two of SciPy's (a few 1e-16 relative; measured in ``tests/ops/test_special.py``). ``erfcinv(z)`` passes
``q = z`` itself (no rounding of ``1 - z`` for small ``z``), ``ndtri(p) = -sqrt(2) erfcinv(2p)``.

``log_ndtr(a)``: SciPy's ``log1p(-erfc(a / sqrt 2) / 2)`` from ``a = -1`` up, ``log(erfc(-a / sqrt 2) / 2)``
below (SciPy's ``log(erfcx) - t^2``, where C99 has no ``erfcx``), and below ``-20`` the asymptotic series
``-a^2/2 - log(-a) - log(2 pi)/2 + log(1 - 1/a^2 + 3/a^4 - ...)`` (eleven terms: below 1e-18).

``erfcx(x) = exp(x^2) erfc(x)``: ``x^2`` split exactly with ``fma`` (``exp(x^2)`` keeps its digits, where
SciPy's loses ``x^2`` ulps below 0), the continued fraction of ``erfc`` from ``x = 25``, ``1/(sqrt(pi) x)`` beyond 1e8.

The float versions compute in double (as SciPy's float32 loops do) and round once.
"""

from gradc.backends.c.mathlib.in_double import float_twins

DIGAMMA = """\
/* digamma(x) = d/dx log|Gamma(x)|: reflection below 0, recurrence up to 10, then the asymptotic series */
static inline double gradc_digamma(double x)
{
    double shift = 0.0;
    if (isnan(x) || x == INFINITY) {
        return x;
    }
    if (x == 0.0) {
        return copysign(INFINITY, -x);
    }
    if (x < 0.0) {
        const double whole = floor(x);
        if (x == whole) {
            return NAN;
        }
        /* tan has period pi: take the fraction nearest 0 (exactly), where pi * it loses nothing relative */
        const double frac = x - whole > 0.5 ? x - whole - 1.0 : x - whole;
        shift = -3.141592653589793 / tan(3.141592653589793 * frac);
        x = 1.0 - x;
    }
    while (x < 10.0) {
        shift -= 1.0 / x;
        x += 1.0;
    }
    const double r = 1.0 / (x * x);
    const double series = r * (1.0 / 12.0 - r * (1.0 / 120.0 - r * (1.0 / 252.0 - r * (1.0 / 240.0
                          - r * (1.0 / 132.0 - r * (691.0 / 32760.0 - r * (1.0 / 12.0)))))));
    return shift + (log(x) - 0.5 / x - series);
}"""


ERFINV_CORE = """\
/* x with erf(x) = p for p = |y| in (0, 1), q = 1 - p (exact where it matters: the caller's) */
static inline double gradc_erfinv_core(double p, double q)
{
    double w = -log(q * (1.0 + p));
    double x;
    if (w < 5.0) {  /* Giles (2010), single precision */
        w -= 2.5;
        double a = 2.81022636e-08;
        a = 3.43273939e-07 + a * w;
        a = -3.5233877e-06 + a * w;
        a = -4.39150654e-06 + a * w;
        a = 0.00021858087 + a * w;
        a = -0.00125372503 + a * w;
        a = -0.00417768164 + a * w;
        a = 0.246640727 + a * w;
        a = 1.50140941 + a * w;
        x = a * p;
    } else {  /* erfc(x) ~ exp(-x^2) / (x sqrt(pi)): within 2% */
        const double minus_log_q = -log(q);
        x = sqrt(minus_log_q);
        x = sqrt(minus_log_q - log(x * 1.7724538509055159));
        x = sqrt(minus_log_q - log(x * 1.7724538509055159));
    }
    for (int i = 0; i < 3; ++i) {  /* Halley on f = erf(x) - p: f' = 2/sqrt(pi) exp(-x^2), f'' = -2x f' */
        const double f = p > 0.5 ? q - erfc(x) : erf(x) - p;
        const double step = f / (1.1283791670955126 * exp(-x * x));
        x -= step / (1.0 + x * step);
    }
    return x;
}"""

ERFINV = """\
/* erfinv(y): +-inf at +-1, NaN beyond */
static inline double gradc_erfinv(double y)
{
    const double p = fabs(y);
    if (!(p < 1.0)) {
        return p == 1.0 ? copysign(INFINITY, y) : NAN;
    }
    if (p == 0.0) {
        return y;
    }
    return copysign(gradc_erfinv_core(p, 1.0 - p), y);
}"""

ERFCINV = """\
/* erfcinv(z) = erfinv(1 - z), without rounding 1 - z: +inf at 0, -inf at 2, NaN outside */
static inline double gradc_erfcinv(double z)
{
    if (!(z > 0.0 && z < 2.0)) {
        return z == 0.0 ? INFINITY : (z == 2.0 ? -INFINITY : NAN);
    }
    if (z == 1.0) {
        return 0.0;
    }
    return z < 1.0 ? gradc_erfinv_core(1.0 - z, z) : -gradc_erfinv_core(z - 1.0, 2.0 - z);
}"""

NDTRI = """\
/* ndtri(p): the standard normal quantile, -sqrt(2) erfcinv(2p) */
static inline double gradc_ndtri(double p)
{
    return -1.4142135623730951 * gradc_erfcinv(2.0 * p);
}"""


LOG_NDTR = """\
/* log of the standard normal distribution function, accurate in both tails */
static inline double gradc_log_ndtr(double a)
{
    if (a < -20.0) {  /* erfc underflows near -38: the asymptotic series of log(ndtr) */
        const double r = 1.0 / (a * a);
        double term = 1.0, sum = 1.0;
        for (int k = 1; k < 12; ++k) {
            term *= -(2.0 * k - 1.0) * r;
            sum += term;
        }
        return -0.5 * a * a - log(-a) - 0.91893853320467274 + log(sum);
    }
    if (a < -1.0) {
        return log(0.5 * erfc(-0.70710678118654752 * a));
    }
    return log1p(-0.5 * erfc(0.70710678118654752 * a));
}"""


ERFCX = """\
/* erfcx(x) = exp(x^2) erfc(x): x^2 split exactly (fma) so exp(x^2) keeps its digits; the continued fraction
   1 / (sqrt(pi) (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))) from x = 25 (erfc underflows near 27) */
static inline double gradc_erfcx(double x)
{
    if (isnan(x)) {
        return x;
    }
    if (x < 25.0) {
        if (x < -26.7) {
            return INFINITY;
        }
        const double hi = x * x, lo = fma(x, x, -hi);
        const double grow = exp(hi) * (1.0 + lo);
        return x < 0.0 ? 2.0 * grow - grow * erfc(-x) : grow * erfc(x);
    }
    if (x > 1e8) {  /* the next term is below 1e-16 relative */
        return 0.56418958354775629 / x;
    }
    double t = x;
    for (int k = 40; k >= 1; --k) {
        t = x + 0.5 * k / t;
    }
    return 0.56418958354775629 / t;
}"""


# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_digamma": (DIGAMMA, ()),
    "gradc_erfinv_core": (ERFINV_CORE, ()),
    "gradc_erfinv": (ERFINV, ("gradc_erfinv_core",)),
    "gradc_erfcinv": (ERFCINV, ("gradc_erfinv_core",)),
    "gradc_ndtri": (NDTRI, ("gradc_erfcinv",)),
    "gradc_log_ndtr": (LOG_NDTR, ()),
    "gradc_erfcx": (ERFCX, ()),
    **float_twins(("digamma", "erfinv", "erfcinv", "ndtri", "log_ndtr", "erfcx")),
}
