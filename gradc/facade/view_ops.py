"""torch's view methods beyond reshaping: ``narrow``, ``select``, ``diagonal``, ``unbind``, ``split``,
``chunk``, ``movedim``, ``swapaxes``, ``unflatten``, and ``index_put_`` / ``masked_fill_``.

Each result shares its input's storage and is registered as a view (``gradc.facade.views``),
so an in-place op through it changes the base's value and gradient as in torch.

>>> import gradc.torch as torch
>>> y = torch.zeros(2, 3); _ = y.narrow(1, 1, 2).fill_(1.0); y
tensor([[0., 1., 1.],
        [0., 1., 1.]])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.shape as sh
from gradc.facade import grad_mode, indexing, views
from gradc.facade.nn import functional_layers as nn_layers
from gradc.facade.record import record

_FULL = ("slice", None, None, None)


def install(T):
    """Attach the view methods to the Tensor class ``T``."""
    for f in (narrow, select, diagonal, unbind, split, chunk, movedim, unflatten, index_put_, masked_fill_):
        setattr(T, f.__name__, f)
    T.swapaxes = T.swapdims = lambda a, d0, d1: a.transpose(d0, d1)
    T.moveaxis = movedim
    T.__iter__ = iterate


def iterate(a):
    """``iter(t)``: torch's ``iter(t.unbind(0))`` (its elements' ``grad_fn`` is ``UnbindBackward0``; a 0-d tensor
    refuses). Without it Python would index ``t[0], t[1]...`` until an IndexError, and a 0-d tensor would iterate."""
    if not a.dim():
        raise TypeError("iteration over a 0-d tensor")
    return iter(unbind(a, 0))


def _dim(a, dim):
    n = max(a.dim(), 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n


def _spec_view(a, spec, name):
    """``a[spec]`` as a view recorded as node ``name``."""
    def fn(x):
        return sh.index(x, spec)
    out = record(name, fn, [a])
    if type(a._data) is np.ndarray:
        if not views.shares_storage(out._data, a._data):
            out._data = a._data[sh.spec_to_numpy(spec) + (Ellipsis,)]
        views.mark(out, a, fn, name)
    return out


def writable_expand(out, a):
    """An ``expand`` whose elements are all distinct is writable in place, as in torch (NumPy's is read-only)."""
    data, src = out._data, a._data
    if type(data) is np.ndarray and not data.flags.writeable and src.flags.writeable and out._base is not None \
            and all(s != 0 or n <= 1 for n, s in zip(data.shape, data.strides)):
        out._data = np.lib.stride_tricks.as_strided(src, data.shape, data.strides)
    return out


def flatten(a, start_dim=0, end_dim=-1):
    """``t.flatten(start, end)``; flattening one dim of a tensor returns the tensor itself, as torch does."""
    if a.dim() >= 1 and _dim(a, start_dim) == _dim(a, end_dim):
        return a
    return nn_layers.flatten(a, start_dim, end_dim)


def narrow(a, dim, start, length):
    d = _dim(a, dim)
    size = a.shape[d]
    start = int(start) + (size if start < 0 else 0)
    if not (0 <= start <= size and 0 <= length and start + length <= size):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({size}).")
    spec = tuple(("slice", start, start + int(length), None) if i == d else _FULL for i in range(a.dim()))
    return _spec_view(a, spec, "SliceBackward0")


def select(a, dim, index):
    d = _dim(a, dim)
    size = a.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size {list(a.shape)} at dimension {d}")
    spec = tuple(("int", int(index) % size) if i == d else _FULL for i in range(a.dim()))
    return _spec_view(a, spec, "SelectBackward0")


def diagonal(a, offset=0, dim1=0, dim2=1):
    """The diagonal (``offset`` above the main one) of the planes ``dim1``, ``dim2``, as the last dim."""
    d1, d2 = _dim(a, dim1), _dim(a, dim2)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape = a.shape
    n = max(0, min(shape[d1] + min(offset, 0), shape[d2] - max(offset, 0)))
    rows = np.arange(n, dtype=np.int64) - min(offset, 0)
    cols = np.arange(n, dtype=np.int64) + max(offset, 0)
    perm = [i for i in range(a.dim()) if i not in (d1, d2)] + [d1, d2]
    spec = (_FULL,) * (a.dim() - 2) + (("array", 0), ("array", 1))

    def fn(x):
        return sh.gather(sh.transpose(x, perm), [rows, cols], spec)
    out = record("DiagonalBackward0", fn, [a])
    data = a._data
    if type(data) is np.ndarray:
        start = tuple(slice(max(offset, 0), None) if i == d2 else slice(-min(offset, 0), None) if i == d1
                      else slice(None) for i in range(a.dim()))
        moved = data[start]
        diag = np.diagonal(moved, 0, d1, d2)
        out._data = np.lib.stride_tricks.as_strided(moved, diag.shape, diag.strides, writeable=data.flags.writeable)
        views.mark(out, a, fn, "DiagonalBackward0")
    return out


def _multi(outs, op):
    """Outputs of a function returning several views: torch forbids writing them in place."""
    if grad_mode._STATE["enabled"]:
        for i, out in enumerate(outs):
            if out._view_fn is not None:
                out._view_flags = ("multi", op, i, out._grad_fn is not None)
    return tuple(outs)


def unbind(a, dim=0):
    d = _dim(a, dim)
    if d == 0 and type(a._data) is np.ndarray:  # the common case (iteration): the indexing fast lane's views
        return _multi([indexing.unbound(a, i) for i in range(a.shape[0])], "Unbind")
    outs = [_spec_view(a, tuple(("int", i) if k == d else _FULL for k in range(a.dim())), "UnbindBackward0")
            for i in range(a.shape[d])]
    return _multi(outs, "Unbind")


def split(a, split_size_or_sections, dim=0):
    d = _dim(a, dim)
    size = a.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step <= 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got dimension size of {size}")
        bounds = [(s, min(s + step, size)) for s in range(0, size, step)] if size else [(0, 0)]
        name, op = "SplitBackward0", "Split"
    else:
        sizes = [int(s) for s in split_size_or_sections]
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} (input tensor's size "
                               f"at dimension {d}), but got split_sizes={sizes}")
        starts = np.cumsum([0] + sizes[:-1])
        bounds = [(int(s), int(s) + n) for s, n in zip(starts, sizes)]
        name, op = "SplitWithSizesBackward0", "SplitWithSizes"
    outs = [_spec_view(a, tuple(("slice", lo, hi, None) if k == d else _FULL for k in range(a.dim())), name)
            for lo, hi in bounds]
    return _multi(outs, op)


