"""The C target's value-and-grad against the NumPy target and hand-written NumPy.

Same five workloads and checks as ``run.py``; all callables timed interleaved in one
process. "C" is the default entry point (the generated extension wrapper when Python's
headers are present), "C via ctypes" the portable fallback; the last line is the bare
cost of one ctypes call into libc, the floor under any ctypes-called kernel.

    python benchmarks/c_target.py [--repeat 9] [--min-time 0.05] [--workloads seed,scalar]
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gradc  # noqa: E402
from benchmarks.run import check, interleaved  # noqa: E402
from benchmarks.workloads import WORKLOADS, gradc_problem, make_data, reference  # noqa: E402
from gradc.codegen.c_build import find_compiler  # noqa: E402


def bench(name, min_time, repeat):
    params, consts = make_data(name)
    ref = reference(name, consts)
    f, lead, wrt = gradc_problem(name, params, consts)
    args = list(lead) + list(params)
    numpy_vg = gradc.compile(f, *args, wrt=wrt).value_and_grad
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    expected = ref(*params)
    for label, fn in (("numpy target", numpy_vg), ("C", c.value_and_grad), ("C ctypes", c._slow_value_and_grad)):
        check(f"{name}/{label}", expected, fn(*args))
    fns = [lambda: ref(*params), lambda: numpy_vg(*args), lambda: c.value_and_grad(*args),
           lambda: c._slow_value_and_grad(*args)]
    return [t * 1e6 for t in interleaved(fns, min_time, repeat)]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args(argv)
    if find_compiler() is None:
        print("no C compiler found (set $CC or install gcc): nothing to time")
        return
    print("| workload | hand NumPy µs | NumPy target µs | C µs | C via ctypes µs | hand NumPy ÷ C |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in a.workloads.split(","):
        ref_us, np_us, c_us, ctypes_us = bench(name, a.min_time, a.repeat)
        print(f"| {name} | {ref_us:.2f} | {np_us:.2f} | {c_us:.2f} | {ctypes_us:.2f} | {ref_us / c_us:.1f}x |")
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    bare = interleaved([lambda: libc.labs(-1)], a.min_time, a.repeat)[0]
    print(f"\nbare ctypes call into libc (labs): {bare * 1e6:.2f} µs")


if __name__ == "__main__":
    main()
