"""Bessel functions for the C math library: J and Y of integer order from libm; J and Y of fractional order, and I and
K of any real order, here.

C text only; ``gradc.backends.c.mathlib`` says what calls what.

**J and Y** of integer order are POSIX (XSI) libm functions ``j0 j1 jn y0 y1 yn``, which C99's ``<math.h>``
does not declare under ``-std=c99`` (glibc declares them only when a feature macro such as ``_XOPEN_SOURCE``
or ``_DEFAULT_SOURCE`` is defined before the first include). Since this text follows the includes of the
translation unit, it declares them itself with their POSIX prototypes (identical redeclarations are valid C
where ``<math.h>`` also declares them) and they link from ``-lm``. The wrappers give SciPy's values where POSIX
leaves them to the library: ``-inf`` at 0 and NaN below 0 for Y.

**J and Y** of fractional order: ``bessel_jy`` (the same scheme as I and K's).

**I and K** of real order ``v >= 0`` and ``x > 0`` (``gradc_bessel_ik``), computed scaled, ``e^-x I_v(x)`` and
``e^x K_v(x)``, so ``ive``/``kve`` neither overflow nor underflow where SciPy's do not:

* with ``n`` the integer nearest ``v`` and ``mu = v - n`` (``|mu| <= 1/2``), ``K_mu`` and ``K_{mu+1}`` come from
  Temme's series (N. M. Temme, J. Comput. Phys. 19, 1975) for ``x <= 2``, whose coefficients need
  ``Gamma_1(mu) = (1/Gamma(1-mu) - 1/Gamma(1+mu)) / (2 mu)`` and ``Gamma_2(mu) = (1/Gamma(1-mu) + 1/Gamma(1+mu)) / 2``;
  both are even series in ``mu`` read off the Taylor coefficients of ``1/Gamma(z)`` (Abramowitz and Stegun
  6.1.34), with no cancellation at ``mu = 0``. For ``x > 2``, Steed's method on the continued fraction CF2
  (Thompson and Barnett, J. Comput. Phys. 64, 1986), which gives ``e^x K_mu`` directly;
* ``K`` climbs to ``v`` by the recurrence ``K_{m+1} = K_{m-1} + (2m/x) K_m`` (stable upward);
* ``I_{v+1} / I_v`` is the continued fraction CF1 (modified Lentz), and the Wronskian
  ``I_v K_{v+1} + I_{v+1} K_v = 1/x`` gives ``I_v``;
* for ``x > 10^4`` with ``4 v^2 < x``, Hankel's asymptotic series (DLMF 10.40.1-2) give both instead (CF1 would
  need about ``x`` terms); for ``|x| < 10^-6``, two terms of the power series of ``I_v`` (DLMF 10.25.2), where
  ``K`` may overflow.

Negative orders: ``K_{-v} = K_v`` and ``I_{-v} = I_v + (2/pi) sin(v pi) K_v`` (DLMF 10.27.2-3); negative ``x``:
``I_n(-x) = (-1)^n I_n(x)`` for integer ``n``, NaN otherwise (as SciPy), ``K`` NaN. The float versions compute
in double and round once. Accuracy against SciPy over grids, tails and near zero: tests/ops/test_special_functions_c.py.
"""

from gradc.backends.c.mathlib import bessel_jy
from gradc.backends.c.mathlib.in_double import float_twin, float_twins

_POSIX = """\
/* POSIX (XSI) Bessel functions of libm (see gradc/backends/c/mathlib/bessel.py: not declared under -std=c99) */
double j0(double);
double j1(double);
double jn(int, double);
double y0(double);
double y1(double);
double yn(int, double);"""

