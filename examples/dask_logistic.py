"""L2-regularised logistic regression on more rows than memory holds: gradc's gradient on a Dask cluster.

    python examples/dask_logistic.py                 # 10^8 rows x 10 features (8 GB), 2 workers of 2 GB
    python examples/dask_logistic.py --rows 100000   # the same in seconds

The rows are generated lazily, chunk by chunk, from a fixed seed (dask.array.random):
no process ever holds the whole data. scipy.optimize.minimize (L-BFGS-B, jac=True)
calls ``gradc.dask.value_and_grad``: each call runs one task per chunk (that chunk's
value and gradient, in NumPy code gradc emitted), sums the partial results in a tree
and divides by the number of rows once. The labels follow known weights, so the fit
can be checked against them.
"""
import argparse
import threading
import time

import numpy as np

import gradc.dask


def loss(w, X, y, lam):
    """Mean logistic loss over the rows, plus an L2 penalty on the weights."""
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + lam * np.sum(w * w)


def make_data(rows, features, chunk, seed=0):
    """Lazy Dask arrays X (rows x features) and labels y drawn from a logistic model with known weights."""
    import dask.array as da

    rng = da.random.default_rng(seed)
    X = rng.standard_normal((rows, features), chunks=(chunk, features))
    w_true = np.linspace(-1.0, 1.0, features)
    p = 1.0 / (1.0 + da.exp(-(X @ w_true)))
    y = (rng.random(rows, chunks=chunk) < p).astype(np.float64)
    return X, y, w_true


class PeakMemory:
    """The largest process memory any worker reported to the scheduler while it ran (sampled every 0.2 s)."""

    def __init__(self, client):
        self.client, self.peak, self._stop = client, 0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self):
        while not self._stop.is_set():
            workers = self.client.scheduler_info(n_workers=-1)["workers"].values()
            self.peak = max([self.peak] + [w["metrics"]["memory"] for w in workers])
            self._stop.wait(0.2)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def fit(X, y, features, lam):
    from scipy.optimize import minimize

    value_and_grad = gradc.dask.value_and_grad(loss, wrt="w", rows=("X", "y"))
    start, calls, seen, iteration = time.perf_counter(), [0], {}, [0]

    def fun(w):
        calls[0] += 1
        value, grad = value_and_grad(w, X, y, lam)
        seen[w.tobytes()] = grad  # for the progress line: SciPy passes the point, not its gradient
        return value, grad

    def progress(intermediate_result):  # (this name: SciPy passes the OptimizeResult)
        iteration[0] += 1
        r = intermediate_result
        print(f"iteration {iteration[0]:3d}: loss {r.fun:.10f}  |grad| {np.linalg.norm(seen[r.x.tobytes()]):.2e}  "
              f"({calls[0]} passes over the data, {time.perf_counter() - start:.1f} s)", flush=True)

    result = minimize(fun, np.zeros(features), jac=True, method="L-BFGS-B", callback=progress,
                      options={"gtol": 1e-6})
    return result, calls[0], time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10 ** 8)
    parser.add_argument("--features", type=int, default=10)
    parser.add_argument("--chunk", type=int, default=10 ** 6, help="rows per chunk (default 10^6: 80 MB of X)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="2GB", help="per worker (default 2GB)")
    parser.add_argument("--lam", type=float, default=1e-4)
    args = parser.parse_args()
    from dask.distributed import Client, LocalCluster

    X, y, w_true = make_data(args.rows, args.features, min(args.chunk, args.rows))
    print(f"data: {args.rows:,} rows x {args.features} features = {X.nbytes / 1e9:.2f} GB of X, lazily, "
          f"in {X.numblocks[0]} chunks; {args.workers} workers with {args.memory_limit} each", flush=True)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, memory_limit=args.memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client, PeakMemory(client) as memory:
        result, passes, seconds = fit(X, y, args.features, args.lam)
    print(f"done: {result.message} after {result.nit} iterations and {passes} passes over the data")
    print(f"time {seconds:.1f} s: {passes * args.rows / seconds:,.0f} rows per second per pass")
    print(f"peak worker memory {memory.peak / 1e9:.2f} GB (limit {args.memory_limit})")
    print(f"fitted w  = {np.array2string(result.x, precision=3)}")
    print(f"true w    = {np.array2string(w_true, precision=3)}")
    print(f"max |fitted - true| = {np.max(np.abs(result.x - w_true)):.3f}, final |grad| = "
          f"{np.linalg.norm(result.jac):.1e}")


if __name__ == "__main__":
    main()
