"""``np.delete``, ``np.insert``, ``np.roll``, ``np.take`` and windows ``x[j:j + k]`` at positions that are traced
(a loop's counter, an integer argument, a value computed from them).

The result's shape never depends on a traced position (one position deleted or inserted, a
shift), so each is one ``gather`` whose indices are index arithmetic on the traced position:
the derivative is the gather's (exact), the emitted code reads as ``a[:, idx]``. A position out
of range raises NumPy's ``IndexError`` when the compiled code runs (a ``check_raise``, see
``gradc.ops.checks``), never wraps silently. Several traced positions for ``np.delete`` or
``np.insert`` are refused: how many are distinct, and so the result's length, is known only
when the code runs.

>>> from gradc.trace import trace
>>> g = trace(lambda a, j: np.delete(a, j[0], axis=0), np.ones(4), np.array([1]))
>>> [e.op for e in g.eqns][-1]
'gather'
"""
from __future__ import annotations

import numpy as np

from gradc.errors import StaticValueNeeded, TraceError, user_location
from gradc.ir.atoms import Const
from gradc.ir.builder import Traced
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops import special_numpy as sf
from gradc.ops.values import aval, lift, normalize_axes
from gradc.trace import checks, numpy_dispatch
from gradc.trace.numpy_dispatch import TracedSliceBound

_FULL = sh.slice_item(None, None, None)


def is_traced_position(obj) -> bool:
    """Whether ``obj`` (a position argument) is traced."""
    return isinstance(obj, Traced)


def _along(axis, ndim, item):
    return (_FULL,) * axis + (item,) + (_FULL,) * (ndim - axis - 1)


def _take_at(a, axis, idx):
    return sh.gather(a, [idx], _along(axis, aval(a).ndim, ("array", 0)))


def _static_length(n, what):
    if not isinstance(n, int):
        raise StaticValueNeeded(f"{what} at a traced position along an axis of named size {n}",
                                hint="compile for a fixed size along that axis, or pass the position as a Python int")
    return n


def _one_position(obj, what):
    """The traced position ``obj`` as an ``i64[]``: a traced integer scalar or an array of one element."""
    t = aval(obj)
    if t.dtype == "bool":
        raise TraceError(f"{what} with a traced boolean mask: the result's length depends on the values",
                         hint="use a NumPy mask, or np.where(mask, x, 0) to keep the shape")
    if t.dtype not in ("i64", "i32"):
        raise TraceError(f"{what}'s positions must be integers, not {t.dtype}",
                         hint="convert them with np.int64(...) or .astype(np.int64)")
    if t.size != 1:
        raise TraceError(f"{what} at {t.size} traced positions: how many are distinct, and so the result's length, "
                         "is known only when the code runs", hint="delete or insert one traced position at a time, "
                         "or pass the positions as a NumPy array")
    return ew.astype(sh.reshape(obj, ()) if t.shape else obj, "i64")


def check_in_range(failed, message: str) -> None:
    """Record a run-time check raising ``IndexError(message)`` when the traced ``failed`` (``bool[]``) holds."""
    builder = checks._builder(failed)
    checks.record(builder, checks._atom_in(builder, failed),
                  {"exception": "IndexError", "args": (message,), "where": user_location()})


def _normalized(p, n, upper_inclusive, what, axis):
    """``p`` in ``[0, n]`` (or ``[0, n)``) with negative positions counted from the end; out of range: a check."""
    past = ew.greater(p, np.int64(n)) if upper_inclusive else ew.greater_equal(p, np.int64(n))
    out = ew.logical_or(ew.less(p, np.int64(-n)), past)
    check_in_range(out, f"{what}: a position is out of bounds for axis {axis} with size {n}")
    return ew.where(ew.less(p, np.int64(0)), ew.add(p, np.int64(n)), p)


def delete(arr, obj, axis=None):
    """``np.delete(arr, obj, axis)`` for one traced position ``obj``: ``arr`` read at ``k + (k >= obj)``."""
    if axis is None:
        arr, axis = sh.reshape(arr, (aval(arr).size,)), 0
    t = aval(arr)
    axis = normalize_axes(axis, t.ndim)[0]
    n = _static_length(t.shape[axis], "np.delete")
    p = _normalized(_one_position(obj, "np.delete"), n, False, "np.delete", axis)
    k = lift(np.arange(max(n - 1, 0), dtype=np.int64), p)
    return _take_at(arr, axis, ew.add(k, ew.astype(ew.greater_equal(k, p), "i64")))


