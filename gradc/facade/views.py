"""Views of facade Tensors and in-place writes through them, with torch's autograd semantics.

A view (``view``, ``reshape`` of contiguous storage, ``t``, ``transpose``, ``permute``, ``expand``,
``squeeze``, ``unsqueeze``, ``narrow``, ``select``, ``diagonal``, basic indexing, any chain of
them) shares its root base's NumPy storage and version counter, and remembers the chain of
array functions that made it from the root. The chain applied to ``arange(root.numel())``
gives the view's *index map*: which root element each view element is. With it, every view
kind is handled by one mechanism, as torch does with ``as_strided``:

* an in-place op on a view rewrites the root's history with a ``CopySlices`` node (the
  root's old history outside the view, the in-place op's result inside it);
* every live view of the root, the written one included, then gets an ``AsStridedBackward0``
  node on the root's new history, so a view read after the write differentiates through it.

>>> import gradc.torch as torch
>>> x = torch.tensor([1., 2.], requires_grad=True)
>>> y = x * 1.0; v = y.view(2, 1); _ = v.mul_(3.0)
>>> type(y.grad_fn).__name__, type(v.grad_fn).__name__
('CopySlices', 'AsStridedBackward0')
>>> (y * y).sum().backward(); x.grad
tensor([18., 36.])
"""
from __future__ import annotations

import weakref

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.facade import grad_fn as gf
from gradc.facade import grad_mode
from gradc.facade.tensor import VIEW_INPLACE, Tensor

# Nodes whose output is a view of their operand when it shares the operand's storage (torch's names).
VIEW_NODES = frozenset({
    "ViewBackward0", "UnsqueezeBackward0", "SqueezeBackward0", "SqueezeBackward1", "TBackward0",
    "TransposeBackward0", "PermuteBackward0", "ExpandBackward0", "SliceBackward0", "SelectBackward0",
    "DiagonalBackward0", "AsStridedBackward0", "AliasBackward0", "UnbindBackward0", "SplitBackward0",
    "SplitWithSizesBackward0", "ReshapeAliasBackward0"})

_SUFFIX = {
    "no_grad": " Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by "
               "moving both the view and the inplace either both inside the no_grad block (if you don't want the "
               "inplace to be tracked) or both outside (if you want the inplace to be tracked).",
    "multi": " This view is the output of a function that returns multiple views. Such functions do not allow the "
             "output views to be modified inplace. You should replace the inplace operation by an out-of-place one."}


def refusal(t, indirect: bool) -> str:
    """torch's message refusing an in-place write to (``indirect``: to the base or another view of) view ``t``,
    from its flags ``(kind, op, output index, had a node)``."""
    kind, op, index, has_node = t._view_flags
    mod = "its base or another view of its base has been" if indirect else "is being"
    if kind == "no_grad" or not has_node:
        prefix = f"Output {index} of {op} is a view of a view which was created in" if has_node else \
            "A view was created in"
        head = f"{prefix} no_grad mode and {mod} modified inplace with grad mode enabled."
    else:
        head = f"Output {index} of {op} is a view and {mod} modified inplace."
    return head + _SUFFIX[kind]


OVERLAP = ("unsupported operation: more than one element of the written-to tensor refers to a single memory "
           "location. Please clone() the tensor before performing the operation.")


def shares_storage(data, src) -> bool:
    """Whether array ``data`` (a view op's result) reads ``src``'s memory (an empty result counts as a view)."""
    return type(data) is np.ndarray and type(src) is np.ndarray and (
        data is src or not data.size or np.may_share_memory(data, src))


def store(t, values):
    """Write ``values`` into ``t``'s storage; a view with elements sharing memory (``expand``) writes its root's
    elements in order, so the last write to a memory location wins."""
    data = t._data
    if type(data) is not np.ndarray:  # torch.compile tracing: the traced value takes the write
        data[...] = values
        return
    values = np.asarray(values).astype(data.dtype, copy=False)
    if data.flags.writeable or t._base is None:
        np.copyto(data, values)
        return
    # elements sharing memory: write only the elements that change (an element written with the value it
    # holds changes nothing), so an unwritten alias of a written element does not undo the write
    values = np.broadcast_to(values, data.shape).reshape(-1)
    old = data.reshape(-1)
    changed = ~((values == old) | (np.isnan(values) & np.isnan(old))) if values.dtype.kind == "f" else values != old
    np.put(t._base._data, index_map(t).reshape(-1)[changed], values[changed])


