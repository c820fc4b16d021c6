"""``sin``, ``cos`` and ``tan``: Cody-Waite reduction by pi/2 and fdlibm's kernels, vector and scalar versions.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.
"""

PIO2_REDUCE = """\
/* x = n*pi/2 + (*hi + *lo) with |*hi + *lo| <= pi/4 (a little more where x*2/pi rounds up), for |x| <= 2**20;
 * returns n (an integer in a double) and leaves n mod 4 in the low bits of *q.  Cody-Waite with pi/2 in four
 * parts, the first three of 33 bits (n*part exact for |n| < 2**20) and each difference's rounding error kept
 * (two-sum), so the reduced argument is good to about 2**-110 absolute: near the multiples of pi/2 too */
static inline double gradc_pio2_reduce(double x, double *hi, double *lo, uint64_t *q)
{
    const double shift = 0x1.8p52;
    const double ks = x * 0x1.45f306dc9c883p-1 + shift;
    const double n = ks - shift;
    const double r1 = x - n * 0x1.921fb544p+0;  /* exact */
    const double p2 = n * 0x1.0b4611a6p-34;
    const double s = r1 - p2;
    const double sb = s - r1;
    const double e2 = (r1 - (s - sb)) - (p2 + sb);
    const double p3 = n * 0x1.3198a2ep-69;
    const double t = s - p3;
    const double tb = t - s;
    const double e3 = (s - (t - tb)) - (p3 + tb);
    const double l = (e2 + e3) - n * 0x1.b839a252049c1p-104;
    *hi = t + l;
    *lo = l - (*hi - t);
    *q = gradc_bits(ks);
    return n;
}"""

SIN_KERNEL = """\
/* sin(x + y) for |x + y| <= pi/4 and |y| below half an ulp of x (fdlibm's __kernel_sin: error below 2**-58) */
static inline double gradc_sin_kernel(double x, double y)
{
    const double z = x * x;
    const double w = z * z;
    const double r = 0x1.111111110f8a6p-7 + z * (-0x1.a01a019c161d5p-13 + z * 0x1.71de357b1fe7dp-19)
                     + z * w * (-0x1.ae5e68a2b9cebp-26 + z * 0x1.5d93a5acfd57cp-33);
    const double v = z * x;
    return x - ((z * (0.5 * y - v * r) - y) - v * -0x1.5555555555549p-3);
}"""

COS_KERNEL = """\
/* cos(x + y) for |x + y| <= pi/4 and |y| below half an ulp of x (fdlibm's __kernel_cos, musl's form) */
static inline double gradc_cos_kernel(double x, double y)
{
    const double z = x * x;
    const double w = z * z;
    const double r = z * (0x1.555555555554cp-5 + z * (-0x1.6c16c16c15177p-10 + z * 0x1.a01a019cb1590p-16))
                     + w * w * (-0x1.27e4f809c52adp-22 + z * (0x1.1ee9ebdb4b1c4p-29 + z * -0x1.8fae9be8838d4p-37));
    const double hz = 0.5 * z;
    const double u = 1.0 - hz;
    return u + (((1.0 - u) - hz) + (z * r - x * y));
}"""

SIN = """\
/* sin(x) for |x| <= 2**20 (and NaN for NaN): sin or cos of the reduced argument by the quadrant, by masks.
 * Beyond 2**20 the result is wrong: the callers take libm's there (gradc_sin_scalar, the fix-up loops) */
static inline double gradc_sin(double x)
{
    double hi, lo;
    uint64_t q;
    (void)gradc_pio2_reduce(x, &hi, &lo, &q);
    const double y = gradc_select((int)(q & 1), gradc_cos_kernel(hi, lo), gradc_sin_kernel(hi, lo));
    const double r = gradc_from_bits(gradc_bits(y) ^ ((q & 2) << 62));
    return gradc_select(fabs(x) < 0x1p-26, x, r);  /* keeps -0.0 and subnormals exact */
}"""

COS = """\
/* cos(x) for |x| <= 2**20 (and NaN for NaN): as gradc_sin */
static inline double gradc_cos(double x)
{
    double hi, lo;
    uint64_t q;
    (void)gradc_pio2_reduce(x, &hi, &lo, &q);
    const double y = gradc_select((int)(q & 1), gradc_sin_kernel(hi, lo), gradc_cos_kernel(hi, lo));
    return gradc_from_bits(gradc_bits(y) ^ (((q + 1) & 2) << 62));
}"""

