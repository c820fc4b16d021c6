"""Vectorisable C99 versions of libm's ``exp``, ``log``, ``log1p``, ``expm1``, ``tanh``, ``sinh``, ``cosh``, ``sin``,
``cos`` and ``tan``.

A loop that calls libm cannot be vectorised: each element pays a call. These
are ``static inline`` functions, emitted into a translation unit only when
used, written so an optimising compiler inlines them and vectorises the loop:
no branches (special cases are selects of bits: ``gradc_select``), no tables, no
integer/float conversions (the exponent goes in and out through the bits, read
and written with ``memcpy``, and round-to-integer is the ``1.5 * 2**52`` shift),
only unsigned integer arithmetic (wrap-around is defined, so NaN and infinity
inputs are harmless before the final selects).

Method (the classic one of fdlibm and musl): ``exp`` reduces ``x = k ln2 + r``
with ``|r| <= ln2/2`` (Cody-Waite, no FMA needed) and sums the Taylor series of
``expm1(r)`` to the term below half an ulp, then scales by ``2**k`` as two
normal factors, so overflow, gradual underflow and subnormal results come out
right; ``expm1`` is ``2**k (expm1(r) + 1) - 1`` arranged so it never cancels;
``tanh(x) = expm1(2x) / (expm1(2x) + 2)``; ``sinh`` and ``cosh`` are fdlibm's
formulas in ``expm1(|x|)``, and ``exp(|x|)/2`` beyond; ``log`` and ``log1p`` split
``x = 2**k m`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` and use fdlibm's minimax
series in ``s = f / (2 + f)``, ``f = m - 1``, ``log1p`` adding the rounding error
of ``1 + x`` as a correction. ``sin`` and ``cos`` reduce ``x = n pi/2 + r`` by
Cody-Waite with pi/2 in four parts (three of 33 bits, so ``n * part`` is exact for
``|n| < 2**20``) keeping each step's rounding error, so ``r`` is a head and a tail
good to about ``2**-110`` even next to the multiples of pi/2; fdlibm's kernel
polynomials give ``sin(r)`` and ``cos(r)``, picked and signed by ``n mod 4`` with
masks (``tan`` is ``sin(r)/cos(r)`` or ``-cos(r)/sin(r)``). That holds for ``|x| <=
2**20`` (``LIMITS``); beyond, the result is wrong, so code calls them through
``gradc_sin_scalar`` and the like (``SCALAR_NAMES``), which branch to libm's beyond
the limit and for infinities and NaN, skip the reduction below pi/4 and take
fdlibm's two-part one where it is exact enough: about twice as fast as glibc's
``sin``, ``cos`` and ``sincos`` (measured 3.5 against 8.5 ns at 0.7, 4.7 against 9.2
ns at 100; 0.5 ns slower beyond ``2**20``; tan 5.3 against 8.7 ns at 0.7). The
``float`` ones compute in ``double`` (musl's ``__rem_pio2f``, ``__sindf``,
``__cosdf``) up to ``2**28``. The others have a ``float`` twin (suffix ``f``)
computed in ``float`` with shorter series. Horner steps use ``fma`` where C99's
``FP_FAST_FMA`` says it is fast (results then differ in the last bit, not in
accuracy). Measured errors against mpmath are in ``tests/test_c_mathlib.py`` (all
within 2 ulp); NaN, infinities, signed zeros, overflow, underflow and subnormals
follow C99 Annex F like libm. The bit manipulations assume what Annex F and NumPy
do: IEEE 754 binary64 and binary32, integers and floats of one byte order.

>>> VECTOR_NAMES["f32"]["exp"]
'gradc_expf'
>>> print(definitions(["gradc_tanh"])[-1].splitlines()[1])
static inline double gradc_tanh(double x)
"""
from __future__ import annotations

import re

VECTOR_NAMES = {
    "f64": {"exp": "gradc_exp", "log": "gradc_log", "log1p": "gradc_log1p", "expm1": "gradc_expm1",
            "tanh": "gradc_tanh", "sinh": "gradc_sinh", "cosh": "gradc_cosh"},
    "f32": {"exp": "gradc_expf", "log": "gradc_logf", "log1p": "gradc_log1pf", "expm1": "gradc_expm1f",
            "tanh": "gradc_tanhf", "sinh": "gradc_sinhf", "cosh": "gradc_coshf"},
}

# sin and cos of one argument in scalar code (written out by the emitter, not the printer)
SINCOS_NAMES = {"f64": "gradc_sincos_scalar", "f32": "gradc_sincosf_scalar"}