_JY = """\
/* J: SciPy's NaN at +-inf (POSIX: 0) */
static inline double gradc_j0(double x)
{
    return isinf(x) ? NAN : j0(x);
}

static inline double gradc_j1(double x)
{
    return isinf(x) ? NAN : j1(x);
}

static inline double gradc_jv(int n, double x)
{
    return isinf(x) ? NAN : jn(n, x);
}

/* Y: SciPy's -inf at 0, NaN below and at +inf (POSIX leaves pole and domain errors' values to the library) */
static inline double gradc_y0(double x)
{
    return x > 0.0 && x < INFINITY ? y0(x) : (x == 0.0 ? -INFINITY : NAN);
}

static inline double gradc_y1(double x)
{
    return x > 0.0 && x < INFINITY ? y1(x) : (x == 0.0 ? -INFINITY : NAN);
}

static inline double gradc_yv(int n, double x)
{
    if (!(x > 0.0 && x < INFINITY)) {
        return x == 0.0 ? (n % 2 != 0 && n < 0 ? INFINITY : -INFINITY) : NAN;
    }
    return yn(n, x);
}"""

_TEMME_GAMMAS = """\
/* Temme's Gamma_1(mu) and Gamma_2(mu) for |mu| <= 1/2, from 1/Gamma(z) = sum c_k z^k (A&S 6.1.34) */
static inline void gradc_temme_gammas(double mu, double *gamma1, double *gamma2)
{
    static const double c[26] = {
        1.0, 0.5772156649015329, -0.6558780715202538, -0.0420026350340952, 0.1665386113822915,
        -0.0421977345555443, -0.0096219715278770, 0.0072189432466630, -0.0011651675918591, -0.0002152416741149,
        0.0001280502823882, -0.0000201348547807, -0.0000012504934821, 0.0000011330272320, -0.0000002056338417,
        0.0000000061160950, 0.0000000050020075, -0.0000000011812746, 0.0000000001043427, 0.0000000000077823,
        -0.0000000000036968, 0.0000000000005100, -0.0000000000000206, -0.0000000000000054, 0.0000000000000014,
        0.0000000000000001};
    const double m2 = mu * mu;
    double odd = 0.0, even = 0.0;  /* sum c_{2j+2} mu^2j and sum c_{2j+1} mu^2j, Horner from the top */
    for (int j = 12; j >= 0; --j) {
        odd = odd * m2 + c[2 * j + 1];
        even = even * m2 + c[2 * j];
    }
    *gamma1 = -odd;
    *gamma2 = even;
}"""