PIO2_REDUCE_SCALAR = """\
/* gradc_pio2_reduce with branches, for scalar code: nothing to do below pi/4, pi/2 in two parts (fdlibm's
 * first step) unless the result is below 2**-10, where the two parts' error would show, then the full one */
static inline void gradc_pio2_reduce_scalar(double x, double *hi, double *lo, uint64_t *q)
{
    if (fabs(x) <= 0x1.921fb54442d18p-1) {
        *hi = x;
        *lo = 0.0;
        *q = 0;
        return;
    }
    const double shift = 0x1.8p52;
    const double ks = x * 0x1.45f306dc9c883p-1 + shift;
    const double n = ks - shift;
    const double r = x - n * 0x1.921fb544p+0;  /* exact */
    const double w = n * 0x1.0b4611a626331p-34;
    const double h = r - w;
    if (fabs(h) >= 0x1p-10) {
        *hi = h;
        *lo = (r - h) - w;
        *q = gradc_bits(ks);
        return;
    }
    (void)gradc_pio2_reduce(x, hi, lo, q);
}"""

TAN = """\
/* tan(x) for |x| <= 2**20 (and NaN for NaN): sin(r)/cos(r), or -cos(r)/sin(r) in the odd quadrants */
static inline double gradc_tan(double x)
{
    double hi, lo;
    uint64_t q;
    (void)gradc_pio2_reduce(x, &hi, &lo, &q);
    const double s = gradc_sin_kernel(hi, lo);
    const double c = gradc_cos_kernel(hi, lo);
    const int odd = (int)(q & 1);
    const double y = gradc_select(odd, -c, s) / gradc_select(odd, s, c);
    return gradc_select(fabs(x) < 0x1p-27, x, y);  /* keeps -0.0 and subnormals exact */
}"""

SIN_SCALAR = """\
/* sin(x) in scalar code: gradc_sin's method up to |x| = 2**20, libm's sin beyond and for infinities and NaN */
static inline double gradc_sin_scalar(double x)
{
    if (!(fabs(x) <= 0x1p20)) {
        return sin(x);
    }
    double hi, lo;
    uint64_t q;
    gradc_pio2_reduce_scalar(x, &hi, &lo, &q);
    const double y = (q & 1) ? gradc_cos_kernel(hi, lo) : gradc_sin_kernel(hi, lo);
    return (q & 2) ? -y : y;
}"""

COS_SCALAR = """\
/* cos(x) in scalar code: as gradc_sin_scalar */
static inline double gradc_cos_scalar(double x)
{
    if (!(fabs(x) <= 0x1p20)) {
        return cos(x);
    }
    double hi, lo;
    uint64_t q;
    gradc_pio2_reduce_scalar(x, &hi, &lo, &q);
    const double y = (q & 1) ? gradc_sin_kernel(hi, lo) : gradc_cos_kernel(hi, lo);
    return ((q + 1) & 2) ? -y : y;
}"""

SINCOS_SCALAR = """\
/* sin(x) and cos(x) of one x in scalar code, one reduction: as gradc_sin_scalar and gradc_cos_scalar */
static inline void gradc_sincos_scalar(double x, double *s, double *c)
{
    if (!(fabs(x) <= 0x1p20)) {
        *s = sin(x);
        *c = cos(x);
        return;
    }
    double hi, lo;
    uint64_t q;
    gradc_pio2_reduce_scalar(x, &hi, &lo, &q);
    const double sk = gradc_sin_kernel(hi, lo);
    const double ck = gradc_cos_kernel(hi, lo);
    const double ys = (q & 1) ? ck : sk;
    const double yc = (q & 1) ? sk : ck;
    *s = (q & 2) ? -ys : ys;
    *c = ((q + 1) & 2) ? -yc : yc;
}"""

TAN_SCALAR = """\
/* tan(x) in scalar code: as gradc_sin_scalar */
static inline double gradc_tan_scalar(double x)
{
    if (!(fabs(x) <= 0x1p20)) {
        return tan(x);
    }
    double hi, lo;
    uint64_t q;
    gradc_pio2_reduce_scalar(x, &hi, &lo, &q);
    const double s = gradc_sin_kernel(hi, lo);
    const double c = gradc_cos_kernel(hi, lo);
    return (q & 1) ? -c / s : s / c;
}"""

