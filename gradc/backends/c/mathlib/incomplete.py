"""The regularized incomplete gamma and beta functions and their inverses (double and float) for the C math library.

C text only; ``gradc.backends.c.mathlib`` says what calls what. Methods (the classic ones, written here from
their published descriptions):

``gradc_gammainc(a, x)``/``gradc_gammaincc(a, x)``: the prefactor ``x^a e^-x / Gamma(a)`` is computed, for
``a >= 10``, as ``sqrt(a / 2 pi) exp(a (log1p(d) - d) - S(a))`` with ``d = (x - a) / a`` and ``S`` Stirling's
series of ``lgamma`` (no large terms cancel when ``x`` is near ``a``); below, from ``lgamma``. For
``x < a + 1`` the power series ``P = prefactor / a * sum x^n / ((a+1)...(a+n))`` (positive terms), else
the continued fraction of ``Q`` (Legendre's, evaluated by the modified Lentz method); the other one is
``1 -`` it, except ``Q`` for ``a < 1/2`` there: ``-t - (1 + t) a S`` with ``1 + t = x^a / Gamma(a + 1)`` (``t`` by
``expm1``, ``1/Gamma(1 + a) - 1`` by its Taylor series) and ``S`` the alternating series of DLMF 8.7.1, which keeps
``Q``'s relative accuracy as ``a -> 0``. Relative accuracy: a few 1e-15, ~|log value| ulp in the far tails.

``gradc_betainc(a, b, x)``: ``I_x(a, b) = x^a (1-x)^b / (a B(a, b)) * CF`` with the continued fraction of
DLMF 8.17.22 (modified Lentz) where ``x < (a + 1) / (a + b + 2)``, else ``1 - I_{1-x}(b, a)``, except for
``b < 1`` and ``x <= 0.999``, where that complement would lose ``I``'s relative accuracy (``I ~ b`` for tiny
``b``): the positive power series ``I = x^a / (a B(a, b)) sum (1-b)_n / n! a / (a + n) x^n`` (DLMF 8.17.7)
instead. Known limit: beyond ``x = 0.999`` with tiny ``b`` the complement remains (up to 5e-11 relative at
``b = 1e-4``, 1e-7 at ``b = 1e-8``).

The inverses: a starting value (for ``gammaincinv`` the Wilson-Hilferty cube for ``a > 1``, the small-``x``
power law or the exponential tail for ``a <= 1``; for ``betaincinv`` the normal-quantile approximation of
Abramowitz and Stegun 26.5.22 for ``a, b >= 1``, else the two power-law tails) refined by Halley steps on
whichever of ``P - p`` and ``Q - q`` is the smaller (so tails keep their relative accuracy), kept inside
the domain by halving toward the previous iterate. Special values follow SciPy's (NaN outside the domain,
``gammainc(0, x > 0) = 1``, ``gammaincinv(a, 1) = inf``). The float versions compute in double and round once.
"""

from gradc.backends.c.mathlib.in_double import float_twin, float_twins

_GAMMA_FRONT = """\
/* x^a e^-x / Gamma(a) for a > 0, x > 0: Stirling's form for a >= 10 (no cancellation of large terms) */
static inline double gradc_gamma_front(double a, double x)
{
    if (a < 10.0) {
        return exp(a * log(x) - x - lgamma(a));
    }
    const double d = (x - a) / a;
    const double r = 1.0 / (a * a);
    /* lgamma(a) - ((a - 1/2) log a - a + log(2 pi) / 2): Stirling's series, to 1e-17 from a = 10 */
    const double stirling = (1.0 / 12.0 - r * (1.0 / 360.0 - r * (1.0 / 1260.0 - r * (1.0 / 1680.0
                             - r * (1.0 / 1188.0))))) / a;
    const double core = fabs(d) < 0.25 ? gradc_log1p_minus(d) : log(x / a) - d;  /* x / a: no rounding of 1 + d */
    return sqrt(a / 6.283185307179586) * exp(a * core - stirling);
}"""

_LOG1P_MINUS = """\
/* log1p(d) - d for |d| < 1/4, by its series -d^2/2 + d^3/3 - ... (no cancellation) */
static inline double gradc_log1p_minus(double d)
{
    double term = d, sum = 0.0;
    for (int k = 2; k < 80; ++k) {
        term *= -d;
        const double add = term / k;
        sum += add;
        if (fabs(add) <= 1e-17 * fabs(sum)) {
            break;
        }
    }
    return sum;
}"""

