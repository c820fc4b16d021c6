"""More of ``torch.nn.functional``: 1-D convolution and pooling, ``elu``, ``softplus``, ``embedding_bag``.

The 1-D layers are the 2-D ops on a height of one (one recorded node each, named as torch
names it); ``embedding_bag`` is a gather of rows and one matmul with a constant bag matrix.

>>> from gradc.facade.creation import tensor
>>> conv1d(tensor([[[1.0, 2.0, 3.0]]]), tensor([[[1.0, -1.0]]]))
tensor([[[-1., -1.]]])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.linalg as la
import gradc.ops.nn as nn_ops
import gradc.ops.shape as sh
from gradc.facade.nn.functional_layers import _batched, _same_dtype, _unbatch, apply, data, dtype_of, shape_of


def _single(v):
    return int(v[0]) if isinstance(v, (tuple, list)) else int(v)


def _lift(x):
    """(N, C, L) as (N, C, 1, L)."""
    s = shape_of(x)
    return sh.reshape(x, s[:2] + (1,) + s[2:])


def _drop(y):
    s = shape_of(y)
    return sh.reshape(y, s[:2] + s[3:])


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002 - torch names
    """``torch.nn.functional.conv1d``: (N, Cin, L) or (Cin, L) input, (Cout, Cin/groups, K) weight."""
    x, added = _batched(input, 3, "conv1d")
    xs, ws = shape_of(x), shape_of(weight)
    if len(ws) != 3:
        raise RuntimeError(f"weight should have 3 dimensions for conv1d, got weight of size {list(ws)}")
    if xs[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(ws)}, expected input{list(xs)} to have "
                           f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
    _same_dtype(x, weight, "weight")
    stride, dilation = _single(stride), _single(dilation)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if padding == "same" and stride != 1:
            raise ValueError("padding='same' is not supported for strided convolutions")
        total = dilation * (ws[2] - 1) if padding == "same" else 0
        pads = (total // 2, total - total // 2)
    else:
        pads = (_single(padding),) * 2
    if xs[2] + sum(pads) < dilation * (ws[2] - 1) + 1:
        raise RuntimeError(f"Calculated padded input size per channel: ({xs[2] + sum(pads)}). Kernel size: "
                           f"({ws[2]}). Kernel size can't be greater than actual input size")

    def fn(xv, wv, bv=None):
        out = _drop(nn_ops.conv2d(_lift(xv), _lift(wv), (1, stride), ((0, 0), pads), (1, dilation), groups))
        return out if bv is None else ew.add(out, sh.reshape(bv, (1, ws[0], 1)))
    operands = [x, weight] + ([bias] if bias is not None else [])
    return _unbatch(apply("ConvolutionBackward0", fn, operands), added)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """``torch.nn.functional.max_pool1d`` on (N, C, L) or (C, L)."""
    x, added = _batched(input, 3, "max_pool1d")
    k, p = _single(kernel_size), _single(padding)
    if 2 * p > k:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                           f"kernel_size={k} and dilation={_single(dilation)}")
    s = k if stride is None or stride == [] else _single(stride)
    args = ((1, k), (1, s), (0, p), (1, _single(dilation)), ceil_mode)
    out = _unbatch(apply("SqueezeBackward1", lambda v: _drop(nn_ops.max_pool2d(_lift(v), *args)), [x]), added)
    if not return_indices:
        return out
    idx = np.asarray(_drop(nn_ops.max_pool2d_index(_lift(np.asarray(data(x))), *args)))
    return out, _unbatch(type(out)._wrap(idx), added)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):  # noqa: A002
    """``torch.nn.functional.avg_pool1d`` on (N, C, L) or (C, L)."""
    x, added = _batched(input, 3, "avg_pool1d")
    k, p = _single(kernel_size), _single(padding)
    if 2 * p > k:
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                           f"kernel_size={k} and dilation=1")
    s = k if stride is None or stride == [] else _single(stride)

    def fn(v):
        return _drop(nn_ops.avg_pool2d(_lift(v), (1, k), (1, s), (0, p), ceil_mode, count_include_pad))
    return _unbatch(apply("SqueezeBackward1", fn, [x]), added)


def adaptive_avg_pool1d(input, output_size):  # noqa: A002
    """``torch.nn.functional.adaptive_avg_pool1d`` on (N, C, L) or (C, L)."""
    x, added = _batched(input, 3, "adaptive_avg_pool1d")
    size = _single(output_size)
    return _unbatch(apply("SqueezeBackward1", lambda v: _drop(nn_ops.adaptive_avg_pool2d(_lift(v), (1, size))), [x]),
                    added)


# ---------------------------------------------------------------- activations
def elu(input, alpha=1.0, inplace=False):  # noqa: A002
    """``x`` where positive, else ``alpha * (exp(x) - 1)``."""
    return apply("EluBackward0", lambda x: ew.where(ew.greater(x, 0.0), x, ew.mul(ew.expm1(x), alpha)), [input])


def softplus(input, beta=1.0, threshold=20.0):  # noqa: A002
    """``log(1 + exp(beta * x)) / beta``, and ``x`` itself where ``beta * x > threshold`` (as torch)."""
    def fn(x):
        bx = ew.mul(x, beta)
        big = ew.greater(bx, threshold)
        soft = ew.div(ew.log1p(ew.exp(ew.where(big, ew.zeros_like(bx), bx))), beta)
        return ew.where(big, x, soft)
    return apply("SoftplusBackward0", fn, [input])


# ---------------------------------------------------------------- embedding bags
def _bags(idx, offsets, include_last_offset):
    """(flat indices, bag of each index, number of bags) from torch's 2-D input or 1-D input + offsets."""
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch of "
                             "fixed length sequences. However, found offsets of type Tensor")
        n, length = idx.shape
        return idx.reshape(-1), np.repeat(np.arange(n), length), n
    if idx.ndim != 1:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension {idx.ndim}")
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    starts = np.asarray(data(offsets)).astype(np.int64).reshape(-1)
    if starts.size and (starts[0] != 0 or np.any(np.diff(starts) < 0) or starts[-1] > idx.size):
        raise ValueError("offsets must start at 0, not decrease, and not exceed the input's length")
    if include_last_offset:
        starts = starts[:-1]
    bag = np.searchsorted(starts, np.arange(idx.size), side="right") - 1
    return idx, bag, starts.size


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,  # noqa: A002
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """``torch.nn.functional.embedding_bag`` (modes sum and mean): each bag's rows of ``weight`` reduced."""
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" or max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("gradc's embedding_bag supports modes 'sum' and 'mean' without max_norm, "
                                  "scale_grad_by_freq or sparse")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    idx = np.asarray(data(input)).astype(np.int64)
    rows = shape_of(weight)[0]
    if idx.size and (idx.min() < 0 or idx.max() >= rows):
        raise IndexError("index out of range in self")
    flat, bag, n_bags = _bags(idx, offsets, include_last_offset)
    keep = np.ones(flat.shape, bool) if padding_idx is None else flat != padding_idx % rows
    matrix = np.zeros((n_bags, flat.size))
    matrix[bag[keep], np.nonzero(keep)[0]] = 1.0
    if mode == "mean":
        counts = matrix.sum(axis=1, keepdims=True)
        matrix = matrix / np.where(counts == 0, 1.0, counts)
    matrix = matrix.astype(dtype_of(weight))
    spec = (("array", 0), sh.slice_item(None, None, None))
    psw = None if per_sample_weights is None else data(per_sample_weights)

    def fn(w, *rest):
        picked = sh.gather(w, [flat], spec)
        if rest:
            picked = ew.mul(picked, sh.reshape(rest[0], (flat.size, 1)))
        return la.matmul(matrix, picked)
    operands = [weight] + ([per_sample_weights] if psw is not None else [])
    return apply("EmbeddingBagBackward0", fn, operands)


