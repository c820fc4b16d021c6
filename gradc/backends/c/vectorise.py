"""Which fused elementwise loops the C compiler can vectorise, and in which type they compute.

A loop vectorises when every call in it is to a function gcc inlines or has a
vector form for (gradc's own math library, ``sqrt``, ``fabs``...).

>>> vectorises("y[k] = gradc_exp(x[k]) + sqrt(x[k]);")
True
>>> vectorises("y[k] = atan(x[k]);")
False
"""
from __future__ import annotations

import re

from gradc.backends.c import mathlib as c_mathlib

VECTOR_MATH = frozenset(c_mathlib.VECTOR_NAMES["f64"]) | frozenset(c_mathlib.LIMITED_NAMES["f64"]) | {"logaddexp"}


LIBM_MATH = frozenset({"arctan"})  # libm calls: the loop stays scalar


VECTOR_MIN = 8  # elements: below, a loop runs scalar, where libm's exp and log are the faster (seed: 3)


SHORT_ROW = 64  # elements: a loop this short or shorter runs a large share of its elements outside full vectors


def short_rows(shape) -> bool:
    """Whether rows of ``shape`` are short (a named size counts as long)."""
    return len(shape) >= 2 and not hasattr(shape[-1], "free_symbols") and shape[-1] < SHORT_ROW


# calls a loop can contain and still vectorise (gcc, -fno-math-errno): besides gradc's own functions
_VECTOR_CALLS = frozenset("sqrt sqrtf fabs fabsf floor floorf ceil ceilf trunc truncf isnan".split())


_CALL = re.compile(r"\b([A-Za-z_]\w*)\(")


def vectorises(line: str) -> bool:
    return all(name in _VECTOR_CALLS or name.startswith("gradc_") for name in _CALL.findall(line))


def float_only(eqns) -> bool:
    """Whether a run's values are all floats or booleans (so a select may go through a float)."""
    return all(a.type.dtype in ("f32", "f64", "bool") for e in eqns for a in [*e.inputs, e.out])


def compute_dtype(eqns) -> str:
    """``"f32"`` when a run of elementwise equations reads and writes float32 (and booleans) only.

    Integers keep the run in double: a temporary may hold one, and a float holds only 24 bits.
    """
    dtypes = {a.type.dtype for e in eqns for a in [*e.inputs, e.out]}
    if dtypes & {"c64", "c128"}:  # complex temporaries (a real value in one is exact)
        return "c64" if dtypes <= {"c64", "f32", "bool"} else "c128"
    return "f32" if "f32" in dtypes and dtypes <= {"f32", "bool"} else "f64"
