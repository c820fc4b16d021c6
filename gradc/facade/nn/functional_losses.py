"""``torch.nn.functional`` losses: nll_loss, cross_entropy, binary_cross_entropy, l1, smooth L1, Huber.

Each loss is one recorded node (named as torch names it) whose forward is written with gradc
ops, so its gradient comes from the op registry's VJP rules; traced values get the same ops.

>>> from gradc.facade.creation import tensor
>>> cross_entropy(tensor([[2.0, 0.5, -1.0]]), tensor([0]))
tensor(0.2413)
"""
from __future__ import annotations

import warnings

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.facade.dtypes import from_np
from gradc.facade.nn.functional_layers import apply, data, dtype_of, shape_of, traced
from gradc.facade.tensor import Size, Tensor
from gradc.ops.autodiff import stop_gradient


def _like(input, value):  # noqa: A002
    """A traced loss as a Tensor when ``input`` is one (``torch.compile`` tracing facade code)."""
    return Tensor._wrap(value) if isinstance(input, Tensor) else value


def check_reduction(reduction):
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction):
    if reduction == "mean":
        return rd.mean(loss)
    if reduction == "sum":
        return rd.sum_(loss)
    return loss


def _log_softmax(x, dim):
    # softmax does not change when a constant is subtracted: the shift needs no gradient (on arrays it is
    # a constant, kept off the recorded tape)
    shift = np.max(x, dim, keepdims=True) if isinstance(x, np.ndarray) else stop_gradient(rd.max_(x, dim, True))
    z = ew.sub(x, shift)
    return ew.sub(z, ew.log(rd.sum_(ew.exp(z), dim, keepdims=True)))


def log_softmax(input, dim):  # noqa: A002 - torch names
    d = int(dim) % max(len(shape_of(input)), 1)
    return apply("LogSoftmaxBackward0", lambda v: _log_softmax(v, d), [input], out_saved=True)


def _class_targets(input, target, weight, ignore_index):  # noqa: A002
    """The class axis moved last and flattened: (rows (M,), classes (M,), per-row weight (M,), target shape)."""
    xs, t = shape_of(input), np.asarray(data(target))
    if t.dtype.kind not in "iu":
        raise RuntimeError(f"expected scalar type Long but found {_word(t.dtype)}")
    batched = len(xs) > 1
    want = (xs[0],) + xs[2:] if batched else ()
    if t.shape != want:
        if batched and (t.ndim == 0 or t.shape[0] != xs[0]):
            raise ValueError(f"Expected input batch_size ({xs[0]}) to match target batch_size "
                             f"({t.shape[0] if t.ndim else 0}).")
        raise RuntimeError(f"Expected target size {list(want)}, got {list(t.shape)}")
    n_classes = xs[1] if batched else xs[0]
    flat = t.reshape(-1).astype(np.int64)
    ignored = flat == ignore_index
    bad = flat[~ignored & ((flat < 0) | (flat >= n_classes))]
    if bad.size:
        raise IndexError(f"Target {bad[0]} is out of bounds.")
    safe = np.where(ignored, 0, flat)
    dt = dtype_of(input)
    w = np.ones(n_classes, dt) if weight is None else np.asarray(data(weight), dt)
    return safe, np.where(ignored, 0.0, w[safe]).astype(dt), t.shape, n_classes