def chunk(a, chunks, dim=0):
    size = a.shape[_dim(a, dim)]
    return split(a, max(-(-size // int(chunks)), 1), dim)


def movedim(a, source, destination):
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src, dst = [_dim(a, s) for s in src], [_dim(a, s) for s in dst]
    rest = [i for i in range(a.dim()) if i not in src]
    perm = [None] * a.dim()
    for s, t in zip(src, dst):
        perm[t] = s
    it = iter(rest)
    perm = [p if p is not None else next(it) for p in perm]
    return a.permute(*perm)


def unflatten(a, dim, sizes):
    d = _dim(a, dim)
    sizes = list(sizes)
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes[sizes.index(-1)] = a.shape[d] // max(known, 1)
    return a.view(*(tuple(a.shape[:d]) + tuple(sizes) + tuple(a.shape[d + 1:])))


def index_put_(a, indices, values, accumulate=False):
    """``a[indices] = values`` (``accumulate=False``: a repeated index keeps the last write)."""
    if accumulate:
        raise NotImplementedError("index_put_(accumulate=True) is not supported by the gradc facade; "
                                  "use index_add_-style code: a[idx] = a[idx] + values with distinct indices")
    indexing.setitem(a, tuple(indices), values)
    return a


def masked_fill_(a, mask, value):
    indexing.setitem(a, mask, value)
    return a
