"""LAPACK's ``zgeev``/``cgeev`` for ``eig`` of large matrices, found when the compiled module is loaded.

As the BLAS path (``gradc.backends.c.blas``): a unit with ``eig`` has two function pointers, null
until the loader calls its ``NAME_use_lapack(zgeev, cgeev)`` once. ``eig`` of a matrix of at least
``EIG_LAPACK_MIN`` rows then calls LAPACK's complex ``geev`` (the same normalisation as gradc's own:
unit vectors, the entry of largest modulus real and positive; LAPACK's order of the eigenvalues,
NumPy's for a complex matrix); smaller matrices, or a unit without LAPACK (none found, a C caller
that never sets it, ``GRADC_BLAS=none``), run gradc's C99 Hessenberg QR (``linalg_eig``).
Which LAPACK follows ``$GRADC_BLAS``: ``auto``/``scipy`` take SciPy's (the capsules of
``scipy.linalg.cython_lapack``), ``system`` a ``liblapack``/``libopenblas`` found by ``ctypes``,
``none`` none.

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


def _geev_type(ctype: str, real: str) -> str:
    return _GEEV.replace("T *", f"{ctype} *").replace("R *", f"{real} *")


def pointer_declarations() -> str:
    """The unit's two LAPACK pointers (null until ``NAME_use_lapack`` sets them when the module is loaded)."""
    lines = ["/* LAPACK's zgeev and cgeev (Fortran calling convention), set once by NAME_use_lapack when the",
             " * module is loaded; null: eig runs gradc's own Hessenberg QR. Read only after that. */"]
    for ctype, real, name in (("double _Complex", "double", "gradc_lapack_zgeev"),
                              ("float _Complex", "float", "gradc_lapack_cgeev")):
        lines.append(f"static {_geev_type(ctype, real).replace('(*)', '(*' + name + ')')};")
    return "\n".join(lines)


def setter_text(name: str) -> str:
    """``NAME_use_lapack(zgeev, cgeev)``: what the loader calls once with LAPACK's functions (or nulls)."""
    return (f"/* The LAPACK eig of large matrices calls (Fortran zgeev_/cgeev_; null: gradc's own).\n"
            f" * Call once, before any other function of the unit runs. */\n"
            f"void {name}_use_lapack(void (*zgeev)(void), void (*cgeev)(void))\n{{\n"
            f"    gradc_lapack_zgeev = ({_geev_type('double _Complex', 'double')})zgeev;\n"
            f"    gradc_lapack_cgeev = ({_geev_type('float _Complex', 'float')})cgeev;\n}}")


def setter_prototype(name: str) -> str:
    return f"void {name}_use_lapack(void (*zgeev)(void), void (*cgeev)(void))"


def header_line(name: str) -> str:
    return (f"eig of matrices of at least {EIG_LAPACK_MIN} rows calls LAPACK's zgeev/cgeev (Fortran ABI) given by "
            f"{name}_use_lapack(zgeev, cgeev), once, before any other call (gradc's Python loader does so); until "
            "then, or given nulls, gradc's own Hessenberg QR runs.")


def _scipy_geev():
    try:
        from scipy.linalg import cython_lapack
    except ImportError:
        return None
    capi = getattr(cython_lapack, "__pyx_capi__", {})
    if "zgeev" not in capi or "cgeev" not in capi:
        return None
    return _capsule_pointer(capi["zgeev"]), _capsule_pointer(capi["cgeev"]), "scipy.linalg.cython_lapack"


def _capsule_pointer(capsule) -> int | None:
    """The address a Cython ``__pyx_capi__`` capsule holds (as ``gradc.backends.c.blas`` reads the BLAS's)."""
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
            return (ctypes.cast(lib.zgeev_, ctypes.c_void_p).value, ctypes.cast(lib.cgeev_, ctypes.c_void_p).value,
                    path)
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
    """``(zgeev address, cgeev address, where from)`` of the LAPACK ``$GRADC_BLAS`` selects, or None.

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
    setter.restype, setter.argtypes = None, [ctypes.c_void_p, ctypes.c_void_p]
    setter(*(got[:2] if got else (None, None)))
    return got[2] if got else None