# right for |x| <= LIMITS only (the reduction by pi/2 is Cody-Waite's): the scalar versions below wrap them
LIMITED_NAMES = {"f64": {"sin": "gradc_sin", "cos": "gradc_cos", "tan": "gradc_tan"},
                 "f32": {"sin": "gradc_sinf", "cos": "gradc_cosf", "tan": "gradc_tanf"}}
LIMITS = {"f64": 2.0 ** 20, "f32": 2.0 ** 28}

# in scalar code (a call per element anyway): a branch to libm's for large and non-finite arguments
SCALAR_NAMES = {
    "f64": {"sin": "gradc_sin_scalar", "cos": "gradc_cos_scalar", "tan": "gradc_tan_scalar"},
    "f32": {"sin": "gradc_sinf_scalar", "cos": "gradc_cosf_scalar", "tan": "gradc_tanf_scalar"},
}

_BITS = """\
static inline uint64_t gradc_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}"""

_FROM_BITS = """\
static inline double gradc_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}"""

_BITSF = """\
static inline uint32_t gradc_bitsf(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}"""

_FROM_BITSF = """\
static inline float gradc_from_bitsf(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}"""

_SELECT = """\
/* c ? a : b with a and b both computed: a select of bits, which compilers vectorise where a branch stays one */
static inline double gradc_select(int c, double a, double b)
{
    const uint64_t mask = (uint64_t)0 - (uint64_t)(c != 0);
    return gradc_from_bits((gradc_bits(a) & mask) | (gradc_bits(b) & ~mask));
}"""

_SELECTF = """\
static inline float gradc_selectf(int c, float a, float b)
{
    const uint32_t mask = (uint32_t)0 - (uint32_t)(c != 0);
    return gradc_from_bitsf((gradc_bitsf(a) & mask) | (gradc_bitsf(b) & ~mask));
}"""

_MUL_ADD = """\
/* a*b + c: one fused operation where the machine has a fast one (C99's FP_FAST_FMA), else two */
static inline double gradc_mul_add(double a, double b, double c)
{
#ifdef FP_FAST_FMA
    return fma(a, b, c);
#else
    return a * b + c;
#endif
}"""

_MUL_ADDF = """\
static inline float gradc_mul_addf(float a, float b, float c)
{
#ifdef FP_FAST_FMAF
    return fmaf(a, b, c);
#else
    return a * b + c;
#endif
}"""

_EXPM1_SERIES = """\
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

_EXPM1_SERIESF = """\
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

_EXP = """\
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

_EXPF = """\
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

_EXPM1 = """\
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

_EXPM1F = """\
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

_TANH = """\
/* tanh(x) = sign(x) * e / (e + 2) with e = expm1(2|x|); 1 from |x| = 22 on */
static inline double gradc_tanh(double x)
{
    const double a = gradc_select(fabs(x) > 22.0, 22.0, fabs(x));
    const double e = gradc_expm1(2.0 * a);
    const double t = e / (e + 2.0);
    return gradc_select(fabs(x) < 0x1p-55, x, gradc_select(x < 0.0, -t, t));
}"""

_TANHF = """\
/* tanhf(x): as gradc_tanh, in float */
static inline float gradc_tanhf(float x)
{
    const float a = gradc_selectf(fabsf(x) > 10.0F, 10.0F, fabsf(x));
    const float e = gradc_expm1f(2.0F * a);
    const float t = e / (e + 2.0F);
    return gradc_selectf(fabsf(x) < 0x1p-25F, x, gradc_selectf(x < 0.0F, -t, t));
}"""

_EXP_HALF = """\
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

_EXP_HALFF = """\
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

_SINH = """\
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

_SINHF = """\
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

_COSH = """\
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

_COSHF = """\
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

_LOG_SERIES = """\
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

_LOG_SERIESF = """\
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

_LOG = """\
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

_LOGF = """\
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

_LOG1P = """\
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

_LOG1PF = """\
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

_PIO2_REDUCE = """\
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

_SIN_KERNEL = """\
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

_COS_KERNEL = """\
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

_SIN = """\
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

_COS = """\
/* cos(x) for |x| <= 2**20 (and NaN for NaN): as gradc_sin */
static inline double gradc_cos(double x)
{
    double hi, lo;
    uint64_t q;
    (void)gradc_pio2_reduce(x, &hi, &lo, &q);
    const double y = gradc_select((int)(q & 1), gradc_sin_kernel(hi, lo), gradc_cos_kernel(hi, lo));
    return gradc_from_bits(gradc_bits(y) ^ (((q + 1) & 2) << 62));
}"""

