"""``torch.nn.functional`` of the facade: activations, softmax and losses, each one graph node.

>>> from gradc.facade.creation import tensor
>>> binary_cross_entropy_with_logits(tensor([1., 2., 3.]), tensor([0., 1., 0.]))
tensor(1.4963)
"""
from __future__ import annotations

import warnings

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.linalg as la
import gradc.ops.reduce as rd
import gradc.ops.special_scipy as ss
from gradc.api import value_and_grad as _value_and_grad  # private: F's names stay torch's
from gradc.facade import dtypes, grad_mode
from gradc.facade import functional as fn
from gradc.facade.nn.functional_extra import (  # noqa: F401 - torch.nn.functional's names
    adaptive_avg_pool1d,
    avg_pool1d,
    conv1d,
    elu,
    embedding_bag,
    max_pool1d,
    pad,
    softplus,
)
from gradc.facade.nn.functional_layers import (  # noqa: F401
    adaptive_avg_pool2d,
    avg_pool2d,
    batch_norm,
    conv2d,
    dropout,
    embedding,
    layer_norm,
    max_pool2d,
)
from gradc.facade.nn.functional_losses import (  # noqa: F401
    binary_cross_entropy,
    cross_entropy,
    huber_loss,
    l1_loss,
    nll_loss,
    smooth_l1_loss,
)
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.facade.traceable import bce_logits_terms, traceable
from gradc.ops.autodiff import stop_gradient

relu, sigmoid, tanh = fn.relu, fn.sigmoid, lambda x: fn.unary("tanh", x)


def _reduce(loss, reduction):
    if reduction == "mean":
        return rd.mean(loss)
    if reduction == "sum":
        return rd.sum_(loss)
    return loss


def _data(x):
    return np.asarray(x._data if hasattr(x, "_data") else x)


def _log_softmax(x, dim):
    data = getattr(x, "_data", x)
    if isinstance(data, np.ndarray):  # eager: the shift is a constant of the node
        shift = np.max(data, axis=dim, keepdims=True).astype(data.dtype)
    else:  # traced by torch.compile: the same shift, computed in the graph and held constant for the derivative
        shift = stop_gradient(rd.max_(x, dim, keepdims=True))
    z = ew.sub(x, shift)
    return ew.sub(z, ew.log(rd.sum_(ew.exp(z), dim, keepdims=True)))


def softmax(input, dim=None, dtype=None):  # noqa: A002 - torch names
    d = int(dim) % max(input.dim(), 1)
    return record("SoftmaxBackward0", lambda x: ew.exp(_log_softmax(x, d)), [input], saves=True, out_saved=True)


def log_softmax(input, dim=None, dtype=None):  # noqa: A002
    d = int(dim) % max(input.dim(), 1)
    return record("LogSoftmaxBackward0", lambda x: _log_softmax(x, d), [input], saves=True, out_saved=True)


def binary_cross_entropy_with_logits(input, target, weight=None, reduction="mean", pos_weight=None):  # noqa: A002
    if _data(target).shape != _data(input).shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size ({input.shape})")

    def f(z, y):
        loss = bce_logits_terms(z, y, None if pos_weight is None else _data(pos_weight))
        if weight is not None:
            loss = ew.mul(loss, _data(weight))
        return _reduce(loss, reduction)
    if weight is None and pos_weight is None and reduction in ("mean", "sum"):
        out = _bce_logits_compiled(f, input, target, reduction)
        if out is not None:
            return out
    return record("BinaryCrossEntropyWithLogitsBackward0", f, [input, target], saves=True, saved=[input, target])


_FLOAT_DTYPES = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
_BCE_LOGITS: dict = {}  # (reduction, wrt) -> gradc.value_and_grad of the loss written with gradc ops


