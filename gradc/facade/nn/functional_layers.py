"""``torch.nn.functional`` for layers: convolution, pooling, normalisation, embedding, dropout.

Each function checks its arguments in torch's words, then records one node named as torch
names it (``ConvolutionBackward0``, ...) whose forward is written with gradc ops, so its
derivative comes from the op registry (``gradc.ops.nn`` for convolution and pooling). Given
values of a trace (``gradc.compile`` of torch-style code) they apply the same gradc ops.

>>> from gradc.facade.creation import ones
>>> conv2d(ones(1, 1, 3, 3), ones(1, 1, 2, 2), padding=1)[0, 0]
tensor([[1., 2., 2., 1.],
        [2., 4., 4., 2.],
        [2., 4., 4., 2.],
        [1., 2., 2., 1.]])
"""
from __future__ import annotations

import warnings

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.nn as nn_ops
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.errors import GradcWarning, TraceError
from gradc.facade import grad_mode, rng
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.ir.builder import Traced
from gradc.ops.autodiff import stop_gradient

_DTYPE_WORDS = {"float32": "float", "float64": "double", "int64": "long", "int32": "int", "int16": "short",
                "int8": "signed char", "uint8": "unsigned char", "bool": "bool"}


def data(x):
    """The array behind a Tensor (a traced value or array passes through)."""
    return x._data if isinstance(x, Tensor) else x


def shape_of(x):
    x = data(x)
    if isinstance(x, Traced):
        return tuple(x.aval.shape)
    return tuple(np.shape(x))


def dtype_of(x):
    x = data(x)  # a Tensor's storage is traced while torch.compile traces it
    return x.aval.np_dtype if isinstance(x, Traced) else np.asarray(x).dtype


def traced(x):
    """Whether ``x`` is a traced value or a Tensor holding one (``torch.compile`` tracing a call)."""
    return isinstance(data(x), Traced)


def apply(name, fn, operands, **kw):
    """Record node ``name`` computing ``fn`` on the operands, or apply ``fn`` directly to traced values."""
    if any(isinstance(o, Traced) for o in operands):
        return fn(*[data(o) for o in operands])
    return record(name, fn, operands, saves=True, **kw)


def _pair(v):
    return tuple(v) if isinstance(v, (tuple, list)) else (v, v)


def _batched(x, ndim, what):
    """(x with a batch axis, whether one was added): torch's layers also take one unbatched sample."""
    rank = len(shape_of(x))
    if rank == ndim - 1:
        return x.unsqueeze(0) if isinstance(x, Tensor) else sh.reshape(x, (1,) + shape_of(x)), True
    if rank != ndim:
        raise RuntimeError(f"{what}: Expected {ndim - 1}D (unbatched) or {ndim}D (batched) input to {what}, "
                           f"but got input of size: {list(shape_of(x))}")
    return x, False


def _unbatch(out, added):
    if not added:
        return out
    return out.squeeze(0) if isinstance(out, Tensor) else sh.reshape(out, shape_of(out)[1:])


def _same_dtype(a, b, what):
    da, db = dtype_of(a), dtype_of(b)
    if da != db:
        raise RuntimeError(f"Input type ({_DTYPE_WORDS.get(da.name, da.name)}) and {what} type "
                           f"({_DTYPE_WORDS.get(db.name, db.name)}) should be the same")


# ---------------------------------------------------------------- convolution
def conv_padding(padding, kernel, dilation, stride):
    """torch's ``padding`` (int, pair, "valid", "same") as ``((top, bottom), (left, right))``."""
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0), (0, 0))
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        total = [d * (k - 1) for d, k in zip(dilation, kernel)]
        return tuple((t // 2, t - t // 2) for t in total)
    return tuple((p, p) for p in _pair(padding))


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):  # noqa: A002 - torch names
    """``torch.nn.functional.conv2d``: (N, Cin, H, W) or (Cin, H, W) input, (Cout, Cin/groups, KH, KW) weight."""
    x, added = _batched(input, 4, "conv2d")
    ws = shape_of(weight)
    xs = shape_of(x)
    if len(ws) != 4:
        raise RuntimeError(f"weight should have 4 dimensions for conv2d, got weight of size {list(ws)}")
    if xs[1] != ws[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(ws)}, expected input{list(xs)} to have "
                           f"{ws[1] * groups} channels, but got {xs[1]} channels instead")
    _same_dtype(x, weight, "weight")
    if bias is not None:
        _same_dtype(x, bias, "bias")
    stride, dilation = _pair(stride), _pair(dilation)
    pads = conv_padding(padding, ws[2:], dilation, stride)
    for i in range(2):
        if xs[2 + i] + sum(pads[i]) < dilation[i] * (ws[2 + i] - 1) + 1:
            raise RuntimeError(f"Calculated padded input size per channel: ({xs[2] + sum(pads[0])} x "
                               f"{xs[3] + sum(pads[1])}). Kernel size: ({ws[2]} x {ws[3]}). Kernel size can't be "
                               "greater than actual input size")

    def fn(xv, wv, bv=None):
        out = nn_ops.conv2d(xv, wv, stride, pads, dilation, groups)
        return out if bv is None else ew.add(out, sh.reshape(bv, (1, ws[0], 1, 1)))
    operands = [x, weight] + ([bias] if bias is not None else [])
    return _unbatch(apply("ConvolutionBackward0", fn, operands), added)


