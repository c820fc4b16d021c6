"""J and Y of fractional order for the C math library (``gradc_jv_real``, ``gradc_yv_real``, double and float).

J and Y of real order ``v >= 0`` and ``x > 0`` (``gradc_bessel_jy``; the scheme of ``bessel.py`` for I and K, after
Temme and Steed): CF1 gives ``J_v'/J_v`` (and the sign of ``J_v``), J and J' recur down to ``mu = v - n``, where
Temme's series for ``Y_mu``, ``Y_{mu+1}`` (``x < 2``, ``|mu| <= 1/2``) and the Wronskian, or Steed's method on the
complex continued fraction CF2 for ``(J' + iY') / (J + iY)`` (``x >= 2``), normalise them; Y recurs up to ``v``.
For ``x > 25`` with ``v^2 < x``, Hankel's asymptotic series (DLMF 10.17.3-4) instead. Negative orders by
``J_{-v} = cos(v pi) J_v - sin(v pi) Y_v`` and ``Y_{-v} = sin(v pi) J_v + cos(v pi) Y_v`` (DLMF 10.4.7-8).

C text only; ``gradc.backends.c.mathlib.bessel`` lists it (it shares ``gradc_temme_gammas`` and ``gradc_sinpi``).
Accuracy against SciPy and mpmath: tests/ops/test_special_functions_c.py.
"""

from gradc.backends.c.mathlib.in_double import float_twins