def _bce_logits_compiled(f, input, target, reduction):  # noqa: A002
    """The loss node with its gradient from code the compiler generates from the same VJP rules.

    Used when grad is recorded for same-dtype float Tensors and the loss is a scalar: one call
    of the generated NumPy function gives the value and the gradient, which the node scales by
    the incoming cotangent. Under ``create_graph`` the node replays ``f`` like any recorded op.
    """
    if not (isinstance(input, Tensor) and isinstance(target, Tensor) and grad_mode.is_grad_enabled()):
        return None
    zd, yd = input._data, target._data
    if zd.dtype != yd.dtype or zd.dtype not in _FLOAT_DTYPES:
        return None
    needs = (input.requires_grad, target.requires_grad)
    if not any(needs):
        return None
    wrt = (0, 1) if all(needs) else (0 if needs[0] else 1)
    vg = _BCE_LOGITS.get((reduction, wrt))
    if vg is None:
        def loss(z, y):
            return _reduce(bce_logits_terms(z, y), reduction)
        vg = _BCE_LOGITS[(reduction, wrt)] = _value_and_grad(loss, wrt=wrt)
    value, grads = vg(zd, yd)
    grads = grads if isinstance(grads, tuple) else (grads,)
    grads = grads if all(needs) else (grads[0], None) if needs[0] else (None, grads[0])
    return record("BinaryCrossEntropyWithLogitsBackward0", f, [input, target], saves=True, saved=[input, target],
                  precomputed=(value, grads))


def mse_loss(input, target, reduction="mean"):  # noqa: A002
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size ({input.shape}). "
                      "This will likely lead to incorrect results due to broadcasting. Please ensure they have the "
                      "same size.", UserWarning, stacklevel=2)

    # torch computes in the promoted dtype: a float32 input and an int64 target give a float32 loss
    dt = dtypes.promote(input, target) if input.dtype is not target.dtype else None

    def f(x, y):
        if dt is not None:
            x, y = fn.cast(x, dt), fn.cast(y, dt)
        diff = ew.sub(x, y)
        return _reduce(ew.mul(diff, diff), reduction)
    return record("MseLossBackward0", f, [input, target], saves=True, saved=[input, target])


def leaky_relu(input, negative_slope=0.01):  # noqa: A002
    return record("LeakyReluBackward0", lambda x: ew.where(ew.greater(x, 0), x, ew.mul(x, negative_slope)),
                  [input], saves=True, saved=[input])


def linear(input, weight, bias=None):  # noqa: A002
    """torch's graph: ``addmm(bias, x, weight.t())`` (AddmmBackward0 over TBackward0), rows folded for other ranks.

    Without a bias it is ``matmul(x, weight.t())``; an input of other than 2 dims that cannot be flattened
    without a copy is ``matmul(x, weight.t()) + bias``, as torch builds them.
    """
    wt = weight.t()
    if bias is None:
        return fn.matmul(input, wt)
    d = input.dim()
    if d == 2:
        return _addmm(bias, input, wt)
    if d == 0 or not input._data.flags["C_CONTIGUOUS"]:
        return fn.matmul(input, wt) + bias
    rows = input.reshape(-1, input.shape[-1])
    out = _addmm(bias, rows, wt)
    return out.view(tuple(input.shape[:-1]) + (wt.shape[-1],))


def _addmm(bias, x, wt):
    return record("AddmmBackward0", lambda b, m1, m2: ew.add(la.matmul(m1, m2), b), [bias, x, wt],
                  saves=True, saved=[x, wt])


def gelu(input, approximate="none"):  # noqa: A002
    if approximate == "tanh":
        def f(x):
            inner = ew.mul(ew.add(x, ew.mul(ew.mul(ew.mul(x, x), x), 0.044715)), 0.7978845608028654)
            return ew.mul(ew.mul(x, 0.5), ew.add(ew.tanh(inner), 1.0))
    else:
        def f(x):
            return ew.mul(ew.mul(x, 0.5), ew.add(ss.erf(ew.mul(x, 0.7071067811865476)), 1.0))
    return record("GeluBackward0", f, [input], saves=True, saved=[input])


def silu(input, inplace=False):  # noqa: A002
    return record("SiluBackward0", lambda x: ew.div(x, ew.add(ew.exp(ew.neg(x)), 1.0)), [input], saves=True,
                  saved=[input])


for _name in ("relu", "sigmoid", "tanh", "softmax", "log_softmax", "binary_cross_entropy_with_logits", "mse_loss",
              "linear"):
    globals()[_name] = traceable(_name, globals()[_name])