_RGAMMA1PM1 = """\
/* 1/Gamma(1 + a) - 1 for |a| <= 1/2, from 1/Gamma(z) = sum c_k z^k (A&S 6.1.34): no cancellation near a = 0 */
static inline double gradc_rgamma1pm1(double a)
{
    static const double c[25] = {
        0.5772156649015329, -0.6558780715202538, -0.0420026350340952, 0.1665386113822915, -0.0421977345555443,
        -0.0096219715278770, 0.0072189432466630, -0.0011651675918591, -0.0002152416741149, 0.0001280502823882,
        -0.0000201348547807, -0.0000012504934821, 0.0000011330272320, -0.0000002056338417, 0.0000000061160950,
        0.0000000050020075, -0.0000000011812746, 0.0000000001043427, 0.0000000000077823, -0.0000000000036968,
        0.0000000000005100, -0.0000000000000206, -0.0000000000000054, 0.0000000000000014, 0.0000000000000001};
    double sum = 0.0;
    for (int k = 24; k >= 0; --k) {
        sum = sum * a + c[k];
    }
    return sum * a;
}"""

_SMALL_A_Q = """\
/* Q(a, x) for 0 < a < 1/2, x < a + 1, where 1 - P loses Q's digits: with x^a / Gamma(a + 1) = 1 + t,
   P = (1 + t)(1 + a S), S = sum_{n>=1} (-x)^n / (n! (a + n)), so Q = -t - (1 + t) a S (DLMF 8.7.1) */
static inline double gradc_small_a_q(double a, double x)
{
    const double t = expm1(a * log(x) + log1p(gradc_rgamma1pm1(a)));  /* log Gamma(1 + a) = -log1p(...) */
    double term = 1.0, sum = 0.0;
    for (int n = 1; n < 200; ++n) {
        term *= -x / n;
        const double add = term / (a + n);
        sum += add;
        if (fabs(add) <= 1e-17 * fabs(sum)) {
            break;
        }
    }
    return -t - (1.0 + t) * a * sum;
}"""

_GAMMA_PQ = """\
/* P(a, x) (upper == 0) or Q(a, x) (upper == 1), regularized incomplete gamma functions */
static inline double gradc_gamma_pq(double a, double x, int upper)
{
    if (isnan(a) || isnan(x) || a < 0.0 || x < 0.0 || (a == 0.0 && x == 0.0)) {
        return NAN;
    }
    if (a == 0.0 || x == INFINITY) {  /* P(0, x > 0) = 1, as SciPy's */
        return a == INFINITY ? NAN : (upper ? 0.0 : 1.0);
    }
    if (x == 0.0 || a == INFINITY) {
        return upper ? 1.0 : 0.0;
    }
    if (upper && a < 0.5 && x < a + 1.0) {
        return gradc_small_a_q(a, x);
    }
    const double front = gradc_gamma_front(a, x);
    if (x < a + 1.0) {  /* the power series of P */
        double term = 1.0, sum = 1.0;
        for (int n = 1; n < 100000; ++n) {
            term *= x / (a + n);
            sum += term;
            if (term <= 1e-17 * sum) {
                break;
            }
        }
        const double p = front * sum / a;
        return upper ? 1.0 - p : p;
    }
    /* Q's continued fraction 1/(x+1-a- 1(1-a)/(x+3-a- 2(2-a)/(x+5-a- ...))), modified Lentz */
    const double tiny = 1e-300;
    double b = x + 1.0 - a, c = 1.0 / tiny, d = 1.0 / b, h = d;
    for (int i = 1; i < 100000; ++i) {
        const double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = b + an / c;
        c = fabs(c) < tiny ? tiny : c;
        const double step = d * c;
        h *= step;
        if (fabs(step - 1.0) <= 1e-16) {
            break;
        }
    }
    const double q = front * h;
    return upper ? q : 1.0 - q;
}"""

_BETA_CF = """\
/* the continued fraction of I_x(a, b) (DLMF 8.17.22) by the modified Lentz method */
static inline double gradc_beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
    double h = d;
    for (int m = 1; m < 100000; ++m) {
        const double even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + even * d;
        d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = 1.0 + even / c;
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        const double odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + odd * d;
        d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = 1.0 + odd / c;
        c = fabs(c) < tiny ? tiny : c;
        const double step = d * c;
        h *= step;
        if (fabs(step - 1.0) <= 1e-16) {
            break;
        }
    }
    return h;
}"""

