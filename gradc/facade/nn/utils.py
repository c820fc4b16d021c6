"""``torch.nn.utils``: gradient clipping and flattening parameters to one vector.

Clipping rescales the gradients in place, outside autograd, as torch's does (norms
accumulated in float64, the scale computed in the gradients' dtype).

>>> import gradc.torch as torch
>>> w = torch.nn.Parameter(torch.zeros(2)); w.grad = torch.tensor([3.0, 4.0])
>>> clip_grad_norm_([w], max_norm=1.0), w.grad
(tensor(5.), tensor([0.6000, 0.8000]))
"""
from __future__ import annotations

import math

import numpy as np

from gradc.facade.tensor import Tensor


def _grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p._grad for p in parameters if p._grad is not None]


def _norm(data, norm_type):
    x = np.abs(np.asarray(data, np.float64))
    if norm_type == math.inf:
        return x.max(initial=0.0)
    if norm_type == 2.0:
        return math.sqrt(float(np.sum(x * x)))
    return float(np.sum(x ** norm_type)) ** (1.0 / norm_type)


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """Scale all gradients together so their total ``norm_type``-norm is at most ``max_norm``; returns that norm."""
    grads = _grads(parameters)
    norm_type = float(norm_type)
    if not grads:
        return Tensor._wrap(np.zeros((), np.float32))
    dt = grads[0]._data.dtype
    norms = np.array([_norm(g._data, norm_type) for g in grads], dt)
    total = dt.type(_norm(norms, norm_type))
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from `parameters` is non-finite, so "
                           "it cannot be clipped. To disable this error and scale the gradients by the non-finite "
                           "norm anyway, set `error_if_nonfinite=False`")
    coef = min(dt.type(max_norm) / (total + dt.type(1e-6)), dt.type(1.0))
    for g in grads:
        np.multiply(g._data, coef.astype(g._data.dtype), out=g._data)
        g._bump()
    return Tensor._wrap(np.asarray(total))


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into ``[-clip_value, clip_value]`` in place."""
    for g in _grads(parameters):
        np.clip(g._data, -clip_value, clip_value, out=g._data)
        g._bump()


def parameters_to_vector(parameters):
    """All parameters flattened into one 1-D tensor (a copy, outside autograd)."""
    return Tensor._wrap(np.concatenate([p._data.reshape(-1) for p in parameters]))


def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of ``vec`` into the parameters (the inverse of ``parameters_to_vector``)."""
    offset = 0
    for p in parameters:
        n = p._data.size
        np.copyto(p._data, vec._data[offset:offset + n].reshape(p._data.shape))
        p._bump()
        offset += n