# ---------------------------------------------------------------- pooling
def _check_pool_padding(padding, kernel):
    for p, k in zip(_pair(padding), _pair(kernel)):
        if 2 * p > k:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got pad={p}, "
                               f"kernel_size={k} and dilation=1")


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,  # noqa: A002
               return_indices=False):
    """``torch.nn.functional.max_pool2d``; padding counts as -inf; ``return_indices`` gives flat h*W+w."""
    x, added = _batched(input, 4, "max_pool2d")
    _check_pool_padding(padding, kernel_size)
    stride = None if stride is None or stride == [] else stride
    args = (kernel_size, stride, padding, dilation, ceil_mode)
    out = _unbatch(apply("MaxPool2DWithIndicesBackward0", lambda v: nn_ops.max_pool2d(v, *args), [x]), added)
    if not return_indices:
        return out
    idx = nn_ops.max_pool2d_index(data(x), *args)
    return out, _unbatch(Tensor._wrap(idx) if isinstance(x, Tensor) else idx, added)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True,  # noqa: A002
               divisor_override=None):
    """``torch.nn.functional.avg_pool2d`` (linear: two matmuls with constant pooling matrices)."""
    x, added = _batched(input, 4, "avg_pool2d")
    _check_pool_padding(padding, kernel_size)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    stride = None if stride is None or stride == [] else stride

    def fn(v):
        return nn_ops.avg_pool2d(v, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override)
    return _unbatch(apply("AvgPool2DBackward0", fn, [x]), added)


def adaptive_avg_pool2d(input, output_size):  # noqa: A002
    """``torch.nn.functional.adaptive_avg_pool2d``: window o covers [floor(o*H/O), ceil((o+1)*H/O))."""
    x, added = _batched(input, 4, "adaptive_avg_pool2d")
    # torch computes a (1, 1) output as a mean, and names its node so
    name = "MeanBackward1" if _pair(output_size) == (1, 1) else "AdaptiveAvgPool2DBackward0"
    return _unbatch(apply(name, lambda v: nn_ops.adaptive_avg_pool2d(v, output_size), [x]), added)


# ---------------------------------------------------------------- normalisation
def _normalise(x, axes, eps):
    mean = rd.mean(x, axes, keepdims=True)
    centred = ew.sub(x, mean)
    var = rd.mean(ew.mul(centred, centred), axes, keepdims=True)
    return ew.div(centred, ew.sqrt(ew.add(var, eps)))


def _affine(y, w, b, shape):
    if w is not None:
        y = ew.mul(y, sh.reshape(w, shape))
    if b is not None:
        y = ew.add(y, sh.reshape(b, shape))
    return y


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,  # noqa: A002
               momentum=0.1, eps=1e-5):
    """``torch.nn.functional.batch_norm`` over all axes but 1; in training, updates the running stats in place."""
    xs = shape_of(input)
    axes = (0,) + tuple(range(2, len(xs)))
    count = int(np.prod([xs[a] for a in axes]))
    if training and count <= 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {list(xs)}")
    shape = (1, xs[1]) + (1,) * (len(xs) - 2)
    operands = [input] + [t for t in (weight, bias) if t is not None]
    has_w, has_b = weight is not None, bias is not None

    def params(rest):
        rest = list(rest)
        return (rest.pop(0) if has_w else None), (rest.pop(0) if has_b else None)

    if training or running_mean is None:
        def fn(v, *rest):
            return _affine(_normalise(v, axes, eps), *params(rest), shape)
        out = apply("NativeBatchNormBackward0", fn, operands)
        if training and running_mean is not None:
            if isinstance(input, Traced):
                warnings.warn("batch_norm in training mode, compiled: the generated code normalises with the batch's "
                              "statistics but does not update running_mean/running_var (call model.eval() to "
                              "compile inference)", GradcWarning, stacklevel=2)
            else:
                _update_running(data(input), axes, count, running_mean, running_var, momentum)
        return out
    mean, var = data(running_mean), data(running_var)

    def fn_eval(v, *rest):
        y = ew.div(ew.sub(v, sh.reshape(mean, shape)), ew.sqrt(ew.add(sh.reshape(var, shape), eps)))
        return _affine(y, *params(rest), shape)
    return apply("NativeBatchNormBackward0", fn_eval, operands)