_BESSEL_JY = """\
/* J_v(x) and Y_v(x) for v >= 0, x > 0 (see gradc/backends/c/mathlib/bessel_jy.py for the method) */
static inline void gradc_bessel_jy(double v, double x, double *j_out, double *y_out)
{
    const double pi = 3.141592653589793, tiny = 1e-300;
    if (x > 25.0 && v * v < x) {  /* Hankel's asymptotic series (DLMF 10.17.3-4): its least term is ~e^-2x */
        const double four_v2 = 4.0 * v * v;
        double term = 1.0, p = 1.0, q = 0.0;
        for (int k = 1; k < 60; ++k) {  /* term = a_k(v) / x^k: even k into P, odd into Q, signs alternating */
            term *= (four_v2 - (2.0 * k - 1.0) * (2.0 * k - 1.0)) / (8.0 * k * x);
            const double signed_term = (k / 2) % 2 ? -term : term;
            if (k % 2) {
                q += signed_term;
            } else {
                p += signed_term;
            }
            if (fabs(term) < 1e-17) {
                break;
            }
        }
        const double phase = (0.5 * v + 0.25) * pi;
        const double c = cos(x) * cos(phase) + sin(x) * sin(phase);  /* cos(x - phase) */
        const double s = sin(x) * cos(phase) - cos(x) * sin(phase);  /* sin(x - phase) */
        const double scale = sqrt(2.0 / (pi * x));
        *j_out = scale * (p * c - q * s);
        *y_out = scale * (p * s + q * c);
        return;
    }
    /* mu = v - n: |mu| <= 1/2 for Temme's series (x < 2); CF2 converges fast once mu is below about x */
    const int n = x < 2.0 ? (int)floor(v + 0.5) : (v - x + 1.5 > 0.0 ? (int)floor(v - x + 1.5) : 0);
    const double mu = v - n;
    /* CF1: h = J_v'/J_v = v/x - 1/(2(v+1)/x - 1/(2(v+2)/x - ...)) (modified Lentz); its denominators' signs
       give the sign of J_v */
    double h = v / x, sign = 1.0;
    h = fabs(h) < tiny ? tiny : h;
    double c = h, d = 0.0;
    for (int k = 1; k < 1000000; ++k) {
        const double b = 2.0 * (v + k) / x;
        d = b - d;
        d = fabs(d) < tiny ? tiny : d;
        c = b - 1.0 / c;
        c = fabs(c) < tiny ? tiny : c;
        d = 1.0 / d;
        const double delta = c * d;
        h *= delta;
        if (d < 0.0) {
            sign = -sign;
        }
        if (fabs(delta - 1.0) < 1e-16) {
            break;
        }
    }
    /* J and J' down from v to mu (unnormalised): J_{k-1} = (k/x) J_k + J_k', J_{k-1}' = ((k-1)/x) J_{k-1} - J_k */
    double j_top = sign * 1e-200, jp_top = h * j_top;
    double j = j_top, jp = jp_top, order = v;
    for (int l = n; l >= 1; --l) {
        const double below = order / x * j + jp;
        order -= 1.0;
        jp = order / x * below - j;
        j = below;
        if (fabs(j) > 1e200) {  /* rescale all: only ratios matter */
            j *= 1e-200;
            jp *= 1e-200;
            j_top *= 1e-200;
        }
    }
    const double f = jp / (j == 0.0 ? 1e-300 : j);  /* J_mu'/J_mu */
    double j_mu, y_mu, y_next;
    if (x < 2.0) {  /* Temme's series for Y_mu, Y_{mu+1}; the Wronskian J_mu Y_mu' - J_mu' Y_mu = 2/(pi x) */
        double gamma1, gamma2;
        gradc_temme_gammas(mu, &gamma1, &gamma2);
        const double log_half = log(0.5 * x), sigma = -mu * log_half;
        const double pi_mu = pi * mu;
        const double reflect = fabs(pi_mu) < 1e-300 ? 1.0 : pi_mu / sin(pi_mu);
        const double sinh_ratio = fabs(sigma) < 1e-300 ? 1.0 : sinh(sigma) / sigma;
        double ff = 2.0 / pi * reflect * (gamma1 * cosh(sigma) - gamma2 * sinh_ratio * log_half);
        const double power = exp(sigma);  /* (x/2)^-mu */
        double p = power / (pi * (gamma2 - mu * gamma1));  /* (x/2)^-mu Gamma(1+mu) / pi */
        double q = 1.0 / (power * pi * (gamma2 + mu * gamma1));  /* (x/2)^mu Gamma(1-mu) / pi */
        const double half = 0.5 * pi_mu;
        const double sinc = fabs(half) < 1e-300 ? 1.0 : sin(half) / half;
        const double r = pi * half * sinc * sinc;  /* (2/mu) sin^2(mu pi / 2) */
        double coef = 1.0, sum = ff + r * q, sum_next = p;
        const double minus_quarter_x2 = -0.25 * x * x;
        for (int k = 1; k < 500; ++k) {
            ff = (k * ff + p + q) / (k * k - mu * mu);
            coef *= minus_quarter_x2 / k;
            p /= k - mu;
            q /= k + mu;
            const double term = coef * (ff + r * q);
            sum += term;
            sum_next += coef * p - k * term;
            if (fabs(term) < (1.0 + fabs(sum)) * 1e-17) {
                break;
            }
        }
        y_mu = -sum;
        y_next = -sum_next * 2.0 / x;
        const double yp_mu = mu / x * y_mu - y_next;
        j_mu = 2.0 / (pi * x) / (yp_mu - f * y_mu);
    } else {  /* Steed's method: p + iq = (J' + iY') / (J + iY) at mu by the continued fraction CF2 */
        /* p + iq = -1/(2x) + i + (i/x) T, T = a1/(b1 + a2/(b2 + ...)), a_k = (k - 1/2)^2 - mu^2, b_k = 2(x + k i);
           T by the modified Lentz method in real and imaginary parts */
        double tr = 1e-30, ti = 0.0, cr = 1e-30, ci = 0.0, dr = 0.0, di = 0.0;  /* (1e-30: |C|^2 stays normal) */
        for (int k = 1; k < 100000; ++k) {
            const double a = (k - 0.5) * (k - 0.5) - mu * mu, br = 2.0 * x, bi = 2.0 * k;
            dr = br + a * dr;  /* D = 1 / (b + a D) */
            di = bi + a * di;
            if (fabs(dr) + fabs(di) < tiny) {
                dr = tiny;
            }
            double den = dr * dr + di * di;
            dr = dr / den;
            di = -di / den;
            den = cr * cr + ci * ci;  /* C = b + a / C */
            cr = br + a * cr / den;
            ci = bi - a * ci / den;
            if (fabs(cr) + fabs(ci) < tiny) {
                cr = tiny;
            }
            const double er = cr * dr - ci * di, ei = cr * di + ci * dr;  /* delta = C D */
            const double nr = tr * er - ti * ei;
            ti = tr * ei + ti * er;
            tr = nr;
            if (fabs(er - 1.0) + fabs(ei) < 1e-16) {
                break;
            }
        }
        const double p = -0.5 / x - ti / x, q = 1.0 + tr / x;  /* (i/x) T = (-ti + i tr) / x */
        const double gamma = (p - f) / q;
        j_mu = copysign(sqrt(2.0 / (pi * x) / ((p - f) * gamma + q)), j);
        y_mu = gamma * j_mu;
        const double yp_mu = y_mu * (p + q / gamma);
        y_next = mu / x * y_mu - yp_mu;
    }
    *j_out = j_top * (j_mu / j);
    for (int i = 1; i <= n; ++i) {  /* Y up to v: Y_{k+1} = (2k/x) Y_k - Y_{k-1} */
        const double up = 2.0 * (mu + i) / x * y_next - y_mu;
        y_mu = y_next;
        y_next = up;
        if (isinf(up)) {  /* overflow on the way up: Y_v is beyond it (-inf near 0, as SciPy's) */
            y_mu = up;
            break;
        }
    }
    *y_out = y_mu;
}"""

