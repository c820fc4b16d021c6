"""Compile time of a long straight-line program on the NumPy and C targets (issue 22, item 8).

The program is a chain of N statements ``y = y * 1.0001 + np.sin(y) * 0.001`` on a Python float
("scalar") or a float64 array of 8 ("array"), returning ``np.sum(y)``. Each figure is the median of
``--repeat`` fresh compiles (a fresh cache directory each time, so the C compiler runs); for C the
emission (trace, AD, passes, C text) and the C compiler are also timed apart.

    PYTHONPATH=. python benchmarks/long_programs.py [--statements 3000] [--repeat 3] [--shapes scalar,array]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gradc  # noqa: E402
from gradc.backends.c.build import build, emit_sources_for  # noqa: E402


def chain(n_statements: int):
    """The user's function: ``n_statements`` lines of straight-line NumPy."""
    body = "".join("    y = y * 1.0001 + np.sin(y) * 0.001\n" for _ in range(n_statements))
    source = f"import numpy as np\n\ndef chain(x):\n    y = x\n{body}    return np.sum(y)\n"
    namespace: dict = {}
    exec(compile(source, f"<chain_{n_statements}>", "exec"), namespace)
    return namespace["chain"]


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(n_statements: int, shape: str, repeat: int) -> dict:
    f = chain(n_statements)
    x = np.linspace(0.1, 0.8, 8) if shape == "array" else 0.3
    times: dict = {"numpy": [], "c": [], "c emit": [], "c compiler": []}
    for _ in range(repeat):
        os.environ["GRADC_CACHE_DIR"] = tempfile.mkdtemp(prefix="gradc_bench_long_")
        times["numpy"].append(_timed(lambda: gradc.compile(f, x)))
        times["c"].append(_timed(lambda: gradc.compile(f, x, target="c")))
        start = time.perf_counter()
        source = emit_sources_for(f, x)[0]
        times["c emit"].append(time.perf_counter() - start)
        start = time.perf_counter()
        build(source, "chain")
        times["c compiler"].append(time.perf_counter() - start)
    c = gradc.compile(f, x, target="c")
    value, grad = c.value_and_grad(x)
    want_value, want_grad = gradc.compile(f, x).value_and_grad(x)
    assert abs(value - want_value) <= 1e-12 * abs(want_value), (value, want_value)
    assert np.allclose(grad, want_grad, rtol=1e-10), (grad, want_grad)
    return {k: statistics.median(v) for k, v in times.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=3000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--shapes", default="scalar,array")
    args = parser.parse_args(argv)
    print(f"{args.statements} statements, median of {args.repeat} fresh compiles (s)")
    print("| shape | NumPy target | C target | C: emit | C: compiler |")
    print("|---|---:|---:|---:|---:|")
    for shape in args.shapes.split(","):
        t = measure(args.statements, shape, args.repeat)
        print(f"| {shape} | {t['numpy']:.1f} | {t['c']:.1f} | {t['c emit']:.1f} | {t['c compiler']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
