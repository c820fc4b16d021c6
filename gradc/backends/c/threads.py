"""OpenMP threads for large elementwise loops and matrix-product kernels (opt-in: ``GRADC_OPENMP=1``).

With ``$GRADC_OPENMP`` set to ``1`` (or ``on``/``yes``/``true``) and a C compiler that accepts
``-fopenmp``, the emitter puts ``#pragma omp parallel for`` on every elementwise loop of at least
``OPENMP_MIN`` elements (a loop over named sizes gets the pragma with an ``if`` clause deciding when it
runs) and on the block loop of gradc's matrix-product kernels of at least ``OPENMP_MIN`` multiply-adds, and
the unit is built with ``-fopenmp``. Each thread writes its own elements and nothing is reduced
across threads, so the results are the same bits as without threads. The number of threads is
OpenMP's (``OMP_NUM_THREADS``). Without the variable, or without OpenMP support, the source has no
pragma and builds as before. Products that call the BLAS use the BLAS's own threads.

>>> OPENMP_MIN
65536
>>> parallel_for(10, enabled=True), parallel_for(1 << 20, enabled=True)
(None, '#pragma omp parallel for schedule(static)')
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile

from gradc.backends.c.values import dim_c, known

OPENMP_MIN = 1 << 16  # elements from which a loop is shared among threads (512 KiB of float64)
_ON = ("1", "on", "yes", "true")


@functools.lru_cache(maxsize=None)
def compiler_supports_openmp(cc: str) -> bool:
    """Whether ``cc`` compiles and links a program with ``-fopenmp``."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.c")
        with open(probe, "w") as fh:
            fh.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
        try:
            return subprocess.run([cc, "-fopenmp", "-o", os.path.join(tmp, "probe"), probe],
                                  capture_output=True).returncode == 0
        except OSError:
            return False


def find_compiler() -> str | None:
    """The C compiler: ``$CC`` when it is on the path, else ``cc`` or ``gcc`` (None: none found)."""
    cc = os.environ.get("CC")
    if cc and shutil.which(cc):
        return cc
    return shutil.which("cc") or shutil.which("gcc")


def openmp_enabled() -> bool:
    """``$GRADC_OPENMP`` asks for threads and the C compiler has OpenMP."""
    if os.environ.get("GRADC_OPENMP", "").strip().lower() not in _ON:
        return False
    cc = find_compiler()
    return cc is not None and compiler_supports_openmp(cc)


def parallel_for(elements, enabled: bool, flag: str | None = None) -> str | None:
    """The pragma sharing a loop over ``elements`` among threads, or None (threads off, or too few elements).

    ``elements``: an int, or a SymPy expression of named sizes, which the pragma's ``if`` clause compares
    with ``OPENMP_MIN`` when the loop runs. ``flag``: an int the loop ors into (an or of the threads' own).
    """
    if not enabled:
        return None
    large = known(elements >= OPENMP_MIN, None)
    pragma = "#pragma omp parallel for schedule(static)" + (f" reduction(|:{flag})" if flag else "")
    if large is None:
        return f"{pragma} if ({dim_c(elements)} >= {OPENMP_MIN})"
    return pragma if large else None


def uses_openmp(source: str) -> bool:
    """Whether a unit was emitted with OpenMP pragmas (it is then built with ``-fopenmp``)."""
    return "#pragma omp " in source
