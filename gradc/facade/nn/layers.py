"""``torch.nn`` layers: Conv2d, pooling, BatchNorm, LayerNorm, Embedding, Dropout, Flatten, Softmax.

Parameters are drawn from the facade's generator in torch's order and by torch's formulas
(``kaiming_uniform_(a=sqrt(5))`` for weights, ``uniform(+-1/sqrt(fan_in))`` for biases,
``normal_`` for embeddings), so a seeded model holds torch's numbers. ``extra_repr`` gives
torch's ``print(model)`` line.

>>> from gradc.facade.rng import manual_seed
>>> _ = manual_seed(0)
>>> Conv2d(1, 6, 5, padding=2)
Conv2d(1, 6, kernel_size=(5, 5), stride=(1, 1), padding=(2, 2))
>>> Conv2d(1, 6, 5).weight[0, 0, 0]  # torch.manual_seed(0) and the same two layers in torch print this too
tensor([ 0.1248, -0.1565, -0.0423, -0.0811, -0.0385],
       grad_fn=<SelectBackward0>)
"""
from __future__ import annotations

import math
import warnings

import numpy as np

from gradc.facade import dtypes, rng
from gradc.facade.creation import ones, randn, tensor, zeros
from gradc.facade.nn import functional as F
from gradc.facade.nn.functional_layers import flatten
from gradc.facade.nn.module_base import Module, Parameter
from gradc.ir.builder import Traced


def uniform(shape, bound, dtype=None):
    """torch's ``uniform_(-bound, bound)``: 24-bit floats for float32, 53-bit doubles for float64."""
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    if dt.kind == 3:  # torch's uniform_ of a complex tensor: both parts, drawn as one real tensor of pairs
        pairs = uniform(tuple(shape) + (2,), bound, dtypes.real_of(dt))._data
        return tensor((pairs[..., 0] + 1j * pairs[..., 1]).astype(dt.np))
    n = int(np.prod(shape, dtype=np.int64))
    g = rng.default_generator
    if dt.np == np.float64:
        values = g.doubles(n) * (2.0 * bound) + (-bound)
    else:
        lo, width = np.float32(-bound), np.float32(bound) - np.float32(-bound)
        values = g.uniform(n) * width + lo
    return tensor(values.reshape(shape).astype(dt.np))


def kaiming_bound(fan_in, a=math.sqrt(5)):
    """The bound of torch's ``kaiming_uniform_(a=a)`` (leaky_relu gain), computed as torch does."""
    gain = math.sqrt(2.0 / (1 + a ** 2))
    return math.sqrt(3.0) * (gain / math.sqrt(fan_in)) if fan_in else 0.0


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