_BESSEL_IK = """\
/* e^-x I_v(x) and e^x K_v(x) for v >= 0, x > 0 (see gradc/backends/c/mathlib/bessel.py for the method) */
static inline void gradc_bessel_ik(double v, double x, double *i_scaled, double *k_scaled)
{
    const double pi = 3.141592653589793;
    if (x > 1e4 && 4.0 * v * v < x) {  /* Hankel's asymptotic series (DLMF 10.40.1-2), where CF1 needs ~x terms */
        const double four_v2 = 4.0 * v * v;
        double term = 1.0, sum_i = 1.0, sum_k = 1.0;
        for (int k = 1; k < 60; ++k) {
            term *= (four_v2 - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x);
            sum_i += k % 2 ? -term : term;
            sum_k += term;
            if (fabs(term) < 1e-17) {
                break;
            }
        }
        *i_scaled = sum_i / sqrt(2.0 * pi * x);
        *k_scaled = sum_k * sqrt(pi / (2.0 * x));
        return;
    }
    const int n = (int)floor(v + 0.5);
    const double mu = v - n;
    double k_mu, k_next;  /* e^x K_mu(x), e^x K_{mu+1}(x) */
    if (x <= 2.0) {  /* Temme's series */
        double gamma1, gamma2;
        gradc_temme_gammas(mu, &gamma1, &gamma2);
        const double log_half = log(0.5 * x), sigma = -mu * log_half;
        const double pi_mu = pi * mu;
        const double reflect = fabs(pi_mu) < 1e-300 ? 1.0 : pi_mu / sin(pi_mu);
        const double sinh_ratio = fabs(sigma) < 1e-300 ? 1.0 : sinh(sigma) / sigma;
        double f = reflect * (gamma1 * cosh(sigma) - gamma2 * sinh_ratio * log_half);
        const double power = exp(sigma);  /* (x/2)^-mu */
        double p = 0.5 * power / (gamma2 - mu * gamma1);  /* (x/2)^-mu Gamma(1+mu) / 2 */
        double q = 0.5 / (power * (gamma2 + mu * gamma1));  /* (x/2)^mu Gamma(1-mu) / 2 */
        double c = 1.0, sum = f, sum_next = p;
        const double quarter_x2 = 0.25 * x * x;
        for (int k = 1; k < 500; ++k) {
            f = (k * f + p + q) / (k * k - mu * mu);
            c *= quarter_x2 / k;
            p /= k - mu;
            q /= k + mu;
            const double term = c * f;
            sum += term;
            sum_next += c * (p - k * f);
            if (fabs(term) < 1e-17 * fabs(sum)) {
                break;
            }
        }
        const double grow = exp(x);
        k_mu = sum * grow;
        k_next = sum_next * (2.0 / x) * grow;
    } else {  /* Steed's method on CF2 (Thompson and Barnett) */
        const double start = 0.25 - mu * mu;
        double b = 2.0 * (1.0 + x), d = 1.0 / b, h = d, step = d;
        double q_prev = 0.0, q_cur = 1.0, a = -start, c = start, q = start;
        double s = 1.0 + q * step;
        for (int i = 2; i < 100000; ++i) {
            a -= 2.0 * (i - 1);
            c = -a * c / i;
            const double q_new = (q_prev - b * q_cur) / a;
            q_prev = q_cur;
            q_cur = q_new;
            q += c * q_new;
            b += 2.0;
            d = 1.0 / (b + a * d);
            step = (b * d - 1.0) * step;
            h += step;
            const double ds = q * step;
            s += ds;
            if (fabs(ds) < 1e-17 * fabs(s)) {
                break;
            }
        }
        k_mu = sqrt(pi / (2.0 * x)) / s;
        k_next = k_mu * (mu + x + 0.5 - start * h) / x;
    }
    for (int m = 1; m <= n; ++m) {  /* up to K_v, K_{v+1} */
        const double up = k_mu + 2.0 * (mu + m) / x * k_next;
        k_mu = k_next;
        k_next = up;
    }
    *k_scaled = k_mu;
    /* CF1: I_{v+1}/I_v = 1/(2(v+1)/x + 1/(2(v+2)/x + ...)) by Lentz's method (all terms positive) */
    double f = 2.0 * (v + 1.0) / x, cc = f, dd = 0.0;
    for (int k = 2; k < 1000000; ++k) {
        const double bk = 2.0 * (v + k) / x;
        dd = 1.0 / (bk + dd);
        cc = bk + 1.0 / cc;
        const double delta = cc * dd;
        f *= delta;
        if (fabs(delta - 1.0) < 1e-16) {
            break;
        }
    }
    *i_scaled = 1.0 / (x * (k_next + k_mu / f));  /* the Wronskian */
}"""

_SINPI = """\
/* sin(pi v), exact at the integers */
static inline double gradc_sinpi(double v)
{
    const double r = fmod(v, 2.0);  /* exact */
    return r == 0.0 || fabs(r) == 1.0 ? 0.0 : sin(3.141592653589793 * r);
}"""