def mark(out, src, fn, name=None):
    """Make ``out`` a view of ``src`` made by the array function ``fn`` (node ``name``). A view made in no_grad
    mode, an output of unbind/split and any view of those carry flags ``(kind, op, output index, had a node)``:
    torch refuses to write them in place once they matter for gradients (``refusal``)."""
    if out._view_fn is not None:
        return out
    root = src._base if src._base is not None else src
    out._base = root
    out._vc = src._vc
    out._view_fn = (src._view_fn or ()) + (fn,)
    out._gf_version = out._vc[0]
    if not grad_mode._STATE["enabled"]:
        out._view_flags = ("no_grad", _op_name(name), 0, False)
        if src._requires_grad:  # torch: a leaf that requires grad (its gradient stays with it)
            out._requires_grad = True
    elif src._view_flags:  # a view of a restricted view inherits the restriction, naming its own op
        out._view_flags = (src._view_flags[0], _op_name(name), 0, src._requires_grad)
    views = root._views
    if views is None:
        views = root._views = []
    elif len(views) >= 32 and len(views) & (len(views) - 1) == 0:  # prune now and then (views are often transient)
        views[:] = [w for w in views if w() is not None]
    views.append(weakref.ref(out))
    return out


def _op_name(name):
    """torch's op name in its messages: ``SqueezeBackward1`` -> ``Squeeze1``, ``UnbindBackward0`` -> ``Unbind``."""
    name = name or "AsStridedBackward0"
    head, _, tail = name.partition("Backward")
    return head + ("" if tail == "0" else tail)


def index_map(view) -> np.ndarray:
    """For each element of ``view``, the flat index of the root element it is (the chain on an arange)."""
    cached = view.__dict__.get("_index")
    if cached is not None:
        return cached
    root = view._base
    idx = np.arange(root._data.size, dtype=np.int64).reshape(root._data.shape)
    for fn in view._view_fn:
        idx = fn(idx)
    idx = np.array(idx, dtype=np.int64, order="C")  # (ascontiguousarray makes a 0-d map 1-d)
    view._index = idx
    return idx


def _as_strided_node(root, idx):
    """``AsStridedBackward0``: the cotangent of a view added into a zero cotangent of the root."""
    shape, size = root._data.shape, root._data.size
    spec = (("array", 0),)

    def vjp(ct):
        return (sh.reshape(sh.gather_grad(sh.reshape(ct, (-1,)), [idx.reshape(-1)], spec, (size,)), shape),)
    return gf.node_class("AsStridedBackward0")([gf.edge(root)], vjp)


def refresh(view):
    """Give ``view`` a node on its root's current history (after an in-place write anywhere in the group)."""
    root = view._base
    view._gf_version = view._vc[0]
    if not root._requires_grad:
        return
    view._grad_fn = _as_strided_node(root, index_map(view))
    view._requires_grad = True
    if view._retains_grad or view._hooks:
        view._grad_fn._retained += (view,)


def refresh_group(root, written=None):
    """After a write in grad mode to ``root`` or its view ``written``: every live view gets its new node. A view
    that had none (made before the root required grad) is left to get it when its ``grad_fn`` is first read, as
    torch does: ``requires_grad`` set and no node make every op reaching it read ``grad_fn``."""
    live = []
    for ref in root._views or ():
        w = ref()
        if w is not None:
            live.append(ref)
            if w._view_flags:
                _poison(w)
            elif w._grad_fn is None and w is not written:
                w._requires_grad, w._acc = True, None
            else:
                refresh(w)
    root._views = live


def _poison(w):
    """A view made in no_grad mode whose base (requiring grad) was written: torch refuses any use of its history;
    ``requires_grad`` set and no node make every op reaching it ask for ``grad_fn``, which raises."""
    w._requires_grad, w._grad_fn, w._acc = True, None, None


def after_write(t):
    """After a write outside grad mode to ``t`` (a view or a base with views): poison its group's no_grad views."""
    root = t._base if t._base is not None else t
    if root._requires_grad and root._views:
        for ref in root._views:
            w = ref()
            if w is not None and w._view_flags:
                _poison(w)


def lazy_grad_fn(t):
    """``t.grad_fn`` as torch shows it: a view written to (in any mode) since its node was made gets a new one."""
    if t._base is not None and t._gf_version != t._vc[0] and t._view_fn is not None and t._base._requires_grad:
        if t._view_flags:
            raise RuntimeError(refusal(t, indirect=True))
        refresh(t)
    return t._grad_fn


def stale_no_grad_view(t) -> bool:
    return t._view_flags[:1] == ("no_grad",) and t._gf_version != t._vc[0] and t._base._requires_grad


def check_write(view, res):
    """torch's refusals of an in-place write through ``view`` whose result is ``res`` (grad mode on)."""
    root = view._base
    if view._view_flags and (res._grad_fn is not None or root._requires_grad):
        raise RuntimeError(refusal(view, indirect=False))
    if root._requires_grad and root._grad_fn is None:
        raise RuntimeError(VIEW_INPLACE)


def write_view(view, res):
    """Write ``res`` (the in-place op's result, computed out of place) through ``view`` and rewrite the root's
    history as torch does (``CopySlices``), then refresh every live view of the root."""
    check_write(view, res)
    root = view._base
    store(view, res._data)
    view._vc[0] += 1
    if res._grad_fn is None and not root._requires_grad:
        view._gf_version = view._vc[0]
        return view
    idx = index_map(view)
    root._grad_fn = _copy_slices(root, idx, res, apart(view._data))
    root._requires_grad = True
    if root._retains_grad or root._hooks:
        root._grad_fn._retained += (root,)
    refresh_group(root, view)
    return view