_BETAINC = """\
/* I_x(a, b), the regularized incomplete beta function */
static inline double gradc_betainc(double a, double b, double x)
{
    if (isnan(a) || isnan(b) || isnan(x) || a < 0.0 || b < 0.0 || x < 0.0 || x > 1.0 || (a == 0.0 && b == 0.0)) {
        return NAN;
    }
    if (a == 0.0 || x == 1.0) {  /* SciPy's limits */
        return 1.0;
    }
    if (b == 0.0 || x == 0.0) {
        return 0.0;
    }
    const double log_beta = lgamma(a) + lgamma(b) - lgamma(a + b);
    const double log_front = a * log(x) + b * log1p(-x) - log_beta;
    if (x < (a + 1.0) / (a + b + 2.0)) {
        return exp(log_front) * gradc_beta_cf(a, b, x) / a;
    }
    if (b < 1.0 && x <= 0.999) {  /* DLMF 8.17.7's positive series: no complement where b is small */
        double u = 1.0, sum = 1.0;
        for (int n = 1; n < 100000; ++n) {
            u *= (n - b) / n * x;
            const double add = u * a / (a + n);
            sum += add;
            if (add <= 1e-17 * sum) {
                break;
            }
        }
        return exp(a * log(x) - log_beta) * sum / a;
    }
    return 1.0 - exp(log_front) * gradc_beta_cf(b, a, 1.0 - x) / b;
}"""

_GAMMA_INVERSE = """\
/* x with P(a, x) = p and Q(a, x) = q (p + q = 1, the smaller one exact) */
static inline double gradc_gamma_inverse(double a, double p, double q)
{
    if (isnan(a) || isnan(p) || isnan(q) || !(a > 0.0) || p < 0.0 || q < 0.0 || p > 1.0 || q > 1.0) {
        return NAN;
    }
    if (p == 0.0) {
        return 0.0;
    }
    if (q == 0.0) {
        return INFINITY;
    }
    double x;
    if (a > 1.0) {  /* Wilson-Hilferty: (x / a)^(1/3) is nearly normal */
        const double z = p < 0.5 ? gradc_ndtri(p) : -gradc_ndtri(q);
        const double s = 1.0 / (9.0 * a);
        const double w = 1.0 - s + z * sqrt(s);
        x = w > 0.0 ? a * w * w * w : 0.5 * a * exp(z / a);
    } else {  /* P ~ x^a / Gamma(a + 1) near 0, Q ~ e^-x beyond */
        const double t = 1.0 - a * (0.253 + a * 0.12);
        x = p < t ? pow(p / t, 1.0 / a) : 1.0 - log(q / (1.0 - t));
    }
    /* Newton, safeguarded by a bracket [lo, hi] of the root (a step leaving it, or not halving the step of two
       iterations before, bisects it geometrically instead): on log(P / p) in log x where p < 1/2 (P's tail
       stays relative), on log(Q / q) in x otherwise (Q's tail is nearly e^-x) */
    const int lower = p < 0.5;
    double lo = 0.0, hi = INFINITY, before = INFINITY, last = INFINITY;
    for (int i = 0; i < 300; ++i) {
        const double r = gradc_gamma_pq(a, x, lower ? 0 : 1);
        const double front = gradc_gamma_front(a, x);
        const double residual = lower ? r - p : q - r;  /* grows with x */
        if (residual == 0.0) {
            break;
        }
        if (residual > 0.0) {
            hi = x;
        } else {
            lo = x;
        }
        double next = NAN;
        if (r > 0.0 && front > 0.0) {
            if (lower) {  /* at most a factor e^2 per step */
                const double step = log1p(residual / p) * r / front;  /* d log P / d log x = front / P */
                next = x * exp(step > 2.0 ? -2.0 : (step < -2.0 ? 2.0 : -step));
            } else {
                next = x + log1p(-residual / q) * r * x / front;  /* dQ/dx = -front / x */
            }
        }
        const int newton = next > lo && next < hi && fabs(next - x) <= 0.5 * before;
        if (!newton) {
            next = hi == INFINITY ? 4.0 * x : (lo == 0.0 ? 0.25 * x : sqrt(lo) * sqrt(hi));
        }
        before = last;
        last = fabs(next - x);
        x = next;
        if (newton && last <= 1e-14 * x) {  /* Newton's next correction is below rounding */
            break;
        }
    }
    return x;
}"""