# ---------------------------------------------------------------- padding
_PAD_NODES = {"constant": "ConstantPadNdBackward0", "reflect": "ReflectionPad{n}DBackward0",
              "replicate": "ReplicationPad{n}DBackward0", "circular": "CopySlices"}


def _source_index(size, lo, hi, mode):
    """For each position of a padded axis, the input position it copies (torch's pad modes)."""
    i = np.arange(-lo, size + hi)
    if mode == "reflect":
        if lo >= size or hi >= size:
            raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding input dimension, "
                               f"but got: padding ({lo}, {hi}) at dimension of input of size {size}")
        i = np.abs(i)
        return np.where(i >= size, 2 * (size - 1) - i, i)
    if mode == "replicate":
        return np.clip(i, 0, size - 1)
    if lo > size or hi > size:
        raise RuntimeError("Padding value causes wrapping around more than once.")
    return i % size


def pad_values(x, pad, mode="constant", value=0.0):
    """``x`` padded on its last ``len(pad) // 2`` axes, written with gradc ops (gather or index_grad)."""
    shape = shape_of(x)
    k = len(pad) // 2
    pairs = [(int(pad[2 * j]), int(pad[2 * j + 1])) for j in range(k)][::-1]  # first pair pads the last axis
    axes = range(len(shape) - k, len(shape))
    if mode == "constant":
        if any(lo < 0 or hi < 0 for lo, hi in pairs):
            raise NotImplementedError("gradc's pad does not crop (negative padding)")
        new = shape[:len(shape) - k] + tuple(shape[a] + lo + hi for a, (lo, hi) in zip(axes, pairs))
        spec = tuple(sh.slice_item(None, None, None) for _ in shape[:len(shape) - k]) + tuple(
            sh.slice_item(lo, lo + shape[a], None) for a, (lo, hi) in zip(axes, pairs))
        out = sh.index_grad(x, spec, new)
        if value:
            border = np.full(new, value, dtype_of(x))
            border[tuple(slice(item[1], item[2]) for item in spec)] = 0
            out = ew.add(out, border)
        return out
    arrays, spec = [], [sh.slice_item(None, None, None) for _ in shape[:len(shape) - k]]
    for j, (a, (lo, hi)) in enumerate(zip(axes, pairs)):
        index = _source_index(shape[a], lo, hi, mode)
        arrays.append(index.reshape((-1,) + (1,) * (k - 1 - j)))
        spec.append(("array", j))
    return sh.gather(x, arrays, tuple(spec))


def pad(input, pad, mode="constant", value=None):  # noqa: A002
    """``torch.nn.functional.pad``: modes constant, reflect, replicate, circular, on the trailing axes."""
    if len(pad) % 2 or len(pad) // 2 > len(shape_of(input)):
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the input's dimensions, "
                           f"got {len(pad)} for an input of {len(shape_of(input))} dimensions")
    if mode not in _PAD_NODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if mode != "constant" and value:
        raise RuntimeError(f"Padding mode \"{mode}\" doesn't take in value argument")
    name = _PAD_NODES[mode].format(n=len(pad) // 2)
    return apply(name, lambda v: pad_values(v, tuple(pad), mode, value or 0.0), [input])
