"""Indexing of facade Tensors: ``t[key]`` (Select/Slice/Unsqueeze/Index nodes) and ``t[key] = v``."""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.facade import grad_mode
from gradc.facade.record import record, tracking
from gradc.facade.tensor import Tensor
from gradc.ir.types import dtype_name


def _basic_spec(t, key):
    """An index spec covering every axis, or None for advanced (array) keys."""
    if not isinstance(key, tuple):
        key = (key,)
    if any(isinstance(k, (list, np.ndarray, Tensor)) for k in key):
        return None, None
    used = sum(1 for k in key if k is not None and k is not Ellipsis)
    spec, axis, kinds = [], 0, set()
    for k in key:
        if k is Ellipsis:
            for _ in range(t.dim() - used):
                spec.append(("slice", None, None, None))
                axis += 1
        elif k is None:
            spec.append(("new",))
            kinds.add("new")
        elif isinstance(k, slice):
            spec.append(("slice", k.start, k.stop, k.step))
            axis += 1
            kinds.add("slice")
        else:
            size = t.shape[axis]
            i = int(k)
            if not -size <= i < size:
                raise IndexError(f"index {i} is out of bounds for dimension {axis} with size {size}")
            spec.append(("int", i % size))
            axis += 1
            kinds.add("int")
    spec += [("slice", None, None, None)] * (t.dim() - axis)
    name = "SelectBackward0" if "int" in kinds else ("SliceBackward0" if "slice" in kinds else "UnsqueezeBackward0")
    if kinds == {"new"} or kinds == {"new", "slice"} and all(
            s[0] == "new" or s[1:] == (None, None, None) for s in spec):
        name = "UnsqueezeBackward0"
    return tuple(spec), name


def _arrays(t, key):
    if not isinstance(key, tuple):
        key = (key,)
    arrays = []
    for k in key:
        k = k._data if isinstance(k, Tensor) else np.asarray(k)
        if k.dtype == bool:
            arrays.extend(np.nonzero(k))
        else:
            arrays.append(k.astype(np.int64))
    return arrays


def getitem(t, key):
    spec, name = _basic_spec(t, key)
    if spec is not None:
        out = record(name, lambda x: sh.index(x, spec), [t])
        out._base = t if t._base is None else t._base
        out._view_of = (t, key)
        out._vc = t._vc
        return out
    arrays = _arrays(t, key)
    spec = tuple(("array", k) for k in range(len(arrays)))
    return record("IndexBackward0", lambda x: sh.gather(x, arrays, spec), [t])


def setitem(t, key, value):
    base = t._base if t._base is not None else t
    if grad_mode.is_grad_enabled() and base.requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
    v = value._data if isinstance(value, Tensor) else value
    if not tracking([t, value]):
        t._data[key] = v
        t._bump()
        return
    spec, _ = _basic_spec(t, key)
    mask = np.zeros(t.shape, bool)
    mask[key] = True
    selected = np.zeros(t.shape)[key].shape

    def fn(old, new):
        if not isinstance(new, (bool, int, float)):
            new = ew.astype(new, old.aval.dtype if hasattr(old, "aval") else _key(old))
            new = sh.broadcast_to(new, selected)
            placed = sh.index_grad(new, spec, t.shape)
        else:
            placed = np.full(t.shape, new, t._data.dtype)
        return ew.where(mask, placed, old)
    t._inplace(lambda s: record("CopySlices", fn, [s, value if isinstance(value, Tensor) else v]))


def _key(arr):
    return dtype_name(np.asarray(arr).dtype)
