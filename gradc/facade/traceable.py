"""Torch-style functions on traced values: ``import gradc.torch as torch`` code also compiles.

When a facade function (``torch.exp``, ``torch.matmul``, ``F.mse_loss``...) receives a value
of a trace instead of a Tensor, it applies the same gradc op functions the Tensor op uses,
so the compiler records the primitives and differentiates them with the same VJP rules.

>>> import numpy as np, gradc, gradc.torch as torch
>>> gradc.grad(lambda x: torch.sigmoid(x).sum())(np.zeros(2))
array([0.25, 0.25])
"""
from __future__ import annotations

import functools

import gradc.ops.elementwise as ew
import gradc.ops.linalg as la
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.ir.builder import Traced


def _dims(dim):
    return tuple(dim) if isinstance(dim, (list, tuple)) else dim


def _swap(x, d0=-2, d1=-1):
    perm = list(range(x.ndim))
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return sh.transpose(x, perm)


def _sigmoid(x):
    return ew.div(1.0, ew.add(ew.exp(ew.neg(x)), 1.0))


def _relu(x):
    return ew.where(ew.greater(x, 0), x, ew.zeros_like(x))


def _log_softmax(x, dim):
    z = ew.sub(x, rd.max_(x, dim, keepdims=True))
    return ew.sub(z, ew.log(rd.sum_(ew.exp(z), dim, keepdims=True)))


def _mean_or_sum(loss, reduction):
    return rd.mean(loss) if reduction == "mean" else (rd.sum_(loss) if reduction == "sum" else loss)


def bce_logits_terms(z, y, pos_weight=None):
    """Elementwise BCE-with-logits in gradc ops, the one formula the eager and traced paths share.

    Without ``pos_weight``: ``max(z, 0) - z*y + log1p(exp(-|z|))``, stable for large ``|z|``;
    ``maximum`` splits its derivative evenly at ``z == 0``, which with ``abs'(0) = 0`` gives the
    true derivative ``sigmoid(0) - y`` there. With it: ``(1 - y)*z + (1 + (pos_weight - 1)*y) *
    softplus(-z)``, torch's weighting of the positive term.
    """
    softplus_neg = ew.log1p(ew.exp(ew.neg(ew.abs_(z))))
    if pos_weight is None:
        return ew.add(ew.sub(ew.maximum(z, 0.0), ew.mul(z, y)), softplus_neg)
    softplus_neg = ew.add(softplus_neg, ew.maximum(ew.neg(z), 0.0))
    scale = ew.add(ew.mul(ew.sub(pos_weight, 1.0), y), 1.0)
    return ew.add(ew.mul(ew.sub(1.0, y), z), ew.mul(scale, softplus_neg))


def _bce_logits(z, y, weight=None, reduction="mean", pos_weight=None):
    loss = bce_logits_terms(z, y, pos_weight)
    return _mean_or_sum(loss if weight is None else ew.mul(loss, weight), reduction)


def _mse(x, y, reduction="mean"):
    d = ew.sub(x, y)
    return _mean_or_sum(ew.mul(d, d), reduction)


TRACED = {
    "add": lambda a, b, alpha=1: ew.add(a, ew.mul(b, alpha) if alpha != 1 else b), "sub": ew.sub, "mul": ew.mul,
    "div": ew.div, "pow": ew.power, "maximum": ew.maximum, "minimum": ew.minimum, "matmul": la.matmul,
    "mm": la.matmul, "dot": la.matmul, "mv": la.matmul, "exp": ew.exp, "log": ew.log, "sin": ew.sin, "cos": ew.cos,
    "tanh": ew.tanh, "sqrt": ew.sqrt, "abs": ew.abs_, "neg": ew.neg, "log1p": ew.log1p, "square": ew.square,
    "sigmoid": _sigmoid, "relu": _relu, "where": ew.where,
    "clamp": lambda x, min=None, max=None: ew.clip(x, min, max),  # noqa: A006
    "sum": lambda x, dim=None, keepdim=False: rd.sum_(x, _dims(dim), keepdim),
    "mean": lambda x, dim=None, keepdim=False: rd.mean(x, _dims(dim), keepdim),
    "t": lambda x: sh.transpose(x), "transpose": _swap,
    "reshape": lambda x, *shape: sh.reshape(x, shape[0] if len(shape) == 1 and isinstance(shape[0], tuple)
                                           else shape),
    "softmax": lambda x, dim=None, dtype=None: ew.exp(_log_softmax(x, dim)),
    "log_softmax": lambda x, dim=None, dtype=None: _log_softmax(x, dim),
    "binary_cross_entropy_with_logits": _bce_logits, "mse_loss": _mse,
    "linear": lambda x, w, b=None: _linear(x, getattr(w, "_data", w), getattr(b, "_data", b)),
}


def _linear(x, w, b):
    y = la.matmul(x, sh.transpose(w))
    return y if b is None else ew.add(y, b)


def traceable(name, f):
    """``f``, except that traced arguments go to the gradc op functions of ``TRACED[name]``."""
    rule = TRACED.get(name)
    if rule is None:
        return f

    @functools.wraps(f)
    def call(*args, **kwargs):
        for a in args:
            if isinstance(a, Traced):
                return rule(*args, **kwargs)
        return f(*args, **kwargs)
    return call