_JY_REAL = """\
/* J_v(x) (want_y == 0) or Y_v(x) of real order v, SciPy's values at 0, below 0 and at infinity */
static inline double gradc_jy_real(double v, double x, int want_y)
{
    if (isnan(v) || isnan(x) || isinf(x) || (x < 0.0 && v != floor(v))) {
        return NAN;
    }
    const double av = fabs(v);
    if (x == 0.0) {  /* the leading terms' signs: (x/2)^v / Gamma(1 + v) and -(2/x)^|v| cos(|v| pi) Gamma(|v|) / pi */
        if (want_y) {
            if (v >= 0.0) {
                return -INFINITY;
            }
            if (v == floor(v)) {
                return fmod(v, 2.0) != 0.0 ? INFINITY : -INFINITY;
            }
            return cos(3.141592653589793 * av) > 0.0 ? -INFINITY : INFINITY;  /* (SciPy's, at cos's rounding) */
        }
        if (v == 0.0) {
            return 1.0;
        }
        return v > 0.0 || v == floor(v) ? 0.0 : (tgamma(1.0 - av) < 0.0 ? -INFINITY : INFINITY);
    }
    if (x < 0.0) {  /* integer v: J_v(-x) = (-1)^v J_v(x); Y has no real value */
        return want_y ? NAN : (fmod(v, 2.0) != 0.0 ? -1.0 : 1.0) * gradc_jy_real(v, -x, 0);
    }
    double j, y;
    gradc_bessel_jy(av, x, &j, &y);
    if (v < 0.0) {  /* J_{-v} = cos(v pi) J_v - sin(v pi) Y_v, Y_{-v} = sin(v pi) J_v + cos(v pi) Y_v */
        const double r = fmod(av, 2.0);
        const double sn = gradc_sinpi(av), cs = r == 0.5 || r == 1.5 ? 0.0 : cos(3.141592653589793 * r);
        return want_y ? sn * j + cs * y : cs * j - sn * y;
    }
    return want_y ? y : j;
}

static inline double gradc_jv_real(double v, double x)
{
    return gradc_jy_real(v, x, 0);
}

static inline double gradc_yv_real(double v, double x)
{
    return gradc_jy_real(v, x, 1);
}"""



def library():
    """name -> (C text, the names it calls), for ``bessel.LIBRARY``.

    >>> sorted(library())[:2]
    ['gradc_bessel_jy', 'gradc_jv_real']
    """
    return {
        "gradc_bessel_jy": (_BESSEL_JY, ("gradc_temme_gammas",)),
        "gradc_jy_real": (_JY_REAL, ("gradc_bessel_jy", "gradc_sinpi")),
        **{f"gradc_{n}_real": ("", ("gradc_jy_real",)) for n in ("jv", "yv")},
        **float_twins(("jv_real", "yv_real"), "double v, x"),
    }
