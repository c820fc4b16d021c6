"""The five benchmark workloads: data, hand-written NumPy references, and plain-NumPy losses for gradc.

Data (shapes, seeds, formulas) and the hand-written value-and-gradient references are
the same as in the project's baseline anchors, so timings compare with them directly.
The gradc side is each loss written as a user would write it, with data (``x``, ``y``,
``labels``) passed as non-differentiated arguments.
"""
from __future__ import annotations

import math

import numpy as np

WORKLOADS = ("seed", "logreg", "mlp", "rosenbrock", "scalar")


def make_data(name):
    """Deterministic inputs ``(params, consts)``: float64 (int64 labels)."""
    rng = np.random.default_rng(20261120)
    if name == "seed":
        return ([rng.standard_normal((5, 3)) * 0.5, rng.standard_normal(3) * 0.1],
                {"x": np.ones(5), "y": np.zeros(3)})
    if name == "logreg":
        x = rng.standard_normal((256, 100))
        y = rng.integers(0, 2, (256, 10)).astype(np.float64)
        return ([rng.standard_normal((100, 10)) * 0.1, rng.standard_normal(10) * 0.1], {"x": x, "y": y})
    if name == "mlp":
        x = rng.standard_normal((128, 784))
        labels = rng.integers(0, 10, 128).astype(np.int64)
        return ([rng.standard_normal((784, 256)) / math.sqrt(784), rng.standard_normal(256) * 0.1,
                 rng.standard_normal((256, 10)) / 16.0, rng.standard_normal(10) * 0.1],
                {"x": x, "labels": labels})
    if name == "rosenbrock":
        return [rng.uniform(-1.5, 1.5, 1000)], {}
    if name == "scalar":
        return [0.7, -0.3], {}
    raise KeyError(name)


# ---------------------------------------------------------------- hand-written references
def reference(name, consts):
    """The hand-written value-and-gradient ``vg(*params) -> (loss, (grads...))``."""
    if name in ("seed", "logreg"):
        x, y = consts["x"], consts["y"]
        inv_n = 1.0 / y.size
        if x.ndim == 1:
            def vg(w, b):
                z = x @ w + b
                e = np.exp(-np.abs(z))
                loss = np.mean(np.maximum(z, 0.0) - z * y + np.log1p(e))
                dz = (np.where(z >= 0.0, 1.0, e) / (1.0 + e) - y) * inv_n
                return loss, (np.outer(x, dz), dz)
        else:
            def vg(w, b):
                z = x @ w + b
                e = np.exp(-np.abs(z))
                loss = np.mean(np.maximum(z, 0.0) - z * y + np.log1p(e))
                dz = (np.where(z >= 0.0, 1.0, e) / (1.0 + e) - y) * inv_n
                return loss, (x.T @ dz, dz.sum(axis=0))
        return vg
    if name == "mlp":
        x, labels = consts["x"], consts["labels"]
        n = x.shape[0]
        rows = np.arange(n)

        def vg(w1, b1, w2, b2):
            h = np.tanh(x @ w1 + b1)
            logits = h @ w2 + b2
            m = logits.max(axis=1, keepdims=True)
            e = np.exp(logits - m)
            s = e.sum(axis=1, keepdims=True)
            loss = np.mean(np.log(s[:, 0]) + m[:, 0] - logits[rows, labels])
            p = e / s
            p[rows, labels] -= 1.0
            p *= 1.0 / n
            dpre = (p @ w2.T) * (1.0 - h * h)
            return loss, (x.T @ dpre, dpre.sum(axis=0), h.T @ p, p.sum(axis=0))
        return vg
    if name == "rosenbrock":
        def vg(x):
            xa = x[:-1]
            d = x[1:] - xa * xa
            oma = 1.0 - xa
            loss = 100.0 * np.dot(d, d) + np.dot(oma, oma)
            g = np.empty_like(x)
            g[:-1] = -400.0 * xa * d - 2.0 * oma
            g[-1] = 0.0
            g[1:] += 200.0 * d
            return loss, (g,)
        return vg
    if name == "scalar":
        sin, cos, exp = math.sin, math.cos, math.exp

        def vg(x, y):
            s = sin(x)
            e = exp(y)
            se = s * e
            return se + x * y * y, (cos(x) * e + y * y, se + 2.0 * x * y)
        return vg
    raise KeyError(name)


# ---------------------------------------------------------------- the same losses, written for gradc
def bce_loss(x, y, w, b):
    z = x @ w + b
    return np.mean(np.maximum(z, 0.0) - z * y + np.log1p(np.exp(-np.abs(z))))


def mlp_loss(x, labels, w1, b1, w2, b2):
    logits = np.tanh(x @ w1 + b1) @ w2 + b2
    m = logits.max(axis=1, keepdims=True)
    lse = np.log(np.exp(logits - m).sum(axis=1)) + m[:, 0]
    return np.mean(lse - logits[np.arange(logits.shape[0]), labels])


def rosenbrock_loss(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def scalar_loss(x, y):
    return np.sin(x) * np.exp(y) + x * y ** 2


def gradc_problem(name, params, consts):
    """``(loss, leading non-differentiated args, wrt names)`` of a workload, for gradc."""
    if name in ("seed", "logreg"):
        return bce_loss, [consts["x"], consts["y"]], ("w", "b")
    if name == "mlp":
        return mlp_loss, [consts["x"], consts["labels"]], ("w1", "b1", "w2", "b2")
    if name == "rosenbrock":
        return rosenbrock_loss, [], ("x",)
    if name == "scalar":
        return scalar_loss, [], ("x", "y")
    raise KeyError(name)
