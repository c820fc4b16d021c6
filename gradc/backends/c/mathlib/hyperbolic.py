"""``tanh``, ``sinh`` and ``cosh`` (double and float) for the C math library, in terms of ``expm1``.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.
"""

TANH = """\
/* tanh(x) = sign(x) * e / (e + 2) with e = expm1(2|x|); 1 from |x| = 22 on */
static inline double gradc_tanh(double x)
{
    const double a = gradc_select(fabs(x) > 22.0, 22.0, fabs(x));
    const double e = gradc_expm1(2.0 * a);
    const double t = e / (e + 2.0);
    return gradc_select(fabs(x) < 0x1p-55, x, gradc_select(x < 0.0, -t, t));
}"""

TANHF = """\
/* tanhf(x): as gradc_tanh, in float */
static inline float gradc_tanhf(float x)
{
    const float a = gradc_selectf(fabsf(x) > 10.0F, 10.0F, fabsf(x));
    const float e = gradc_expm1f(2.0F * a);
    const float t = e / (e + 2.0F);
    return gradc_selectf(fabsf(x) < 0x1p-25F, x, gradc_selectf(x < 0.0F, -t, t));
}"""

EXP_HALF = """\
/* exp(x)/2, exactly halved before the last rounding, so it stays finite up to where sinh and cosh overflow */
static inline double gradc_exp_half(double x)
{
    const double shift = 0x1.8p52;
    const double xc = gradc_select(x < -746.0, -746.0, gradc_select(x > 711.0, 711.0, x));
    const double ks = xc * 0x1.71547652b82fep0 + shift;
    const double k = ks - shift;
    const double hs = k * 0.5 + shift;
    const double r = (xc - k * 0x1.62e42feep-1) - k * 0x1.a39ef35793c76p-33;
    const double s1 = gradc_from_bits((gradc_bits(hs) << 52) + UINT64_C(0x3ff0000000000000));
    const double s2 = gradc_from_bits(((gradc_bits(ks) - gradc_bits(hs)) << 52) + UINT64_C(0x3fe0000000000000));
    return (1.0 + gradc_expm1_series(r)) * s1 * s2;
}"""

EXP_HALFF = """\
/* expf(x)/2: as gradc_exp_half, in float */
static inline float gradc_exp_halff(float x)
{
    const float shift = 0x1.8p23F;
    const float xc = gradc_selectf(x < -104.0F, -104.0F, gradc_selectf(x > 90.0F, 90.0F, x));
    const float ks = xc * 0x1.715476p0F + shift;
    const float k = ks - shift;
    const float hs = k * 0.5F + shift;
    const float r = (xc - k * 0x1.62e4p-1F) - k * 0x1.7f7d1cp-20F;
    const float s1 = gradc_from_bitsf((gradc_bitsf(hs) << 23) + UINT32_C(0x3f800000));
    const float s2 = gradc_from_bitsf(((gradc_bitsf(ks) - gradc_bitsf(hs)) << 23) + UINT32_C(0x3f000000));
    return (1.0F + gradc_expm1_seriesf(r)) * s1 * s2;
}"""

SINH = """\
/* sinh(x) = sign(x) (t + t/(t+1))/2 with t = expm1(|x|) (2t - t*t/(t+1) below 1, as fdlibm), exp(|x|)/2 from 22 */
static inline double gradc_sinh(double x)
{
    const double a = fabs(x);
    const double t = gradc_expm1(gradc_select(a > 22.0, 22.0, a));
    const double u = t / (t + 1.0);
    const double mid = 0.5 * gradc_select(a < 1.0, 2.0 * t - t * u, t + u);
    const double y = gradc_select(a < 22.0, mid, gradc_exp_half(a));
    return gradc_select(a < 0x1p-28, x, gradc_select(x < 0.0, -y, y));
}"""

SINHF = """\
/* sinhf(x): as gradc_sinh, in float (exp(|x|)/2 from 9) */
static inline float gradc_sinhf(float x)
{
    const float a = fabsf(x);
    const float t = gradc_expm1f(gradc_selectf(a > 9.0F, 9.0F, a));
    const float u = t / (t + 1.0F);
    const float mid = 0.5F * gradc_selectf(a < 1.0F, 2.0F * t - t * u, t + u);
    const float y = gradc_selectf(a < 9.0F, mid, gradc_exp_halff(a));
    return gradc_selectf(a < 0x1p-12F, x, gradc_selectf(x < 0.0F, -y, y));
}"""

COSH = """\
/* cosh(x) = 1 + t*t/(2(1+t)) with t = expm1(|x|) below ln(2)/2, (e + 1/e)/2 with e = 1 + t below 22, exp(|x|)/2 */
static inline double gradc_cosh(double x)
{
    const double a = fabs(x);
    const double t = gradc_expm1(gradc_select(a > 22.0, 22.0, a));
    const double e = 1.0 + t;
    const double small = 1.0 + (t * t) / (e + e);
    const double mid = 0.5 * e + 0.5 / e;
    return gradc_select(a < 0x1.62e42fefa39efp-2, small, gradc_select(a < 22.0, mid, gradc_exp_half(a)));
}"""

COSHF = """\
/* coshf(x): as gradc_cosh, in float (exp(|x|)/2 from 9) */
static inline float gradc_coshf(float x)
{
    const float a = fabsf(x);
    const float t = gradc_expm1f(gradc_selectf(a > 9.0F, 9.0F, a));
    const float e = 1.0F + t;
    const float small = 1.0F + (t * t) / (e + e);
    const float mid = 0.5F * e + 0.5F / e;
    return gradc_selectf(a < 0x1.62e430p-2F, small, gradc_selectf(a < 9.0F, mid, gradc_exp_halff(a)));
}"""