_PIO2_REDUCE_SCALAR = """\
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

_TAN = """\
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

_SIN_SCALAR = """\
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

_COS_SCALAR = """\
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

_SINCOS_SCALAR = """\
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

_TAN_SCALAR = """\
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

_PIO2_REDUCEF = """\
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

_SIN_KERNELF = """\
/* sin(x) for |x| <= pi/4, in double for a float result (musl's __sindf: error below 2**-37) */
static inline double gradc_sin_kernelf(double x)
{
    const double z = x * x;
    const double s = z * x;
    return (x + s * (-0x1.5555554cbac77p-3 + z * 0x1.11110896efbb2p-7))
           + s * (z * z) * (-0x1.a00f9e2cae774p-13 + z * 0x1.6cd878c3b46a7p-19);
}"""

_COS_KERNELF = """\
/* cos(x) for |x| <= pi/4, in double for a float result (musl's __cosdf) */
static inline double gradc_cos_kernelf(double x)
{
    const double z = x * x;
    const double w = z * z;
    return ((1.0 + z * -0x1.ffffffd0c5e81p-2) + w * 0x1.55553e1053a42p-5)
           + (w * z) * (-0x1.6c087e80f1e27p-10 + z * 0x1.99342e0ee5069p-16);
}"""

_SINF = """\
/* sinf(x) for |x| <= 2**28 (and NaN for NaN), computed in double and rounded once */
static inline float gradc_sinf(float x)
{
    uint64_t q;
    const double r = gradc_pio2_reducef(x, &q);
    const double y = gradc_select((int)(q & 1), gradc_cos_kernelf(r), gradc_sin_kernelf(r));
    const float f = (float)gradc_from_bits(gradc_bits(y) ^ ((q & 2) << 62));
    return gradc_selectf(fabsf(x) < 0x1p-12F, x, f);
}"""

_COSF = """\
/* cosf(x) for |x| <= 2**28 (and NaN for NaN): as gradc_sinf */
static inline float gradc_cosf(float x)
{
    uint64_t q;
    const double r = gradc_pio2_reducef(x, &q);
    const double y = gradc_select((int)(q & 1), gradc_sin_kernelf(r), gradc_cos_kernelf(r));
    return (float)gradc_from_bits(gradc_bits(y) ^ (((q + 1) & 2) << 62));
}"""

_TANF = """\
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

_SINF_SCALAR = """\
static inline float gradc_sinf_scalar(float x)
{
    return fabsf(x) <= 0x1p28F ? gradc_sinf(x) : sinf(x);
}"""

_COSF_SCALAR = """\
static inline float gradc_cosf_scalar(float x)
{
    return fabsf(x) <= 0x1p28F ? gradc_cosf(x) : cosf(x);
}"""

