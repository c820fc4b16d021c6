"""Scientific workloads: gradc's value-and-grad against hand-written NumPy/SciPy, ratios in one process.

* ``gp``: a Gaussian-process negative log marginal likelihood (squared-exponential kernel, n = 500)
  with respect to its three log hyperparameters: Cholesky, a triangular solve, log-determinant.
  The hand-written gradient is the textbook 0.5 tr((K^-1 - alpha alpha^T) dK) with K^-1 from
  ``cho_solve`` (it uses the structure of the loss, which a general AD cannot).
* ``gls``: generalised least squares with a covariance (n = 500, p = 20): 0.5 |L^-1 (y - X b)|^2,
  L = chol(Sigma), with respect to b.

Each is checked against the reference (relative error of value and gradient below 1e-10) before
timing; the two sides alternate, and the table gives per-call medians and their ratio.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/scientific.py [--repeat 9] [--target-c]

``--target-c`` also compiles both for the C target, checks its value and gradient against the
NumPy target's (1e-12 relative) and times it (plain loops, no BLAS: slower than NumPy here).
"""
from __future__ import annotations

import argparse
import os
import sys
import timeit

import numpy as np
from scipy.linalg import cho_factor, cho_solve, solve_triangular

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gradc  # noqa: E402

N_GP, N_GLS, P_GLS = 500, 500, 20


# ---------------------------------------------------------------- Gaussian process
def gp_nll(log_ell, log_sf2, log_sn2, sqdist, eye, y):
    k = np.exp(log_sf2 - 0.5 * sqdist * np.exp(-2.0 * log_ell)) + np.exp(log_sn2) * eye
    chol = np.linalg.cholesky(k)
    alpha = solve_triangular(chol, y, lower=True)
    return 0.5 * (alpha @ alpha) + np.sum(np.log(np.diag(chol))) + 0.5 * y.shape[0] * np.log(2 * np.pi)


def gp_reference(log_ell, log_sf2, log_sn2, sqdist, eye, y):
    scaled = sqdist * np.exp(-2.0 * log_ell)
    kf = np.exp(log_sf2 - 0.5 * scaled)
    sn2 = np.exp(log_sn2)
    k = kf + sn2 * eye
    c = cho_factor(k, lower=True)
    alpha = cho_solve(c, y)
    value = 0.5 * (y @ alpha) + np.sum(np.log(np.diag(c[0]))) + 0.5 * y.shape[0] * np.log(2 * np.pi)
    w = cho_solve(c, eye) - np.outer(alpha, alpha)  # K^-1 - alpha alpha^T
    g_ell = 0.5 * np.sum(w * kf * scaled)
    g_sf2 = 0.5 * np.sum(w * kf)
    g_sn2 = 0.5 * sn2 * np.trace(w)
    return value, (g_ell, g_sf2, g_sn2)


def gp_data():
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (N_GP, 3))
    sqdist = np.sum((x[:, None, :] - x[None, :, :]) ** 2, -1)
    y = np.sin(x).sum(1) + 0.1 * rng.standard_normal(N_GP)
    return (np.log(1.3), np.log(0.8), np.log(0.05), sqdist, np.eye(N_GP), y), ("log_ell", "log_sf2", "log_sn2")


# ---------------------------------------------------------------- generalised least squares
def gls(b, x, y, sigma):
    chol = np.linalg.cholesky(sigma)
    z = solve_triangular(chol, y - x @ b, lower=True)
    return 0.5 * (z @ z)


def gls_reference(b, x, y, sigma):
    chol = np.linalg.cholesky(sigma)
    z = solve_triangular(chol, y - x @ b, lower=True)
    return 0.5 * (z @ z), -(x.T @ solve_triangular(chol, z, lower=True, trans=1))


def gls_data():
    rng = np.random.default_rng(1)
    t = np.arange(N_GLS)
    sigma = 0.7 ** np.abs(t[:, None] - t[None, :]) + 0.1 * np.eye(N_GLS)  # AR(1)-like covariance
    x = rng.standard_normal((N_GLS, P_GLS))
    return (rng.standard_normal(P_GLS), x, x @ np.ones(P_GLS) + rng.standard_normal(N_GLS), sigma), "b"


# ---------------------------------------------------------------- timing
def relative_error(a, b):
    a, b = np.atleast_1d(np.asarray(a, float)), np.atleast_1d(np.asarray(b, float))
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def _error(result, expected):
    (value, grads), (ref_value, ref_grads) = result, expected
    grads = grads if isinstance(grads, tuple) else (grads,)
    ref_grads = ref_grads if isinstance(ref_grads, tuple) else (ref_grads,)
    return max([relative_error(value, ref_value)] + [relative_error(g, r) for g, r in zip(grads, ref_grads)])


def c_check(name, fn, args, wrt, compiled, repeat):
    """The C target's value and gradient against the NumPy target's (1e-12 relative); its median ms."""
    c_compiled = gradc.compile(fn, *args, wrt=wrt, target="c")
    err = _error(c_compiled.value_and_grad(*args), compiled.value_and_grad(*args))
    assert err < 1e-12, f"{name}: the C target differs from the NumPy target by {err:.2e}"
    times = [timeit.timeit(lambda: c_compiled.value_and_grad(*args), number=1) for _ in range(repeat)]
    return float(np.median(times)) * 1e3, err


def bench(name, fn, reference, args, wrt, repeat):
    compiled = gradc.compile(fn, *args, wrt=wrt)
    err = _error(compiled.value_and_grad(*args), reference(*args))
    assert err < 1e-10, f"{name}: gradc differs from the reference by {err:.2e}"
    ours, theirs = [], []
    for _ in range(repeat):  # interleaved, one call each per round
        theirs.append(timeit.timeit(lambda: reference(*args), number=3) / 3)
        ours.append(timeit.timeit(lambda: compiled.value_and_grad(*args), number=3) / 3)
    t_ref, t_ours = float(np.median(theirs)), float(np.median(ours))
    return name, t_ref * 1e3, t_ours * 1e3, t_ours / t_ref, min(ours) / min(theirs), err, (fn, args, wrt, compiled)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--check-floors", action="store_true", help="exit 1 if a ratio exceeds 1.3")
    parser.add_argument("--target-c", action="store_true",
                        help="also compile for C: check it against the NumPy target (1e-12) and time it")
    opts = parser.parse_args(argv)
    rows = [bench("gp (n=500)", gp_nll, gp_reference, *gp_data(), opts.repeat),
            bench("gls (n=500, p=20)", gls, gls_reference, *gls_data(), opts.repeat)]
    print("| workload | hand-written ms | gradc ms | ratio | ratio of minima | rel. error |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, t_ref, t_ours, ratio, ratio_min, err, _ in rows:
        print(f"| {name} | {t_ref:.2f} | {t_ours:.2f} | {ratio:.2f} | {ratio_min:.2f} | {err:.1e} |")
    if opts.target_c:
        print("\n| workload | C target ms | C vs NumPy target (rel.) |\n|---|---:|---:|")
        for name, *_, (fn, args, wrt, compiled) in rows:
            t_c, err = c_check(name, fn, args, wrt, compiled, opts.repeat)
            print(f"| {name} | {t_c:.2f} | {err:.1e} |")
    if opts.check_floors and any(r[3] > 1.3 for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