# ---------------------------------------------------------------- convolution
class Conv2d(Module):
    """2-D convolution over (N, Cin, H, W) with torch's parameters and default initialisation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 padding_mode="zeros", device=None, dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            if padding not in ("same", "valid"):
                raise ValueError(f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}")
            if padding == "same" and any(s != 1 for s in _pair(stride)):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in ("zeros", "reflect", "replicate", "circular"):
            raise ValueError(f"padding_mode must be one of ['zeros', 'reflect', 'replicate', 'circular'], "
                             f"but got padding_mode='{padding_mode}'")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.kernel_size, self.stride, self.dilation = _pair(kernel_size), _pair(stride), _pair(dilation)
        self.padding = padding if isinstance(padding, str) else _pair(padding)
        self.padding_mode, self.output_padding, self.transposed = padding_mode, (0, 0), False
        shape = (out_channels, in_channels // groups) + self.kernel_size
        fan_in = shape[1] * shape[2] * shape[3]
        self.weight = Parameter(uniform(shape, kaiming_bound(fan_in), dtype))
        if bias:
            self.bias = Parameter(uniform((out_channels,), 1.0 / math.sqrt(fan_in) if fan_in else 0.0, dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002 - torch names
        if self.padding_mode != "zeros":  # torch pads first (its own node), then convolves unpadded
            padded = F.pad(input, mode_padding(self.padding, self.kernel_size, self.dilation), mode=self.padding_mode)
            return F.conv2d(padded, self.weight, self.bias, self.stride, 0, self.dilation, self.groups)
        return F.conv2d(input, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)

    def extra_repr(self):
        s = f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, stride={self.stride}"
        if self.padding != (0, 0):
            s += f", padding={self.padding}"
        if self.dilation != (1, 1):
            s += f", dilation={self.dilation}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


def mode_padding(padding, kernel, dilation):
    """F.pad's list (last axis first) for a convolution's ``padding`` (ints or "same"/"valid")."""
    if padding == "valid":
        padding = (0,) * len(kernel)
    if padding == "same":
        totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
        pairs = [(t // 2, t - t // 2) for t in totals]
    else:
        pairs = [(p, p) for p in padding]
    return tuple(v for pair in reversed(pairs) for v in pair)


# ---------------------------------------------------------------- pooling
class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False, ceil_mode=False):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):  # noqa: A002
        return F.max_pool2d(input, self.kernel_size, self.stride, self.padding, self.dilation,
                            ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,
                 divisor_override=None):
        super().__init__()
        self.kernel_size, self.stride = kernel_size, stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):  # noqa: A002
        return F.avg_pool2d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AdaptiveAvgPool2d(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):  # noqa: A002
        return F.adaptive_avg_pool2d(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


# ---------------------------------------------------------------- normalisation
class _BatchNorm(Module):
    _dims = ()

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None,
                 dtype=None, bias=True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dtypes.int64))
        else:
            for name in ("running_mean", "running_var", "num_batches_tracked"):
                self.register_buffer(name, None)

    def forward(self, input):  # noqa: A002
        ndim = len(input.aval.shape) if isinstance(input, Traced) else input.dim()
        if ndim not in self._dims:
            wanted = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {wanted} input (got {ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        traced = isinstance(input, Traced)  # tracing is not a training step: the counter stays
        if self.training and self.track_running_stats and self.num_batches_tracked is not None and not traced:
            self.num_batches_tracked._data[...] += 1
            if self.momentum is None:
                factor = 1.0 / float(self.num_batches_tracked._data)
        use_batch = self.training or self.running_mean is None
        keep = not self.training or self.track_running_stats
        return F.batch_norm(input, self.running_mean if keep else None, self.running_var if keep else None,
                            self.weight, self.bias, use_batch, factor, self.eps)

    def extra_repr(self):
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, affine={self.affine}, "
                f"bias={self.bias is not None}, track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    _dims = (4,)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(*shape, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(*shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, input):  # noqa: A002
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}, "
                f"bias={self.bias is not None}")


# ---------------------------------------------------------------- embedding, dropout, shapes
class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        weight = randn(num_embeddings, embedding_dim, dtype=dtype) if _weight is None else _weight
        if padding_idx is not None and _weight is None:
            weight._data[padding_idx] = 0
        self.weight = Parameter(weight, requires_grad=not _freeze)

    def forward(self, input):  # noqa: A002
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        return s


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):  # noqa: A002
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):  # noqa: A002
        return flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    def __init__(self, dim, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input):  # noqa: A002
        shape = tuple(input.shape)
        d = self.dim % len(shape)
        return input.reshape(shape[:d] + self.unflattened_size + shape[d + 1:])

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):  # noqa: A002
        return input


def softmax_dim(ndim):
    """torch's implicit softmax dim (deprecated): 0 for 0-, 1- and 3-D inputs, else 1."""
    warnings.warn("Implicit dimension choice for softmax has been deprecated. Change the call to include dim=X as "
                  "an argument.", UserWarning, stacklevel=4)
    return 0 if ndim in (0, 1, 3) else 1


class Softmax(Module):
    _fn = staticmethod(F.softmax)

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):  # noqa: A002
        dim = self.dim
        if dim is None:
            dim = softmax_dim(len(input.aval.shape) if isinstance(input, Traced) else input.dim())
        return type(self)._fn(input, dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    _fn = staticmethod(F.log_softmax)
