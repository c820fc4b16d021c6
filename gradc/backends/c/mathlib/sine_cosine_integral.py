"""The sine and cosine integrals ``Si(x)`` and ``Ci(x)`` of ``scipy.special.sici`` (double and float) for the C math
library: C99 has neither.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.

Up to ``|x| = 4`` the power series ``Si(x) = sum (-1)^k x^(2k+1) / ((2k+1) (2k+1)!)`` and ``Ci(x) = gamma + log|x| +
sum_(k>=1) (-1)^k x^(2k) / (2k (2k)!)`` (``Ci``'s sum cancels against
``gamma + log x`` toward 4: within 1e-15 absolute there, SciPy's 6e-16), summed until a term is
below 1e-17 of the sum. Beyond, both come from ``E_1(i t) = -Ci(t) + i (Si(t) - pi/2)``, whose continued fraction
``e^(-z) / (z + 1 - 1^2 / (z + 3 - 2^2 / (z + 5 - ...)))`` (``z = i t``) converges quickly there (modified Lentz,
to a relative step of 1e-16). SciPy's values: ``Si`` odd, ``+-pi/2`` at ``+-inf``; ``Ci(x) = Ci(|x|)`` for real
``x < 0``, ``-inf`` at 0, 0 at ``+inf``, NaN at ``-inf``.

The float versions compute in double (as SciPy's float32 loops do) and round once.
"""

from gradc.backends.c.mathlib.in_double import float_twins

E1_IMAGINARY = """\
/* E_1(i t) = re + i im for t > 4 by its continued fraction (modified Lentz), in real arithmetic (no complex.h):
   -Ci(t) + i (Si(t) - pi/2) */
static inline void gradc_e1_imaginary(double t, double *re, double *im)
{
    double br = 1.0, bi = t;  /* b = z + 1, z = i t */
    double cr = 1e300, ci = 0.0;
    double scale = 1.0 / (br * br + bi * bi);
    double dr = br * scale, di = -bi * scale;  /* d = 1 / b */
    double hr = dr, hi = di;
    for (int k = 1; k < 1000; ++k) {
        const double a = -(double)k * k;
        br += 2.0;
        const double er = a * dr + br, ei = a * di + bi;  /* d = 1 / (a d + b) */
        scale = 1.0 / (er * er + ei * ei);
        dr = er * scale;
        di = -ei * scale;
        scale = a / (cr * cr + ci * ci);  /* c = b + a / c */
        cr = br + cr * scale;
        ci = bi - ci * scale;
        const double sr = cr * dr - ci * di, si = cr * di + ci * dr;  /* step = c d */
        const double nr = hr * sr - hi * si;
        hi = hr * si + hi * sr;
        hr = nr;
        if (fabs(sr - 1.0) + fabs(si) < 1e-16) {
            break;
        }
    }
    const double cs = cos(t), sn = sin(t);  /* times e^(-i t) */
    *re = hr * cs + hi * sn;
    *im = hi * cs - hr * sn;
}"""

SINE_INTEGRAL = """\
/* Si(x): the power series up to 4, E_1(i |x|) beyond; odd */
static inline double gradc_sine_integral(double x)
{
    const double half_pi = 1.57079632679489661923;
    if (isnan(x)) {
        return x;
    }
    const double t = fabs(x);
    if (isinf(x)) {
        return x > 0 ? half_pi : -half_pi;
    }
    double value;
    if (t <= 4.0) {
        double power = t;  /* (-1)^k t^(2k+1) / (2k+1)! */
        value = t;
        for (int k = 1; k < 60; ++k) {
            power *= -t * t / ((2.0 * k) * (2.0 * k + 1.0));
            const double term = power / (2.0 * k + 1.0);
            value += term;
            if (fabs(term) < 1e-17 * fabs(value)) {
                break;
            }
        }
    } else {
        double re, im;
        gradc_e1_imaginary(t, &re, &im);
        value = half_pi + im;
    }
    return x < 0 ? -value : value;
}"""

COSINE_INTEGRAL = """\
/* Ci(x) = Ci(|x|): the power series up to 4, E_1(i |x|) beyond */
static inline double gradc_cosine_integral(double x)
{
    const double euler = 0.57721566490153286061;
    if (isnan(x) || x == -INFINITY) {
        return NAN;
    }
    const double t = fabs(x);
    if (t == 0.0) {
        return -INFINITY;
    }
    if (isinf(t)) {
        return 0.0;
    }
    if (t > 4.0) {
        double re, im;
        gradc_e1_imaginary(t, &re, &im);
        return -re;
    }
    double power = 1.0;  /* (-1)^k t^(2k) / (2k)! */
    double sum = 0.0;
    for (int k = 1; k < 60; ++k) {
        power *= -t * t / ((2.0 * k - 1.0) * (2.0 * k));
        const double term = power / (2.0 * k);
        sum += term;
        if (fabs(term) < 1e-17 * fabs(sum)) {
            break;
        }
    }
    return euler + log(t) + sum;
}"""



# name -> (C text, the names it calls), for gradc.backends.c.mathlib's table
LIBRARY = {
    "gradc_e1_imaginary": (E1_IMAGINARY, ()),
    "gradc_sine_integral": (SINE_INTEGRAL, ("gradc_e1_imaginary",)),
    "gradc_cosine_integral": (COSINE_INTEGRAL, ("gradc_e1_imaginary",)),
    **float_twins(("sine_integral", "cosine_integral")),
}
