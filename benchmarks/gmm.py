"""ADBench's Gaussian mixture objective: gradc's gradient time over the objective's, beside JAX, torch and autograd.

The objective is ADBench's (Srajer, Kukelova & Fitzgibbon 2018) in its vectorised form: ``k``
components with weights ``alphas`` (k), ``means`` (k x d) and inverse covariance factors ``icf``
(k x d(d+1)/2: the log of the diagonal, then the strictly lower part column by column, as
ADBench's ``Qtimesx`` reads it), data ``x`` (n x d), a Wishart prior (gamma, m); a log-sum-exp
over components per point. d = 10, k = 25, n = 10,000 (ADBench's "10k" set sizes).

The objective is written once, as a user would in plain NumPy (the factors gathered from
``icf`` through a static index, every ``L_k x_i`` by one matrix product, log-sum-exp with a max
shift) and run by NumPy itself for the objective time; gradc compiles its value-and-grad. Checks
before timing: the value against a loop-per-component reference written independently (1e-10
relative), the gradient against central differences on a few coordinates and, when JAX is
importable, against JAX's gradient (1e-9 relative).

ADBench's measure is the ratio gradient time / objective time (the reported "gradc ratio";
ADBench's figures for this size: Tapenade 3.7-15.5x, hand-written C++ 1.9-7.2x, HIPS autograd
22x). Floor: 5x. JAX (jit, float64), torch (float64, CPU) and HIPS autograd run the same
objective when importable; their ratios are over the same NumPy objective time.

    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/gmm.py [--repeat 9]
    OPENBLAS_NUM_THREADS=1 PYTHONPATH=. /tmp/benchenv/bin/python benchmarks/gmm.py   # with the peers
"""
from __future__ import annotations

import argparse
import math
import os
import sys
import timeit
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import gradc  # noqa: E402

D, K, N = 10, 25, 10_000
WISHART_GAMMA, WISHART_M = 1.0, 0  # ADBench's values


