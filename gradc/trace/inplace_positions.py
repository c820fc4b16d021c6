"""Where an index assignment writes: NumPy's rules for repeated positions, as static index arithmetic.

``a[idx] = v`` keeps NumPy's last write of a repeated position (``fit``), ``ufunc.at`` applies
every occurrence in turn (``layers``); both select elements of the broadcast index arrays
and of the value with one static ``gather``, so the functional update (``index_update``)
sees distinct positions and its VJP is exact. With traced index arrays the repeats are known
only when the code runs: ``last_writes`` zeroes every write a later one overrides, computed
in the graph, so the derivative reaches the winning write only. ``ufunc.at`` other than
``np.add.at`` with traced index arrays of more than one element is refused.

>>> from gradc.ir.types import TensorType
>>> t = TensorType((3,), "f64")
>>> spec, arrays, value = fit(t, (("array", 0),), [np.array([0, 0])], np.arange(2.0), "a[i] = v", None)
>>> arrays, value
([array([0])], array([1.]))
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, TraceError
from gradc.ir import dims
from gradc.ir.builder import Traced
from gradc.ir.graph import Const
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops import stats
from gradc.ops.shape_extra import index_update, indexed_shape
from gradc.ops.values import aval, lift


def lift_target(target, traced):
    """A concrete array written with traced values, as a constant of the trace: ``np.zeros(n)`` (any array of
    one repeated value) as a broadcast scalar, so the emitted code reads ``np.broadcast_to(0.0, (n,)).copy()``,
    not a literal of every entry; otherwise a copy (later NumPy writes to it cannot reach the trace)."""
    flat = target.reshape(-1)
    if flat.size and bool((flat == flat[0]).all()):
        return sh.broadcast_to(lift(flat[0:1].reshape(()).copy(), traced), target.shape)
    return lift(target.copy(), traced)


def fit_shape(value, shape, what, where):
    """``shape`` if ``value`` broadcasts to it (NumPy also drops a value's leading axes of length 1).

    >>> fit_shape(np.ones((1, 1, 3)), (2, 3), "a[:2] = v", None)
    (2, 3)
    """
    vshape = aval(value).shape
    while len(vshape) > len(shape) and vshape[0] == 1:
        vshape = vshape[1:]
    try:
        if dims.broadcast(vshape, shape) == tuple(shape):
            return tuple(shape)
    except ValueError:
        pass
    raise ShapeError(f"{what}: a value of shape {aval(value).shape} cannot be written into an index of shape "
                     f"{tuple(shape)}", where=where, hint="the value must broadcast to the indexed part's shape")


def as_value(value, t, spec, arrays, traced, what, where):
    """``value`` traced (lifted into ``traced``'s trace), checked to broadcast to the indexed shape, with the
    leading axes of length 1 NumPy drops in an assignment dropped."""
    shape = indexed_shape(t.shape, spec, [aval(a).shape for a in arrays])
    fit_shape(value, shape, what, where)
    value = lift(value, traced)
    vshape = aval(value).shape
    return sh.reshape(value, vshape[len(vshape) - len(shape):]) if len(vshape) > len(shape) else value


def fit(t, spec, arrays, value, what, where):
    """The index and value with NumPy's last write of each repeated position only (``value`` traced)."""
    if any(isinstance(a, Traced) and aval(a).size > 1 for a in arrays):
        return spec, arrays, last_writes(t, spec, arrays, value)
    found = _positions(t, spec, arrays, what, where)
    if found is None:
        return spec, arrays, value
    flat = found[1]
    last = {tuple(p): k for k, p in enumerate(flat.tolist())}
    if len(last) == len(flat):
        return spec, arrays, value
    arrays, value = _select(t, spec, arrays, value, found[0], np.array(sorted(last.values()), dtype=np.int64))
    return spec, arrays, value


def last_writes(t, spec, arrays, value):
    """``value`` with zeros where a later write goes to the same position (traced index arrays: which writes
    repeat is known only when the code runs). ``index_update`` writes in order, so each position keeps the last
    write, as in NumPy; with the earlier writes zeroed, its VJP reads the cotangent into the winning write only.
    The winner of each position is the number of the last write there: an integer ``index_update`` of the
    write numbers 0, 1, ... read back at the index."""
    if isinstance(getattr(value, "atom", None), Const):  # a constant: no derivative to route
        return value
    shape = indexed_shape(t.shape, spec, [aval(a).shape for a in arrays])
    count = dims.prod(shape)
    ones = sh.broadcast_to(lift(np.ones((), np.int64), value), (count,))
    numbers = sh.reshape(ew.sub(stats.cumsum(ones, 0), np.int64(1)), shape)  # 0, 1, ... in the index's order
    unwritten = sh.broadcast_to(lift(np.full((), -1, np.int64), value), t.shape)
    winners = sh.gather(index_update(unwritten, numbers, arrays, spec), arrays, spec)
    value = sh.broadcast_to(value, shape)
    return ew.where(ew.equal(winners, numbers), value, lift(np.zeros((), aval(value).np_dtype), value))


def _positions(t, spec, arrays, what, where):
    """``(rows, flat)``: the static index arrays broadcast together, and the position each element picks (one
    row of ``flat`` per element, negatives wrapped); None without static index arrays."""
    for a in arrays:
        if isinstance(a, Traced) and aval(a).size > 1:
            raise TraceError(f"{what} with a traced index array: repeated positions would need NumPy's "
                             "rule for them, which gradc cannot apply to indices it does not know",
                             where=where, hint="index with NumPy integer arrays or traced scalars (e.g. a loop "
                             "counter), or accumulate with np.add.at(a, idx, v)")
    static = [np.asarray(a) for a in arrays if not isinstance(a, Traced)]
    if not static:
        return None
    rows = np.broadcast_arrays(*static)
    flat = np.stack([r.reshape(-1) % d for r, d in zip(rows, _array_axes(t, spec, arrays))], axis=1) \
        if rows[0].size else np.zeros((0, len(rows)), np.int64)
    return rows, flat


def _select(t, spec, arrays, value, rows, keep):
    """The index arrays and the (traced) value at the elements ``keep`` of the broadcast index arrays."""
    # the index arrays' axes stand together in the indexed shape: flatten them, then pick
    advanced = [i for i, item in enumerate(spec) if item[0] in ("array", "int")]
    adjacent = advanced[-1] - advanced[0] + 1 == len(advanced)
    lead = sum(1 for item in spec[:advanced[0]] if item[0] != "int") if adjacent else 0
    width = len(rows[0].shape)
    shape = indexed_shape(t.shape, spec, [aval(a).shape for a in arrays])
    flat_shape = shape[:lead] + (dims.prod(shape[lead:lead + width]),) + shape[lead + width:]
    full = sh.slice_item(None, None, None)
    picked_spec = (full,) * lead + (("array", 0),) + (full,) * (len(flat_shape) - lead - 1)
    value = sh.gather(sh.reshape(sh.broadcast_to(value, shape), flat_shape), [keep], picked_spec)
    it = iter(rows)
    return [a if isinstance(a, Traced) else next(it).reshape(-1)[keep] for a in arrays], value


def layers(t, spec, arrays, value, what, where):
    """``(arrays, value)`` pairs in which no position repeats: the first occurrences of each position, then the
    second ones, ... (so an unbuffered ``ufunc.at`` is a sequence of ordinary updates).

    >>> from gradc.ir.types import TensorType
    >>> [a for a, v in layers(TensorType((3,), "f64"), (("array", 0),), [np.array([2, 0, 2])], np.ones(3), "", None)]
    [[array([2, 0])], [array([2])]]
    """
    found = _positions(t, spec, arrays, what, where)
    if found is None:
        return [(arrays, value)]
    rows, flat = found
    counts: dict = {}
    occurrence = np.zeros(len(flat), dtype=np.int64)
    for k, position in enumerate(map(tuple, flat.tolist())):
        occurrence[k] = counts.get(position, 0)
        counts[position] = occurrence[k] + 1
    if not occurrence.size or occurrence.max() == 0:
        return [(arrays, value)]
    return [_select(t, spec, arrays, value, rows, np.nonzero(occurrence == r)[0])
            for r in range(int(occurrence.max()) + 1)]


def _array_axes(t, spec, arrays):
    """The sizes of the axes the static index arrays select from (to compare negative indices)."""
    sizes, axis = {}, 0
    for item in spec:
        if item[0] == "new":
            continue
        if item[0] == "array":
            sizes[item[1]] = t.shape[axis]
        axis += 1
    return [sizes[k] for k, a in enumerate(arrays) if not isinstance(a, Traced)]