def _copy_slices(root, idx, res, distinct=False):
    """``CopySlices``: the root's old history outside the view, the in-place result inside it. ``distinct``: the
    view's elements are known to be distinct root elements (no search for repeated ones)."""
    mask = np.zeros(root._data.size, bool)
    mask[idx.reshape(-1)] = True
    mask = mask.reshape(root._data.shape)
    zero = np.zeros((), root._data.dtype)
    flat = idx.reshape(-1)
    edges = [gf.edge(root) if root._requires_grad else None, res._grad_fn]
    node = gf.node_class("CopySlices")(edges, _CopySlicesVjp(mask, zero, flat, idx.shape))
    # torch writes the view's gradient into an expanded one, and refuses
    if not distinct and np.unique(flat).size < flat.size:
        node._refuse = OVERLAP
    return node


class _CopySlicesVjp:
    """``CopySlices``' VJP: the cotangent outside the view to the old history, inside it to the result (slotted:
    a closure's cells would be five more objects per node for the cyclic collector to walk)."""

    __slots__ = ("mask", "zero", "flat", "shape")
    _SPEC = (("array", 0),)

    def __init__(self, mask, zero, flat, shape):
        self.mask, self.zero, self.flat, self.shape = mask, zero, flat, shape

    def __call__(self, ct):
        mask = self.mask
        if type(ct) is np.ndarray and ct.dtype is self.zero.dtype and ct.shape == mask.shape:
            # what the registry ops below compute (a selection and a gather: no arithmetic), without their dispatch
            return np.where(mask, self.zero, ct), ct.reshape(-1)[self.flat].reshape(self.shape)
        outside = ew.where(mask, self.zero, ct)
        inside = sh.reshape(sh.gather(sh.reshape(ct, (-1,)), [self.flat], self._SPEC), self.shape)
        return outside, inside


PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to tensor refer to a "
                   "single memory location. Please clone() the tensor before performing the operation.")


def check_operand(t, other):
    """torch refuses an in-place op on ``t`` reading ``other`` when both are dense blocks of memory that overlap other
    than exactly (same bounds and strides); where either is not dense, torch does not tell, and allows it."""
    if other._vc is not t._vc or other is t:  # tensors sharing memory share their version counter
        return
    if t._base is not None:
        check_overlap(t)  # torch reports the written tensor's own overlap first
    a, b = t._data, other._data
    if type(a) is not np.ndarray or type(b) is not np.ndarray or not a.size or not b.size:
        return
    bounds_a, bounds_b = _dense_bounds(a), _dense_bounds(b)
    if bounds_a is None or bounds_b is None:
        return
    if bounds_a == bounds_b and a.strides == b.strides:
        return
    if bounds_a[0] < bounds_b[1] and bounds_b[0] < bounds_a[1]:
        raise RuntimeError(PARTIAL_OVERLAP)


def _dense_bounds(a):
    """The byte range of ``a`` when its elements fill it exactly (torch's non-overlapping and dense), else None."""
    start = a.__array_interface__["data"][0]
    low = start + sum((n - 1) * st for n, st in zip(a.shape, a.strides) if st < 0)
    high = start + sum((n - 1) * st for n, st in zip(a.shape, a.strides) if st > 0) + a.itemsize
    if high - low != a.size * a.itemsize or any(st == 0 for n, st in zip(a.shape, a.strides) if n > 1):
        return None
    return low, high


def apart(data) -> bool:
    """Whether the elements of array ``data`` surely occupy distinct memory (False: they may share some).

    Axes taken by increasing stride, each stride must step past everything the axes before it span, the test of
    a non-overlapping strided layout. Elements in distinct memory are distinct elements of the root, so a view
    that passes has no repeated index in ``index_map`` (the exact but slower test, ``np.unique``, is for the rest).

    >>> import numpy as np
    >>> x = np.zeros((3, 4))
    >>> apart(x[::2, 1:]), apart(x.T), apart(np.broadcast_to(x[0], (2, 4)))
    (True, True, False)
    """
    if type(data) is not np.ndarray:
        return False
    span = data.itemsize
    for stride, n in sorted((abs(st), n) for st, n in zip(data.strides, data.shape) if n > 1):
        if stride < span:
            return False
        span = stride * (n - 1) + span
    return True


def check_repeats(idx):
    if np.unique(idx).size < idx.size:
        raise RuntimeError(OVERLAP)


def check_overlap(t):
    """torch refuses in-place writes to a tensor whose elements share memory (an ``expand``ed view)."""
    data = t._data
    if type(data) is np.ndarray and not data.flags.writeable and t._base is not None:
        idx = index_map(t)
        if np.unique(idx).size < idx.size:
            raise RuntimeError(OVERLAP)


def _lazy(t):
    return lazy_grad_fn(t)


Tensor._lazy_grad_fn = staticmethod(_lazy)
Tensor._stale_no_grad_view = staticmethod(stale_no_grad_view)