def _rows(x, n_classes):
    """``x`` with its class axis (1, or 0 when unbatched) last, as (M, C)."""
    xs = shape_of(x)
    if len(xs) > 2:
        x = sh.transpose(x, (0,) + tuple(range(2, len(xs))) + (1,))
    return sh.reshape(x, (int(np.prod(xs)) // n_classes, n_classes))


def _picked_traced(logp, target, weight, ignore_index):
    """Per-row ``-w[t] * logp[t]`` and the row weights, for class indices that are themselves traced."""
    xs = shape_of(logp)
    n_classes = xs[1] if len(xs) > 1 else xs[0]
    rows = _rows(logp, n_classes)
    t = sh.reshape(target, (shape_of(rows)[0], 1))
    hot = ew.astype(ew.equal(t, np.arange(n_classes)), float_key(logp))
    w = np.ones(n_classes, dtype_of(logp)) if weight is None else np.asarray(data(weight), dtype_of(logp))
    keep = ew.astype(ew.not_equal(sh.reshape(target, (shape_of(rows)[0],)), ignore_index), float_key(logp))
    row_w = ew.mul(rd.sum_(ew.mul(hot, w), 1), keep)
    return ew.neg(ew.mul(rd.sum_(ew.mul(rows, hot), 1), row_w)), row_w, keep, rows, w


def float_key(x):
    return {"float32": "f32", "float64": "f64"}[dtype_of(x).name]


def _nll_traced(logp, target, weight, ignore_index, reduction, label_smoothing=0.0):
    loss, row_w, keep, rows, w = _picked_traced(logp, target, weight, ignore_index)
    denominator = rd.sum_(row_w) if weight is not None or not label_smoothing else rd.sum_(keep)
    if label_smoothing:
        n_classes = shape_of(rows)[1]
        smooth = ew.mul(ew.neg(rd.sum_(ew.mul(rows, w), 1)), keep)
        nll = _finish(loss, rd.sum_(row_w), reduction, target)
        smooth = _finish(smooth, denominator, reduction, target)
        return ew.add(ew.mul(nll, 1.0 - label_smoothing), ew.mul(smooth, label_smoothing / n_classes))
    return _finish(loss, denominator, reduction, target)


def _finish(loss, denominator, reduction, target):
    if reduction == "none":
        return sh.reshape(loss, shape_of(target))
    return rd.sum_(loss) if reduction == "sum" else ew.div(rd.sum_(loss), denominator)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,  # noqa: A002
             reduction="mean"):
    """``torch.nn.functional.nll_loss`` of log-probabilities (N, C, ...) or (C,) and class indices."""
    check_reduction(reduction)
    if traced(target):
        return _like(input, _nll_traced(data(input), data(target), weight, ignore_index, reduction))
    safe, wt, tshape, n_classes = _class_targets(input, target, weight, ignore_index)
    rows = np.arange(safe.shape[0])
    total = float(wt.sum())

    def fn(logp):
        picked = sh.gather(_rows(logp, n_classes), [rows, safe], (("array", 0), ("array", 1)))
        loss = ew.neg(ew.mul(picked, wt))
        if reduction == "none":
            return sh.reshape(loss, tshape)
        summed = _reduce(loss, "sum")
        return summed if reduction == "sum" else ew.div(summed, np.asarray(total, wt.dtype))
    name = "NllLoss2DBackward0" if len(shape_of(input)) == 4 else "NllLossBackward0"
    return apply(name, fn, [input])


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,  # noqa: A002
                  reduction="mean", label_smoothing=0.0):
    """``torch.nn.functional.cross_entropy``: class indices or class probabilities, weights, label smoothing."""
    check_reduction(reduction)
    dim = 1 if len(shape_of(input)) > 1 else 0
    logp = log_softmax(input, dim)
    if dtype_of(target).kind == "f":
        return _soft_cross_entropy(logp, target, weight, reduction, label_smoothing, dim)
    if traced(target):
        return _like(input, _nll_traced(data(logp), data(target), weight, ignore_index, reduction, label_smoothing))
    nll = nll_loss(logp, target, weight, ignore_index=ignore_index, reduction=reduction)
    if not label_smoothing:
        return nll
    safe, wt, tshape, n_classes = _class_targets(input, target, weight, ignore_index)
    w = np.ones(n_classes, wt.dtype) if weight is None else np.asarray(data(weight), wt.dtype)
    keep = (wt != 0) if weight is None else np.ones_like(wt, bool)
    keep = keep & (np.asarray(data(target)).reshape(-1) != ignore_index)
    denominator = float(wt.sum()) if weight is not None else float(keep.sum())

    def smooth(lp):
        per_row = ew.neg(rd.sum_(ew.mul(_rows(lp, n_classes), w), 1))
        per_row = ew.mul(per_row, keep.astype(wt.dtype))
        if reduction == "none":
            return sh.reshape(per_row, tshape)
        summed = rd.sum_(per_row)
        return summed if reduction == "sum" else ew.div(summed, np.asarray(denominator, wt.dtype))
    smooth_loss = apply("SumBackward0", smooth, [logp])
    return nll * (1.0 - label_smoothing) + smooth_loss * (label_smoothing / n_classes)


