"""The torch-style names ``gradc`` exports (``import gradc as torch``)."""
from __future__ import annotations

from gradc.facade import dtypes
from gradc.facade import functional as _fn
from gradc.facade.creation import (  # noqa: F401
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from gradc.facade.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from gradc.facade.rng import Generator, initial_seed, manual_seed  # noqa: F401
from gradc.facade.tensor import Size, Tensor, device  # noqa: F401
from gradc.facade.traceable import TRACED, traceable

float16 = half = dtypes.float16
float32 = float = dtypes.float32  # noqa: A001 - torch names
float64 = double = dtypes.float64
int32 = dtypes.int32
int64 = long = dtypes.int64
bool = dtypes.bool_  # noqa: A001
dtype = dtypes.dtype


def get_default_dtype():
    return dtypes.DEFAULT[0]


def set_default_dtype(d):
    dtypes.DEFAULT[0] = dtypes.to_dtype(d)


def is_tensor(x):
    return isinstance(x, Tensor)


def numel(t):
    return t.numel()


def _method(name):
    def call(t, *args, **kwargs):
        return getattr(t, name)(*args, **kwargs)
    call.__name__ = name
    return call


add, sub, mul, div, matmul, mm, bmm, dot, mv = _fn.add, _fn.sub, _fn.mul, _fn.div, _fn.matmul, _fn.mm, _fn.bmm, \
    _fn.matmul, _fn.matmul
pow, maximum, minimum, where, cat, stack = _fn.pow, _fn.maximum, _fn.minimum, _fn.where, _fn.cat, _fn.stack  # noqa: A001
sigmoid, relu, clamp, square, reciprocal = _fn.sigmoid, _fn.relu, _fn.clamp, _fn.square, _fn.reciprocal
subtract, multiply, divide, clip = sub, mul, div, clamp
(exp, log, sin, cos, tanh, sqrt, abs, neg, log1p, sign, floor, sum, mean, max, min, prod, argmax, argmin,  # noqa: A001
 reshape, transpose, t, squeeze, unsqueeze, flatten, permute, eq, ne, gt, lt, ge, le, all, any, norm, clone,
 softmax, log_softmax, flip, detach) = (
    _method(n) for n in ("exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "neg", "log1p", "sign", "floor", "sum",
                         "mean", "max", "min", "prod", "argmax", "argmin", "reshape", "transpose", "t", "squeeze",
                         "unsqueeze", "flatten", "permute", "eq", "ne", "gt", "lt", "ge", "le", "all", "any", "norm",
                         "clone", "softmax", "log_softmax", "flip", "detach"))
negative, absolute = neg, abs

for _name in TRACED:
    if _name in globals():
        globals()[_name] = traceable(_name, globals()[_name])

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations", "dtypes", "TRACED", "traceable")]
