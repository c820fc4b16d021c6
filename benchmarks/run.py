#!/usr/bin/env python3
"""Time gradc's generated value-and-grad against hand-written NumPy.

For each workload (see ``workloads.py``) the value and gradients of gradc's
``compile(...).value_and_grad`` are first checked against the hand-written
reference (rtol 1e-8), then both are timed in this process, interleaved:
repeat k times the reference, then gradc (order alternating between repeats),
each repeat a ``timeit`` run whose call count is calibrated to ``--min-time``.
Reported: per-call medians in microseconds, their ratio (and the ratio of the
fastest runs, steadier on a busy machine), and the compile time
(trace + AD + passes + emit + load) as the median of a few fresh compiles.

Then the dispatch overhead of the decorators: a call of ``gradc.grad(f)`` /
``gradc.value_and_grad(f)`` minus a direct call of the compiled function.

    PYTHONPATH=. python benchmarks/run.py            # full run (about a minute)
    PYTHONPATH=. python benchmarks/run.py --quick    # smoke run (a few seconds)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import timeit

import numpy as np

try:
    from benchmarks.workloads import WORKLOADS, gradc_problem, make_data, reference
except ImportError:  # run as a script: benchmarks/ is on sys.path
    from workloads import WORKLOADS, gradc_problem, make_data, reference

import gradc

RTOL, ATOL = 1e-8, 1e-11
FLOOR_RATIO, FLOOR_COMPILE_MS = 1.10, 50.0


def calibrate(fn, min_time):
    """Calls per timeit run so that one run lasts about ``min_time`` seconds."""
    fn()
    number = 1
    while True:
        t = timeit.timeit(fn, number=number)
        if t >= min_time / 4 or number >= 1 << 22:
            break
        number *= 8 if t < min_time / 40 else 2
    return max(1, int(round(number * min_time / max(t, 1e-9))))


def interleaved(fns, min_time, repeat, best=False, timer=time.perf_counter):
    """Median (or with ``best``, (median, min)) per-call seconds of each callable, timed in alternating order
    (``timer=time.process_time``: this process's CPU time, steadier than wall time on a shared machine)."""
    numbers = [calibrate(fn, min_time) for fn in fns]
    times = [[] for _ in fns]
    for r in range(repeat):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            times[i].append(timeit.Timer(fns[i], timer=timer).timeit(number=numbers[i]) / numbers[i])
    if best:
        return [(statistics.median(t), min(t)) for t in times]
    return [statistics.median(t) for t in times]


def check(name, ref, got):
    """Raise AssertionError unless value and gradients agree to rtol 1e-8."""
    (rv, rg), (gv, gg) = ref, got
    gg = gg if isinstance(gg, tuple) else (gg,)
    if not np.isclose(rv, gv, rtol=RTOL, atol=ATOL):
        raise AssertionError(f"{name}: value {gv!r} != reference {rv!r}")
    if len(rg) != len(gg):
        raise AssertionError(f"{name}: {len(gg)} gradients, reference has {len(rg)}")
    for k, (a, b) in enumerate(zip(rg, gg)):
        if np.shape(a) != np.shape(b) or not np.allclose(a, b, rtol=RTOL, atol=ATOL):
            raise AssertionError(f"{name}: gradient {k} differs from the reference")


def compile_ms(f, args, wrt, repeat):
    """Median wall time of a fresh ``gradc.compile`` (trace, AD, passes, emit, load)."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        gradc.compile(f, *args, wrt=wrt)
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def bench_workload(name, min_time, repeat, compiles):
    params, consts = make_data(name)
    ref = reference(name, consts)
    f, lead, wrt = gradc_problem(name, params, consts)
    args = list(lead) + list(params)
    compiled = gradc.compile(f, *args, wrt=wrt)
    vg = compiled.value_and_grad
    check(name, ref(*params), vg(*args))
    (ref_s, ref_min), (gradc_s, gradc_min) = interleaved([lambda: ref(*params), lambda: vg(*args)], min_time,
                                                         repeat, best=True)
    return {"workload": name, "reference_us": ref_s * 1e6, "gradc_us": gradc_s * 1e6,
            "ratio": gradc_s / ref_s, "ratio_of_minima": gradc_min / ref_min,
            "compile_ms": compile_ms(f, args, wrt, compiles)}


def bench_dispatch(name, min_time, repeat):
    """Per-call cost of the ``grad`` / ``value_and_grad`` decorators beyond the compiled function."""
    params, consts = make_data(name)
    f, lead, wrt = gradc_problem(name, params, consts)
    args = list(lead) + list(params)
    compiled = gradc.compile(f, *args, wrt=wrt)
    g, direct_g = gradc.grad(f, wrt=wrt), compiled.grad
    vg, direct_vg = gradc.value_and_grad(f, wrt=wrt), compiled.value_and_grad
    g(*args)
    vg(*args)
    times = interleaved([lambda: direct_g(*args), lambda: g(*args), lambda: direct_vg(*args),
                         lambda: vg(*args)], min_time, repeat)
    return {"workload": name, "direct_grad_us": times[0] * 1e6, "grad_us": times[1] * 1e6,
            "grad_overhead_us": (times[1] - times[0]) * 1e6, "direct_value_and_grad_us": times[2] * 1e6,
            "value_and_grad_us": times[3] * 1e6, "value_and_grad_overhead_us": (times[3] - times[2]) * 1e6}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default=",".join(WORKLOADS))
    ap.add_argument("--min-time", type=float, default=0.05, help="seconds per timed run (default 0.05)")
    ap.add_argument("--repeat", type=int, default=9, help="timed runs per callable (default 9)")
    ap.add_argument("--compiles", type=int, default=5, help="fresh compiles timed per workload (default 5)")
    ap.add_argument("--quick", action="store_true", help="smoke run: short runs, 3 repeats, 1 compile")
    ap.add_argument("--json", help="also write the results here")
    ap.add_argument("--check-floors", action="store_true",
                    help=f"exit 1 unless every ratio <= {FLOOR_RATIO} and compile <= {FLOOR_COMPILE_MS} ms "
                         "(meaningful on full runs, not with --quick)")
    a = ap.parse_args(argv)
    if a.quick:
        a.min_time, a.repeat, a.compiles = 0.002, 3, 1
    names = [w for w in a.workloads.split(",") if w]
    start = time.perf_counter()
    rows = [bench_workload(n, a.min_time, a.repeat, a.compiles) for n in names]
    dispatch = [bench_dispatch(n, a.min_time, a.repeat) for n in ("seed", "scalar") if n in names]

    load = f"; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cpus" if hasattr(os, "getloadavg") else ""
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}{load}; per-call medians of {a.repeat} "
          f"interleaved runs of >= {a.min_time * 1e3:g} ms; values and gradients checked (rtol {RTOL})\n")
    print("| workload | reference µs | gradc µs | ratio | ratio of minima | compile ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['workload']} | {r['reference_us']:.2f} | {r['gradc_us']:.2f} | {r['ratio']:.2f} | "
              f"{r['ratio_of_minima']:.2f} | {r['compile_ms']:.1f} |")
    if dispatch:
        print("\n| workload | compiled.grad µs | grad(f) µs | overhead µs | "
              "compiled.value_and_grad µs | value_and_grad(f) µs | overhead µs |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for d in dispatch:
            print(f"| {d['workload']} | {d['direct_grad_us']:.2f} | {d['grad_us']:.2f} | "
                  f"{d['grad_overhead_us']:.2f} | {d['direct_value_and_grad_us']:.2f} | "
                  f"{d['value_and_grad_us']:.2f} | {d['value_and_grad_overhead_us']:.2f} |")
    print(f"\n(total {time.perf_counter() - start:.1f} s)")
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"workloads": rows, "dispatch": dispatch}, fh, indent=1)
    if a.check_floors:
        bad = [r["workload"] for r in rows if r["ratio"] > FLOOR_RATIO or r["compile_ms"] > FLOOR_COMPILE_MS]
        if bad:
            print(f"floors missed: {', '.join(bad)}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