_SINCOSF_SCALAR = """\
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

_TANF_SCALAR = """\
static inline float gradc_tanf_scalar(float x)
{
    return fabsf(x) <= 0x1p28F ? gradc_tanf(x) : tanf(x);
}"""

# name -> (C text, the names it calls); listed in definition order (callees first)
_LIBRARY = {
    "gradc_bits": (_BITS, ()),
    "gradc_from_bits": (_FROM_BITS, ()),
    "gradc_bitsf": (_BITSF, ()),
    "gradc_from_bitsf": (_FROM_BITSF, ()),
    "gradc_select": (_SELECT, ("gradc_bits", "gradc_from_bits")),
    "gradc_selectf": (_SELECTF, ("gradc_bitsf", "gradc_from_bitsf")),
    "gradc_mul_add": (_MUL_ADD, ()),
    "gradc_mul_addf": (_MUL_ADDF, ()),
    "gradc_expm1_series": (_EXPM1_SERIES, ("gradc_mul_add",)),
    "gradc_expm1_seriesf": (_EXPM1_SERIESF, ("gradc_mul_addf",)),
    "gradc_log_series": (_LOG_SERIES, ()),
    "gradc_log_seriesf": (_LOG_SERIESF, ()),
    "gradc_exp": (_EXP, ("gradc_select", "gradc_expm1_series")),
    "gradc_expf": (_EXPF, ("gradc_selectf", "gradc_expm1_seriesf")),
    "gradc_expm1": (_EXPM1, ("gradc_select", "gradc_expm1_series")),
    "gradc_expm1f": (_EXPM1F, ("gradc_selectf", "gradc_expm1_seriesf")),
    "gradc_tanh": (_TANH, ("gradc_select", "gradc_expm1")),
    "gradc_tanhf": (_TANHF, ("gradc_selectf", "gradc_expm1f")),
    "gradc_exp_half": (_EXP_HALF, ("gradc_select", "gradc_expm1_series")),
    "gradc_exp_halff": (_EXP_HALFF, ("gradc_selectf", "gradc_expm1_seriesf")),
    "gradc_sinh": (_SINH, ("gradc_exp_half", "gradc_expm1")),
    "gradc_sinhf": (_SINHF, ("gradc_exp_halff", "gradc_expm1f")),
    "gradc_cosh": (_COSH, ("gradc_exp_half", "gradc_expm1")),
    "gradc_coshf": (_COSHF, ("gradc_exp_halff", "gradc_expm1f")),
    "gradc_log": (_LOG, ("gradc_select", "gradc_log_series")),
    "gradc_logf": (_LOGF, ("gradc_selectf", "gradc_log_seriesf")),
    "gradc_log1p": (_LOG1P, ("gradc_select", "gradc_log_series")),
    "gradc_log1pf": (_LOG1PF, ("gradc_selectf", "gradc_log_seriesf")),
    "gradc_pio2_reduce": (_PIO2_REDUCE, ("gradc_bits",)),
    "gradc_sin_kernel": (_SIN_KERNEL, ()),
    "gradc_cos_kernel": (_COS_KERNEL, ()),
    "gradc_sin": (_SIN, ("gradc_select", "gradc_pio2_reduce", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_cos": (_COS, ("gradc_select", "gradc_pio2_reduce", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_pio2_reduce_scalar": (_PIO2_REDUCE_SCALAR, ("gradc_pio2_reduce",)),
    "gradc_sin_scalar": (_SIN_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_cos_scalar": (_COS_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_pio2_reducef": (_PIO2_REDUCEF, ("gradc_bits",)),
    "gradc_sin_kernelf": (_SIN_KERNELF, ()),
    "gradc_cos_kernelf": (_COS_KERNELF, ()),
    "gradc_sinf": (_SINF, ("gradc_select", "gradc_selectf", "gradc_pio2_reducef", "gradc_sin_kernelf",
                           "gradc_cos_kernelf")),
    "gradc_cosf": (_COSF, ("gradc_select", "gradc_pio2_reducef", "gradc_sin_kernelf", "gradc_cos_kernelf")),
    "gradc_sincos_scalar": (_SINCOS_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_sincosf_scalar": (_SINCOSF_SCALAR, ("gradc_pio2_reducef", "gradc_sin_kernelf", "gradc_cos_kernelf")),
    "gradc_tan": (_TAN, ("gradc_select", "gradc_pio2_reduce", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_tan_scalar": (_TAN_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_tanf": (_TANF, ("gradc_select", "gradc_selectf", "gradc_pio2_reducef", "gradc_sin_kernelf",
                           "gradc_cos_kernelf")),
    "gradc_tanf_scalar": (_TANF_SCALAR, ("gradc_tanf",)),
    "gradc_sinf_scalar": (_SINF_SCALAR, ("gradc_sinf",)),
    "gradc_cosf_scalar": (_COSF_SCALAR, ("gradc_cosf",)),
}

_CALL = re.compile(r"\b(gradc_\w+)\(")


def called(text: str) -> list:
    """The library functions that C ``text`` calls, in order of first call.

    >>> called("y[k] = gradc_log1p(gradc_exp(-fabs(x[k])));")
    ['gradc_log1p', 'gradc_exp']
    """
    return list(dict.fromkeys(name for name in _CALL.findall(text) if name in _LIBRARY))


def definitions(names) -> list:
    """C definitions of ``names`` and everything they call, callees first, in one fixed order.

    >>> [d.splitlines()[-2].strip() for d in definitions(["gradc_bits"])]
    ['return u;']
    """
    wanted: set = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in wanted:
            wanted.add(name)
            todo.extend(_LIBRARY[name][1])
    return [text for name, (text, _) in _LIBRARY.items() if name in wanted]


def source(names) -> str:
    """One C text of :func:`definitions` (with the includes they need), for tests and drivers.

    >>> source(["gradc_expf"]).count("static inline")
    6
    """
    return "\n".join(["#include <math.h>", "#include <stdint.h>", "#include <string.h>", ""]
                     + ["\n\n".join(definitions(names)), ""])
