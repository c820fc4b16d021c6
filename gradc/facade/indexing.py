"""Indexing of facade Tensors in torch's order: ``t[key]`` and ``t[key] = v``.

torch applies a key's integers, slices, ``None`` and ``...`` first, as views (``select``,
``slice``, ``unsqueeze``), then its index tensors (integer lists or arrays, boolean masks) to
that view: ``index`` to read (``IndexBackward0``), ``index_put_`` to write
(``IndexPutBackward0``; a repeated index keeps the last write, and the written values'
gradient is the cotangent at every listed position, repeats included). A write through a
non-trivial basic part is an in-place op on a view (``CopySlices`` on the base).

>>> import gradc.torch as torch
>>> y = torch.tensor([1., 2.]); y[[0, 0, 1]] += torch.tensor([1., 2., 3.]); y
tensor([3., 5.])
"""
from __future__ import annotations

import warnings

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.facade import dtypes, fast_ops, grad_mode, views
from gradc.facade import grad_fn as gf
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.ir.types import dtype_name

_FULL = ("slice", None, None, None)


def _is_index_array(k) -> bool:
    if isinstance(k, Tensor):
        return k.dim() > 0 or k.dtype.kind == 0  # a 0-d integer tensor indexes like an int
    return isinstance(k, (list, np.ndarray)) and not (isinstance(k, np.ndarray) and k.ndim == 0 and k.dtype != bool)


