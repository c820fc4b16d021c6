"""float32 sums in the order torch's CPU kernel adds (one thread): the "cascade" sum over vector lanes.

NumPy sums a reduced axis pairwise when it is the contiguous one and row after row otherwise;
torch keeps 4 interleaved accumulators of 8 float32 lanes (``LANES``)
and folds them through 4 levels of partial sums every ``2**max(4, ceil(log2(n)) // 4)`` steps.
The two orders round differently, which shows in printed sums over a dimension (``x.sum(0)`` of
a (64, 100) float32 tensor differs from torch's in most printed outputs), so float32 reductions
over one dimension of a contiguous tensor are added here in torch's order.

Not reproduced: torch's split of a reduction among threads (reductions of more than 32768 values
with more than one thread), and reductions over several dims at once that are not one
contiguous block.

>>> import numpy as np
>>> x = np.arange(40, dtype=np.float32) / 7
>>> float(reduce_axis(x.reshape(1, 40, 1), 1).item()) == float(np.float32(x.sum(dtype=np.float64)))
True
"""
from __future__ import annotations

import math

import numpy as np

_F32 = np.float32
_ZERO = np.zeros(1, np.float32)


LANES = 8  # measured: torch 2.13.0's CPU wheel reduces float32 in 8-lane vectors (AVX2 and AVX-512 alike)


def _seq(values: np.ndarray) -> np.ndarray:
    """The sum along axis 1 added left to right from zero, as one loop of float32 additions would: a float32
    cumsum is sequential, and the zero first keeps a sum of negative zeros +0, as the loop's."""
    zero = np.zeros((values.shape[0], 1) + values.shape[2:], _F32)
    if not values.shape[1]:
        return zero[:, 0]
    return np.cumsum(np.concatenate((zero, values), axis=1), axis=1, dtype=_F32)[:, -1]


