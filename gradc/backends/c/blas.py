"""Large matrix products through a BLAS found when the compiled module is loaded.

A matrix product of at least ``BLAS_MIN`` multiply-adds, each of its three sizes at least
``BLAS_MIN_SIDE``, is emitted twice: a call of the BLAS's
``dgemm``/``sgemm`` (through a function pointer of the unit) and gradc's register-blocked kernels
(``gradc.backends.c.matmul``). The pointer is null until the loader sets it, once, through the
unit's ``NAME_use_blas(dgemm, sgemm)``; while it is null (no BLAS found, a C caller that never sets
it, ``GRADC_BLAS=none``) the kernels run. Smaller products are emitted with the kernels only.

Which BLAS (``$GRADC_BLAS``): ``auto`` (the default) takes SciPy's (the pointers that
``scipy.linalg.cython_blas`` exports as capsules: the OpenBLAS SciPy ships), else a system
``libopenblas``/``libblas`` found by ``ctypes.util.find_library``; ``scipy`` or ``system`` ask for
one of them; ``none`` keeps the kernels. Its threads are the BLAS's own (``OPENBLAS_NUM_THREADS``).

>>> BLAS_MIN
262144
>>> "gradc_blas_dgemm" in gemm_helper_text("double")
True
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

from gradc.backends.c import lapack

BLAS_MIN = 64 ** 3  # multiply-adds from which a product calls the BLAS (a 64 x 64 x 64 product; below, kernels)
BLAS_MIN_SIDE = 32  # and every side at least this: a thin product (k = 16) is memory-bound, as fast in the kernels
INT_MAX = 2 ** 31 - 1  # the BLAS's integers are C ints (LP64): larger sizes run the kernels

_FORTRAN_GEMM = ("void (*)(const char *, const char *, const int *, const int *, const int *, const T *, const T *, "
                 "const int *, const T *, const int *, const T *, T *, const int *)")


def pointer_declarations() -> str:
    """The unit's two BLAS pointers (null until ``NAME_use_blas`` sets them when the module is loaded)."""
    lines = ["/* The BLAS's dgemm and sgemm (Fortran calling convention), set once by NAME_use_blas when the",
             " * module is loaded; null: the products run gradc's kernels. Read only after that. */"]
    for ctype, name in (("double", "gradc_blas_dgemm"), ("float", "gradc_blas_sgemm")):
        lines.append(f"static {_FORTRAN_GEMM.replace('T', ctype).replace('(*)', '(*' + name + ')')};")
    return "\n".join(lines)


def gemm_helper_text(ctype: str) -> str:
    """A row-major ``c = a @ b`` through the Fortran (column-major) gemm: ``c.T = b.T @ a.T``.

    ``ta``/``tb``: whether ``a``/``b`` are stored transposed (their columns contiguous); ``lda``... are
    the strides of their contiguous axis's neighbour, as BLAS's leading dimensions."""
    suffix, fn = ("", "gradc_blas_dgemm") if ctype == "double" else ("f", "gradc_blas_sgemm")
    return f"""
/* c (m x n, row stride ldc) = a (m x k) @ b (k x n), row-major, by the BLAS's column-major gemm computing
 * c.T = b.T @ a.T; ta, tb: a, b stored transposed (leading dimensions lda, ldb: their row strides as stored). */
static void gradc_gemm{suffix}(int ta, int tb, long m, long n, long k, const {ctype} *a, long lda,
                        const {ctype} *b, long ldb, {ctype} *c, long ldc)
{{
    const char opa = ta ? 'T' : 'N', opb = tb ? 'T' : 'N';
    const int im = (int)m, in = (int)n, ik = (int)k, ilda = (int)lda, ildb = (int)ldb, ildc = (int)ldc;
    const {ctype} one = 1, zero = 0;
    {fn}(&opb, &opa, &in, &im, &ik, &one, b, &ildb, a, &ilda, &zero, c, &ildc);
}}"""


def setter_text(name: str) -> str:
    """``NAME_use_blas(dgemm, sgemm)``: what the loader calls once with the BLAS's functions (or nulls)."""
    return (f"/* The BLAS this unit's large matrix products call (Fortran dgemm_/sgemm_; null: gradc's kernels).\n"
            f" * Call once, before any other function of the unit runs. */\n"
            f"void {name}_use_blas(void (*dgemm)(void), void (*sgemm)(void))\n{{\n"
            f"    gradc_blas_dgemm = ({_FORTRAN_GEMM.replace('T', 'double')})dgemm;\n"
            f"    gradc_blas_sgemm = ({_FORTRAN_GEMM.replace('T', 'float')})sgemm;\n}}")


def setter_prototype(name: str) -> str:
    return f"void {name}_use_blas(void (*dgemm)(void), void (*sgemm)(void))"


# ---------------------------------------------------------------- finding a BLAS at run time
def _scipy_gemm():
    try:
        from scipy.linalg import cython_blas
    except ImportError:
        return None
    capi = getattr(cython_blas, "__pyx_capi__", {})
    if "dgemm" not in capi or "sgemm" not in capi:
        return None
    return lapack.capsule_pointer(capi["dgemm"]), lapack.capsule_pointer(capi["sgemm"]), "scipy.linalg.cython_blas"


def _system_gemm():
    for lib_name in ("openblas", "blas"):
        path = ctypes.util.find_library(lib_name)
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
            return (ctypes.cast(lib.dgemm_, ctypes.c_void_p).value, ctypes.cast(lib.sgemm_, ctypes.c_void_p).value,
                    path)
        except (OSError, AttributeError):
            continue
    return None


@functools.lru_cache(maxsize=None)
def _found(choice: str):
    finders = {"auto": (_scipy_gemm, _system_gemm), "scipy": (_scipy_gemm,), "system": (_system_gemm,),
               "none": ()}
    if choice not in finders:
        raise ValueError(f"GRADC_BLAS={choice!r}: expected one of auto, scipy, system, none")
    for find in finders[choice]:
        got = find()
        if got is not None:
            return got
    return None


def found_blas() -> tuple | None:
    """``(dgemm address, sgemm address, where from)`` of the BLAS ``$GRADC_BLAS`` selects, or None.

    >>> os.environ["GRADC_BLAS"] = "none"; found_blas(); del os.environ["GRADC_BLAS"]
    """
    return _found(os.environ.get("GRADC_BLAS", "auto").strip().lower() or "auto")


def connect(lib, name: str) -> str | None:
    """Give the loaded unit ``lib`` the BLAS (when it has large products: a ``NAME_use_blas``); returns where
    the BLAS came from, or None (the kernels run). A unit with eig is given LAPACK's geev too (``lapack``)."""
    lapack.connect(lib, name)
    try:
        setter = getattr(lib, f"{name}_use_blas")
    except AttributeError:  # no product large enough: nothing to give
        return None
    got = found_blas()
    setter.restype, setter.argtypes = None, [ctypes.c_void_p, ctypes.c_void_p]
    setter(*(got[:2] if got else (None, None)))
    return got[2] if got else None
