"""``torch.nn`` modules of tutorial code: Linear, Sequential, activations (Module is in ``module_base``).

>>> from gradc.facade.rng import manual_seed
>>> _ = manual_seed(0)
>>> print(Sequential(Linear(4, 3), ReLU(), Linear(3, 1, bias=False)))
Sequential(
  (0): Linear(in_features=4, out_features=3, bias=True)
  (1): ReLU()
  (2): Linear(in_features=3, out_features=1, bias=False)
)
"""
from __future__ import annotations

import math

import numpy as np

from gradc.facade import dtypes, rng
from gradc.facade.fused import fma
from gradc.facade.nn import functional as F
from gradc.facade.nn.module_base import Module, Parameter
from gradc.facade.tensor import Tensor

__all__ = ["Linear", "Module", "Parameter", "ReLU", "Sequential", "Sigmoid", "Tanh"]


def uniform(shape, bound, dtype=None):
    """torch's ``empty(shape).uniform_(-bound, bound)``: ``u * (to - from) + from`` in double precision (fused).

    A float32 tensor draws 24-bit uniforms (one 32-bit word each), a float64 tensor 53-bit ones.
    """
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    if dt.kind == 3:  # torch's uniform_ of a complex tensor: both parts, drawn as one real tensor of pairs
        pairs = uniform(tuple(shape) + (2,), bound, dtypes.real_of(dt))._data
        return Tensor._wrap((pairs[..., 0] + 1j * pairs[..., 1]).astype(dt.np))
    n = int(np.prod(shape, dtype=np.int64))
    g = rng.default_generator
    if dt.np == np.float64:
        values = fma(g.doubles(n), 2.0 * bound, -bound)
    else:
        low, high = float(np.float32(-bound)), float(np.float32(bound))
        values = g.uniform(n).astype(np.float64) * (high - low) + low
    return Tensor._wrap(values.astype(dt.np).reshape(shape))


class Linear(Module):
    """``y = x W^T + b`` with torch's default initialisation (uniform in +-1/sqrt(in_features))."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        # kaiming_uniform_(a=sqrt(5)) for the weight, uniform(+-1/sqrt(fan_in)) for the bias, as torch computes them
        gain = math.sqrt(2.0 / (1 + math.sqrt(5) ** 2))
        w_bound = math.sqrt(3.0) * (gain / math.sqrt(in_features)) if in_features else 0.0
        self.weight = Parameter(uniform((out_features, in_features), w_bound, dtype))
        if bias:
            self.bias = Parameter(uniform((out_features,), 1.0 / math.sqrt(in_features) if in_features else 0.0,
                                          dtype))
        else:
            self.register_parameter("bias", None)
        if device is not None:
            self.to(device)

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Sequential(Module):
    """Modules applied in order; ``seq[i]``, ``seq[a:b]``, ``len(seq)`` and iteration as in torch."""

    def __init__(self, *layers):
        super().__init__()
        if len(layers) == 1 and isinstance(layers[0], dict):
            for name, layer in layers[0].items():
                self.add_module(name, layer)
        else:
            for i, layer in enumerate(layers):
                self.add_module(str(i), layer)

    def forward(self, x):
        for layer in self._modules.values():
            x = layer(x)
        return x

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __getitem__(self, idx):
        items = list(self._modules.items())
        if isinstance(idx, slice):
            return type(self)(dict(items[idx]))
        if not -len(items) <= idx < len(items):
            raise IndexError(f"index {idx} is out of range")
        return items[idx][1]

    def append(self, module):
        self.add_module(str(len(self)), module)
        return self


class ReLU(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x):
        return F.relu(x)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, x):
        return F.sigmoid(x)


class Tanh(Module):
    def forward(self, x):
        return F.tanh(x)