def _soft_cross_entropy(logp, target, weight, reduction, label_smoothing, dim):
    xs = shape_of(logp)
    if shape_of(target) != xs:
        raise RuntimeError(f"Expected target size {list(xs)}, got {list(shape_of(target))}")
    n_classes = xs[dim]
    wshape = (1,) * dim + (n_classes,) + (1,) * (len(xs) - dim - 1)
    w = None if weight is None else np.asarray(data(weight), dtype_of(logp)).reshape(wshape)

    def fn(lp, y):
        if label_smoothing:
            y = ew.add(ew.mul(y, 1.0 - label_smoothing), label_smoothing / n_classes)
        terms = ew.mul(lp, y) if w is None else ew.mul(ew.mul(lp, y), w)
        loss = ew.neg(rd.sum_(terms, dim))
        return _reduce(loss, reduction)
    return apply("DivBackward1" if reduction == "mean" else "NegBackward0", fn, [logp, target])


def _word(dt):
    """torch's scalar-type word (``Float``, ``Long``, ``Byte``) of a facade or NumPy dtype."""
    return (dt if hasattr(dt, "legacy") else from_np(dt)).legacy[:-len("Tensor")]


def _check_same_size(input, target):  # noqa: A002
    if shape_of(target) != shape_of(input):
        warnings.warn(f"Using a target size ({Size(shape_of(target))}) that is different to the input size "
                      f"({Size(shape_of(input))}). This will likely lead to incorrect results due to broadcasting. "
                      "Please ensure they have the same size.", UserWarning, stacklevel=3)


def _pointwise(name, terms, input, target, reduction):  # noqa: A002
    check_reduction(reduction)
    _check_same_size(input, target)
    dt = np.promote_types(dtype_of(input), dtype_of(target))
    key = {"float32": "f32", "float64": "f64"}.get(dt.name, "f32")
    return apply(name, lambda x, y: _reduce(terms(ew.sub(ew.astype(x, key), ew.astype(y, key))), reduction),
                 [input, target])


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """``torch.nn.functional.l1_loss``: the mean (or sum) of ``|input - target|``, three nodes as in torch."""
    check_reduction(reduction)
    _check_same_size(input, target)
    key = {"float32": "f32", "float64": "f64"}.get(np.promote_types(dtype_of(input), dtype_of(target)).name, "f32")
    diff = apply("SubBackward0", lambda x, y: ew.sub(ew.astype(x, key), ew.astype(y, key)), [input, target])
    size = apply("AbsBackward0", ew.abs_, [diff])
    if reduction == "none":
        return size
    return apply("MeanBackward0" if reduction == "mean" else "SumBackward0", lambda z: _reduce(z, reduction), [size])


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):  # noqa: A002
    """``torch.nn.functional.smooth_l1_loss``: ``0.5 d**2 / beta`` where ``|d| < beta``, else ``|d| - beta / 2``."""
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    if beta == 0:
        return _pointwise("SmoothL1LossBackward0", ew.abs_, input, target, reduction)

    def terms(d):
        a = ew.abs_(d)
        return ew.where(ew.less(a, beta), ew.div(ew.mul(ew.mul(d, d), 0.5), beta), ew.sub(a, 0.5 * beta))
    return _pointwise("SmoothL1LossBackward0", terms, input, target, reduction)


def huber_loss(input, target, reduction="mean", delta=1.0):  # noqa: A002
    """``torch.nn.functional.huber_loss``: ``0.5 d**2`` where ``|d| < delta``, else ``delta * (|d| - delta / 2)``."""
    def terms(d):
        a = ew.abs_(d)
        return ew.where(ew.less(a, delta), ew.mul(ew.mul(d, d), 0.5), ew.mul(ew.sub(a, 0.5 * delta), delta))
    return _pointwise("HuberLossBackward0", terms, input, target, reduction)


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None, reduction="mean"):  # noqa: A002
    """``torch.nn.functional.binary_cross_entropy`` of probabilities; logs are clamped at -100 as torch does."""
    check_reduction(reduction)
    if shape_of(target) != shape_of(input):
        raise ValueError(f"Using a target size ({Size(shape_of(target))}) that is different to the input size "
                         f"({Size(shape_of(input))}) is deprecated. Please ensure they have the same size.")
    if not traced(input):
        p = np.asarray(data(input))
        if p.size and not ((p >= 0) & (p <= 1)).all():
            raise RuntimeError("all elements of input should be between 0 and 1")
    w = None if weight is None else data(weight)

    def fn(p, y):
        logp = ew.maximum(ew.log(p), -100.0)
        log1mp = ew.maximum(ew.log(ew.sub(1.0, p)), -100.0)
        loss = ew.neg(ew.add(ew.mul(y, logp), ew.mul(ew.sub(1.0, y), log1mp)))
        return _reduce(loss if w is None else ew.mul(loss, w), reduction)
    return apply("BinaryCrossEntropyBackward0", fn, [input, target])
