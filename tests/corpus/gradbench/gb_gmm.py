"""GradBench ``gmm``: the log posterior of a Gaussian mixture with a Wishart prior on the precisions.

GradBench's definition (evals/gmm, ADBench's with its three fixes): weights ``softmax(alpha)``,
means ``mu`` (k x d), precision ``Q_k^T Q_k`` with ``Q_k`` lower triangular: ``exp(q_k)`` on the
diagonal, ``l_k`` below it column by column; Wishart prior with ``V = I / gamma^2``,
``n = d + m + 1``. The eval's ``jacobian`` is the gradient in ``alpha, mu, q, l``. Inputs:
``default_rng(31337)``: ``x`` normal (n x d), ``alpha`` normal, ``mu`` uniform, ``q`` normal,
``l`` normal; d in {2, 10, 20, 32, 64}, k in {5, 10, 25, 50, 100}, n = 1000, m = 0, gamma = 1.

``gmm_objective`` is written as the PyTorch tool writes it (the strictly lower part scattered into
zeros through row and column tables, one einsum, log-sum-exp with the max shift); ``log_posterior``
is the definition itself (densities multiplied, determinants), the eval's naive validator.
"""
# ruff: noqa: E741 - `l` is the eval's own name for the strictly lower parts
from __future__ import annotations

import math

import numpy as np

DEFAULT_SIZE = (2, 5, 1000)  # (d, k, n): the eval's smallest default
SMALL_SIZE = (3, 2, 4)


def logsumexp(v, axis):
    top = np.max(v, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(v - top), axis=axis)) + np.squeeze(top, axis=axis)


def multigammaln(a, p):
    return p * (p - 1) / 4 * math.log(math.pi) + sum(math.lgamma(a + (1 - j) / 2) for j in range(1, p + 1))


def log_wishart_prior(k, p, gamma, m, sum_qs, Qdiags, l):
    n = p + m + 1
    out = np.sum(0.5 * gamma * gamma * (np.sum(Qdiags ** 2, axis=1) + np.sum(l ** 2, axis=1)) - m * sum_qs)
    C = n * p * math.log(gamma / math.sqrt(2))
    return -out + k * (C - multigammaln(0.5 * n, p))


def gmm_objective(alpha, mu, q, l, x, m, gamma):
    n, d = x.shape
    k = alpha.shape[0]
    Qdiags = np.exp(q)
    sum_qs = np.sum(q, 1)
    cols = np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))
    rows = np.concatenate([np.arange(c + 1, d) for c in range(d - 1)])
    Ls = np.zeros((k, d, d))
    Ls[:, rows, cols] = l
    xcentered = x[:, None, :] - mu[None, ...]
    Lxcentered = Qdiags * xcentered + np.einsum("ijk,mik->mij", Ls, xcentered)
    sqsum_Lxcentered = np.sum(Lxcentered ** 2, 2)
    inner_term = alpha + sum_qs - 0.5 * sqsum_Lxcentered
    slse = np.sum(logsumexp(inner_term, 1))
    CONSTANT = -n * d * 0.5 * math.log(2 * math.pi)
    return CONSTANT + slse - n * logsumexp(alpha, 0) + log_wishart_prior(k, d, gamma, m, sum_qs, Qdiags, l)


def generate(size=SMALL_SIZE, seed=31337, m=0, gamma=1.0):
    d, k, n = size
    rng = np.random.default_rng(seed=seed)
    x = rng.normal(size=(n, d))
    alpha = rng.normal(size=k)
    mu = rng.uniform(size=(k, d))
    q = rng.normal(size=(k, d))
    l = rng.normal(size=(k, d * (d - 1) // 2))
    return {"alpha": alpha, "mu": mu, "q": q, "l": l, "x": x, "m": m, "gamma": gamma}


def log_posterior(alpha, mu, q, l, x, m, gamma):
    """The definition, term by term: log of (prod_i sum_k phi_k N(x_i) * prod_k W(Q_k^T Q_k))."""
    n, d = x.shape
    k = alpha.shape[0]
    phi = np.exp(alpha) / np.sum(np.exp(alpha))
    log_likelihood = 0.0
    precisions = []
    for c in range(k):
        Q = np.diag(np.exp(q[c]))
        upper_rows, upper_cols = np.triu_indices(d, 1)  # (i, j), i < j, row by row: transposed, column by column
        Q[upper_cols, upper_rows] = l[c]
        precisions.append(Q.T @ Q)
    for i in range(n):
        mixture = 0.0
        for c in range(k):
            r = x[i] - mu[c]
            normaliser = math.sqrt((2 * math.pi) ** d / np.linalg.det(precisions[c]))
            density = math.exp(-0.5 * r @ precisions[c] @ r) / normaliser
            mixture += phi[c] * density
        log_likelihood += math.log(mixture)
    dof = d + m + 1
    log_prior = 0.0
    for c in range(k):
        P = precisions[c]
        V = np.eye(d) / gamma ** 2
        log_prior += ((dof - d - 1) / 2 * math.log(np.linalg.det(P)) - np.trace(np.linalg.inv(V) @ P) / 2
                      - dof * d / 2 * math.log(2) - dof / 2 * math.log(np.linalg.det(V)) - multigammaln(dof / 2, d))
    return log_likelihood + log_prior
