"""``torch.nn.LSTM``, ``GRU`` and ``RNN``: stacked, optionally bidirectional recurrent layers.

Parameters carry torch's names and shapes (``weight_ih_l{k}``, ``weight_hh_l{k}``, ``bias_ih_l{k}``,
``bias_hh_l{k}``, ``weight_hr_l{k}`` with ``proj_size``, ``_reverse`` for the backward direction) and
are drawn in torch's order, so ``manual_seed(s)`` then ``LSTM(...)`` holds torch's numbers. The
forward runs as torch's CPU path does: each layer projects the whole sequence by ``W_ih`` at once,
then steps through time (``gradc.facade.nn.recurrent_cells``); the backward direction reads the
sequence reversed and writes its outputs back in input order; the layer's output is the two
directions concatenated on the feature axis. Gradients come from the facade's autograd.

>>> from gradc.facade.rng import manual_seed
>>> from gradc.facade.creation import zeros
>>> _ = manual_seed(0)
>>> lstm = LSTM(3, 4, num_layers=2, bidirectional=True); lstm
LSTM(3, 4, num_layers=2, bidirectional=True)
>>> [name for name, _ in lstm.named_parameters()][:5]
['weight_ih_l0', 'weight_hh_l0', 'bias_ih_l0', 'bias_hh_l0', 'weight_ih_l0_reverse']
>>> out, (h, c) = lstm(zeros(5, 2, 3))
>>> tuple(out.shape), tuple(h.shape), tuple(c.shape)
((5, 2, 8), (4, 2, 4), (4, 2, 4))
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

import gradc.ops.shape as sh
from gradc.facade import dtypes
from gradc.facade import functional as fn
from gradc.facade.creation import tensor, zeros
from gradc.facade.nn import functional as F
from gradc.facade.nn.module_base import Module, Parameter
from gradc.facade.nn.recurrent_cells import GATES, check_dtype, reset_uniform, step
from gradc.facade.nn.rnn_utils import PackedSequence, pad_packed_sequence
from gradc.facade.record import record

__all__ = ["GRU", "LSTM", "RNN", "RNNBase"]


def _check_int(name, value, positive_message):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value <= 0:
        raise ValueError(positive_message)


class RNNBase(Module):
    """What LSTM, GRU and RNN share: parameters, printing, argument checks and the layer loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=3)
        for name, value in (("bias", bias), ("batch_first", batch_first)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} should be of type bool, got: {type(value).__name__}")
        _check_int("input_size", input_size, "input_size must be greater than zero")
        _check_int("hidden_size", hidden_size, "hidden_size must be greater than zero")
        _check_int("num_layers", num_layers, "num_layers must be greater than zero")
        if not isinstance(proj_size, int) or proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        gate_size = GATES[mode] * hidden_size
        out_size = proj_size or hidden_size
        self._flat_weights_names, self._all_weights = [], []
        for layer in range(num_layers):
            for direction in range(self._directions()):
                layer_input = input_size if layer == 0 else out_size * self._directions()
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for stem, shape in shapes:
                    name = f"{stem}_l{layer}" + ("_reverse" if direction else "")
                    setattr(self, name, Parameter(zeros(*shape, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names += names
                self._all_weights.append(names)
        self.reset_parameters()
        if device is not None:
            self.to(device)

    def _directions(self):
        return 2 if self.bidirectional else 1

    def reset_parameters(self):
        reset_uniform(self, self.hidden_size)

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        """The parameters per layer and direction: ``[[weight_ih_l0, weight_hh_l0, ...], ...]``."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: torch packs weights for cuDNN; the facade's weights are always usable as they are."""

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ------------------------------------------------------------ forward
    def _prepare(self, input, hx):  # noqa: A002 - torch's names
        """(time-major 3-D input, the states as a tuple of 3-D tensors, whether the input was batched)."""
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        if input.dim() not in (2, 3):
            tail = " tensor" if name == "RNN" else ""
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tail} instead")
        batched = input.dim() == 3
        lstm = self.mode == "LSTM"
        if hx is not None:
            if lstm != isinstance(hx, (tuple, list)) or lstm and len(hx) != 2:
                wanted = "a tuple (h_0, c_0) of two tensors" if lstm else "one tensor h_0"
                raise TypeError(f"{name}: hx must be {wanted}, got {type(hx).__name__}")
            states = tuple(hx) if lstm else (hx,)
            want = 3 if batched else 2
            if any(s.dim() != want for s in states):
                kind = "batched 3-D" if batched else "unbatched 2-D"
                dims = ", ".join(f"{s.dim()}-D" for s in states)
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got ({dims}) tensors"
                                   if lstm else f"For {kind} input, hx should also be {want}-D but got {dims} tensor")
        if not batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
            states = None if hx is None else tuple(s.unsqueeze(1) for s in states)
        elif hx is None:
            states = None
        check_dtype("RNN", input, self.weight_ih_l0)  # torch says "RNN" for all three
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{input.shape[-1]}")
        batch = input.shape[0 if self.batch_first else 1]
        sizes = [(self.num_layers * self._directions(), batch, self.proj_size or self.hidden_size)]
        if lstm:
            sizes.append(sizes[0][:2] + (self.hidden_size,))
        if states is None:
            states = tuple(zeros(*size, dtype=input.dtype) for size in sizes)
        for i, (s, size) in enumerate(zip(states, sizes)):
            if tuple(s.shape) != size:
                which = f"hidden[{i}]" if lstm else "hidden"
                raise RuntimeError(f"Expected {which} size {size}, got {list(s.shape)}")
            if s.dtype != input.dtype:
                raise RuntimeError(f"{name}: the initial state has dtype {s.dtype} but the input has "
                                   f"{input.dtype}; give both the model's dtype ({self.weight_ih_l0.dtype})")
        if input.shape[1 if self.batch_first else 0] == 0:
            raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
        if self.batch_first:
            input = input.transpose(0, 1)
        return input, states, batched

    def _run_direction(self, projected, state, index, reverse, masks=None):
        """Step through ``projected`` (T, N, G) from ``state``; (outputs in input order, the last state).

        ``masks`` (packed input): per step, (N, 1) ones for the sequences still running, zeros for
        those that ended, whose state then stays as it was (so the backward direction starts each
        sequence at its own last step)."""
        w_hh, b_hh = self._flat_weights_of(index, "weight_hh"), self._flat_weights_of(index, "bias_hh")
        w_hr = self._flat_weights_of(index, "weight_hr")
        steps = projected.unbind(0)
        outputs = []
        order = range(len(steps) - 1, -1, -1) if reverse else range(len(steps))
        for t in order:
            new = step(self.mode, steps[t], state, w_hh, b_hh, w_hr)
            if masks is not None:
                keep, take = masks[t]
                new = tuple(n * take + s * keep for n, s in zip(new, state)) if self.mode == "LSTM" \
                    else new * take + state * keep
            state = new
            outputs.append(state[0] if self.mode == "LSTM" else state)
        if reverse:
            outputs.reverse()
        return _stack_steps(outputs, self._layer_node_name(projected)), state

    def _layer_node_name(self, x):
        """torch runs a float32 LSTM without projection through oneDNN, one MkldnnRnnLayerBackward0 node a layer
        and direction: ``print(output)`` shows that name; its composite path (the others) stacks the steps."""
        if self.mode == "LSTM" and not self.proj_size and x.dtype == dtypes.float32:
            return "MkldnnRnnLayerBackward0"
        return "StackBackward0"

    def _flat_weights_of(self, index, stem):
        """Parameter ``stem`` of layer-direction ``index`` (None when the layer has none: no bias, no proj)."""
        for name in self._all_weights[index]:
            if name.startswith(stem + "_l"):
                return getattr(self, name)
        return None

    def _layers(self, x, states, masks=None):
        """All layers over time-major ``x``: (output, final states stacked as torch orders them)."""
        lstm = self.mode == "LSTM"
        initial = [s.unbind(0) for s in states]
        finals = [[] for _ in states]
        for layer in range(self.num_layers):
            outs = []
            for direction in range(self._directions()):
                index = layer * self._directions() + direction
                w_ih = self._flat_weights_of(index, "weight_ih")
                projected = F.linear(x, w_ih, self._flat_weights_of(index, "bias_ih"))
                state = (initial[0][index], initial[1][index]) if lstm else initial[0][index]
                out, state = self._run_direction(projected, state, index, direction == 1, masks)
                outs.append(out)
                for final, s in zip(finals, state if lstm else (state,)):
                    final.append(s)
            x = outs[0] if len(outs) == 1 else fn.cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, training=True)
        return x, tuple(fn.stack(f, 0) for f in finals)

    def _forward(self, input, hx):  # noqa: A002
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x, states, batched = self._prepare(input, hx)
        output, finals = self._layers(x, states)
        if self.batch_first:  # torch's GRU and RNN transpose in place (TransposeBackward1), its LSTM does not
            output = fn.transpose(output, 0, 1, "TransposeBackward0" if self.mode == "LSTM" else "TransposeBackward1")
        if not batched:
            output = output.squeeze(0 if self.batch_first else 1)
            finals = tuple(f.squeeze(1) for f in finals)
        return output, finals


    def _forward_packed(self, packed, hx):
        """A ``PackedSequence`` through every layer, each sequence stopping at its own length."""
        name = "RNN" if self.mode.startswith("RNN") else self.mode
        data, sizes = packed.data, [int(n) for n in packed.batch_sizes.tolist()]
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        check_dtype("RNN", data, self.weight_ih_l0)
        if data.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got "
                               f"{data.shape[-1]}")
        lstm, batch = self.mode == "LSTM", sizes[0]
        expected = [(self.num_layers * self._directions(), batch, self.proj_size or self.hidden_size)]
        if lstm:
            expected.append(expected[0][:2] + (self.hidden_size,))
        if hx is None:
            states = tuple(zeros(*size, dtype=data.dtype) for size in expected)
        else:
            if lstm != isinstance(hx, (tuple, list)) or lstm and len(hx) != 2:
                wanted = "a tuple (h_0, c_0) of two tensors" if lstm else "one tensor h_0"
                raise TypeError(f"{name}: hx must be {wanted}, got {type(hx).__name__}")
            states = tuple(hx) if lstm else (hx,)
            for i, (s, size) in enumerate(zip(states, expected)):
                if tuple(s.shape) != size:
                    which = f"hidden[{i}]" if lstm else "hidden"
                    raise RuntimeError(f"Expected {which} size {size}, got {list(s.shape)}")
            if packed.sorted_indices is not None:  # the caller's batch order -> the packed (sorted) order
                order = np.asarray(packed.sorted_indices.tolist(), np.int64)
                states = tuple(s[:, order] for s in states)
        sorted_only = PackedSequence(data, packed.batch_sizes)
        x, _ = pad_packed_sequence(sorted_only)
        running = [(np.arange(batch) < n).astype(data.dtype.np)[:, None] for n in sizes]
        masks = [(tensor(1.0 - r), tensor(r)) for r in running]
        output, finals = self._layers(x, states, masks)
        rows = [t * batch + b for t, n in enumerate(sizes) for b in range(n)]
        out_data = output.reshape(-1, output.shape[-1])[np.asarray(rows, np.int64)]
        if packed.unsorted_indices is not None:
            back = np.asarray(packed.unsorted_indices.tolist(), np.int64)
            finals = tuple(f[:, back] for f in finals)
        return PackedSequence(out_data, packed.batch_sizes, packed.sorted_indices, packed.unsorted_indices), finals