PIO2_REDUCEF = """\
/* float x = n*pi/2 + r in double, |r| <= pi/4 (a little more), for |x| <= 2**28: pi/2 in a 25-bit part
 * (n*part exact) and a 53-bit one (musl's __rem_pio2f): r good to 2**-60 relative, near multiples of pi/2 too */
static inline double gradc_pio2_reducef(float x, uint64_t *q)
{
    const double shift = 0x1.8p52;
    const double ks = (double)x * 0x1.45f306dc9c883p-1 + shift;
    const double n = ks - shift;
    *q = gradc_bits(ks);
    return ((double)x - n * 0x1.921fb5p+0) - n * 0x1.110b4611a6263p-26;
}"""

SIN_KERNELF = """\
/* sin(x) for |x| <= pi/4, in double for a float result (musl's __sindf: error below 2**-37) */
static inline double gradc_sin_kernelf(double x)
{
    const double z = x * x;
    const double s = z * x;
    return (x + s * (-0x1.5555554cbac77p-3 + z * 0x1.11110896efbb2p-7))
           + s * (z * z) * (-0x1.a00f9e2cae774p-13 + z * 0x1.6cd878c3b46a7p-19);
}"""

COS_KERNELF = """\
/* cos(x) for |x| <= pi/4, in double for a float result (musl's __cosdf) */
static inline double gradc_cos_kernelf(double x)
{
    const double z = x * x;
    const double w = z * z;
    return ((1.0 + z * -0x1.ffffffd0c5e81p-2) + w * 0x1.55553e1053a42p-5)
           + (w * z) * (-0x1.6c087e80f1e27p-10 + z * 0x1.99342e0ee5069p-16);
}"""

SINF = """\
/* sinf(x) for |x| <= 2**28 (and NaN for NaN), computed in double and rounded once */
static inline float gradc_sinf(float x)
{
    uint64_t q;
    const double r = gradc_pio2_reducef(x, &q);
    const double y = gradc_select((int)(q & 1), gradc_cos_kernelf(r), gradc_sin_kernelf(r));
    const float f = (float)gradc_from_bits(gradc_bits(y) ^ ((q & 2) << 62));
    return gradc_selectf(fabsf(x) < 0x1p-12F, x, f);
}"""

COSF = """\
/* cosf(x) for |x| <= 2**28 (and NaN for NaN): as gradc_sinf */
static inline float gradc_cosf(float x)
{
    uint64_t q;
    const double r = gradc_pio2_reducef(x, &q);
    const double y = gradc_select((int)(q & 1), gradc_sin_kernelf(r), gradc_cos_kernelf(r));
    return (float)gradc_from_bits(gradc_bits(y) ^ (((q + 1) & 2) << 62));
}"""

TANF = """\
/* tanf(x) for |x| <= 2**28 (and NaN for NaN): as gradc_tan, in double, rounded once */
static inline float gradc_tanf(float x)
{
    uint64_t q;
    const double r = gradc_pio2_reducef(x, &q);
    const double s = gradc_sin_kernelf(r);
    const double c = gradc_cos_kernelf(r);
    const int odd = (int)(q & 1);
    const float y = (float)(gradc_select(odd, -c, s) / gradc_select(odd, s, c));
    return gradc_selectf(fabsf(x) < 0x1p-12F, x, y);
}"""

SINF_SCALAR = """\
static inline float gradc_sinf_scalar(float x)
{
    return fabsf(x) <= 0x1p28F ? gradc_sinf(x) : sinf(x);
}"""

COSF_SCALAR = """\
static inline float gradc_cosf_scalar(float x)
{
    return fabsf(x) <= 0x1p28F ? gradc_cosf(x) : cosf(x);
}"""

SINCOSF_SCALAR = """\
static inline void gradc_sincosf_scalar(float x, float *s, float *c)
{
    if (!(fabsf(x) <= 0x1p28F)) {
        *s = sinf(x);
        *c = cosf(x);
        return;
    }
    uint64_t q;
    const double r = gradc_pio2_reducef(x, &q);
    const double sk = gradc_sin_kernelf(r);
    const double ck = gradc_cos_kernelf(r);
    const double ys = (q & 1) ? ck : sk;
    const double yc = (q & 1) ? sk : ck;
    *s = fabsf(x) < 0x1p-12F ? x : (float)((q & 2) ? -ys : ys);  /* keeps -0.0 */
    *c = (float)(((q + 1) & 2) ? -yc : yc);
}"""

TANF_SCALAR = """\
static inline float gradc_tanf_scalar(float x)
{
    return fabsf(x) <= 0x1p28F ? gradc_tanf(x) : tanf(x);
}"""
