"""``exp``, ``expm1``, ``log`` and ``log1p`` (double and float) for the C math library.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.
"""

EXPM1_SERIES = """\
/* expm1(r) for |r| <= ln(2)/2: Taylor series to r**13 (the rest is below 2**-56 relative) */
static inline double gradc_expm1_series(double r)
{
    double p = 0x1.6124613a86d09p-33;
    p = gradc_mul_add(r, p, 0x1.1eed8eff8d898p-29);
    p = gradc_mul_add(r, p, 0x1.ae64567f544e4p-26);
    p = gradc_mul_add(r, p, 0x1.27e4fb7789f5cp-22);
    p = gradc_mul_add(r, p, 0x1.71de3a556c734p-19);
    p = gradc_mul_add(r, p, 0x1.a01a01a01a01ap-16);
    p = gradc_mul_add(r, p, 0x1.a01a01a01a01ap-13);
    p = gradc_mul_add(r, p, 0x1.6c16c16c16c17p-10);
    p = gradc_mul_add(r, p, 0x1.1111111111111p-7);
    p = gradc_mul_add(r, p, 0x1.5555555555555p-5);
    p = gradc_mul_add(r, p, 0x1.5555555555555p-3);
    p = gradc_mul_add(r, p, 0.5);
    return r + r * r * p;
}"""

EXPM1_SERIESF = """\
/* expm1(r) for |r| <= ln(2)/2 in float: Taylor series to r**7 */
static inline float gradc_expm1_seriesf(float r)
{
    float p = 0x1.a01a02p-13F;
    p = gradc_mul_addf(r, p, 0x1.6c16c2p-10F);
    p = gradc_mul_addf(r, p, 0x1.111112p-7F);
    p = gradc_mul_addf(r, p, 0x1.555556p-5F);
    p = gradc_mul_addf(r, p, 0x1.555556p-3F);
    p = gradc_mul_addf(r, p, 0.5F);
    return r + r * r * p;
}"""

EXP = """\
/* exp(x): x = k*ln2 + r, exp(x) = 2**h * 2**(k-h) * exp(r) with h = k/2 rounded, both factors normal */
static inline double gradc_exp(double x)
{
    const double shift = 0x1.8p52;  /* adding it rounds to an integer, left in the low bits */
    const double xc = gradc_select(x < -746.0, -746.0, gradc_select(x > 710.0, 710.0, x));  /* NaN passes */
    const double ks = xc * 0x1.71547652b82fep0 + shift;
    const double k = ks - shift;
    const double hs = k * 0.5 + shift;
    const double r = (xc - k * 0x1.62e42feep-1) - k * 0x1.a39ef35793c76p-33;
    const uint64_t one = UINT64_C(0x3ff0000000000000);
    const double s1 = gradc_from_bits((gradc_bits(hs) << 52) + one);
    const double s2 = gradc_from_bits(((gradc_bits(ks) - gradc_bits(hs)) << 52) + one);
    return (1.0 + gradc_expm1_series(r)) * s1 * s2;
}"""

EXPF = """\
/* expf(x): as gradc_exp, in float */
static inline float gradc_expf(float x)
{
    const float shift = 0x1.8p23F;
    const float xc = gradc_selectf(x < -104.0F, -104.0F, gradc_selectf(x > 89.0F, 89.0F, x));
    const float ks = xc * 0x1.715476p0F + shift;
    const float k = ks - shift;
    const float hs = k * 0.5F + shift;
    const float r = (xc - k * 0x1.62e4p-1F) - k * 0x1.7f7d1cp-20F;
    const uint32_t one = UINT32_C(0x3f800000);
    const float s1 = gradc_from_bitsf((gradc_bitsf(hs) << 23) + one);
    const float s2 = gradc_from_bitsf(((gradc_bitsf(ks) - gradc_bitsf(hs)) << 23) + one);
    return (1.0F + gradc_expm1_seriesf(r)) * s1 * s2;
}"""

