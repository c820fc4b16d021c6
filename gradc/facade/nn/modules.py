"""A few ``torch.nn`` modules for tutorial code: Parameter, Module, Linear, Sequential, losses, activations."""
from __future__ import annotations

import math

import numpy as np

from gradc.facade.creation import rand
from gradc.facade.nn import functional as F
from gradc.facade.tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that a Module registers as trainable (requires grad by default)."""

    def __new__(cls, data=None, requires_grad=True):
        t = Tensor.__new__(cls)
        t._data = data._data if data is not None else np.zeros(0, np.float32)
        t._init_meta(requires_grad)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


class Module:
    def __init__(self):
        object.__setattr__(self, "_params", {})
        object.__setattr__(self, "_children", {})
        self.training = True

    def __setattr__(self, name, value):
        if isinstance(value, Parameter):
            self._params[name] = value
        elif isinstance(value, Module):
            self._children[name] = value
        object.__setattr__(self, name, value)

    def named_parameters(self, prefix=""):
        for name, p in self._params.items():
            yield prefix + name, p
        for name, child in self._children.items():
            yield from child.named_parameters(prefix + name + ".")

    def parameters(self):
        for _, p in self.named_parameters():
            yield p

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            p.grad = None

    def train(self, mode=True):
        self.training = mode
        for child in self._children.values():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        bound = 1.0 / math.sqrt(in_features) if in_features else 0.0
        self.weight = Parameter(rand(out_features, in_features) * (2 * bound) - bound)
        self.bias = Parameter(rand(out_features) * (2 * bound) - bound) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class Sequential(Module):
    def __init__(self, *layers):
        super().__init__()
        for i, layer in enumerate(layers):
            setattr(self, str(i), layer)

    def forward(self, x):
        for layer in self._children.values():
            x = layer(x)
        return x


def _wrap_fn(name, f):
    def forward(self, *args):
        return f(*args, **self._kw)

    def init(self, **kw):
        Module.__init__(self)
        self._kw = kw
    return type(name, (Module,), {"__init__": init, "forward": forward})


ReLU = _wrap_fn("ReLU", F.relu)
Sigmoid = _wrap_fn("Sigmoid", F.sigmoid)
Tanh = _wrap_fn("Tanh", F.tanh)
MSELoss = _wrap_fn("MSELoss", F.mse_loss)
CrossEntropyLoss = _wrap_fn("CrossEntropyLoss", F.cross_entropy)
BCEWithLogitsLoss = _wrap_fn("BCEWithLogitsLoss", F.binary_cross_entropy_with_logits)
BCELoss = _wrap_fn("BCELoss", F.binary_cross_entropy)
