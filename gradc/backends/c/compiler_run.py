"""Running the C compiler: the optimisation level a source gets, and the module and its glue built side by side.

GCC's optimisation passes are superlinear in a function's length, and the long sources gradc emits are mostly
straight-line code (unrolled small matrices, per-helper forward-mode bodies) that ``-O3``'s extra passes barely
speed up. Measured on GradBench's hand tracking Jacobian (3,400 lines, GCC 12.2): 1.97 s of compiler CPU time at
``-O3``, 1.10 s at ``-O2``, 0.85 s at ``-O1``, and the same run time at ``-O2`` as at ``-O3`` (68-70 ms); a short
source with hot loops (kmeans' 790 lines: 0.066 ms at ``-O3``, 0.078 ms at ``-O2``) keeps ``-O3``. So the level
steps down with the source's length (:func:`optimisation`).

An extension module is two translation units: the emitted source and its Python glue (which reads Python's and
NumPy's headers). :func:`compile_shared` compiles them as two processes at once, then links, instead of one
compiler process compiling them one after the other.

>>> optimisation("int f(void);")[1], optimisation("x;\\n" * 3000)[1], optimisation("x;\\n" * 5000)[1]
('-O3', '-O2', '-O1')
"""
from __future__ import annotations

import os
import subprocess

# -fwrapv: int64 + - * that overflow wrap, as NumPy's do (C leaves signed overflow undefined)
FLAGS = ("-std=c99", "-O3", "-fwrapv", "-fPIC", "-shared")
# a source longer than this builds at -O2 (the measurements above); 12,000 lines of unrolled straight-line code
# take 29 s at -O3 and 1.8 s at -O1, so a source longer than LONG_SOURCE_LINES builds at -O1
MEDIUM_SOURCE_LINES = 2000
LONG_SOURCE_LINES = 4000


def optimisation(source: str) -> tuple:
    """``FLAGS`` with the optimisation level for ``source``: ``-O3``, ``-O2`` past :data:`MEDIUM_SOURCE_LINES`
    lines, ``-O1`` past :data:`LONG_SOURCE_LINES`."""
    lines = source.count("\n")
    level = "-O1" if lines > LONG_SOURCE_LINES else "-O2" if lines > MEDIUM_SOURCE_LINES else "-O3"
    return tuple(level if f == "-O3" else f for f in FLAGS)


def compile_shared(cc: str, flags: list, out: str, c_path: str, link: list,
                   glue_path: str | None = None, includes: tuple = ()) -> subprocess.CompletedProcess:
    """Build the shared object ``out`` from ``c_path`` (and ``glue_path``, compiled with ``includes``).

    With glue, both files compile at once (two processes), then link; the result carries the first failing
    step's return code and every step's error output.
    """
    if glue_path is None:
        return subprocess.run([cc, *flags, "-o", out, c_path, *link], capture_output=True, text=True)
    compile_flags = [f for f in flags if f != "-shared"]
    objects = [os.path.splitext(c_path)[0] + ".o", os.path.splitext(glue_path)[0] + ".o"]
    jobs = [subprocess.Popen([cc, *compile_flags, "-c", "-o", obj, path, *extra], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
            for obj, path, extra in zip(objects, (c_path, glue_path), ((), includes))]
    errors, code = [], 0
    for job in jobs:
        _, err = job.communicate()
        errors.append(err)
        code = code or job.returncode
    if code == 0:
        linked = subprocess.run([cc, *flags, "-o", out, *objects, *link], capture_output=True, text=True)
        errors.append(linked.stderr)
        code = linked.returncode
    return subprocess.CompletedProcess(jobs[0].args, code, "", "".join(errors))