def _stack_steps(outputs, name):
    """``torch.stack(outputs)`` recorded as node ``name``."""
    shape = (1,) + tuple(outputs[0].shape)
    return record(name, lambda *xs: sh.concatenate([sh.reshape(x, shape) for x in xs], 0), list(outputs))


class RNN(RNNBase):
    """Elman RNN, ``h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh)`` (``nonlinearity="relu"`` for ReLU).

    ``RNN(input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True, batch_first=False,
    dropout=0.0, bidirectional=False)``; ``rnn(x, h_0=None)`` returns ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # torch's positional order: input_size, hidden_size, num_layers, nonlinearity, ...
            self_nonlinearity, args = args[3], args[:3] + args[4:]
        else:
            self_nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self_nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{self_nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__("RNN_TANH" if self_nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)
        self.nonlinearity = self_nonlinearity

    def forward(self, input, hx=None):  # noqa: A002
        output, (h,) = self._forward(input, hx)
        return output, h


class GRU(RNNBase):
    """Gated recurrent unit (gates ``r, z, n``; the reset gate multiplies ``W_hn h + b_hn``, as in torch).

    ``gru(x, h_0=None)`` returns ``(output, h_n)``.
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):  # noqa: A002
        output, (h,) = self._forward(input, hx)
        return output, h


class LSTM(RNNBase):
    """Long short-term memory (gates ``i, f, g, o``); ``proj_size`` projects the hidden state.

    ``lstm(x, (h_0, c_0)=None)`` returns ``(output, (h_n, c_n))``.
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def forward(self, input, hx=None):  # noqa: A002
        output, (h, c) = self._forward(input, hx)
        return output, (h, c)