EXPM1 = """\
/* expm1(x) = 2 * ((t - 1/2) + t*expm1(r)) with t = 2**(k-1): no cancellation, no overflow before the end */
static inline double gradc_expm1(double x)
{
    const double shift = 0x1.8p52;
    /* expm1(-40) is -1 to double precision */
    const double xc = gradc_select(x < -40.0, -40.0, gradc_select(x > 710.0, 710.0, x));
    const double ks = xc * 0x1.71547652b82fep0 + shift;
    const double k = ks - shift;
    const double r = (xc - k * 0x1.62e42feep-1) - k * 0x1.a39ef35793c76p-33;
    const double t = gradc_from_bits(((gradc_bits(ks) - 1) << 52) + UINT64_C(0x3ff0000000000000));
    const double y = 2.0 * ((t - 0.5) + t * gradc_expm1_series(r));
    return gradc_select(fabs(x) < 0x1p-54, x, y);  /* keeps -0.0 and subnormals exact */
}"""

EXPM1F = """\
/* expm1f(x): as gradc_expm1, in float */
static inline float gradc_expm1f(float x)
{
    const float shift = 0x1.8p23F;
    const float xc = gradc_selectf(x < -18.0F, -18.0F, gradc_selectf(x > 89.0F, 89.0F, x));
    const float ks = xc * 0x1.715476p0F + shift;
    const float k = ks - shift;
    const float r = (xc - k * 0x1.62e4p-1F) - k * 0x1.7f7d1cp-20F;
    const float t = gradc_from_bitsf(((gradc_bitsf(ks) - 1) << 23) + UINT32_C(0x3f800000));
    const float y = 2.0F * ((t - 0.5F) + t * gradc_expm1_seriesf(r));
    return gradc_selectf(fabsf(x) < 0x1p-25F, x, y);
}"""

LOG_SERIES = """\
/* k*ln2 + log(1 + f) + c for |f| <= 1 - sqrt(1/2) (fdlibm's series in s = f/(2+f); c a small correction) */
static inline double gradc_log_series(double f, double k, double c)
{
    const double s = f / (2.0 + f);
    const double z = s * s;
    const double w = z * z;
    const double t1 = w * (0x1.999999997fa04p-2 + w * (0x1.c71c51d8e78afp-3 + w * 0x1.39a09d078c69fp-3));
    const double t2 = z * (0x1.5555555555593p-1 + w * (0x1.2492494229359p-2
                                                       + w * (0x1.7466496cb03dep-3 + w * 0x1.2f112df3e5244p-3)));
    const double hfsq = 0.5 * f * f;
    return s * (hfsq + t1 + t2) + (k * 0x1.a39ef35793c76p-33 + c) - hfsq + f + k * 0x1.62e42feep-1;
}"""

LOG_SERIESF = """\
/* gradc_log_series in float (musl's shorter series) */
static inline float gradc_log_seriesf(float f, float k, float c)
{
    const float s = f / (2.0F + f);
    const float z = s * s;
    const float w = z * z;
    const float t1 = w * (0x1.999c26p-2F + w * 0x1.f13c4cp-3F);
    const float t2 = z * (0x1.555554p-1F + w * 0x1.23d3dcp-2F);
    const float hfsq = 0.5F * f * f;
    return s * (hfsq + t1 + t2) + (k * 0x1.7f7d1cp-20F + c) - hfsq + f + k * 0x1.62e4p-1F;
}"""

