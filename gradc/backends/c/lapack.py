"""LAPACK's ``geev`` for ``eig`` of large matrices, found when the compiled module is loaded.

As the BLAS path (``gradc.backends.c.blas``): a unit with ``eig`` has four function pointers, null
until the loader calls its ``NAME_use_lapack(zgeev, cgeev, dgeev, sgeev)`` once. ``eig`` of a matrix
of at least ``EIG_LAPACK_MIN`` rows then calls LAPACK's ``geev`` as NumPy does: ``zgeev``/``cgeev``
for a complex matrix (the same normalisation as gradc's own: unit vectors, the entry of largest
modulus real and positive), ``dgeev``/``sgeev`` for a real one (conjugate pairs exact, a real
eigenvector's sign LAPACK's), so the eigenpairs are NumPy's, order included. Smaller matrices, or a
unit without LAPACK (none found, a C caller that never sets it, ``GRADC_BLAS=none``), run gradc's
C99 Hessenberg QR (``linalg_eig``). Which LAPACK follows ``$GRADC_BLAS``: ``auto``/``scipy`` take
SciPy's (the capsules of ``scipy.linalg.cython_lapack``), ``system`` a ``liblapack``/``libopenblas``
found by ``ctypes``, ``none`` none.

>>> "gradc_lapack_zgeev" in pointer_declarations()
True
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import os

EIG_LAPACK_MIN = 32  # rows from which eig calls LAPACK when the unit has it (below: gradc's C99, as tested)
LWORK_PER_ROW = 65  # geev's work per row: blocked Hessenberg reduction (block size <= 64), and one more

_GEEV = ("void (*)(const char *, const char *, const int *, T *, const int *, T *, T *, const int *, T *, "
         "const int *, T *, const int *, R *, int *)")
_REAL_GEEV = ("void (*)(const char *, const char *, const int *, T *, const int *, T *, T *, T *, const int *, T *, "
              "const int *, T *, const int *, int *)")
_ROUTINES = (("zgeev", "double _Complex", "double"), ("cgeev", "float _Complex", "float"), ("dgeev", "double", ""),
             ("sgeev", "float", ""))


def _geev_type(ctype: str, real: str) -> str:
    if not real:  # dgeev/sgeev: the eigenvalues' real and imaginary parts apart, no rwork
        return _REAL_GEEV.replace("T *", f"{ctype} *")
    return _GEEV.replace("T *", f"{ctype} *").replace("R *", f"{real} *")


def pointer_declarations() -> str:
    """The unit's two LAPACK pointers (null until ``NAME_use_lapack`` sets them when the module is loaded)."""
    lines = ["/* LAPACK's zgeev, cgeev, dgeev and sgeev (Fortran calling convention), set once by NAME_use_lapack",
             " * when the module is loaded; null: eig runs gradc's own Hessenberg QR. Read only after that. */"]
    for routine, ctype, real in _ROUTINES:
        lines.append(f"static {_geev_type(ctype, real).replace('(*)', '(*gradc_lapack_' + routine + ')')};")
    return "\n".join(lines)


def setter_text(name: str) -> str:
    """``NAME_use_lapack(zgeev, cgeev, dgeev, sgeev)``: what the loader calls once with LAPACK's functions."""
    body = "".join(f"    gradc_lapack_{r} = ({_geev_type(c, real)}){r};\n" for r, c, real in _ROUTINES)
    return (f"/* The LAPACK eig of large matrices calls (Fortran zgeev_, cgeev_, dgeev_, sgeev_; null: gradc's own).\n"
            f" * Call once, before any other function of the unit runs. */\n{setter_prototype(name)}\n{{\n{body}}}")


def setter_prototype(name: str) -> str:
    return f"void {name}_use_lapack({', '.join(f'void (*{r})(void)' for r, _, _ in _ROUTINES)})"


def header_line(name: str) -> str:
    return (f"eig of matrices of at least {EIG_LAPACK_MIN} rows calls LAPACK's geev (Fortran ABI) given by "
            f"{name}_use_lapack(zgeev, cgeev, dgeev, sgeev), once, before any other call (gradc's Python loader "
            "does so); until then, or given nulls, gradc's own Hessenberg QR runs.")


def _scipy_geev():
    try:
        from scipy.linalg import cython_lapack
    except ImportError:
        return None
    capi = getattr(cython_lapack, "__pyx_capi__", {})
    if any(r not in capi for r, _, _ in _ROUTINES):
        return None
    return (*(capsule_pointer(capi[r]) for r, _, _ in _ROUTINES), "scipy.linalg.cython_lapack")


def capsule_pointer(capsule) -> int | None:
    """The address a Cython ``__pyx_capi__`` capsule holds (SciPy's LAPACK here, its BLAS in ``blas``).

    >>> from scipy.linalg import cython_lapack
    >>> capsule_pointer(cython_lapack.__pyx_capi__["dgeev"]) > 0
    True
    """
    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype, get_name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype, get_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return get_pointer(capsule, get_name(capsule))


def _system_geev():
    for lib_name in ("lapack", "openblas"):
        path = ctypes.util.find_library(lib_name)
        if not path:
            continue
        try:
            lib = ctypes.CDLL(path)
            return (*(ctypes.cast(getattr(lib, r + "_"), ctypes.c_void_p).value for r, _, _ in _ROUTINES), path)
        except (OSError, AttributeError):
            continue
    return None


@functools.lru_cache(maxsize=None)
def _found(choice: str):
    finders = {"auto": (_scipy_geev, _system_geev), "scipy": (_scipy_geev,), "system": (_system_geev,), "none": ()}
    for find in finders.get(choice, ()):
        got = find()
        if got is not None:
            return got
    return None


def found_lapack() -> tuple | None:
    """``(zgeev, cgeev, dgeev, sgeev addresses, where from)`` of the LAPACK ``$GRADC_BLAS`` selects, or None.

    >>> os.environ["GRADC_BLAS"] = "none"; found_lapack(); del os.environ["GRADC_BLAS"]
    """
    return _found(os.environ.get("GRADC_BLAS", "auto").strip().lower() or "auto")


def connect(lib, name: str) -> str | None:
    """Give the loaded unit ``lib`` LAPACK (when it has eig: a ``NAME_use_lapack``); returns where it came from."""
    try:
        setter = getattr(lib, f"{name}_use_lapack")
    except AttributeError:  # no eig: nothing to give
        return None
    got = found_lapack()
    setter.restype, setter.argtypes = None, [ctypes.c_void_p] * len(_ROUTINES)
    setter(*(got[:-1] if got else (None,) * len(_ROUTINES)))
    return got[-1] if got else None