def insert(arr, obj, values, axis=None):
    """``np.insert(arr, obj, values, axis)`` for one traced position ``obj``: the arrangement NumPy makes at
    position 0 (which fixes how ``values`` broadcast), rotated to ``obj`` by one gather."""
    if not isinstance(arr, Traced):
        arr = lift(np.asarray(arr), obj)
    if axis is None:
        arr, axis = sh.reshape(arr, (aval(arr).size,)), 0
    t = aval(arr)
    axis = normalize_axes(axis, t.ndim)[0]
    n = _static_length(t.shape[axis], "np.insert")
    if not all(isinstance(d, int) for d in t.shape):
        raise StaticValueNeeded("np.insert at a traced position into an array of named shape",
                                hint="compile for a fixed shape")
    values = values if isinstance(values, Traced) else np.asarray(values)
    values = ew.astype(values, t.dtype) if isinstance(values, Traced) else values.astype(t.np_dtype)
    vt = aval(values)
    labels = np.arange(t.size, dtype=np.int64).reshape(t.shape)
    value_labels = np.arange(t.size, t.size + vt.size, dtype=np.int64).reshape(vt.shape)
    at_zero = np.zeros(aval(obj).shape, dtype=np.int64) if aval(obj).shape else 0
    arranged = np.insert(labels, at_zero, value_labels, axis=axis)  # the values first, then arr's slices in order
    k = arranged.shape[axis] - n
    flat = sh.concatenate([sh.reshape(arr, (t.size,)), ew.astype(sh.reshape(lift(values, obj) if not isinstance(
        values, Traced) else values, (vt.size,)), t.dtype)], 0)
    block = sh.gather(flat, [arranged], (("array", 0),))
    p = _normalized(_one_position(obj, "np.insert"), n, True, "np.insert", axis)
    q = lift(np.arange(n + k, dtype=np.int64), p)
    before, within = ew.less(q, p), ew.less(q, ew.add(p, np.int64(k)))
    source = ew.where(before, ew.add(q, np.int64(k)), ew.where(within, ew.sub(q, p), q))
    return _take_at(block, axis, source)


def roll(a, shift, axis=None):
    """``np.roll(a, shift, axis)`` with a traced shift: ``a`` read at ``(k - shift) mod n`` along each axis."""
    if axis is None:
        return sh.reshape(roll(sh.reshape(a, (aval(a).size,)), shift, 0), aval(a).shape)
    t = aval(a)
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    st = aval(shift)
    if st.dtype not in ("i64", "i32") or st.ndim > 1 or (st.ndim == 1 and st.shape[0] not in (1, len(axes))):
        raise TraceError(f"np.roll by a traced shift of {st}: one integer, or one per axis",
                         hint="pass an integer shift (np.int64(...)), one per axis")
    shift = ew.astype(shift, "i64")
    for i, ax in enumerate(axes):
        ax = normalize_axes(ax, t.ndim)[0]
        n = _static_length(t.shape[ax], "np.roll")
        if n == 0:
            continue
        s = shift if st.ndim == 0 else shift[i if st.shape[0] > 1 else 0]
        k = lift(np.arange(n, dtype=np.int64), s)
        a = _take_at(a, ax, sf.mod(ew.sub(k, s), np.int64(n)))
    return a


def take(a, indices, axis, mode):
    """``np.take`` at traced indices along ``axis`` (already normalized): ``mode='raise'`` checks the range when
    the code runs, ``'wrap'`` and ``'clip'`` are index arithmetic."""
    n = aval(a).shape[axis]
    it = aval(indices)
    if it.dtype not in ("i64", "i32"):
        raise TraceError(f"np.take's indices must be integers, not {it.dtype}",
                         hint="convert them with .astype(np.int64)")
    if mode not in ("raise", "wrap", "clip"):
        raise TraceError(f"np.take: mode={mode!r}", hint="use mode='raise', 'wrap' or 'clip'")
    if mode != "raise":
        n = _static_length(n, f"np.take with mode={mode!r}")
        indices = ew.astype(indices, "i64")
        if n == 0:
            raise TraceError("np.take: cannot take from an empty axis", hint="take from a non-empty axis")
        indices = sf.mod(indices, np.int64(n)) if mode == "wrap" else \
            ew.minimum(ew.maximum(indices, np.int64(0)), np.int64(n - 1))
    elif isinstance(n, int):
        bad = ew.logical_or(ew.less(indices, np.int64(-n)), ew.greater_equal(indices, np.int64(n)))
        if it.ndim:
            from gradc.ops import reduce as red
            bad = ew.greater(red.sum_(ew.astype(bad, "i64"), None, False), np.int64(0))
        check_in_range(bad, f"np.take: an index is out of bounds for axis {axis} with size {n}")
    return _take_at(a, axis, indices)


