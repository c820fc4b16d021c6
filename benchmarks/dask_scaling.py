"""gradc.dask's data-parallel gradient against hand-written Dask code, and its scaling in rows and workers.

The workload is ``examples/dask_logistic.py``'s: the mean logistic loss of 10 features
plus an L2 penalty. The hand-written side is what a Dask user writes without gradc:
the per-chunk value and gradient in NumPy by hand (``z = X @ w``,
``X.T @ (expit(z) - y)``), one task per chunk, the same tree sum (``split_every=8``)
and the same finish (divide by the rows once, add the penalty). Both run on the same
``LocalCluster`` (threads_per_worker=1, 2 GB per worker) on the same data.

* Ratio: data persisted in the workers' memory (so the gradient is what is timed, not
  the random generation); gradc and hand-written calls interleaved, ``--repeat`` each;
  median and minimum seconds per call and their ratio. Target: within 1.1x.
* Scaling: rows per second of gradc's value-and-gradient for 10^6 and 10^7 rows (and
  10^8 with ``--big``: 8 GB) on 1 and 2 workers, the rows generated lazily in every call
  and never held (so generating them is part of the time), with the peak process memory
  any worker reported to the scheduler: flat in the number of rows.

    PYTHONPATH=. python benchmarks/dask_scaling.py [--repeat 5] [--big] [--quick]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))

from dask_logistic import PeakMemory, loss, make_data  # noqa: E402

import gradc.dask  # noqa: E402

LAM = 1e-4


def hand_chunk(w, X, y):
    """One chunk's value and gradient of sum(logaddexp(0, z) - y z), written by hand."""
    z = X @ w
    return np.sum(np.logaddexp(0.0, z) - y * z), X.T @ (1.0 / (1.0 + np.exp(-z)) - y)


def hand_add(*parts):
    return sum(p[0] for p in parts), sum(p[1] for p in parts)


def hand_value_and_grad(w, X, y, split_every=8):
    import dask

    w_key = dask.delayed(w, pure=True, traverse=False)
    run, add = dask.delayed(hand_chunk, pure=True), dask.delayed(hand_add, pure=True)
    level = [run(w_key, xb, yb) for xb, yb in zip(X.to_delayed().reshape(-1), y.to_delayed().reshape(-1))]
    while len(level) > 1:
        level = [add(*level[i:i + split_every]) for i in range(0, len(level), split_every)]
    value, grad = dask.compute(level[0])[0]
    n = X.shape[0]
    return value / n + LAM * (w @ w), grad / n + 2.0 * LAM * w


def timed(fn):
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def ratio(rows, repeat, chunk):
    from dask.distributed import Client, LocalCluster, wait

    with LocalCluster(n_workers=2, threads_per_worker=1, memory_limit="2GB", dashboard_address=None) as cluster, \
            Client(cluster):
        X, y, _ = make_data(rows, 10, chunk)
        X, y = X.persist(), y.persist()
        wait([X, y])
        w = np.linspace(0.1, -0.1, 10)
        vg = gradc.dask.value_and_grad(loss, wrt="w", rows=("X", "y"))
        ours, theirs = vg(w, X, y, LAM), hand_value_and_grad(w, X, y)  # warm up (compiles), and check
        assert abs(ours[0] - theirs[0]) <= 1e-12 * abs(theirs[0]), (ours[0], theirs[0])
        assert np.allclose(ours[1], theirs[1], rtol=1e-10, atol=1e-15)
        times: dict = {"gradc": [], "hand": []}
        for i in range(repeat):  # a new w each call, as in an optimiser: no result can come from a cache
            wi = w + 1e-9 * (i + 1)
            pair = [("gradc", lambda wi=wi: vg(wi, X, y, LAM)), ("hand", lambda wi=wi: hand_value_and_grad(wi, X, y))]
            for name, fn in pair if i % 2 == 0 else pair[::-1]:
                times[name].append(timed(fn)[0])
    return times


def scaling(rows, workers, chunk, repeat, persist):
    from dask.distributed import Client, LocalCluster, wait

    with LocalCluster(n_workers=workers, threads_per_worker=1, memory_limit="2GB", dashboard_address=None) as cl, \
            Client(cl) as client:
        X, y, _ = make_data(rows, 10, chunk)
        if persist:
            X, y = X.persist(), y.persist()
            wait([X, y])
        w = np.linspace(0.1, -0.1, 10)
        vg = gradc.dask.value_and_grad(loss, wrt="w", rows=("X", "y"))
        vg(w, X, y, LAM)
        with PeakMemory(client) as memory:
            seconds = min(timed(lambda i=i: vg(w + 1e-9 * (i + 1), X, y, LAM))[0] for i in range(repeat))
    return rows / seconds, memory.peak


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--big", action="store_true", help="add 10^8 rows (lazily generated) to the scaling table")
    parser.add_argument("--quick", action="store_true", help="10^5 and 10^6 rows only: a smoke run")
    parser.add_argument("--chunk", type=int, default=10 ** 6)
    args = parser.parse_args()
    rows = 10 ** 6 if args.quick else 10 ** 7
    chunk = min(args.chunk, rows // 4)
    times = ratio(rows, args.repeat, chunk)
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    print(f"## gradc.dask against hand-written Dask: {rows:,} rows x 10 features (persisted), "
          f"chunks of {chunk:,}, 2 workers, {args.repeat} calls each\n")
    print("| | hand-written s | gradc s | ratio |\n|---|---:|---:|---:|")
    print(f"| median | {med['hand']:.3f} | {med['gradc']:.3f} | {med['gradc'] / med['hand']:.2f} |")
    print(f"| minimum | {low['hand']:.3f} | {low['gradc']:.3f} | {low['gradc'] / low['hand']:.2f} |\n")
    sizes = [10 ** 5, 10 ** 6] if args.quick else [10 ** 6, 10 ** 7] + ([10 ** 8] if args.big else [])
    print("## Scaling: rows per second of one value-and-gradient, rows generated lazily in each call (best of "
          f"{min(args.repeat, 3)}; one call at 10^8), peak worker memory\n")
    print("| rows | workers | rows/s | peak worker memory |\n|---:|---:|---:|---:|")
    for n in sizes:
        for workers in (1, 2):
            speed, peak = scaling(n, workers, min(args.chunk, n // 4), 1 if n > 10 ** 7 else min(args.repeat, 3),
                                  persist=False)
            print(f"| {n:.0e} | {workers} | {speed:,.0f} | {peak / 1e9:.2f} GB |", flush=True)


if __name__ == "__main__":
    main()