def _grouped_seq(values: np.ndarray, step: int):
    """Sums of consecutive groups of ``step`` along axis 1, each added left to right from zero, and the sum of
    the incomplete last group (zero if none)."""
    full = values.shape[1] // step * step
    groups = values[:, :full].reshape((values.shape[0], full // step, step) + values.shape[2:])
    # a group's first value is its sum so far (0 + v is v, bar the sign of a zero, which the group's first
    # addition of a nonzero value erases as the loop's would): one cumsum per group, in one call
    sums = np.cumsum(groups, axis=2, dtype=_F32)[:, :, -1] + _F32(0)
    return sums, _seq(values[:, full:])


def multi_row_sum(rows: np.ndarray) -> np.ndarray:
    """torch's ``multi_row_sum``: rows (axis 1 of (batch, size, ...)) summed in chunks of ``step`` rows, the
    chunk sums carried up through 3 more levels of ``step``-fold partial sums, the last level taking all.

    The sequential loop's order, computed level by level with one array operation per position in a chunk.
    """
    size = rows.shape[1]
    power = max(4, int(size - 1).bit_length() // 4) if size > 1 else 4
    step = 1 << power
    chunks = size // step
    level0 = _grouped_seq(rows[:, :chunks * step], step)[0] if chunks else None
    tail = _seq(rows[:, chunks * step:])
    if not chunks:
        level1 = level2 = level3 = np.zeros_like(tail)
    else:
        groups1, level1 = _grouped_seq(level0, step)  # level 1 empties into level 2 every step chunks
        if groups1.shape[1]:
            groups2, level2 = _grouped_seq(groups1, step)
            level3 = _seq(groups2)
        else:
            level2 = level3 = np.zeros_like(tail)
    return ((tail + level1) + level2) + level3


def row_sum(rows: np.ndarray) -> np.ndarray:
    """torch's ``row_sum``: rows as (-1, 4) interleaved accumulators, the rest added to the first."""
    size = rows.shape[1]
    ilp = size // 4
    grouped = rows[:, :ilp * 4].reshape((rows.shape[0], ilp, 4) + rows.shape[2:])
    partial = multi_row_sum(grouped) if ilp else np.zeros((rows.shape[0], 4) + rows.shape[2:], _F32)
    first = partial[:, 0]
    for k in range(ilp * 4, size):
        first = first + rows[:, k]
    for k in range(1, 4):
        first = first + partial[:, k]
    return first


def _short_row(x: np.ndarray) -> np.ndarray:
    """``_inner`` of one row with fewer than ``64 * LANES`` values (no chunk completes in ``multi_row_sum``):
    the same additions with a handful of array operations, for the sums a training loop takes every step."""
    n = x.shape[1]
    row = x[0]
    nvec = n // LANES
    ilp = nvec // 4
    if ilp:
        groups = row[:ilp * 4 * LANES].reshape(ilp, 4, LANES)
        partial = (np.cumsum(groups, axis=0, dtype=_F32)[-1] if ilp > 1 else groups[0]) + _F32(0)
    else:
        partial = np.zeros((4, LANES), _F32)
    first = partial[0]
    for k in range(ilp * 4, nvec):
        first = first + row[k * LANES:(k + 1) * LANES]
    vec = ((first + partial[1]) + partial[2]) + partial[3]
    # zero, then the leftover values, then the lanes, added one by one (a float32 cumsum is sequential)
    return np.cumsum(np.concatenate((_ZERO, row[nvec * LANES:], vec)), dtype=_F32)[-1:]


def _inner(x: np.ndarray) -> np.ndarray:
    """Sum along the last axis of (batch, n) contiguous rows."""
    n = x.shape[1]
    if x.shape[0] == 1 and LANES <= n < 64 * LANES:
        return _short_row(x)
    if n < LANES:
        return row_sum(x)
    nvec = n // LANES
    vec = row_sum(x[:, :nvec * LANES].reshape(x.shape[0], nvec, LANES))
    total = np.zeros(x.shape[0], _F32)
    for k in range(nvec * LANES, n):
        total = total + x[:, k]
    for k in range(LANES):
        total = total + vec[:, k]
    return total


def _outer(x: np.ndarray) -> np.ndarray:
    """Sum along axis 1 of (batch, n, inner) with ``inner`` contiguous columns: torch's blocks of 4 vectors
    (``multi_row_sum``), then single vectors and single columns (``row_sum``). Columns never mix, so each
    kind of block is one call over all its columns."""
    inner = x.shape[2]
    block = 4 * LANES if inner >= LANES else 4
    out = np.empty((x.shape[0], inner), _F32)
    j = inner // block * block
    if j:
        out[:, :j] = multi_row_sum(x[:, :, :j])
    if inner >= LANES:
        k = j + (inner - j) // LANES * LANES
        if k > j:
            out[:, j:k] = row_sum(x[:, :, j:k])
        j = k
    if j < inner:
        out[:, j:] = row_sum(x[:, :, j:])
    return out


def reduce_axis(x: np.ndarray, axis: int) -> np.ndarray:
    """The sum of a C-contiguous float32 array of shape (outer, n, inner) along ``axis`` 1, as torch adds."""
    outer, n, inner = x.shape
    if n == 0:
        return np.zeros((outer, inner), _F32)
    if inner == 1:
        return _inner(x.reshape(outer, n)).reshape(outer, 1)
    return _outer(x)


def torch_order_sum(data: np.ndarray, dims, keepdims: bool):
    """``data.sum(dims)`` in torch's order, or None where that order is not reproduced (not float32, not
    contiguous, several dims that are not adjacent)."""
    if data.dtype != _F32 or not data.flags["C_CONTIGUOUS"] or data.ndim == 0:
        return None
    dims = tuple(range(data.ndim)) if dims is None else tuple(sorted(d % data.ndim for d in dims))
    if not dims or dims != tuple(range(dims[0], dims[-1] + 1)):
        return None
    shape = data.shape
    outer, n = math.prod(shape[:dims[0]]), math.prod(shape[dims[0]:dims[-1] + 1])
    inner = math.prod(shape[dims[-1] + 1:])
    if outer * inner == 0:
        return None
    out = reduce_axis(data.reshape(outer, n, inner), 1)
    kept = tuple(1 if i in dims else s for i, s in enumerate(shape)) if keepdims else \
        tuple(s for i, s in enumerate(shape) if i not in dims)
    return out.reshape(kept)