def split_key(t, key):
    """``(spec, arrays)``: the basic part as an index spec over every axis of ``t``, and the index arrays as
    ``(axis of the basic view, int64 array)`` pairs (a boolean mask gives one array per axis it covers)."""
    if not isinstance(key, tuple):
        key = (key,)
    consumed = 0
    for k in key:
        if k is None or k is Ellipsis:
            continue
        consumed += _mask_ndim(k) if _is_index_array(k) else 1
    if consumed > t.dim():
        raise IndexError(f"too many indices for tensor of dimension {t.dim()}")
    spec, arrays, axis, dim = [], [], 0, 0  # axis: of t; dim: of the basic view
    for k in key:
        if k is Ellipsis:
            for _ in range(t.dim() - consumed):
                spec.append(_FULL)
                axis, dim = axis + 1, dim + 1
        elif k is None:
            spec.append(("new",))
            dim += 1
        elif isinstance(k, slice):
            spec.append(("slice", k.start, k.stop, k.step))
            axis, dim = axis + 1, dim + 1
        elif _is_index_array(k):
            arr = np.asarray(k._data if isinstance(k, Tensor) else k)
            if arr.dtype == np.uint8 and isinstance(k, Tensor):  # torch still reads a byte tensor as a mask
                warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool "
                              "instead.", UserWarning, stacklevel=3)
                arr = arr.astype(bool)
            if arr.dtype == bool:
                _check_mask(t, arr, axis)
                for a in np.nonzero(arr):
                    arrays.append((dim, a.astype(np.int64)))
                    spec.append(_FULL)
                    axis, dim = axis + 1, dim + 1
            else:
                if (arr.size and arr.dtype.kind not in "iu") or arr.dtype in (np.int8, np.int16, np.uint8):
                    raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
                arr = arr.astype(np.int64)
                size = t.shape[axis]
                bad = arr[(arr >= size) | (arr < -size)]
                if bad.size:
                    raise IndexError(f"index {int(bad.flat[0])} is out of bounds for dimension {axis} with size {size}")
                arrays.append((dim, arr % max(size, 1)))
                spec.append(_FULL)
                axis, dim = axis + 1, dim + 1
        else:
            size = t.shape[axis]
            i = int(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {axis} with size {size}")
            spec.append(("int", i % size))
            axis += 1
    spec += [_FULL] * (t.dim() - axis)
    return tuple(spec), arrays


def _mask_ndim(k):
    arr = k._data if isinstance(k, Tensor) else np.asarray(k)
    return arr.ndim if arr.dtype == bool else 1


def _check_mask(t, mask, axis):
    for i, n in enumerate(mask.shape):
        if t.shape[axis + i] != n:
            raise IndexError(f"The shape of the mask [{', '.join(map(str, mask.shape))}] at index {i} does not match "
                             f"the shape of the indexed tensor [{', '.join(map(str, t.shape))}] at index {axis + i}")


def _node_name(t, key):
    """torch's node of ``t[key]``: the last view op applied, in key order; in a tuple key a slice covering its
    whole dim is skipped (nothing applied: an alias)."""
    items = key if isinstance(key, tuple) else (key,)
    skip_full = isinstance(key, tuple)
    consumed = sum(_mask_ndim(k) if _is_index_array(k) else 1 for k in items if k is not None and k is not Ellipsis)
    name, axis = "AliasBackward0", 0
    for k in items:
        if k is None:
            name = "UnsqueezeBackward0"
        elif k is Ellipsis:
            axis += t.dim() - consumed
        elif _is_index_array(k):
            axis += _mask_ndim(k)
        elif isinstance(k, slice):
            size = t.shape[axis]
            if not (skip_full and _whole(k, size)):
                name = "SliceBackward0"
            axis += 1
        else:
            name = "SelectBackward0"
            axis += 1
    return name


def basic_view(t, spec, name="SliceBackward0"):
    """``t[spec]`` as a view of ``t`` (a NumPy view even where NumPy would give a scalar)."""
    fn = _index_fn(spec)
    out = fast_ops.basic_view(t, spec, name, fn)
    if out is not None:
        return out
    out = record(name, fn, [t])
    data = t._data
    if type(data) is np.ndarray and not views.shares_storage(out._data, data):
        out._data = data[sh.spec_to_numpy(spec) + (Ellipsis,)]  # an all-int key: a 0-d view, not a copy
    if type(data) is np.ndarray:
        views.mark(out, t, fn, name)
    return out


_INDEX_FNS: dict = {}  # spec -> its view function, shared (a closure per view is three objects per graph node)


_PLAIN_ITEMS = frozenset({str, int, type(None)})


def _index_fn(spec):
    for item in spec:
        for v in item:
            if type(v) not in _PLAIN_ITEMS:  # a slice bound given as a tensor or NumPy number: a function of its own
                return lambda x: sh.index(x, spec)
    fn = _INDEX_FNS.get(spec)
    if fn is None:
        if len(_INDEX_FNS) > 4096:
            _INDEX_FNS.clear()
        fn = _INDEX_FNS[spec] = lambda x: sh.index(x, spec)
    return fn


def _whole(k, size):
    """torch's test of a slice that indexes nothing: step 1 over the whole axis."""
    return k.step in (None, 1) and range(size)[k] == range(size)


def _trivial(t, spec):
    """Whether every item of ``spec`` is a slice over its whole axis (torch then indexes nothing)."""
    for item, size in zip(spec, t.shape):
        if item[0] != "slice" or not _whole(slice(*item[1:]), size):
            return False
    return len(spec) == t.dim()


def _advanced(view, arrays):
    """The gather spec over ``view``'s axes and the index arrays (``("array", k)`` at each indexed axis)."""
    spec, k = [_FULL] * np.ndim(view._data if isinstance(view, Tensor) else view), 0
    for dim, _ in arrays:
        spec[dim] = ("array", k)
        k += 1
    return tuple(spec), [a for _, a in arrays]


def _view_steps(t, key):
    """torch's views for the basic part of ``key``, one per item in key order: ``(dim, item, node name)``,
    ``dim`` an axis of the view so far (a tuple key skips slices over a whole axis)."""
    items = key if isinstance(key, tuple) else (key,)
    skip_full = isinstance(key, tuple)
    consumed = sum(_mask_ndim(k) if _is_index_array(k) else 1 for k in items if k is not None and k is not Ellipsis)
    steps, axis, dim = [], 0, 0  # axis: of t; dim: of the view after the steps so far
    for k in items:
        if k is None:
            steps.append((dim, ("new",), "UnsqueezeBackward0"))
            dim += 1
        elif k is Ellipsis:
            axis, dim = axis + t.dim() - consumed, dim + t.dim() - consumed
        elif _is_index_array(k):
            axis, dim = axis + _mask_ndim(k), dim + _mask_ndim(k)
        elif isinstance(k, slice):
            if not (skip_full and _whole(k, t.shape[axis])):
                steps.append((dim, ("slice", k.start, k.stop, k.step), "SliceBackward0"))
            axis, dim = axis + 1, dim + 1
        else:
            steps.append((dim, ("int", int(k) % t.shape[axis]), "SelectBackward0"))
            axis += 1
    return steps


def _simple_key(t, key):
    """``(spec, node name)`` of ``t[i]`` (an int) or ``t[a:b:c]`` (a slice): what ``split_key`` and
    ``_node_name`` give for these keys, without their general loops (the common case: ``w[i]``, iteration)."""
    shape = t._data.shape
    rest = (_FULL,) * (len(shape) - 1)
    if type(key) is slice:
        return (("slice", key.start, key.stop, key.step),) + rest, "SliceBackward0"
    size = shape[0]
    if not -size <= key < size:
        raise IndexError(f"index {key} is out of bounds for dimension 0 with size {size}")
    return (("int", key % size),) + rest, "SelectBackward0"


# ``t[i]`` / ``t[a:b:c]`` by (key, axis-0 size, ndim): the spec, node name, view function and NumPy key, made
# once (the view function is then one shared object, not a new closure per view: fewer objects per graph node)
_SIMPLE_VIEWS: dict = {}


def _simple_view(t, key, data):
    if type(key) is int:
        cache_key = (key, data.shape[0], data.ndim)
    elif all(v is None or type(v) is int for v in (key.start, key.stop, key.step)):
        cache_key = (key.start, key.stop, key.step, data.ndim)
    else:
        return basic_view(t, *_simple_key(t, key))
    hit = _SIMPLE_VIEWS.get(cache_key)
    if hit is None:
        spec, name = _simple_key(t, key)  # raises torch's IndexError for an int out of bounds (not cached)
        if len(_SIMPLE_VIEWS) > 4096:
            _SIMPLE_VIEWS.clear()
        hit = _SIMPLE_VIEWS[cache_key] = (spec, name, _index_fn(spec), sh.spec_to_numpy(spec) + (Ellipsis,))
    spec, name, fn, np_key = hit
    out = fast_ops.basic_view(t, spec, name, fn, np_key)
    if out is not None:
        return out
    return basic_view(t, spec, name)


def unbound(t, i):
    """Output ``i`` of ``t.unbind(0)`` (0 <= i < len(t)): ``t[i]`` recorded as ``UnbindBackward0``."""
    data = t._data
    cache_key = ("unbind", i, data.ndim)
    hit = _SIMPLE_VIEWS.get(cache_key)
    if hit is None:
        spec = (("int", i),) + (_FULL,) * (data.ndim - 1)
        if len(_SIMPLE_VIEWS) > 4096:
            _SIMPLE_VIEWS.clear()
        hit = _SIMPLE_VIEWS[cache_key] = (spec, _index_fn(spec), sh.spec_to_numpy(spec) + (Ellipsis,))
    spec, fn, np_key = hit
    out = fast_ops.basic_view(t, spec, "UnbindBackward0", fn, np_key)
    if out is not None:
        return out
    return basic_view(t, spec, "UnbindBackward0")


def getitem(t, key):
    data = t._data
    if (type(key) is int or type(key) is slice) and type(data) is np.ndarray and data.ndim:
        return _simple_view(t, key, data)
    spec, arrays = split_key(t, key)
    steps = _view_steps(t, key) if grad_mode._STATE["enabled"] and t._requires_grad else ()
    if len(steps) > 1:  # torch's chain of views (``x[0, :3]`` is SliceBackward0 over SelectBackward0)
        view = t
        for dim, item, name in steps:
            rest = view.dim() - dim - (item[0] != "new")
            view = basic_view(view, (_FULL,) * dim + (item,) + (_FULL,) * rest, name)
    else:
        view = basic_view(t, spec, _node_name(t, key)) if not (arrays and _trivial(t, spec)) else t
    if not arrays:
        return view
    gspec, arrs = _advanced(view, arrays)
    return record("IndexBackward0", lambda x: sh.gather(x, arrs, gspec), [view])


def setitem(t, key, value):
    spec, arrays = split_key(t, key)
    if not isinstance(value, Tensor):
        value = np.asarray(value) if not isinstance(value, (bool, int, float)) else value
        dtypes.refuse_complex_into_real(t._data.dtype, value)
    elif arrays and (value._data.dtype.kind == "c") != (t._data.dtype.kind == "c"):
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{t.dtype.legacy[:-6]} for the destination and {value.dtype.legacy[:-6]} for the source.")
    plain = not (grad_mode._STATE["enabled"] and (t._requires_grad or t._base is not None
                                                  or getattr(value, "requires_grad", False)))
    if plain and type(t._data) is not np.ndarray:  # torch.compile tracing: the traced value takes the write
        t._data[key] = value._data if isinstance(value, Tensor) else value
        t._bump()
        return
    if plain:  # no graph to change: write the storage (torch's key order)
        target = t._data[sh.spec_to_numpy(spec) + (Ellipsis,)]
        gspec, arrs = ((), []) if not arrays else _advanced(target, arrays)
        v = value._data if isinstance(value, Tensor) else value
        if not arrays and not target.flags.writeable and t._base is not None:
            # torch's fill_/copy_ refuse an expanded target; its index_put_ does not
            views.check_repeats(views.index_map(t)[sh.spec_to_numpy(spec) + (Ellipsis,)])
        if target.flags.writeable:
            target[sh.spec_to_numpy(gspec, arrs) if arrays else Ellipsis] = v
        else:  # an expanded view: write its root's elements (the last write to a location wins)
            new = t._data.copy()
            new[sh.spec_to_numpy(spec) + (Ellipsis,)][sh.spec_to_numpy(gspec, arrs) if arrays else Ellipsis] = v
            views.store(t, new)
        t._bump()
        if t._views or t._base is not None:
            views.after_write(t)
        return
    target = t if _trivial(t, spec) else basic_view(t, spec, _node_name(t, key))
    if not arrays:
        if isinstance(value, Tensor) or key == ():  # torch copies a number for ``t[()] = v``
            target.copy_(value if isinstance(value, Tensor) else Tensor._wrap(np.asarray(value, t._data.dtype)))
        else:
            target._fill(value, "FillBackward3")
        return
    gspec, arrs = _advanced(target, arrays)
    target._inplace(lambda s: index_put(s, gspec, arrs, value), overlap_ok=True)


def index_put(s, spec, arrays, value):
    """``s.index_put(indices, value)`` out of place, with torch's gradients (see the module docstring)."""
    key = sh.spec_to_numpy(spec, arrays)
    dtype = s._data.dtype
    data = s._data.copy()
    v = value._data if isinstance(value, Tensor) else np.asarray(value)
    if not isinstance(value, Tensor):
        dtypes.refuse_complex_into_real(dtype, v)
    elif v.dtype.kind == "c" and dtype.kind != "c":
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{s.dtype.legacy[:-6]} for the destination and {value.dtype.legacy[:-6]} for the source.")
    selected = data[key].shape
    data[key] = v.astype(dtype, copy=False)
    out = Tensor._wrap(data)
    track = grad_mode._STATE["enabled"] and (s._requires_grad or getattr(value, "requires_grad", False))
    if not track:
        return out
    mask = np.zeros(data.shape, bool)
    mask[key] = True
    zero = np.zeros((), dtype)
    vshape = v.shape
    vkey = dtype_name(v.dtype) if isinstance(value, Tensor) else None

    def vjp(ct):
        rest = ew.where(mask, zero, ct)
        if vkey is None:
            return rest, None
        got = sh.sum_to(sh.gather(ct, arrays, spec), vshape) if vshape != selected else sh.gather(ct, arrays, spec)
        return rest, ew.astype(got, vkey)
    edges = [gf.edge(s), gf.edge(value) if isinstance(value, Tensor) else None]
    out._grad_fn = gf.node_class("IndexPutBackward0")(edges, vjp)
    out._requires_grad = True
    return out
