"""In-place writes of facade Tensors: the one path every in-place op takes (``_inplace``), and
``fill_``, ``zero_``, ``copy_``.

An in-place op is computed out of place on a stand-in holding the tensor's value and history,
then written into the tensor's storage: directly for a tensor that is no view, through
``gradc.facade.views`` (torch's ``CopySlices``) for a view. torch's refusals come first: leaves
that require grad, views made in no_grad mode or by unbind/split, overlapping memory.

>>> import gradc.torch as torch
>>> x = torch.tensor([1., 2.], requires_grad=True); y = x * 1.0; _ = y.fill_(3.0)
>>> type(y.grad_fn).__name__, y.tolist()
('FillBackward2', [3.0, 3.0])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.facade import dtypes, grad_mode, views
from gradc.facade import functional as fn
from gradc.facade import grad_fn as gf
from gradc.facade.tensor import Tensor


def install(T):
    """Attach ``_inplace``, ``_fill``, ``fill_``, ``zero_`` and ``copy_`` to the Tensor class ``T``."""
    for f in (_inplace, _fill, fill_, zero_, copy_):
        setattr(T, f.__name__, f)


def _inplace(self, compute, overlap_ok=False):
    """Run out-of-place ``compute(shadow)`` and write its result into this tensor's storage.

    Through a view, the write rewrites the root base's history (``gradc.facade.views``); a tensor
    with views gets its views' nodes renewed, as torch does.
    """
    if not grad_mode._STATE["enabled"]:  # no graph to extend: compute from the tensor itself, write back
        tracing = grad_mode._STATE["tracing"]
        if tracing is not None:  # torch.compile: the trace writes it (functionalised: views and base follow)
            res = compute(self)
            _check_shape(self, res)
            tracing.write(self, res._data)
            self._bump()
            return self
        if self._base is not None and not overlap_ok:
            views.check_overlap(self)
        res = compute(self)
        _check_shape(self, res)
        views.store(self, res._data)
        self._bump()
        if self._views or self._base is not None:
            views.after_write(self)
        return self
    self._check_inplace()
    if self._view_flags and self._base._requires_grad:  # refused before the op reads its operands
        views.check_write(self, self)
    shadow = Tensor._wrap(self._data.copy())
    shadow._requires_grad, shadow._grad_fn, shadow._acc = self._requires_grad, self._grad_fn, self._acc
    res = compute(shadow)
    _check_shape(self, res)
    if res._data.dtype.kind == "c" and self._data.dtype.kind != "c":  # NumPy would drop the imaginary parts
        raise RuntimeError(f"result type {res.dtype.legacy[:-6]} can't be cast to the desired output type "
                           f"{self.dtype.legacy[:-6]}")
    if self._base is not None and type(self._data) is np.ndarray:
        views.check_write(self, res)
        if not overlap_ok:
            views.check_overlap(self)
        return views.write_view(self, res)
    np.copyto(self._data, res._data.astype(self._data.dtype, copy=False))
    self._bump()
    if res._grad_fn is not None:
        self._grad_fn, self._requires_grad = res._grad_fn, True
        if self._retains_grad or self._hooks:
            res._grad_fn._retained += (self,)
    if self._views and self._requires_grad:
        views.refresh_group(self)
    return self


def _check_shape(self, res):
    if res._data.shape != self._data.shape:
        raise RuntimeError("output with shape [%s] doesn't match the broadcast shape [%s]"
                           % (", ".join(map(str, self.shape)), ", ".join(map(str, res.shape))))


def zero_(self):
    return _fill(self, 0, "ZeroBackward0")  # torch's fill_ and zero_ accept an expanded tensor


def fill_(self, value):
    return _fill(self, value, "FillBackward2")


def _fill(self, value, name):
    """Write ``value`` (a number or a 0-d tensor) everywhere; the old value gets a zero gradient."""
    overlap_ok = name != "FillBackward3"  # torch's setitem of a number refuses an expanded tensor, fill_ does not
    if isinstance(value, Tensor):
        if value.dim():
            raise RuntimeError("fill_ only supports 0-dimension value tensor but got tensor with %d dimensions."
                               % value.dim())
        return self._inplace(lambda s: _overwrite(name, s, value), overlap_ok=overlap_ok)
    dtypes.refuse_complex_into_real(self._data.dtype, value)
    if not (self._requires_grad or self._base is not None) or not grad_mode._STATE["enabled"]:
        self._check_inplace()
        if not overlap_ok and self._base is not None:
            views.check_overlap(self)
        views.store(self, np.asarray(value))
        self._bump()
        if self._views or self._base is not None:
            views.after_write(self)
        return self
    return self._inplace(lambda s: _overwrite(name, s, value), overlap_ok=overlap_ok)


def copy_(self, src, non_blocking=False):
    """``self.copy_(src)``: ``src`` broadcast to this shape and cast to this dtype (``CopyBackwards``)."""
    shape = self._data.shape
    if not isinstance(src, Tensor):
        src = Tensor._wrap(np.asarray(src))
    try:
        np.broadcast_shapes(src._data.shape, shape)
    except ValueError:
        raise RuntimeError("output with shape [%s] doesn't match the broadcast shape [%s]" % (
            ", ".join(map(str, shape)), ", ".join(map(str, np.broadcast_shapes(src._data.shape, shape))))) from None

    def compute(s):
        res = _overwrite("CopyBackwards", s, src)
        views.check_operand(self, src)
        return res
    return self._inplace(compute, overlap_ok=src is self)  # torch copies a tensor onto itself without a look


def _overwrite(name, old, value):
    """The node of an op overwriting ``old`` with ``value`` (a tensor or a number), broadcast and cast: a zero
    gradient for ``old`` (torch gives zeros, not none), ``value``'s gradient summed back to its shape."""
    shape, dtype = old._data.shape, old._data.dtype
    v = value._data if isinstance(value, Tensor) else np.asarray(value)
    if not isinstance(value, Tensor):
        dtypes.refuse_complex_into_real(dtype, v)
    out = Tensor._wrap(np.broadcast_to(v.astype(dtype, copy=False), shape).copy())
    track_old, track_v = old._requires_grad, isinstance(value, Tensor) and value._requires_grad
    if not grad_mode._STATE["enabled"] or not (track_old or track_v):
        return out
    edges = [gf.edge(old) if track_old else None, gf.edge(value) if track_v else None]
    # a number (or drawn values) is an argument, not an input: one slot (``t[k] = 5.0`` copies a tensor)
    one_slot = not isinstance(value, Tensor) and name != "FillBackward3"
    vjp = _OverwriteVjp(np.zeros(shape, dtype) if track_old else None, v.shape,
                        fn.dtype_key(value.dtype) if track_v else None, track_v, one_slot)
    out._grad_fn, out._requires_grad = gf.node_class(name)(edges[:1] if one_slot else edges, vjp), True
    return out


class _OverwriteVjp:
    """The VJP of an overwrite: zeros for the old value (None when it needs none), the cotangent summed back to
    the value's shape and cast to its dtype (slotted: a closure's cells are more objects for the collector)."""

    __slots__ = ("zero", "vshape", "vkey", "track_v", "one_slot")

    def __init__(self, zero, vshape, vkey, track_v, one_slot):
        self.zero, self.vshape, self.vkey, self.track_v, self.one_slot = zero, vshape, vkey, track_v, one_slot

    def __call__(self, ct):
        if self.one_slot:
            return (self.zero,)
        return self.zero, ew.astype(sh.sum_to(ct, self.vshape), self.vkey) if self.track_v else None
