"""Bit access, branch-free selects and the multiply-add step every function of the C math library builds on.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.
"""

BITS = """\
static inline uint64_t gradc_bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}"""

FROM_BITS = """\
static inline double gradc_from_bits(uint64_t u)
{
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
}"""

BITSF = """\
static inline uint32_t gradc_bitsf(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}"""

FROM_BITSF = """\
static inline float gradc_from_bitsf(uint32_t u)
{
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}"""

SELECT = """\
/* c ? a : b with a and b both computed: a select of bits, which compilers vectorise where a branch stays one */
static inline double gradc_select(int c, double a, double b)
{
    const uint64_t mask = (uint64_t)0 - (uint64_t)(c != 0);
    return gradc_from_bits((gradc_bits(a) & mask) | (gradc_bits(b) & ~mask));
}"""

SELECTF = """\
static inline float gradc_selectf(int c, float a, float b)
{
    const uint32_t mask = (uint32_t)0 - (uint32_t)(c != 0);
    return gradc_from_bitsf((gradc_bitsf(a) & mask) | (gradc_bitsf(b) & ~mask));
}"""

MUL_ADD = """\
/* a*b + c: one fused operation where the machine has a fast one (C99's FP_FAST_FMA), else two */
static inline double gradc_mul_add(double a, double b, double c)
{
#ifdef FP_FAST_FMA
    return fma(a, b, c);
#else
    return a * b + c;
#endif
}"""

MUL_ADDF = """\
static inline float gradc_mul_addf(float a, float b, float c)
{
#ifdef FP_FAST_FMAF
    return fmaf(a, b, c);
#else
    return a * b + c;
#endif
}"""
