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

``special`` adds functions C99 lacks (``digamma``, ``erfinv``, ``erfcinv``, ``ndtri``, ``log_ndtr``, ``erfcx``),
``incomplete`` the incomplete gamma and beta functions and their inverses, ``bessel`` the Bessel functions:
scalar code, for SciPy's special functions, not written to vectorise.

>>> VECTOR_NAMES["f32"]["exp"]
'gradc_expf'
>>> print(definitions(["gradc_tanh"])[-1].splitlines()[1])
static inline double gradc_tanh(double x)
"""
from __future__ import annotations

import re

from gradc.backends.c.mathlib import (
    bessel,
    beta_zeta,
    bits,
    dilogarithm,
    exp_log,
    exponential_integral,
    fft,
    hyperbolic,
    incomplete,
    incomplete_shape,
    integer,
    owens_t,
    sine_cosine_integral,
    special,
    trig,
    zeta,
)

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
    "c128": {}, "c64": {},  # complex: C99's type-generic functions (tgmath.h: exp of a complex is cexp)
}


# name -> (C text, the names it calls); listed in definition order (callees first)
_LIBRARY = {
    "gradc_bits": (bits.BITS, ()),
    "gradc_from_bits": (bits.FROM_BITS, ()),
    "gradc_bitsf": (bits.BITSF, ()),
    "gradc_from_bitsf": (bits.FROM_BITSF, ()),
    "gradc_select": (bits.SELECT, ("gradc_bits", "gradc_from_bits")),
    "gradc_selectf": (bits.SELECTF, ("gradc_bitsf", "gradc_from_bitsf")),
    "gradc_mul_add": (bits.MUL_ADD, ()),
    "gradc_mul_addf": (bits.MUL_ADDF, ()),
    "gradc_expm1_series": (exp_log.EXPM1_SERIES, ("gradc_mul_add",)),
    "gradc_expm1_seriesf": (exp_log.EXPM1_SERIESF, ("gradc_mul_addf",)),
    "gradc_log_series": (exp_log.LOG_SERIES, ()),
    "gradc_log_seriesf": (exp_log.LOG_SERIESF, ()),
    "gradc_exp": (exp_log.EXP, ("gradc_select", "gradc_expm1_series")),
    "gradc_expf": (exp_log.EXPF, ("gradc_selectf", "gradc_expm1_seriesf")),
    "gradc_expm1": (exp_log.EXPM1, ("gradc_select", "gradc_expm1_series")),
    "gradc_expm1f": (exp_log.EXPM1F, ("gradc_selectf", "gradc_expm1_seriesf")),
    "gradc_tanh": (hyperbolic.TANH, ("gradc_select", "gradc_expm1")),
    "gradc_tanhf": (hyperbolic.TANHF, ("gradc_selectf", "gradc_expm1f")),
    "gradc_exp_half": (hyperbolic.EXP_HALF, ("gradc_select", "gradc_expm1_series")),
    "gradc_exp_halff": (hyperbolic.EXP_HALFF, ("gradc_selectf", "gradc_expm1_seriesf")),
    "gradc_sinh": (hyperbolic.SINH, ("gradc_exp_half", "gradc_expm1")),
    "gradc_sinhf": (hyperbolic.SINHF, ("gradc_exp_halff", "gradc_expm1f")),
    "gradc_cosh": (hyperbolic.COSH, ("gradc_exp_half", "gradc_expm1")),
    "gradc_coshf": (hyperbolic.COSHF, ("gradc_exp_halff", "gradc_expm1f")),
    "gradc_log": (exp_log.LOG, ("gradc_select", "gradc_log_series")),
    "gradc_logf": (exp_log.LOGF, ("gradc_selectf", "gradc_log_seriesf")),
    "gradc_log1p": (exp_log.LOG1P, ("gradc_select", "gradc_log_series")),
    "gradc_log1pf": (exp_log.LOG1PF, ("gradc_selectf", "gradc_log_seriesf")),
    "gradc_pio2_reduce": (trig.PIO2_REDUCE, ("gradc_bits",)),
    "gradc_sin_kernel": (trig.SIN_KERNEL, ()),
    "gradc_cos_kernel": (trig.COS_KERNEL, ()),
    "gradc_sin": (trig.SIN, ("gradc_select", "gradc_pio2_reduce", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_cos": (trig.COS, ("gradc_select", "gradc_pio2_reduce", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_pio2_reduce_scalar": (trig.PIO2_REDUCE_SCALAR, ("gradc_pio2_reduce",)),
    "gradc_sin_scalar": (trig.SIN_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_cos_scalar": (trig.COS_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_pio2_reducef": (trig.PIO2_REDUCEF, ("gradc_bits",)),
    "gradc_sin_kernelf": (trig.SIN_KERNELF, ()),
    "gradc_cos_kernelf": (trig.COS_KERNELF, ()),
    "gradc_sinf": (trig.SINF, ("gradc_select", "gradc_selectf", "gradc_pio2_reducef", "gradc_sin_kernelf",
                           "gradc_cos_kernelf")),
    "gradc_cosf": (trig.COSF, ("gradc_select", "gradc_pio2_reducef", "gradc_sin_kernelf", "gradc_cos_kernelf")),
    "gradc_sincos_scalar": (trig.SINCOS_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_sincosf_scalar": (trig.SINCOSF_SCALAR, ("gradc_pio2_reducef", "gradc_sin_kernelf", "gradc_cos_kernelf")),
    "gradc_tan": (trig.TAN, ("gradc_select", "gradc_pio2_reduce", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_tan_scalar": (trig.TAN_SCALAR, ("gradc_pio2_reduce_scalar", "gradc_sin_kernel", "gradc_cos_kernel")),
    "gradc_tanf": (trig.TANF, ("gradc_select", "gradc_selectf", "gradc_pio2_reducef", "gradc_sin_kernelf",
                           "gradc_cos_kernelf")),
    "gradc_tanf_scalar": (trig.TANF_SCALAR, ("gradc_tanf",)),
    "gradc_sinf_scalar": (trig.SINF_SCALAR, ("gradc_sinf",)),
    "gradc_cosf_scalar": (trig.COSF_SCALAR, ("gradc_cosf",)),
    **special.LIBRARY,  # digamma, erfinv, erfcinv, ndtri, log_ndtr, erfcx
    **incomplete.LIBRARY,  # gammainc, gammaincc, betainc and their inverses
    **bessel.LIBRARY,  # Bessel functions: libm's J and Y of integer order, gradc's I and K
    **beta_zeta.LIBRARY,  # polygamma (by the Hurwitz zeta), betaln, beta
    **incomplete_shape.LIBRARY,  # gammainc's and betainc's derivatives in their shape parameters
    **integer.LIBRARY,  # NumPy's floor division, mod, fmod, abs and shifts of int64
    **exponential_integral.LIBRARY,  # expn, exp1 and expi
    **dilogarithm.LIBRARY,  # spence, dawsn
    **owens_t.LIBRARY,  # Owen's T function, the skew-normal distribution function
    **sine_cosine_integral.LIBRARY,  # Si and Ci (scipy.special.sici)
    **zeta.LIBRARY,  # scipy.special.zeta(x, q) with SciPy's special values
    **fft.LIBRARY,  # radix-2 and Bluestein DFTs along the lines of an array (needs complex.h, stdlib.h)
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
    return [text for name, (text, _) in _LIBRARY.items() if name in wanted and text]  # "": an alias of its callee


def source(names) -> str:
    """One C text of :func:`definitions` (with the includes they need), for tests and drivers.

    >>> source(["gradc_expf"]).count("static inline")
    6
    """
    return "\n".join(["#include <math.h>", "#include <stdint.h>", "#include <string.h>", ""]
                     + ["\n\n".join(definitions(names)), ""])