_IK = """\
/* e^-|x| I_v(x) (scaled != 0) or I_v(x), any real v; fixed: SciPy's i0, i1, i0e, i1e (their values at infinity) */
static inline double gradc_iv_any(double v, double x, int scaled, int fixed)
{
    if (isnan(v) || isnan(x)) {
        return NAN;
    }
    const int integer = v == floor(v);
    if (x < 0.0 && !integer) {
        return NAN;
    }
    const double sign = x < 0.0 && fmod(v, 2.0) != 0.0 ? -1.0 : 1.0;
    const double ax = fabs(x), av = fabs(v);
    if (ax == INFINITY) {
        return fixed && scaled ? sign * 0.0 : NAN;
    }
    if (ax == 0.0) {
        return v == 0.0 ? 1.0 : (v > 0.0 || integer ? 0.0 : (scaled ? NAN : INFINITY));
    }
    if (ax < 1e-6 && !(v < 0.0 && integer)) {  /* (x/2)^v / Gamma(v + 1) (1 + x^2 / (4 (v + 1))) */
        double lead = fabs(v) < 170.0 ? pow(0.5 * ax, v) / tgamma(v + 1.0) : 0.0;  /* pow: no |log x| ulp lost */
        if (lead == 0.0 || !isfinite(lead)) {
            lead = exp(v * log(0.5 * ax) - lgamma(v + 1.0)) * (tgamma(v + 1.0) < 0.0 ? -1.0 : 1.0);
        }
        return sign * lead * (1.0 + ax * ax / (4.0 * (v + 1.0))) * (scaled ? exp(-ax) : 1.0);
    }
    double i_scaled, k_scaled;
    gradc_bessel_ik(av, ax, &i_scaled, &k_scaled);
    if (v < 0.0 && !integer) {  /* I_{-v} = I_v + (2/pi) sin(v pi) K_v */
        i_scaled += 0.6366197723675814 * gradc_sinpi(av) * k_scaled * exp(-2.0 * ax);
    }
    return sign * (scaled ? i_scaled : i_scaled * exp(ax));
}

/* e^x K_v(x) (scaled != 0) or K_v(x), any real v; fixed: SciPy's k0, k1, k0e, k1e (their values at infinity) */
static inline double gradc_kv_any(double v, double x, int scaled, int fixed)
{
    if (isnan(v) || isnan(x) || x < 0.0) {
        return NAN;
    }
    if (x == 0.0) {
        return INFINITY;
    }
    if (x == INFINITY) {
        return scaled && !fixed ? NAN : 0.0;
    }
    double i_scaled, k_scaled;
    gradc_bessel_ik(fabs(v), x, &i_scaled, &k_scaled);
    return scaled ? k_scaled : k_scaled * exp(-x);
}

static inline double gradc_iv(double v, double x)
{
    return gradc_iv_any(v, x, 0, 0);
}

static inline double gradc_ive(double v, double x)
{
    return gradc_iv_any(v, x, 1, 0);
}

static inline double gradc_kv(double v, double x)
{
    return gradc_kv_any(v, x, 0, 0);
}

static inline double gradc_kve(double v, double x)
{
    return gradc_kv_any(v, x, 1, 0);
}"""

_ORDER_FIXED = {"i0": "gradc_iv_any(0.0, x, 0, 1)", "i1": "gradc_iv_any(1.0, x, 0, 1)",
                "i0e": "gradc_iv_any(0.0, x, 1, 1)", "i1e": "gradc_iv_any(1.0, x, 1, 1)",
                "k0": "gradc_kv_any(0.0, x, 0, 1)", "k1": "gradc_kv_any(1.0, x, 0, 1)",
                "k0e": "gradc_kv_any(0.0, x, 1, 1)", "k1e": "gradc_kv_any(1.0, x, 1, 1)"}


def _fixed(name, call):
    return f"static inline double gradc_{name}(double x)\n{{\n    return {call};\n}}"


def _float_ordered(name, order_type):
    return (f"/* {name}f: gradc_{name} in double, rounded once */\n"
            f"static inline float gradc_{name}f({order_type} v, float x)\n{{\n"
            f"    return (float)gradc_{name}(v, (double)x);\n}}")



_LIBM = ("j0", "j1", "jv", "y0", "y1", "yv")
_ANY = ("iv", "ive", "kv", "kve")

# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_posix_bessel": (_POSIX, ()),
    "gradc_jy": (_JY, ("gradc_posix_bessel",)),
    **{f"gradc_{n}": ("", ("gradc_jy",)) for n in _LIBM},
    **{f"gradc_{n}f": float_twin(n, "int v, x" if n.endswith("v") else "x") for n in _LIBM},
    "gradc_temme_gammas": (_TEMME_GAMMAS, ()),
    "gradc_bessel_ik": (_BESSEL_IK, ("gradc_temme_gammas",)),
    "gradc_sinpi": (_SINPI, ()),
    "gradc_ik": (_IK, ("gradc_bessel_ik", "gradc_sinpi")),
    **{f"gradc_{n}": ("", ("gradc_ik",)) for n in _ANY},
    **float_twins(_ANY, "double v, x"),
    **bessel_jy.library(),
    **{f"gradc_{n}": (_fixed(n, call), ("gradc_ik",)) for n, call in _ORDER_FIXED.items()},
    **float_twins(_ORDER_FIXED),
}