LOG = """\
/* log(x): x = 2**k * m with m in [sqrt(1/2), sqrt(2)), read from the bits (subnormals scaled by 2**54 first) */
static inline double gradc_log(double x)
{
    const double xs = gradc_select(x < 0x1p-1022, x * 0x1p54, x);
    const uint64_t u = gradc_bits(xs) + UINT64_C(0x00095f619980c433);  /* bits of 1.0 - bits of sqrt(1/2) */
    const double k = gradc_from_bits((u >> 52) | UINT64_C(0x4330000000000000)) - (0x1p52 + 1023.0)
                     - gradc_select(x < 0x1p-1022, 54.0, 0.0);
    const double m = gradc_from_bits((u & UINT64_C(0x000fffffffffffff)) + UINT64_C(0x3fe6a09e667f3bcd));
    const double y = gradc_log_series(m - 1.0, k, 0.0);
    const double edge = gradc_select(x == 0.0, -HUGE_VAL, gradc_select(x < 0.0, NAN, x));  /* and +inf, NaN */
    return gradc_select((x > 0.0) & (x < HUGE_VAL), y, edge);
}"""

LOGF = """\
/* logf(x): as gradc_log, in float */
static inline float gradc_logf(float x)
{
    const float xs = gradc_selectf(x < 0x1p-126F, x * 0x1p25F, x);
    const uint32_t u = gradc_bitsf(xs) + UINT32_C(0x004afb0d);  /* bits of 1.0F - bits of sqrt(1/2) */
    const float k = gradc_from_bitsf((u >> 23) | UINT32_C(0x4b000000)) - (0x1p23F + 127.0F)
                    - gradc_selectf(x < 0x1p-126F, 25.0F, 0.0F);
    const float m = gradc_from_bitsf((u & UINT32_C(0x007fffff)) + UINT32_C(0x3f3504f3));
    const float y = gradc_log_seriesf(m - 1.0F, k, 0.0F);
    const float edge = gradc_selectf(x == 0.0F, -HUGE_VALF, gradc_selectf(x < 0.0F, NAN, x));
    return gradc_selectf((x > 0.0F) & (x < HUGE_VALF), y, edge);
}"""

LOG1P = """\
/* log1p(x): u = 1 + x = 2**k * m; log(u) plus the rounding error of u over u; f = x itself when k = 0 */
static inline double gradc_log1p(double x)
{
    const double u = 1.0 + x;
    const uint64_t v = gradc_bits(u) + UINT64_C(0x00095f619980c433);
    const double k = gradc_from_bits((v >> 52) | UINT64_C(0x4330000000000000)) - (0x1p52 + 1023.0);
    const double m = gradc_from_bits((v & UINT64_C(0x000fffffffffffff)) + UINT64_C(0x3fe6a09e667f3bcd));
    const double c = gradc_select(k >= 2.0, 1.0 - (u - x), x - (u - 1.0)) / u;
    const double y = gradc_log_series(gradc_select(k == 0.0, x, m - 1.0), k, gradc_select(k == 0.0, 0.0, c));
    const double edge = gradc_select(x == -1.0, -HUGE_VAL, gradc_select(x < -1.0, NAN, x));  /* and +inf, NaN */
    return gradc_select((x > -1.0) & (x < HUGE_VAL), gradc_select(fabs(x) < 0x1p-60, x, y), edge);
}"""

LOG1PF = """\
/* log1pf(x): as gradc_log1p, in float */
static inline float gradc_log1pf(float x)
{
    const float u = 1.0F + x;
    const uint32_t v = gradc_bitsf(u) + UINT32_C(0x004afb0d);
    const float k = gradc_from_bitsf((v >> 23) | UINT32_C(0x4b000000)) - (0x1p23F + 127.0F);
    const float m = gradc_from_bitsf((v & UINT32_C(0x007fffff)) + UINT32_C(0x3f3504f3));
    const float c = gradc_selectf(k >= 2.0F, 1.0F - (u - x), x - (u - 1.0F)) / u;
    const float y = gradc_log_seriesf(gradc_selectf(k == 0.0F, x, m - 1.0F), k, gradc_selectf(k == 0.0F, 0.0F, c));
    const float edge = gradc_selectf(x == -1.0F, -HUGE_VALF, gradc_selectf(x < -1.0F, NAN, x));
    return gradc_selectf((x > -1.0F) & (x < HUGE_VALF), gradc_selectf(fabsf(x) < 0x1p-30F, x, y), edge);
}"""