# ---------------------------------------------------------------- x[j:j + k]: a window at a traced start
def _affine(v):
    """``(base, offset)`` with ``v == base + offset``: ``v`` unfolded through additions and subtractions of
    constants (``j + 3``, ``j - 1 + 2``), ``base`` an atom (or None for a Python int)."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return None, int(v)
    if not isinstance(v, Traced):
        return None, None
    atom, offset = v.atom, 0
    eqns = {id(e.out): e for e in v.builder.eqns}
    while id(atom) in eqns:
        e = eqns[id(atom)]
        consts = [a for a in e.inputs if isinstance(a, Const) and a.value.shape == () and a.value.dtype.kind in "iu"]
        others = [a for a in e.inputs if not (isinstance(a, Const) and a in consts)]
        if e.op not in ("add", "sub") or len(consts) != 1 or len(others) != 1:
            break
        c = int(consts[0].value)
        if e.op == "sub" and e.inputs[1] is not consts[0]:
            break  # c - j: not j plus a constant
        offset += -c if e.op == "sub" else c
        atom = others[0]
    return atom, offset


def _same_value(builder, a, b, depth=4) -> bool:
    """Whether atoms ``a`` and ``b`` are the same value: one atom, equal constants, or the same op of the same
    values (``ks[0]`` read twice)."""
    if a is b:
        return True
    if isinstance(a, Const) and isinstance(b, Const):
        return a.value.shape == b.value.shape and a.value.dtype == b.value.dtype and bool(np.all(a.value == b.value))
    if depth == 0 or a is None or b is None:
        return False
    eqns = {id(e.out): e for e in builder.eqns}
    ea, eb = eqns.get(id(a)), eqns.get(id(b))
    if ea is None or eb is None or ea.op != eb.op or repr(ea.params) != repr(eb.params) or \
            len(ea.inputs) != len(eb.inputs):
        return False
    return all(_same_value(builder, x, y, depth - 1) for x, y in zip(ea.inputs, eb.inputs))


def window(item, n: int, axis: int):
    """The indices of ``x[start:stop]`` along an axis of length ``n`` when a bound is traced and ``stop - start``
    is a known constant (``x[j:j + 3]``): ``start + arange(length)``, with a check, when the code runs, that the
    window lies inside the axis (NumPy would return a shorter slice there; gradc's has a fixed length)."""
    if item.step not in (None, 1):
        raise TracedSliceBound("a slice with a traced bound and a step", hint="slice with step 1, or index with "
                               "start + step * np.arange(k)")
    start_value = item.start if item.start is not None else 0
    (base_lo, lo), (base_hi, hi) = _affine(start_value), _affine(item.stop)
    builder = next(v.builder for v in (item.start, item.stop) if isinstance(v, Traced))
    if item.stop is None or lo is None or hi is None or not _same_value(builder, base_lo, base_hi):
        raise TracedSliceBound("a slice bound depends on a traced value and the slice's length is not a constant "
                               "(x[:i], x[i:] with a traced i)",
                               hint="slice a fixed length, x[i:i + k]; or mask: np.where(np.arange(len(x)) < i, x, 0)")
    length = hi - lo
    if length < 0 or not isinstance(n, int):
        raise TracedSliceBound(f"a slice of traced start and length {length} along an axis of size {n}",
                               hint="slice a fixed, non-negative length of an axis of known size")
    start = item.start if isinstance(item.start, Traced) else item.stop - length
    start = ew.astype(start, "i64")
    negative = ew.less(start, np.int64(0))
    # x[-2:0] is empty in NumPy (the stop is not counted from the end): a window across 0 is refused at run time
    across = ew.logical_and(negative, ew.greater_equal(start, np.int64(-length))) if length else negative
    start = ew.where(negative, ew.add(start, np.int64(n)), start)  # x[-3:-1]: counted from the end, as NumPy
    outside = ew.logical_or(ew.logical_or(ew.less(start, np.int64(0)), ew.greater(start, np.int64(n - length))),
                            across)
    check_in_range(outside, f"a slice of length {length} at a traced start runs past axis {axis} of "
                                              f"size {n} (NumPy would return fewer elements)")
    return ew.add(start, lift(np.arange(length, dtype=np.int64), start))


numpy_dispatch.WINDOW.append(window)

__all__ = ["check_in_range", "delete", "insert", "is_traced_position", "roll", "take", "window"]
