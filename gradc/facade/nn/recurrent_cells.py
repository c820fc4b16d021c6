"""``torch.nn.LSTMCell``, ``GRUCell``, ``RNNCell`` and the one-step update each recurrent layer shares.

A step takes the input's projection ``W_ih x + b_ih`` (computed once per sequence by the layers,
as torch does on the CPU) and the previous state, and returns the new state. Gate order is
torch's: LSTM ``i, f, g, o``; GRU ``r, z, n`` with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``
and ``h' = (h - n) * z + n``. Parameters are drawn as torch draws them: every parameter in
registration order from ``uniform(-1/sqrt(hidden_size), 1/sqrt(hidden_size))``.

>>> from gradc.facade.rng import manual_seed
>>> _ = manual_seed(0)
>>> cell = GRUCell(3, 2); cell
GRUCell(3, 2)
>>> [name for name, _ in cell.named_parameters()]
['weight_ih', 'weight_hh', 'bias_ih', 'bias_hh']
>>> cell.weight_ih[0]  # torch.manual_seed(0); nn.GRUCell(3, 2).weight_ih[0] prints the same numbers
tensor([-0.0053,  0.3793, -0.5820], grad_fn=<SelectBackward0>)
"""
from __future__ import annotations

import math

from gradc.facade.creation import zeros
from gradc.facade.nn import functional as F
from gradc.facade.nn.module_base import Module, Parameter
from gradc.facade.nn.modules import uniform

GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def lstm_step(gi, state, w_hh, b_hh, w_hr=None):
    """One LSTM step: ``(h, c)`` from the input projection ``gi`` (N, 4H) and the previous ``(h, c)``."""
    h, c = state
    i, f, g, o = (gi + F.linear(h, w_hh, b_hh)).chunk(4, 1)
    c = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h = o.sigmoid() * c.tanh()
    if w_hr is not None:  # proj_size: the hidden state is projected, the cell state is not
        h = F.linear(h, w_hr)
    return h, c


def gru_step(gi, h, w_hh, b_hh):
    """One GRU step (torch's formula: the reset gate multiplies ``W_hn h + b_hn``)."""
    r_i, z_i, n_i = gi.chunk(3, 1)
    r_h, z_h, n_h = F.linear(h, w_hh, b_hh).chunk(3, 1)
    r = (r_i + r_h).sigmoid()
    z = (z_i + z_h).sigmoid()
    n = (n_i + r * n_h).tanh()
    return (h - n) * z + n


def rnn_step(gi, h, w_hh, b_hh, relu=False):
    """One Elman step: ``tanh`` (or ``relu``) of ``gi + W_hh h + b_hh``."""
    pre = gi + F.linear(h, w_hh, b_hh)
    return pre.relu() if relu else pre.tanh()


def step(mode, gi, state, w_hh, b_hh, w_hr=None):
    """The step of ``mode`` ("LSTM", "GRU", "RNN_TANH", "RNN_RELU"); the state is ``(h, c)`` for LSTM."""
    if mode == "LSTM":
        return lstm_step(gi, state, w_hh, b_hh, w_hr)
    if mode == "GRU":
        return gru_step(gi, state, w_hh, b_hh)
    return rnn_step(gi, state, w_hh, b_hh, relu=mode == "RNN_RELU")


def reset_uniform(module, hidden_size):
    """torch's ``reset_parameters`` of recurrent modules: each parameter, in order, uniform in +-1/sqrt(H)."""
    bound = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for p in module.parameters():
        p._data = uniform(tuple(p.shape), bound, p.dtype)._data


def check_dtype(where, x, weight, error=ValueError):
    if x.dtype != weight.dtype:
        raise error(f"{where} input dtype ({x.dtype}) does not match weight dtype ({weight.dtype}). "
                    f"Convert input: input.to({weight.dtype}), or convert model: model.to({x.dtype})")


class RNNCellBase(Module):
    """Parameters, printing and argument checks of the three cells (``num_chunks`` gates of ``hidden_size``)."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        self.weight_ih = Parameter(zeros(num_chunks * hidden_size, input_size, dtype=dtype))
        self.weight_hh = Parameter(zeros(num_chunks * hidden_size, hidden_size, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(zeros(num_chunks * hidden_size, dtype=dtype))
            self.bias_hh = Parameter(zeros(num_chunks * hidden_size, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def reset_parameters(self):
        reset_uniform(self, self.hidden_size)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _batched(self, input, hx):  # noqa: A002 - torch's names
        """``input`` and ``hx`` (a tensor or a tuple) with a batch axis; whether the input had one."""
        name = type(self).__name__
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        pair = name == "LSTMCell"
        if hx is not None and pair != isinstance(hx, (tuple, list)) or pair and hx is not None and len(hx) != 2:
            wanted = "a tuple (h, c) of two tensors" if pair else "one tensor h"
            raise TypeError(f"{name}: hx must be {wanted}, got {type(hx).__name__}")
        states = hx if isinstance(hx, (tuple, list)) else (() if hx is None else (hx,))
        for i, value in enumerate(states):
            if value.dim() not in (1, 2):
                which = f"hx[{i}]" if isinstance(hx, (tuple, list)) else "hidden"
                raise ValueError(f"{name}: Expected {which} to be 1D or 2D, got {value.dim()}D instead")
        batched = input.dim() == 2
        if not batched:
            input = input.unsqueeze(0)
            states = tuple(s.unsqueeze(0) for s in states)
        check_dtype(name, input, self.weight_ih, RuntimeError)
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected {self.input_size}")
        if not states:
            states = (zeros(input.shape[0], self.hidden_size, dtype=input.dtype),) * (2 if pair else 1)
        for i, s in enumerate(states):
            if s.shape[0] != input.shape[0]:
                raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} batch size "
                                   f"{s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {s.shape[1]}, expected "
                                   f"{self.hidden_size}")
            if s.dtype != input.dtype:
                raise RuntimeError(f"{name}: hidden{i} has dtype {s.dtype} but the input has {input.dtype}; "
                                   f"give both the model's dtype ({self.weight_ih.dtype})")
        return input, states, batched

    def _project(self, input):  # noqa: A002
        return F.linear(input, self.weight_ih, self.bias_ih)


class LSTMCell(RNNCellBase):
    """One LSTM step: ``(h', c') = cell(x, (h, c))``; ``h`` and ``c`` default to zeros."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        x, (h, c), batched = self._batched(input, hx)
        h, c = lstm_step(self._project(x), (h, c), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: ``h' = cell(x, h)``; ``h`` defaults to zeros."""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):  # noqa: A002
        x, (h,), batched = self._batched(input, hx)
        h = gru_step(self._project(x), h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)


class RNNCell(RNNCellBase):
    """One Elman step ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)`` (``nonlinearity="relu"`` for ReLU)."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):  # noqa: A002
        if self.nonlinearity not in ("tanh", "relu"):  # torch accepts it at construction and refuses here
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        x, (h,), batched = self._batched(input, hx)
        h = rnn_step(self._project(x), h, self.weight_hh, self.bias_hh, relu=self.nonlinearity == "relu")
        return h if batched else h.squeeze(0)
