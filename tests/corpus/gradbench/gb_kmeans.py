"""GradBench ``kmeans``: the cost ``sum_i min_j |C_j - P_i|^2`` and the Newton direction ``J / diag(H)``.

The eval's ``dir`` is the gradient in the centroids divided elementwise by the Hessian's diagonal
(the Hessian is diagonal); the tools compute the diagonal as a Hessian-vector product with ones.
Inputs: ``points = rand(n, d)``, ``centroids = points[-k:]`` (every cluster non-empty), seed 31337,
k in {10, 100, 1000}, n in {1000, 10000}, d in {8, 16}. Closed form: ``dir_j = C_j - mean of the
points whose nearest centroid is C_j``.
"""
from __future__ import annotations

import numpy as np

DEFAULT_SIZE = (10, 1000, 8)  # (k, n, d): the eval's smallest default
SMALL_SIZE = (3, 12, 2)


def all_pairs_norm(a, b):
    """|a_i|^2 + |b_j|^2 - 2 a_i . b_j for every pair, shape (len(b), len(a))."""
    a_sqr = np.sum(a ** 2, 1)[None, :]
    b_sqr = np.sum(b ** 2, 1)[:, None]
    diff = np.matmul(b, a.T)
    return a_sqr + b_sqr - 2 * diff


def cost(points, centroids):
    dists = all_pairs_norm(points, centroids)
    min_dist = np.min(dists, axis=0)
    return min_dist.sum()


def generate(size=SMALL_SIZE, seed=31337):
    k, n, d = size
    rng = np.random.RandomState(seed)
    points = rng.rand(n, d)
    return {"points": points, "centroids": points[-k:].copy()}


def closed_form_dir(points, centroids):
    nearest = np.argmin(((points[:, None, :] - centroids[None, :, :]) ** 2).sum(2), axis=1)
    means = np.stack([points[nearest == j].mean(0) for j in range(centroids.shape[0])])
    return centroids - means
