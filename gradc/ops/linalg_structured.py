"""SciPy's structured matrices (``toeplitz``, ``hankel``, ``circulant``, ``block_diag``) and ``np.vander``.

Each is one static ``gather`` from its operands, flattened and joined behind a leading zero
(the entries SciPy fills with zeros read it): the positions are computed here with NumPy
from the definitions, so the result is SciPy's entry for entry, every target has it and the
derivative is the gather's (a scatter-add back into the operands). ``vander`` multiplies
columns up from ones (no ``x ** 0`` whose derivative would read ``0 ** -1``).

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> toeplitz(np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0]))
array([[1., 5.],
       [2., 1.],
       [3., 2.]])
>>> block_diag(np.array([[1.0]]), np.array([2.0, 3.0]))
array([[1., 0., 0.],
       [0., 2., 3.]])
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError
from gradc.ir.builder import Traced
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops.values import aval, first_traced, lift, result_dtype


def _joined(arrays):
    """``(flat, starts)``: a zero, then each array flattened (in ``result_dtype``), and where each begins."""
    anchor = first_traced(list(arrays))
    dtype = result_dtype(*arrays)
    parts, starts, at = [lift(np.zeros(1, _np_dtype(dtype)), anchor)], [], 1
    for a in arrays:
        a = lift(a, anchor)
        a = a if aval(a).dtype == dtype else ew.astype(a, dtype)
        parts.append(sh.reshape(a, (aval(a).size,)))
        starts.append(at)
        at += aval(a).size
    return sh.concatenate(parts, 0), starts


def _np_dtype(name):
    return {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32, "bool": np.bool_}[name]


def _gathered(flat, positions):
    return sh.gather(flat, [np.asarray(positions, dtype=np.int64)], (("array", 0),))


def _vector(x, what, name):
    if aval(x).ndim > 1:
        raise ShapeError(f"{what}: {name} must be 1-d here, not of shape {aval(x).shape}",
                         hint="pass a 1-d array (batches of vectors: call it per vector)")
    return sh.reshape(x, (aval(x).size,)) if isinstance(x, Traced) else np.ravel(x)


def toeplitz(c, r=None, what="scipy.linalg.toeplitz"):
    """``scipy.linalg.toeplitz(c, r)``: first column ``c``, first row ``r`` (``r[0]`` ignored; ``r`` None: ``c``)."""
    c = _vector(c, what, "c")
    r = c if r is None else _vector(r, what, "r")
    m, n = aval(c).size, aval(r).size
    flat, (c0, r0) = _joined([c, r])
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return _gathered(flat, np.where(i >= j, c0 + i - j, r0 + j - i))


def hankel(c, r=None, what="scipy.linalg.hankel"):
    """``scipy.linalg.hankel(c, r)``: first column ``c``, last row ``r`` (``r[0]`` ignored; ``r`` None: zeros)."""
    c = _vector(c, what, "c")
    m = aval(c).size
    if r is None:
        flat, (c0,) = _joined([c])
        i, j = np.meshgrid(np.arange(m), np.arange(m), indexing="ij")
        return _gathered(flat, np.where(i + j < m, c0 + i + j, 0))
    r = _vector(r, what, "r")
    n = aval(r).size
    flat, (c0, r0) = _joined([c, r])
    i, j = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return _gathered(flat, np.where(i + j < m, c0 + i + j, r0 + i + j - m + 1))


def circulant(c, what="scipy.linalg.circulant"):
    """``scipy.linalg.circulant(c)``: first column ``c``, each column the one before rolled down by one."""
    c = _vector(c, what, "c")
    n = aval(c).size
    flat, (c0,) = _joined([c])
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return _gathered(flat, c0 + (i - j) % n)


def block_diag(*arrs, what="scipy.linalg.block_diag"):
    """``scipy.linalg.block_diag(*arrs)``: 0-d and 1-d arrays count as one row, as in SciPy."""
    if not arrs:
        return np.empty((1, 0))
    blocks = []
    for a in arrs:
        nd = aval(a).ndim
        if nd > 2:
            raise ShapeError(f"{what}: arguments must have dimension <= 2, not {nd}", hint="pass matrices")
        blocks.append(a if nd == 2 else (sh.reshape(a, (1, aval(a).size)) if isinstance(a, Traced) else
                                         np.reshape(a, (1, -1))))
    flat, starts = _joined(blocks)
    rows = sum(aval(b).shape[0] for b in blocks)
    cols = sum(aval(b).shape[1] for b in blocks)
    positions = np.zeros((rows, cols), np.int64)
    r = k = 0
    for b, start in zip(blocks, starts):
        p, q = aval(b).shape
        positions[r:r + p, k:k + q] = start + np.arange(p * q).reshape(p, q)
        r, k = r + p, k + q
    return _gathered(flat, positions)


def vander(x, N=None, increasing=False, what="np.vander"):
    """``np.vander(x, N, increasing)``: the powers of ``x`` as columns, from ones up by products."""
    x = _vector(x, what, "x")
    if aval(x).ndim != 1:
        raise ShapeError(f"{what}: x must be a one-dimensional array or sequence", hint="pass a 1-d array")
    n = aval(x).size if N is None else int(N)
    dtype = {"f32": "f64", "i32": "i64", "bool": "i64"}.get(aval(x).dtype, aval(x).dtype)  # NumPy: x's with int64
    if dtype != aval(x).dtype:
        x = ew.astype(x, dtype) if isinstance(x, Traced) else x.astype(_np_dtype(dtype))
    if n == 0:
        return np.zeros((aval(x).size, 0), aval(x).np_dtype)
    column = sh.reshape(x, (aval(x).size, 1)) if isinstance(x, Traced) else np.reshape(x, (-1, 1))
    columns = [sh.broadcast_to(lift(np.ones((), aval(x).np_dtype), first_traced([x])), (aval(x).size, 1))]
    for _ in range(n - 1):
        columns.append(ew.mul(columns[-1], column))
    if not increasing:
        columns = columns[::-1]
    return sh.concatenate(columns, 1)
