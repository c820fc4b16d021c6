"""The C target's value-and-grad against the NumPy target and hand-written NumPy.

Same five workloads and checks as ``run.py``; all callables timed interleaved in one
process. "C" is the default entry point (the generated extension wrapper when Python's
headers are present), "C via ctypes" the portable fallback. "C kernel" is the generated
``F_grad`` alone: called 1000 times per timing from a loop in C (a small harness in
this process, calling through a function pointer so nothing is inlined or hoisted),
which is what C code calling gradc's output pays. The last line is the bare cost of one
ctypes call into libc, the floor under any ctypes-called kernel.

    python benchmarks/c_target.py [--repeat 9] [--min-time 0.05] [--workloads seed,scalar]
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import gradc  # noqa: E402
from benchmarks.run import check, interleaved  # noqa: E402
from benchmarks.workloads import WORKLOADS, gradc_problem, make_data, reference  # noqa: E402
from gradc.backends.c.build import find_compiler, function_names  # noqa: E402

KERNEL_CALLS = 1000  # per timing of the in-C loop


def kernel_loop(c, args):
    """A callable running ``c``'s value-and-grad kernel ``KERNEL_CALLS`` times from a C loop."""
    fname = function_names(c.name)[1]  # the C symbol (gradc_fn_NAME_grad)
    proto = next(line for line in c.header.splitlines() if line.startswith(f"void {fname}("))
    n_params = proto.count(",") + 1
    typedef = proto.replace(f"void {fname}(", "typedef void (*kernel_t)(", 1).rstrip(";")
    call = ", ".join(f"a[{i}]" for i in range(n_params))
    harness = (f"#include <stddef.h>\n#include <stdint.h>\n{typedef};\n"
               f"void loop(kernel_t fn, void **a, long n)\n{{\n    for (long i = 0; i < n; ++i)\n"
               f"        fn({call});\n}}\n")
    tmp = tempfile.mkdtemp(prefix="gradc_bench_")
    src, so = os.path.join(tmp, "harness.c"), os.path.join(tmp, "harness.so")
    with open(src, "w") as fh:
        fh.write(harness)
    subprocess.run([find_compiler(), "-std=c99", "-O2", "-fPIC", "-shared", "-o", so, src], check=True)
    lib = ctypes.CDLL(so)
    kernel = ctypes.CDLL(c.library_path)[fname]
    buffers = [np.ascontiguousarray(np.asarray(a, dtype=t.np_dtype))
               for a, (_, t) in zip(args, c._vg.inputs)]
    buffers += [np.empty(o.type.shape, o.type.np_dtype) for o in c.value_and_grad_graph.outputs]
    if c._vg.work:
        buffers.append(np.empty(c._vg.work // 8, np.float64))
    assert len(buffers) == n_params, (proto, len(buffers))
    argv = (ctypes.c_void_p * n_params)(*(b.ctypes.data for b in buffers))
    fn = ctypes.cast(kernel, ctypes.c_void_p)

    def run():
        lib.loop(fn, argv, ctypes.c_long(KERNEL_CALLS))
    run.buffers = buffers  # keep them alive
    return run


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
           lambda: c._slow_value_and_grad(*args), kernel_loop(c, args)]
    times = [t * 1e6 for t in interleaved(fns, min_time, repeat)]
    times[-1] /= KERNEL_CALLS
    return times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--repeat", type=int, default=9)
    a = ap.parse_args(argv)
    if find_compiler() is None:
        print("no C compiler found (set $CC or install gcc): nothing to time")
        return
    print("| workload | hand NumPy µs | NumPy target µs | C from Python µs | C via ctypes µs | C kernel µs "
          "| hand NumPy ÷ C from Python | hand NumPy ÷ C kernel |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for name in a.workloads.split(","):
        ref_us, np_us, c_us, ctypes_us, kernel_us = bench(name, a.min_time, a.repeat)
        print(f"| {name} | {ref_us:.2f} | {np_us:.2f} | {c_us:.2f} | {ctypes_us:.2f} | {kernel_us:.3f} "
              f"| {ref_us / c_us:.1f}x | {ref_us / kernel_us:.1f}x |")
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    bare = interleaved([lambda: libc.labs(-1)], a.min_time, a.repeat)[0]
    print(f"\nbare ctypes call into libc (labs): {bare * 1e6:.2f} µs")


if __name__ == "__main__":
    main()