def tri_index(d):
    """Where each entry of a d x d factor comes from in ``[exp(diagonal) (d), strictly lower part, 0]``.

    >>> tri_index(3).reshape(3, 3)
    array([[0, 6, 6],
           [3, 1, 6],
           [4, 5, 2]])
    """
    index = np.full((d, d), d + d * (d - 1) // 2, dtype=np.int64)  # above the diagonal: the trailing 0
    index[np.arange(d), np.arange(d)] = np.arange(d)
    pos = d
    for j in range(d):  # column by column, as ADBench's Qtimesx reads icf
        for i in range(j + 1, d):
            index[i, j] = pos
            pos += 1
    return index.ravel()


TRI = tri_index(D)


def log_wishart_constant(d, k, gamma, m):
    """``k C`` of ADBench's log Wishart prior (a constant: the prior's normaliser)."""
    n = d + m + 1
    multigammaln = d * (d - 1) / 4 * math.log(math.pi)
    multigammaln += sum(math.lgamma(0.5 * n + (1 - j) / 2) for j in range(1, d + 1))
    return k * (n * d * (math.log(gamma) - 0.5 * math.log(2)) - multigammaln)


PRIOR_CONSTANT = log_wishart_constant(D, K, WISHART_GAMMA, WISHART_M)


def objective(xp, einsum):
    """The objective for the array namespace ``xp`` (NumPy, jax.numpy, autograd.numpy)."""
    def gmm_objective(alphas, means, icf, x):
        n, d = x.shape
        k = alphas.shape[0]
        log_diagonal = icf[:, :d]
        diagonal = xp.exp(log_diagonal)
        sum_qs = xp.sum(log_diagonal, axis=1)
        entries = xp.concatenate([diagonal, icf[:, d:], xp.zeros((k, 1))], axis=1)
        factors = entries[:, TRI].reshape(k, d, d)  # L_k, lower triangular
        lx = (x @ xp.transpose(factors, (2, 0, 1)).reshape(d, k * d)).reshape(n, k, d)  # L_k x_i, every i, k
        lx = lx - einsum("kij,kj->ki", factors, means)  # L_k (x_i - mu_k)
        inner = alphas + sum_qs - 0.5 * xp.sum(lx * lx, axis=2)  # (n, k)
        top = xp.max(inner, axis=1, keepdims=True)
        lse = xp.sum(xp.log(xp.sum(xp.exp(inner - top), axis=1)) + top[:, 0])
        top_alpha = xp.max(alphas)
        lse_alphas = xp.log(xp.sum(xp.exp(alphas - top_alpha))) + top_alpha
        frobenius = xp.sum(diagonal * diagonal) + xp.sum(icf[:, d:] * icf[:, d:])
        prior = 0.5 * WISHART_GAMMA ** 2 * frobenius - WISHART_M * xp.sum(sum_qs) - PRIOR_CONSTANT
        return -0.5 * n * d * math.log(2 * math.pi) + lse - n * lse_alphas + prior
    return gmm_objective


gmm_objective = objective(np, np.einsum)


def gmm_reference(alphas, means, icf, x):
    """ADBench's objective written independently: one component at a time, factors built by loops."""
    n, d = x.shape
    k = len(alphas)
    terms = np.empty((n, k))
    frobenius = 0.0
    for c in range(k):
        factor = np.diag(np.exp(icf[c, :d]))
        pos = d
        for j in range(d):
            for i in range(j + 1, d):
                factor[i, j] = icf[c, pos]
                pos += 1
        centred = (x - means[c]) @ factor.T
        terms[:, c] = alphas[c] + np.sum(icf[c, :d]) - 0.5 * np.einsum("ij,ij->i", centred, centred)
        frobenius += np.sum(factor * factor)
    top = terms.max(axis=1)
    lse = np.sum(np.log(np.exp(terms - top[:, None]).sum(axis=1)) + top)
    lse_alphas = np.log(np.exp(alphas - alphas.max()).sum()) + alphas.max()
    prior = 0.5 * WISHART_GAMMA ** 2 * frobenius - WISHART_M * np.sum(icf[:, :d]) - PRIOR_CONSTANT
    return -0.5 * n * d * math.log(2 * math.pi) + lse - n * lse_alphas + prior


def gmm_data(d=D, k=K, n=N, seed=0):
    rng = np.random.default_rng(seed)
    alphas = rng.standard_normal(k)
    means = rng.uniform(0.0, 1.0, (k, d))
    icf = 0.1 * rng.standard_normal((k, d * (d + 1) // 2))
    x = rng.standard_normal((n, d))
    return alphas, means, icf, x


# ---------------------------------------------------------------- peers (when importable)
def peers(args):
    """``name -> value_and_grad callable`` for JAX (jit), torch and HIPS autograd, each checked later."""
    found = {}
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        vg = jax.jit(jax.value_and_grad(objective(jnp, jnp.einsum), argnums=(0, 1, 2)))
        jargs = [jnp.asarray(a) for a in args]

        def run_jax():
            value, grads = vg(*jargs)
            return float(value), [np.asarray(g.block_until_ready()) for g in grads]
        found["JAX jit"] = run_jax
    except ImportError:
        pass
    try:
        import torch
        found["torch"] = _torch_runner(torch, args)
    except ImportError:
        pass
    try:
        import autograd
        import autograd.numpy as anp
        agrad = autograd.value_and_grad(lambda p, x: objective(anp, anp.einsum)(*p, x))

        def run_autograd():
            value, grads = agrad(tuple(args[:3]), args[3])
            return float(value), list(grads)
        found["HIPS autograd"] = run_autograd
    except ImportError:
        pass
    return found


def _torch_runner(torch, args):
    if os.environ.get("OPENBLAS_NUM_THREADS"):  # torch's own thread pool, sized like NumPy's BLAS
        torch.set_num_threads(int(os.environ["OPENBLAS_NUM_THREADS"]))
    tri = torch.as_tensor(TRI)
    x = torch.as_tensor(args[3])

    def torch_objective(alphas, means, icf):
        n, d = x.shape
        k = alphas.shape[0]
        log_diagonal = icf[:, :d]
        diagonal = torch.exp(log_diagonal)
        sum_qs = log_diagonal.sum(1)
        entries = torch.cat([diagonal, icf[:, d:], torch.zeros((k, 1), dtype=icf.dtype)], 1)
        factors = entries[:, tri].reshape(k, d, d)
        lx = (x @ factors.permute(2, 0, 1).reshape(d, k * d)).reshape(n, k, d)
        lx = lx - torch.einsum("kij,kj->ki", factors, means)
        inner = alphas + sum_qs - 0.5 * (lx * lx).sum(2)
        lse = torch.logsumexp(inner, 1).sum()
        frobenius = (diagonal * diagonal).sum() + (icf[:, d:] * icf[:, d:]).sum()
        prior = 0.5 * WISHART_GAMMA ** 2 * frobenius - WISHART_M * sum_qs.sum() - PRIOR_CONSTANT
        return -0.5 * n * d * math.log(2 * math.pi) + lse - n * torch.logsumexp(alphas, 0) + prior

    def run_torch():
        params = [torch.tensor(a, requires_grad=True) for a in args[:3]]
        value = torch_objective(*params)
        value.backward()
        return float(value.detach()), [p.grad.numpy() for p in params]
    return run_torch


# ---------------------------------------------------------------- checks and timing
def relative_error(a, b):
    a, b = np.atleast_1d(np.asarray(a, float)), np.atleast_1d(np.asarray(b, float))
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


def check(compiled, args, others):
    value, grads = compiled.value_and_grad(*args)
    err = relative_error(value, gmm_reference(*args))
    assert err < 1e-10, f"gradc's objective differs from the reference by {err:.2e}"
    assert relative_error(gmm_objective(*args), value) < 1e-12
    rng = np.random.default_rng(1)
    worst = 0.0
    for which in range(3):  # central differences on a few coordinates of alphas, means and icf
        for _ in range(3):
            at = tuple(rng.integers(0, s) for s in args[which].shape)
            h = 1e-5 * max(1.0, abs(args[which][at]))
            plus, minus = [a.copy() for a in args], [a.copy() for a in args]
            plus[which][at] += h
            minus[which][at] -= h
            fd = (gmm_objective(*plus) - gmm_objective(*minus)) / (2 * h)
            worst = max(worst, abs(grads[which][at] - fd) / max(1.0, abs(fd)))
    assert worst < 1e-6, f"gradc's gradient differs from central differences by {worst:.2e}"
    for name, run in others.items():
        peer_value, peer_grads = run()
        peer_err = max([relative_error(peer_value, value)] + [relative_error(p, g) for p, g in zip(peer_grads, grads)])
        assert peer_err < 1e-9, f"{name}'s gradient differs from gradc's by {peer_err:.2e}"
    return err, worst


def median_time(fn, number):
    return timeit.timeit(fn, number=number) / number


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--number", type=int, default=3)
    parser.add_argument("--check-floors", action="store_true", help="exit 1 if gradc's ratio exceeds 5")
    opts = parser.parse_args(argv)
    args = gmm_data()
    with warnings.catch_warnings():  # TRI is meant to be baked in (gradc warns that a global array is)
        warnings.filterwarnings("ignore", message=".*global array TRI", category=gradc.GradcWarning)
        compiled = gradc.compile(gmm_objective, *args, wrt=("alphas", "means", "icf"))
    others = peers(args)
    err, fd_err = check(compiled, args, others)
    runs = {"objective (hand NumPy)": lambda: gmm_objective(*args),
            "gradc value_and_grad": lambda: compiled.value_and_grad(*args), **others}
    for run in runs.values():
        run()  # warm up (JAX compiles here)
    times: dict = {name: [] for name in runs}
    for _ in range(opts.repeat):  # interleaved rounds
        for name, run in runs.items():
            times[name].append(median_time(run, opts.number))
    base = float(np.median(times["objective (hand NumPy)"]))
    print(f"GMM d={D}, k={K}, n={N}: objective vs reference {err:.1e} relative, "
          f"gradient vs central differences {fd_err:.1e}{', checked against ' + ', '.join(others) if others else ''}")
    print("| what | median ms | gradient / objective |")
    print("|---|---:|---:|")
    for name, ts in times.items():
        t = float(np.median(ts))
        print(f"| {name} | {t * 1e3:.2f} | {'' if name.startswith('objective') else f'{t / base:.2f}x'} |")
    ratio = float(np.median(times["gradc value_and_grad"])) / base
    if opts.check_floors and ratio > 5.0:
        sys.exit(1)


if __name__ == "__main__":
    main()