def _update_running(x, axes, count, running_mean, running_var, momentum):
    """torch's update: ``(1 - m) * running + m * batch``, with the unbiased batch variance."""
    mean = x.mean(axis=axes)
    var = x.var(axis=axes) * (count / (count - 1))
    m = momentum
    for buf, new in ((running_mean, mean), (running_var, var)):
        arr = buf._data
        arr[...] = (arr * (1 - m) + new.astype(arr.dtype) * m).astype(arr.dtype)
        buf._bump()


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):  # noqa: A002
    """``torch.nn.functional.layer_norm`` over the trailing ``normalized_shape`` axes."""
    norm = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    xs = shape_of(input)
    if tuple(xs[len(xs) - len(norm):]) != norm:
        raise RuntimeError(f"Given normalized_shape={list(norm)}, expected input with shape [*, "
                           f"{', '.join(map(str, norm))}], but got input of size{list(xs)}")
    axes = tuple(range(len(xs) - len(norm), len(xs)))
    operands = [input] + [t for t in (weight, bias) if t is not None]
    has_w, has_b = weight is not None, bias is not None

    def fn(v, *rest):
        rest = list(rest)
        w = rest.pop(0) if has_w else None
        b = rest.pop(0) if has_b else None
        return _affine(_normalise(v, axes, eps), w, b, norm)
    return apply("NativeLayerNormBackward0", fn, operands)


# ---------------------------------------------------------------- embedding, dropout
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,  # noqa: A002
              sparse=False):
    """``torch.nn.functional.embedding``: rows of ``weight``; the ``padding_idx`` row gets no gradient."""
    if max_norm is not None or scale_grad_by_freq or sparse:
        raise NotImplementedError("gradc's embedding supports neither max_norm, scale_grad_by_freq nor sparse")
    rows, dim = shape_of(weight)
    if traced(input):  # indices known only at run time: NumPy's indexing rules (negatives wrap)
        idx = data(input)
    else:
        idx = np.asarray(data(input))
        if idx.dtype.kind not in "iu":
            raise RuntimeError("Expected tensor for argument #1 'indices' to have one of the following scalar "
                               f"types: Long, Int; but got torch.{_DTYPE_WORDS.get(idx.dtype.name, idx.dtype.name)}"
                               "Tensor instead (while checking arguments for embedding)")
        if idx.size and (idx.min() < -rows or idx.max() >= rows):
            raise IndexError("index out of range in self")
        idx = np.where(idx < 0, idx + rows, idx).astype(np.int64)
    pad = None if padding_idx is None else padding_idx % rows

    def fn(w):
        out = sh.gather(w, [idx], (("array", 0), sh.slice_item(None, None, None)))
        if pad is None or (isinstance(idx, np.ndarray) and not (idx == pad).any()):
            return out
        keep = sh.broadcast_to(sh.reshape(ew.not_equal(idx, pad), shape_of(idx) + (1,)), shape_of(idx) + (dim,))
        # torch's padding row: its value, no gradient (on arrays a constant, kept off the recorded tape)
        fill = np.array(out) if isinstance(out, np.ndarray) else stop_gradient(out)
        return ew.where(keep, out, fill)
    if traced(input):
        out = fn(data(weight))
        return Tensor._wrap(out) if isinstance(input, Tensor) else out
    return apply("EmbeddingBackward0", fn, [weight])


def bernoulli_mask(shape, keep, dtype, generator=None):
    """torch's ``bernoulli_(keep)`` on CPU: one 53-bit uniform double per element, 1 where it is below ``keep``."""
    g = generator or rng.default_generator
    n = int(np.prod(shape, dtype=np.int64))
    return (g.doubles(n) < keep).reshape(shape).astype(dtype)


def dropout(input, p=0.5, training=True, inplace=False):  # noqa: A002
    """``torch.nn.functional.dropout``: in training, zeros with probability ``p`` (torch's RNG stream)."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    if traced(input):
        tracing = grad_mode._STATE["tracing"]
        if tracing is None or not isinstance(input, Tensor):  # gradc.grad of facade code: no random stream
            raise TraceError(f"dropout with p={p} in training mode cannot be compiled (generated code draws no "
                             "random numbers)", hint="call model.eval() (or pass training=False) before compiling, "
                             "or use torch.compile, which passes the noise in")
        # torch.compile: the noise is an input of the compiled code, drawn by each call (dropout_noise)
        return Tensor._wrap(ew.mul(data(input), tracing.noise(shape_of(input), p, dtype_of(input))))
    x = np.asarray(data(input))
    noise = dropout_noise(x.shape, p, x.dtype)
    return apply("MulBackward0", ew.mul, [input, noise])  # torch's node: input times the (constant) mask


def dropout_noise(shape, p, dtype):
    """torch's dropout noise: ``bernoulli(1 - p) / (1 - p)`` in ``dtype`` (zeros for ``p == 1``)."""
    if p >= 1.0:
        return np.zeros(shape, dtype)
    return bernoulli_mask(shape, 1.0 - p, dtype) / np.asarray(1.0 - p, dtype)


def flatten(x, start_dim=0, end_dim=-1):
    """``torch.flatten``: dims ``start_dim..end_dim`` merged into one (a Tensor, or a traced value)."""
    shape = tuple(x.aval.shape) if isinstance(x, Traced) else tuple(x.shape)
    n = max(len(shape), 1)
    for d in (start_dim, end_dim):
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    start, end = start_dim % n, end_dim % n
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if not shape:
        new = (1,)
    else:
        new = shape[:start] + (int(np.prod(shape[start:end + 1], dtype=np.int64)),) + shape[end + 1:]
    return sh.reshape(x, new) if isinstance(x, Traced) else x.reshape(new)