_BETA_INVERSE = """\
/* x with I_x(a, b) = y */
static inline double gradc_betaincinv(double a, double b, double y)
{
    if (isnan(a) || isnan(b) || isnan(y) || !(a > 0.0) || !(b > 0.0) || y < 0.0 || y > 1.0) {
        return NAN;
    }
    if (y == 0.0 || y == 1.0) {
        return y;
    }
    double x;
    if (a >= 1.0 && b >= 1.0) {  /* Abramowitz and Stegun 26.5.22 */
        const double z = -gradc_ndtri(y);  /* the upper normal quantile */
        const double lam = (z * z - 3.0) / 6.0;
        const double h = 2.0 / (1.0 / (2.0 * a - 1.0) + 1.0 / (2.0 * b - 1.0));
        const double w = z * sqrt(h + lam) / h - (1.0 / (2.0 * b - 1.0) - 1.0 / (2.0 * a - 1.0))
                         * (lam + 5.0 / 6.0 - 2.0 / (3.0 * h));
        x = a / (a + b * exp(2.0 * w));
    } else {  /* the power laws of both ends */
        const double lower = exp(a * log(a / (a + b))) / a, upper = exp(b * log(b / (a + b))) / b;
        const double total = lower + upper;
        x = y < lower / total ? pow(a * total * y, 1.0 / a) : 1.0 - pow(b * total * (1.0 - y), 1.0 / b);
    }
    const double log_beta = lgamma(a) + lgamma(b) - lgamma(a + b);
    for (int i = 0; i < 100; ++i) {  /* Halley: f' = x^(a-1) (1-x)^(b-1) / B, f''/f' = (a-1)/x - (b-1)/(1-x) */
        const double residual = y < 0.5 ? gradc_betainc(a, b, x) - y
                                        : (1.0 - y) - gradc_betainc(b, a, 1.0 - x);
        const double slope = exp((a - 1.0) * log(x) + (b - 1.0) * log1p(-x) - log_beta);
        if (residual == 0.0 || !(slope > 0.0) || !isfinite(slope)) {
            break;
        }
        double u = residual / slope;
        const double curve = u * ((a - 1.0) / x - (b - 1.0) / (1.0 - x));
        u /= 1.0 - 0.5 * (curve < 1.0 ? curve : 1.0);
        double next = x - u;
        if (!(next > 0.0)) {
            next = 0.5 * x;
        } else if (!(next < 1.0)) {
            next = 0.5 * (x + 1.0);
        }
        const double moved = fabs(next - x);
        x = next;
        if (moved <= 1e-15 * x) {
            break;
        }
    }
    return x;
}"""

def _wrapper(name, call):
    return f"static inline double gradc_{name}(double a, double x)\n{{\n    return {call};\n}}"


_WRAPPERS = {"gammainc": "gradc_gamma_pq(a, x, 0)", "gammaincc": "gradc_gamma_pq(a, x, 1)",
             "gammaincinv": "gradc_gamma_inverse(a, x, 1.0 - x)", "gammainccinv": "gradc_gamma_inverse(a, 1.0 - x, x)"}


_TWO = tuple(_WRAPPERS)

# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_log1p_minus": (_LOG1P_MINUS, ()),
    "gradc_gamma_front": (_GAMMA_FRONT, ("gradc_log1p_minus",)),
    "gradc_rgamma1pm1": (_RGAMMA1PM1, ()),
    "gradc_small_a_q": (_SMALL_A_Q, ("gradc_rgamma1pm1",)),
    "gradc_gamma_pq": (_GAMMA_PQ, ("gradc_gamma_front", "gradc_small_a_q")),
    "gradc_gamma_inverse": (_GAMMA_INVERSE, ("gradc_gamma_pq", "gradc_gamma_front", "gradc_ndtri")),
    **{f"gradc_{n}": (_wrapper(n, call), ("gradc_gamma_pq", "gradc_gamma_inverse")) for n, call in _WRAPPERS.items()},
    **float_twins(_TWO, "a, x"),
    "gradc_beta_cf": (_BETA_CF, ()),
    "gradc_betainc": (_BETAINC, ("gradc_beta_cf",)),
    "gradc_betaincf": float_twin("betainc", "a, b, x"),
    "gradc_betaincinv": (_BETA_INVERSE, ("gradc_betainc", "gradc_ndtri")),
    "gradc_betaincinvf": float_twin("betaincinv", "a, b, x"),
}
