"""Shared inputs of the ``scipy.stats`` distribution tests: shape parameters, seeded grids, the functions traced.

Every function calls ``scipy.stats.<name>.<method>`` by its public name with every argument (x, the shape
parameters, loc and, for a continuous distribution, scale) a parameter of the function, so each can be traced
and differentiated.
"""
from __future__ import annotations

import linecache

import numpy as np
import scipy.stats

from gradc.ops.special_stats import DISTRIBUTIONS, METHODS

SHAPES = {"t": (3.5,), "gamma": (2.2,), "chi2": (3.0,), "beta": (1.5, 2.5), "lognorm": (0.7,),
          "weibull_min": (1.7,), "pareto": (2.5,), "invgamma": (2.5,), "poisson": (3.2,), "binom": (7.0, 0.35),
          "geom": (0.3,), "nbinom": (4.0, 0.4), "genextreme": (0.3,), "loggamma": (1.8,),
          "skewnorm": (1.6,), "truncnorm": (-0.8, 1.9), "vonmises": (2.3,)}
PAIRS = [(name, method) for name in sorted(METHODS) for method in METHODS[name]]
# the ops whose C lowering is another part's (scipy.special's incomplete gamma and beta, betaln)
PENDING_C = {"gammainc", "gammaincc", "gammaincinv", "gammainccinv", "betainc", "betaincinv", "betaln"}
# derivatives in shape parameters that are refused: none since gradc.ops.special_incomplete_shape gives the
# incomplete gamma/beta functions' (gamma, chi2, beta, invgamma, t and nbinom's n were skipped before)
SHAPE_DERIVATIVE_REFUSED: set = set()


def is_discrete(name: str) -> bool:
    return DISTRIBUTIONS[name].discrete


def value_grid(name: str, method: str, rng) -> np.ndarray:
    """Seeded points over the support and beyond it (probabilities for ppf/isf, whole numbers for a pmf)."""
    if method in ("ppf", "isf"):
        return np.concatenate([[0.0, 1.0, 1e-8, 1 - 1e-8, -0.1, 1.1], rng.uniform(0.0, 1.0, 8)])
    if is_discrete(name):
        return np.concatenate([[-1.0, 0.0, 2.5, 40.0], rng.integers(0, 12, 8).astype(float)])
    return np.concatenate([[-3.0, 0.0, 0.1, 0.9, 1.0, 1.1, 8.0], rng.uniform(-2.0, 5.0, 8)])


def smooth_points(name: str, method: str) -> np.ndarray:
    """Points where the function is smooth in every argument (for central differences)."""
    if method in ("ppf", "isf"):
        return np.array([0.05, 0.3, 0.6, 0.9])
    if is_discrete(name):
        return np.array([0.0, 1.0, 2.0, 4.0, 6.0]) + (1.0 if name == "geom" else 0.0)
    return {"beta": np.array([0.2, 0.5, 0.8]), "uniform": np.array([0.3, 0.5, 0.7]),
            "pareto": np.array([1.5, 2.0, 3.5]), "genextreme": np.array([-1.0, 0.4, 1.1, 2.0]),
            "truncnorm": np.array([-0.3, 0.4, 1.1]),
            }.get(name, np.array([-2.3, -0.7, 0.4, 1.1, 2.9]) if DISTRIBUTIONS[name].symmetric
                  else np.array([0.4, 1.1, 2.3, 3.0]))


def arguments(name: str, x) -> list:
    """``[x, *shapes, loc(, scale)]``: loc 0.1 and scale 0.8 for a continuous one, loc 0 for a discrete one."""
    return [x, *SHAPES.get(name, ()), *((0.0,) if is_discrete(name) else (0.1, 0.8))]


def method_function(name: str, method: str, weighted: bool = False):
    """A function of ``(x, *shapes, loc(, scale))`` calling ``scipy.stats.<name>.<method>`` with them (its
    ``weighted`` form: the sum of the values times fixed weights, a scalar to differentiate).

    Written as source and compiled (registered with ``linecache``), so that each has named parameters and calls
    SciPy by its public name, as a user's function does."""
    params = ["x", *(f"s{i}" for i in range(len(SHAPES.get(name, ()))))]
    keywords = "loc=loc" if is_discrete(name) else "loc=loc, scale=scale"
    call = f"scipy.stats.{name}.{method}({', '.join(params)}, {keywords})"
    body = f"np.sum({call} * np.linspace(0.5, 1.5, np.size(x)))" if weighted else call
    signature = ", ".join(params + ["loc"] + ([] if is_discrete(name) else ["scale"]))
    filename = f"<distribution {name}.{method}{' weighted' if weighted else ''}>"
    source = f"def {name}_{method}({signature}):\n    return {body}\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np, "scipy": scipy}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[f"{name}_{method}"]


def differentiated(name: str, method: str, n_args: int) -> tuple:
    """The argument positions a gradient test differentiates: all but a discrete distribution's k and loc (its
    values are whole numbers), binom's n, and the shape parameters of the incomplete gamma/beta functions."""
    shapes = range(1, 1 + len(SHAPES.get(name, ())))
    out = []
    for i in range(n_args):
        if is_discrete(name) and i in (0, n_args - 1):
            continue
        if name == "binom" and i == 1:
            continue
        if i in shapes and (name, method) in SHAPE_DERIVATIVE_REFUSED and not (name == "nbinom" and i == 2):
            continue
        out.append(i)
    return tuple(out)


def central_differences(fn, args, i, h=1e-6):
    a = np.asarray(args[i], dtype=float)
    out = np.zeros(a.shape)
    for idx in np.ndindex(a.shape):
        step = np.zeros(a.shape)
        step[idx] = h
        up, down = list(args), list(args)
        up[i], down[i] = (a + step, a - step) if a.ndim else (float(a) + h, float(a) - h)
        out[idx] = (np.sum(fn(*up)) - np.sum(fn(*down))) / (2 * h)
    return out
