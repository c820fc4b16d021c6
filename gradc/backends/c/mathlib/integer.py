"""Integer arithmetic as NumPy computes it on int64, where C's operators differ or are undefined.

C's ``/`` and ``%`` truncate toward zero and are undefined for a zero divisor (and for
``INT64_MIN / -1``); NumPy's ``floor_divide`` and ``mod`` round toward minus infinity, give 0 for a
zero divisor (with a warning) and wrap ``INT64_MIN // -1``. C's ``<<`` of a negative number, or
by 64 or more, is undefined; NumPy shifts the bits (0 beyond the width; ``>>`` gives the sign).
C text only; ``gradc.backends.c.mathlib`` emits what is used. Int32 values go through these too
(C converts the arguments; the results fit, as NumPy's do).
"""

FLOOR_DIVIDE = """\
/* NumPy's floor_divide of int64: rounded toward minus infinity; 0 for a zero divisor; INT64_MIN // -1 wraps */
static inline int64_t gradc_floor_divide_i64(int64_t x, int64_t y)
{
    if (y == 0) return 0;
    if (y == -1) return (int64_t)(0u - (uint64_t)x);
    int64_t q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
}"""

MOD = """\
/* NumPy's mod (Python's %) of int64: the sign of the divisor; 0 for a zero divisor */
static inline int64_t gradc_mod_i64(int64_t x, int64_t y)
{
    if (y == 0 || y == -1) return 0;
    int64_t r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
}"""

FMOD = """\
/* NumPy's fmod of int64: C's truncating %, defined for every divisor (0 for 0 and -1) */
static inline int64_t gradc_fmod_i64(int64_t x, int64_t y)
{
    return (y == 0 || y == -1) ? 0 : x % y;
}"""

ABS = """\
/* NumPy's absolute of int64: abs(INT64_MIN) wraps to INT64_MIN */
static inline int64_t gradc_abs_i64(int64_t x)
{
    return x < 0 ? (int64_t)(0u - (uint64_t)x) : x;
}"""

LEFT_SHIFT = """\
/* NumPy's left_shift of int64: the bits shifted (no overflow trap); 0 for a shift outside [0, 64) */
static inline int64_t gradc_left_shift_i64(int64_t x, int64_t s)
{
    return (s >= 0 && s < 64) ? (int64_t)((uint64_t)x << s) : 0;
}"""

RIGHT_SHIFT = """\
/* NumPy's right_shift of int64: arithmetic; outside [0, 64) the sign (-1 or 0) */
static inline int64_t gradc_right_shift_i64(int64_t x, int64_t s)
{
    if (s >= 0 && s < 64) return x >= 0 ? x >> s : -1 - (int64_t)((uint64_t)(-1 - x) >> s);
    return x < 0 ? -1 : 0;
}"""

LIBRARY = {
    "gradc_floor_divide_i64": (FLOOR_DIVIDE, ()),
    "gradc_mod_i64": (MOD, ()),
    "gradc_fmod_i64": (FMOD, ()),
    "gradc_abs_i64": (ABS, ()),
    "gradc_left_shift_i64": (LEFT_SHIFT, ()),
    "gradc_right_shift_i64": (RIGHT_SHIFT, ()),
}
