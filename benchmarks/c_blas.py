#!/usr/bin/env python3
"""The C mlp gradient beside hand-written NumPy, with the BLAS, gradc's kernels and OpenMP threads.

The workload is ``workloads.py``'s mlp (128 x 784 inputs, 256 hidden units, 10 classes): its
products (25.7 M multiply-adds each way) are above ``gradc.backends.c.blas.BLAS_MIN``. Each
configuration runs in its own process (the BLAS pointer is one per loaded unit), which times the
hand-written NumPy value-and-gradient (NumPy's OpenBLAS, its threads as the environment says) and
the C target's, interleaved, medians, and checks them against each other first:

* ``C, BLAS``: ``GRADC_BLAS=auto`` (SciPy's OpenBLAS through ``scipy.linalg.cython_blas``);
* ``C, kernels``: ``GRADC_BLAS=none`` (gradc's register-blocked kernels, one thread);
* ``C, kernels + OpenMP``: ``GRADC_BLAS=none GRADC_OPENMP=1``.

    PYTHONPATH=. python benchmarks/c_blas.py [--threads 2] [--repeat 9]

``--threads`` sets OPENBLAS_NUM_THREADS and OMP_NUM_THREADS of every process (default: all cores).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys

CONFIGS = (("C, BLAS", {"GRADC_BLAS": "auto"}), ("C, kernels", {"GRADC_BLAS": "none"}),
           ("C, kernels + OpenMP", {"GRADC_BLAS": "none", "GRADC_OPENMP": "1"}))


def measure(repeat: int, min_time: float) -> None:
    """In this process: print ``hand_us c_us blas`` for the environment's configuration."""
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import gradc
    from benchmarks.run import check, interleaved
    from benchmarks.workloads import gradc_problem, make_data, reference

    params, consts = make_data("mlp")
    ref = reference("mlp", consts)
    f, lead, wrt = gradc_problem("mlp", params, consts)
    args = list(lead) + list(params)
    c = gradc.compile(f, *args, wrt=wrt, target="c")
    check("mlp/C", ref(*params), c.value_and_grad(*args))
    hand, compiled = interleaved([lambda: ref(*params), lambda: c.value_and_grad(*args)], min_time, repeat)
    print(f"{hand * 1e6:.1f} {compiled * 1e6:.1f} {c.blas or '-'}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--min-time", type=float, default=0.05)
    ap.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)  # one configuration, this process
    a = ap.parse_args(argv)
    if a.measure:
        measure(a.repeat, a.min_time)
        return 0
    print(f"mlp value-and-gradient, {a.threads} thread(s) (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS); medians of "
          f"{a.repeat} interleaved runs, each configuration in its own process\n")
    print("| configuration | hand NumPy µs | C target µs | hand / C | BLAS |")
    print("|---|---:|---:|---:|---|")
    for label, env in CONFIGS:
        env = dict(os.environ, **env, OPENBLAS_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads),
                   OMP_WAIT_POLICY="passive", GRADC_NOTICE_AFTER="never")
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--measure", "--repeat", str(a.repeat),
                              "--min-time", str(a.min_time)], env=env, capture_output=True, text=True)
        if out.returncode != 0:
            print(f"| {label} | failed: {out.stderr.strip().splitlines()[-1:]} | | | |")
            continue
        hand, compiled, where = out.stdout.split()[-3:]
        print(f"| {label} | {float(hand):.0f} | {float(compiled):.0f} | {float(hand) / float(compiled):.2f} | "
              f"{where} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
