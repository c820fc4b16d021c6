"""``torch.nn.init``: parameter initialisers with torch's formulas and random streams.

Gains, fans and bounds are computed as torch computes them (Python floats), and the tensor is
filled in place without recording (``no_grad``) by the facade's ``uniform_``/``normal_``, which
draw torch's CPU streams; so a seeded initialisation gives torch's values bit for bit.
``trunc_normal_`` follows torch 2.13's rejection sampling (its wide-interval branch is exact; the
narrow one compares ``log`` of uniforms, where NumPy's ``log`` may differ from torch's by an ulp,
which can flip an acceptance exactly at the boundary). ``orthogonal_`` draws torch's normals; its
QR factorisation is NumPy's LAPACK call and may differ from torch's in the last bits.

>>> import gradc.torch as torch
>>> _ = torch.manual_seed(0); w = torch.empty(2, 3)
>>> torch.nn.init.xavier_uniform_(w)  # torch.manual_seed(0) and the same call in torch print this too
tensor([[-0.0082,  0.5876, -0.9016],
        [-0.8062, -0.4219,  0.2938]])
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from gradc.facade import random_ops
from gradc.facade.grad_mode import no_grad
from gradc.facade.tensor import Tensor

__all__ = ["calculate_gain", "constant_", "eye_", "kaiming_normal_", "kaiming_uniform_", "normal_", "ones_",
           "orthogonal_", "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
           "sigmoid")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for ``nonlinearity`` (torch's table)."""
    if nonlinearity in _LINEAR:
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor):
    dims = tensor.dim()
    if dims < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of {['fan_in', 'fan_out']}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor, a: float = 0.0, b: float = 1.0, generator=None):
    """Fill ``tensor`` with uniform values in [a, b)."""
    with no_grad():
        return random_ops.uniform_(tensor, a, b, generator=generator)


def normal_(tensor, mean: float = 0.0, std: float = 1.0, generator=None):
    """Fill ``tensor`` with normal values."""
    with no_grad():
        return random_ops.normal_(tensor, mean, std, generator=generator)


def trunc_normal_(tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0, generator=None):
    """Normal values truncated to [a, b], by torch 2.13's rejection sampling.

    When the interval holds more than 0.3 of the mass: normals, with every value outside redrawn from a
    fresh full-size draw until none is. Otherwise: uniforms on [a, b] accepted where ``log(u) <= log pdf``
    relative to the peak, the pending ones redrawn (full-size draws) until all are accepted.
    """
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The distribution of values "
                      "may be incorrect.", stacklevel=2)
    dt = tensor._data.dtype
    shape = tensor._data.shape

    def fresh(fill, *args):
        t = Tensor._wrap(np.zeros(shape, dt))
        fill(t, *args, generator=generator)
        return t._data
    with no_grad():
        if norm_cdf((b - mean) / std) - norm_cdf((a - mean) / std) > 0.3:
            lo, hi = dt.type(a), dt.type(b)
            result = fresh(random_ops.normal_, mean, std)
            while True:
                outside = (result < lo) | (result > hi)
                if not outside.any():
                    break
                result = np.where(outside, fresh(random_ops.normal_, mean, std), result)
            return random_ops._write(tensor, result, "CopyBackwards")
        log_peak = -0.5 * ((max(a, min(mean, b)) - mean) / std) ** 2

        def log_pdf(c):  # torch's in-place chain, each step rounded to the dtype
            c = (c - dt.type(mean)) / dt.type(std)
            return (c * c) * dt.type(-0.5) - dt.type(log_peak)
        result = fresh(random_ops.uniform_, a, b)
        pending = np.log(fresh(random_ops.uniform_, 0.0, 1.0)) > log_pdf(result)
        while pending.any():
            candidates = fresh(random_ops.uniform_, a, b)
            result = np.where(pending, candidates, result)
            pending = np.where(pending, np.log(fresh(random_ops.uniform_, 0.0, 1.0)) > log_pdf(candidates), pending)
        return random_ops._write(tensor, result, "CopyBackwards")


def constant_(tensor, val: float):
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor):
    return constant_(tensor, 1.0)


def zeros_(tensor):
    with no_grad():
        return tensor.zero_()


def eye_(tensor):
    """The identity in a 2-D tensor."""
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    with no_grad():
        return random_ops._write(tensor, np.eye(*tensor.shape, dtype=tensor._data.dtype), "EyeBackward0")


def xavier_uniform_(tensor, gain: float = 1.0, generator=None):
    """Glorot uniform: bound ``gain * sqrt(6 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain: float = 1.0, generator=None):
    """Glorot normal: std ``gain * sqrt(2 / (fan_in + fan_out))``."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def kaiming_uniform_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """He uniform: bound ``sqrt(3) * gain / sqrt(fan)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu", generator=None):
    """He normal: std ``gain / sqrt(fan)``."""
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    fan = _calculate_correct_fan(tensor, mode)
    std = calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor, gain: float = 1.0, generator=None):
    """A (semi-)orthogonal matrix from the QR factorisation of a normal one, signs fixed by R's diagonal
    (same draws as torch; the factorisation's rounding may differ from torch's LAPACK in the last bits)."""
    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = Tensor._wrap(np.zeros((rows, cols), tensor._data.dtype))
    random_ops.normal_(flat, generator=generator)
    m = flat._data.T if rows < cols else flat._data
    q, r = np.linalg.qr(m)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    with no_grad():
        return random_ops._write(tensor, (q * gain).astype(tensor._data.dtype), "CopyBackwards")
