"""``torch.nn.utils.rnn``: padding and packing variable-length sequences for the recurrent layers.

A ``PackedSequence`` holds the time steps of a batch of sequences sorted by decreasing length:
``data`` is step 0 of every sequence, then step 1 of those that have one, ... (``batch_sizes[t]``
rows for step ``t``), ``sorted_indices`` the batch order it was sorted into (None when the caller
promised sorted input) and ``unsorted_indices`` the inverse. The layers run it with each
sequence stopping at its own length (``gradc.facade.nn.recurrent``).

>>> from gradc.facade.creation import tensor
>>> p = pack_sequence([tensor([1., 2.]), tensor([3., 4., 5.])], enforce_sorted=False)
>>> p.data, p.batch_sizes
(tensor([3., 1., 4., 2., 5.]), tensor([2, 2, 1]))
>>> pad_packed_sequence(p, batch_first=True)
(tensor([[1., 2., 0.],
        [3., 4., 5.]]), tensor([2, 3]))
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from gradc.facade import dtypes
from gradc.facade import functional as fn
from gradc.facade.creation import full, tensor
from gradc.facade.tensor import Tensor

__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence", "pad_sequence",
           "unpack_sequence", "unpad_sequence"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """``(data, batch_sizes, sorted_indices, unsorted_indices)``; made by ``pack_padded_sequence``/``pack_sequence``."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return self if data is self.data else type(self)(data, self.batch_sizes, self.sorted_indices,
                                                          self.unsorted_indices)

    def cpu(self):
        return self

    def double(self):
        return self.to(dtypes.float64)

    def float(self):
        return self.to(dtypes.float32)


def _invert(order):
    inverse = np.empty(len(order), np.int64)
    inverse[np.asarray(_ints(order))] = np.arange(len(order))
    return tensor(inverse)


def _ints(values):
    """A list of Python ints from a list, tuple, array or integer tensor."""
    if isinstance(values, Tensor):
        values = values.detach().numpy()
    return [int(v) for v in np.asarray(values).reshape(-1)]


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Tensors (L_i, *) stacked into (L_max, B, *) (``batch_first``: (B, L_max, *)), padded with ``padding_value``."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        pad = longest - s.shape[0]
        if pad:
            filler = full((pad,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = fn.cat([s, filler] if padding_side == "right" else [filler, s], 0)
        rows.append(s)
    return fn.stack(rows, 0 if batch_first else 1)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):  # noqa: A002 - torch's names
    """Pack a padded batch (T, B, *) (``batch_first``: (B, T, *)) whose sequence ``b`` has ``lengths[b]`` steps."""
    lengths = _ints(lengths)
    batch_dim = 0 if batch_first else 1
    if len(lengths) != input.shape[batch_dim]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={input.shape[batch_dim]})")
    if any(n <= 0 for n in lengths):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if max(lengths) > input.shape[1 - batch_dim]:
        raise RuntimeError(f"a sequence length {max(lengths)} is longer than the padded input's "
                           f"{input.shape[1 - batch_dim]} steps")
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
                               "sidestep this requirement if you do not need ONNX exportability.")
        order, sorted_indices = list(range(len(lengths))), None
    else:
        order = [int(i) for i in np.argsort(-np.asarray(lengths), kind="stable")]
        sorted_indices = tensor(np.asarray(order, np.int64))
    time_major = input.transpose(0, 1) if batch_first else input
    sorted_lengths = [lengths[i] for i in order]
    batch_sizes = [sum(1 for n in sorted_lengths if n > t) for t in range(sorted_lengths[0])]
    # row t*B + b of the time-major batch, for each step t and each sequence b (sorted) still running
    rows = [t * len(lengths) + order[b] for t, n in enumerate(batch_sizes) for b in range(n)]
    flat = time_major.reshape((-1,) + tuple(time_major.shape[2:]))
    data = flat[np.asarray(rows, np.int64)]
    return PackedSequence(data, tensor(np.asarray(batch_sizes, np.int64)), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """The padded batch and the lengths (int64, in the caller's batch order) of a ``PackedSequence``."""
    batch_sizes = _ints(sequence.batch_sizes)
    steps = len(batch_sizes)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {steps}")
        steps = total_length
    batch = batch_sizes[0]
    data = sequence.data
    # padded row t*B + b holds data row offset_t + b when sequence b (sorted) has step t, else the filler row
    filler = full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    source = np.full(steps * batch, data.shape[0], np.int64)
    offset = 0
    for t, n in enumerate(batch_sizes):
        source[t * batch:t * batch + n] = np.arange(offset, offset + n)
        offset += n
    padded = fn.cat([data, filler], 0)[source].reshape((steps, batch) + tuple(data.shape[1:]))
    lengths = np.asarray([sum(1 for n in batch_sizes if n > b) for b in range(batch)], np.int64)
    if sequence.unsorted_indices is not None:
        back = np.asarray(_ints(sequence.unsorted_indices), np.int64)
        padded, lengths = padded[:, back], lengths[back]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, tensor(lengths)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of tensors (L_i, *) (``pad_sequence`` then ``pack_padded_sequence``)."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """The list of sequences a padded batch holds (each cut to its length)."""
    batch = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [batch[b, :n] for b, n in enumerate(_ints(lengths))]


def unpack_sequence(packed_sequences):
    """The list of sequences a ``PackedSequence`` holds, in the caller's order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
