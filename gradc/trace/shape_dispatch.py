"""What NumPy's shape and indexing functions mean on traced values (tables merged into ``numpy_dispatch``).

Every entry is a composition of the ops of ``gradc.ops.shape`` (index, gather,
concatenate, reshape, broadcast_to, transpose), so the emitted NumPy reads as the
slices and concatenations one would write by hand, the C target has them, and the
VJPs are those ops' tested rules. Rearrangements NumPy defines element by element
(``np.insert``, ``np.delete``, ``sliding_window_view``, the non-constant ``np.pad``
modes) are one ``gather`` with static indices: NumPy's own function applied to the
element numbers gives them, so the result matches NumPy exactly.

>>> from gradc.trace import trace
>>> print(trace(lambda x: np.flip(x), np.ones(3)))
def lambda_(x: f64[3]) -> f64[3]:
  t0: f64[3] = index x spec=(::-1,)
  return t0
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, StaticValueNeeded, TraceError
from gradc.ir.builder import Traced
from gradc.ops import elementwise as ew
from gradc.ops import linalg_decomp as decomp
from gradc.ops import shape as sh
from gradc.ops.values import aval, first_traced, lift, normalize_axes
from gradc.trace import array_routing, linalg_dispatch
from gradc.trace import position_dispatch as positions
from gradc.trace.numpy_dispatch import _concatenate, _like

_FULL = sh.slice_item(None, None, None)


def _operand(x):
    return x if isinstance(x, Traced) else np.asarray(x)


def _static(value, what):
    if isinstance(value, Traced) or (isinstance(value, (list, tuple)) and first_traced(value) is not None):
        raise StaticValueNeeded(f"{what} must be known at trace time, not a traced value",
                         hint="pass NumPy integers or Python ints")
    return value


def _ravel(a):
    return sh.reshape(a, (aval(a).size,))


def _along(axis, ndim, item):
    """An index spec with ``item`` at ``axis`` and full slices elsewhere."""
    return (_FULL,) * axis + (item,) + (_FULL,) * (ndim - axis - 1)


def _slice(a, axis, start, stop):
    return sh.index(a, _along(axis, aval(a).ndim, sh.slice_item(start, stop, None)))


def _take_static(a, axis, rows):
    """``a`` read at the static integer array ``rows`` along ``axis`` (rows' axes replace that axis)."""
    return sh.gather(a, [np.asarray(rows, dtype=np.int64)], _along(axis, aval(a).ndim, ("array", 0)))


def _by_labels(arrays, arrange):
    """NumPy's rearrangement ``arrange`` applied to the element numbers of ``arrays`` (flattened and joined),
    then read from their values: exact NumPy semantics for any static rearrangement."""
    arrays = [_operand(a) for a in arrays]
    labels, start = [], 0
    for a in arrays:
        t = aval(a)
        labels.append(np.arange(start, start + t.size, dtype=np.int64).reshape(t.shape))
        start += t.size
    picked = np.asarray(arrange(*labels))
    flat = _concatenate([_ravel(a) for a in arrays], 0)
    return sh.gather(flat, [picked], (("array", 0),))


# ---------------------------------------------------------------- reordering
def _flip(m, axis=None):
    t = aval(m)
    axes = normalize_axes(axis, t.ndim)
    return sh.index(m, tuple(sh.slice_item(None, None, -1) if i in axes else _FULL for i in range(t.ndim)))


def _roll(a, shift, axis=None):
    a = _operand(a)
    if positions.is_traced_position(shift):
        return positions.roll(a, shift, axis)
    if axis is None:
        return sh.reshape(_roll(_ravel(a), shift, 0), aval(a).shape)
    shifts = np.broadcast_arrays(np.asarray(_static(shift, "np.roll's shift")), np.asarray(axis))
    t = aval(a)
    total = {}
    for s, ax in zip(shifts[0].reshape(-1).tolist(), shifts[1].reshape(-1).tolist()):
        ax = normalize_axes(ax, t.ndim)[0]
        total[ax] = total.get(ax, 0) + s
    for ax in sorted(total):
        if not isinstance(t.shape[ax], int):  # a named size n: the shift modulo n is known only when it runs
            if abs(total[ax]) > 1:
                raise StaticValueNeeded(f"np.roll by {total[ax]} along an axis of named size {t.shape[ax]}: the "
                                        "shift modulo the size is known only when the code runs",
                                        hint="roll by 1 or -1 (repeat it), or compile for a fixed size")
            s = total[ax]  # x[-1:] and x[:-1] (or x[1:], x[:1]) are right for every size >= 1
            if s:
                a = sh.concatenate([_slice(a, ax, -s, None), _slice(a, ax, None, -s)], ax)
            continue
        s = total[ax] % t.shape[ax] if t.shape[ax] else 0
        if s:
            a = sh.concatenate([_slice(a, ax, -s, None), _slice(a, ax, None, -s)], ax)
    return a


def _rollaxis(a, axis, start=0):
    nd = aval(a).ndim
    axis, start = normalize_axes(axis, nd)[0], int(start)
    start += nd if start < 0 else 0
    if not 0 <= start <= nd:
        raise ShapeError(f"np.rollaxis: start={start} is out of range for {nd} dimensions",
                         hint="start lies in [-ndim, ndim]")
    order = [i for i in range(nd) if i != axis]
    order.insert(start - (1 if axis < start else 0), axis)
    return sh.transpose(a, order)


# ---------------------------------------------------------------- repetition and padding
def _tile(A, reps):
    A = _operand(A)
    reps = tuple(int(r) for r in np.atleast_1d(_static(reps, "np.tile's reps")))
    t = aval(A)
    d = max(t.ndim, len(reps))
    shape = (1,) * (d - t.ndim) + t.shape
    reps = (1,) * (d - len(reps)) + reps
    interleaved = sum(((1, s) for s in shape), ())
    spread = sum(((r, s) for r, s in zip(reps, shape)), ())
    out = sh.broadcast_to(sh.reshape(A, interleaved), spread)
    return sh.reshape(out, tuple(r * s for r, s in zip(reps, shape)))


def _repeat(a, repeats, axis=None):
    a = _operand(a)
    if axis is None:
        a, axis = _ravel(a), 0
    t = aval(a)
    axis = normalize_axes(axis, t.ndim)[0]
    repeats = np.asarray(_static(repeats, "np.repeat's repeats"))
    if repeats.size == 1:
        r = int(repeats.reshape(-1)[0])
        spread = t.shape[:axis + 1] + (r,) + t.shape[axis + 1:]
        out = sh.broadcast_to(sh.reshape(a, t.shape[:axis + 1] + (1,) + t.shape[axis + 1:]), spread)
        return sh.reshape(out, t.shape[:axis] + (t.shape[axis] * r,) + t.shape[axis + 1:])
    if repeats.shape != (t.shape[axis],):
        raise ShapeError(f"np.repeat: {repeats.size} repeats for an axis of length {t.shape[axis]}",
                         hint="give one repeat count per element of the axis, or a single count")
    return _take_static(a, axis, np.repeat(np.arange(t.shape[axis]), repeats))


def _pad(array, pad_width, mode="constant", **kw):
    array = lift(_operand(array), first_traced([array, kw.get("constant_values")]))
    t = aval(array)
    widths = np.broadcast_to(np.asarray(_static(pad_width, "np.pad's pad_width"), dtype=np.int64), (t.ndim, 2))
    if callable(mode) or mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise TraceError(f"np.pad with mode={mode!r} is not supported by gradc",
                         hint="use mode 'constant', 'edge', 'reflect', 'symmetric' or 'wrap'")
    if mode == "constant":
        values = kw.pop("constant_values", 0)
        if isinstance(values, Traced) and aval(values).ndim == 0:
            values = [[values, values]] * t.ndim
        elif not isinstance(values, Traced) and first_traced(np.ravel(np.asarray(values, dtype=object))) is None:
            values = np.broadcast_to(np.asarray(values, dtype=t.np_dtype), (t.ndim, 2))
        else:
            raise TraceError("np.pad: constant_values may be numbers or one traced scalar",
                             hint="pad with a number and add the traced part afterwards")
    if kw:
        raise TraceError(f"np.pad: {', '.join(sorted(kw))} not supported", hint="drop the option")
    for ax in range(t.ndim):
        before, after = (int(w) for w in widths[ax])
        if not before and not after:
            continue
        n = aval(array).shape[ax]
        if mode != "constant":
            array = _take_static(array, ax, np.pad(np.arange(n), (before, after), mode=mode))
            continue
        parts = []
        for width, value in ((before, values[ax][0]), (after, values[ax][1])):
            shape = aval(array).shape[:ax] + (width,) + aval(array).shape[ax + 1:]
            block = sh.broadcast_to(ew.astype(lift(value, array), t.dtype), shape) if width else None
            parts.append(block)
        array = sh.concatenate([p for p in (parts[0], array, parts[1]) if p is not None], ax)
    return array


def _tri(lower):
    def apply(m, k=0):
        m = _operand(m)
        t = aval(m)
        if t.ndim == 1:  # NumPy makes a square matrix of repeated rows
            m = sh.broadcast_to(m, (t.shape[0], t.shape[0]))
        return decomp.tri(m, lower, int(_static(k, "the diagonal offset k")))
    return apply


def _take(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise TraceError("np.take(..., out=...) writes into an array in place", hint="drop out= and assign")
    a = _operand(a)
    if axis is None:
        a, axis = _ravel(a), 0
    t = aval(a)
    axis = normalize_axes(axis, t.ndim)[0]
    n = t.shape[axis]
    if isinstance(indices, Traced):
        return positions.take(a, indices, axis, mode)
    idx = np.asarray(indices, dtype=np.int64)
    if not isinstance(n, int) and mode in ("wrap", "clip"):
        raise StaticValueNeeded(f"np.take with mode={mode!r} along an axis of named size {n}: the indices it reads "
                                "depend on the size", hint="take with the default mode, or compile for a fixed size")
    if not isinstance(n, int):  # a named axis: NumPy checks the indices when the code runs
        return _take_static(a, axis, idx)
    if mode == "wrap":
        idx = np.mod(idx, n)
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    elif idx.size and not ((idx >= -n).all() and (idx < n).all()):
        raise ShapeError(f"np.take: an index is out of bounds for axis {axis} with size {n}",
                         hint="indices must lie in [-size, size), or pass mode='wrap' or mode='clip'")
    return _take_static(a, axis, idx)


# ---------------------------------------------------------------- splitting
def _split_points(n, sections, even, what):
    if isinstance(sections, (int, np.integer)):
        k = int(sections)
        if k <= 0:
            raise ShapeError(f"{what}: the number of sections must be positive", hint="pass a positive int")
        if even and n % k:
            raise ShapeError(f"{what}: an axis of length {n} does not split into {k} equal parts",
                             hint="use np.array_split for unequal parts")
        size, extra = divmod(n, k)
        return np.cumsum([0] + [size + 1] * extra + [size] * (k - extra)).tolist()
    return [0] + [int(i) for i in _static(sections, f"{what}'s indices")] + [n]


def _splitter(even, what, axis_of=None):
    def apply(ary, indices_or_sections, axis=0):
        ary = _operand(ary)
        t = aval(ary)
        axis = normalize_axes(axis if axis_of is None else axis_of(t, what), t.ndim)[0]
        points = _split_points(t.shape[axis], indices_or_sections, even, what)
        return [_slice(ary, axis, lo, hi) for lo, hi in zip(points[:-1], points[1:])]
    return apply


def _fixed_axis(axis, least):
    def pick(t, what):
        if t.ndim < least:
            raise ShapeError(f"{what} needs an array of at least {least} dimensions, not {t}",
                             hint="use np.split with axis=")
        return 0 if axis == 1 and t.ndim == 1 else axis
    return pick


# ---------------------------------------------------------------- joining
def _atleast(nd):
    def one(a):
        a = _operand(a)
        shape = aval(a).shape
        if len(shape) >= nd:
            return a
        if nd == 3 and len(shape) == 1:
            return sh.reshape(a, (1,) + shape + (1,))
        if nd == 3 and len(shape) == 2:
            return sh.reshape(a, shape + (1,))
        return sh.reshape(a, (1,) * (nd - len(shape)) + shape)

    def apply(*arys):
        out = [one(a) for a in arys]
        return out[0] if len(out) == 1 else tuple(out)
    return apply


def _joined(nd, axis_for):
    def apply(tup, **kw):
        _no_dtype(kw)
        arrays = [_atleast(nd)(a) for a in tup]
        return _concatenate(arrays, axis_for(aval(arrays[0]).ndim))
    return apply


def _column_stack(tup):
    arrays = [_operand(a) for a in tup]
    arrays = [sh.reshape(a, (aval(a).size, 1)) if aval(a).ndim < 2 else a for a in arrays]
    return _concatenate(arrays, 1)


def _no_dtype(kw):
    if kw.get("dtype") is not None or kw.get("casting", "same_kind") != "same_kind":
        raise TraceError("dtype= and casting= are not supported here by gradc", hint="convert with .astype(...)")


def _depth(x):
    return 1 + _depth(x[0]) if isinstance(x, list) and x else 0


def _block(arrays):
    depth = _depth(arrays)
    leaves = []

    def collect(x):
        if isinstance(x, list):
            for y in x:
                collect(y)
        else:
            leaves.append(aval(_operand(x)).ndim)
    collect(arrays)
    nd = max([depth] + leaves)

    def build(x, level):
        if not isinstance(x, list):
            if level != depth:
                raise ShapeError("np.block: the lists are nested to different depths",
                                 hint="nest every array equally deep")
            x = _operand(x)
            return sh.reshape(x, (1,) * (nd - aval(x).ndim) + aval(x).shape)
        if level >= depth or _depth(x) != depth - level:
            raise ShapeError("np.block: the lists are nested to different depths",
                             hint="nest every array equally deep")
        return _concatenate([build(y, level + 1) for y in x], nd - (depth - level))
    return build(arrays, 0)


def _append(arr, values, axis=None):
    arr, values = _operand(arr), _operand(values)
    if axis is None:
        return _concatenate([_ravel(arr), _ravel(values)], 0)
    return _concatenate([arr, values], axis)


def _insert(arr, obj, values, axis=None):
    if positions.is_traced_position(obj):  # a loop's counter, an integer argument
        return positions.insert(arr, obj, values, axis)
    obj = _static(obj, "np.insert's positions")
    arr, values = _operand(arr), _operand(values)
    values = ew.astype(values, aval(arr).dtype) if isinstance(values, Traced) else values.astype(aval(arr).np_dtype)
    return _by_labels([arr, values], lambda a, v: np.insert(a, obj, v, axis=axis))


def _delete(arr, obj, axis=None):
    if positions.is_traced_position(obj):
        return positions.delete(_operand(arr), obj, axis)
    obj = _static(obj, "np.delete's positions")
    return _by_labels([arr], lambda a: np.delete(a, obj, axis=axis))


def _sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    shape = _static(window_shape, "the window shape")
    return _by_labels([x], lambda a: np.lib.stride_tricks.sliding_window_view(a, shape, axis))


def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise TraceError(f"np.meshgrid: indexing={indexing!r}", hint="use 'xy' or 'ij'")
    xs = [_ravel(_operand(x)) for x in xi]
    sizes = [aval(x).shape[0] for x in xs]
    axes = list(range(len(xs)))
    if indexing == "xy" and len(xs) > 1:
        axes[0], axes[1] = 1, 0
    shape = [0] * len(xs)
    for size, ax in zip(sizes, axes):
        shape[ax] = size
    out = []
    for x, ax in zip(xs, axes):
        one = [1] * len(xs)
        one[ax] = shape[ax]
        g = sh.reshape(x, tuple(one))
        out.append(g if sparse else sh.broadcast_to(g, tuple(shape)))
    return tuple(out)


def _diagflat(v, k=0):
    return linalg_dispatch.FUNCTIONS[np.diag](_ravel(_operand(v)), k)


FUNCTIONS = {
    np.flip: _flip, np.fliplr: lambda m: _flip(m, 1), np.flipud: lambda m: _flip(m, 0),
    np.roll: _roll, np.rollaxis: _rollaxis, np.tile: _tile, np.repeat: _repeat, np.pad: _pad,
    np.triu: _tri(False), np.tril: _tri(True), np.take: _take,
    np.split: _splitter(True, "np.split"), np.array_split: _splitter(False, "np.array_split"),
    np.hsplit: _splitter(True, "np.hsplit", _fixed_axis(1, 1)),
    np.vsplit: _splitter(True, "np.vsplit", _fixed_axis(0, 2)),
    np.dsplit: _splitter(True, "np.dsplit", _fixed_axis(2, 3)),
    np.atleast_1d: _atleast(1), np.atleast_2d: _atleast(2), np.atleast_3d: _atleast(3),
    np.hstack: _joined(1, lambda nd: 0 if nd == 1 else 1), np.vstack: _joined(2, lambda nd: 0),
    np.dstack: _joined(3, lambda nd: 2), np.column_stack: _column_stack, np.block: _block,
    np.append: _append, np.insert: _insert, np.delete: _delete,
    np.lib.stride_tricks.sliding_window_view: _sliding_window_view,
    np.meshgrid: _meshgrid, np.diagflat: _diagflat, np.copyto: array_routing.copyto,
    np.empty_like: _like(0), np.full_like: array_routing.full_like,  # values the function owns and may write into
}
UFUNCS: dict = {}
