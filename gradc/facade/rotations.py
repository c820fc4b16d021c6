"""``torch.rot90``, ``torch.fliplr`` and ``torch.flipud`` (and their Tensor methods), with torch's node names
and errors: a rotation is one ``Rot90Backward0`` node whose gradient comes from the registry's index and
transpose rules; the flips are ``FlipBackward0`` copies.

>>> import gradc.torch as torch
>>> torch.rot90(torch.tensor([[1, 2], [3, 4]])).tolist()
[[2, 4], [1, 3]]
"""
from __future__ import annotations

import numpy as np

import gradc.ops.shape as sh
from gradc.facade.record import record
from gradc.facade.tensor import Tensor

FUNCTIONS = ("rot90", "fliplr", "flipud")


def _axis(d, ndim: int) -> int:
    d = int(d)
    if not -ndim <= d < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {d})")
    return d % ndim


def _reversed(x, ndim: int, axes):
    return sh.index(x, tuple(("slice", None, None, -1) if i in axes else ("slice", None, None, None)
                             for i in range(ndim)))


def _swapped(x, ndim: int, a: int, b: int):
    perm = list(range(ndim))
    perm[a], perm[b] = b, a
    return sh.transpose(x, tuple(perm))


def rot90(input, k: int = 1, dims=(0, 1)) -> Tensor:  # noqa: A002 - torch name
    """Rotate by ``k`` quarter turns in the plane of ``dims``, from the first axis towards the second.

    >>> import gradc.torch as torch
    >>> torch.rot90(torch.arange(6.).reshape(2, 3), -1).tolist()
    [[3.0, 0.0], [4.0, 1.0], [5.0, 2.0]]
    """
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    ndim = input.dim()
    if ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {ndim}")
    a, b = _axis(dims[0], ndim), _axis(dims[1], ndim)
    if a == b:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {a} and dim1 = {b}")
    turns = int(k) % 4

    def fn(x):
        if turns == 1:
            return _swapped(_reversed(x, ndim, (b,)), ndim, a, b)
        if turns == 2:
            return _reversed(x, ndim, (a, b))
        if turns == 3:
            return _swapped(_reversed(x, ndim, (a,)), ndim, a, b)
        return sh.index(x, tuple(("slice", None, None, None) for _ in range(ndim)))
    out = record("Rot90Backward0", fn, [input])
    if type(out._data) is np.ndarray:  # torch's rotation is a copy, transposed when the turn is odd
        data = out._data
        out._data = np.ascontiguousarray(data.swapaxes(a, b)).swapaxes(a, b) if turns % 2 else data.copy()
    return out


def _flip(input, axis: int, least: int) -> Tensor:  # noqa: A002 - torch name
    if input.dim() < least:
        raise RuntimeError(f"Input must be >= {least}-d.")
    return input.flip(axis)


def fliplr(input) -> Tensor:  # noqa: A002 - torch name
    """Reverse the columns (axis 1) of a tensor of two or more dimensions (a copy)."""
    return _flip(input, 1, 2)


def flipud(input) -> Tensor:  # noqa: A002 - torch name
    """Reverse the rows (axis 0) of a tensor of one or more dimensions (a copy)."""
    return _flip(input, 0, 1)


def install(T) -> None:
    T.rot90 = rot90
    T.fliplr = fliplr
    T.flipud = flipud
