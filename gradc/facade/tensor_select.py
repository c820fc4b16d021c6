"""torch's selection, scatter, sorting and arrangement functions: ``gather``, ``scatter``, ``index_select``,
``masked_fill``, ``sort``, ``topk``, ``roll``, ``meshgrid``, ``hstack``, ... and their Tensor methods.

Gathers are the facade's advanced indexing (differentiable); scatters add with gradc's
``gather_grad`` (the transpose of a gather); sorts compute their permutation with NumPy and
gather by it, so values are differentiable and indices are integers, as in torch.

>>> import gradc.torch as torch
>>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> torch.gather(x, 1, torch.tensor([[1], [0]])).sum().backward(); x.grad
tensor([[0., 1.],
        [1., 0.]])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.facade import dtypes
from gradc.facade.functional import cat as _cat
from gradc.facade.lift import accept_traced_everywhere, apply, as_int_array, dim_tuple, operand
from gradc.facade.linalg import _return_type
from gradc.facade.tensor import Tensor

SortResult = _return_type("sort", "values indices")
TopkResult = _return_type("topk", "values indices")
KthvalueResult = _return_type("kthvalue", "values indices")
MedianResult = _return_type("median", "values indices")


def _along(index: np.ndarray, dim: int):
    """Index arrays for ``x[...]`` picking ``index`` along ``dim`` and the same position elsewhere."""
    arrays = []
    for d in range(index.ndim):
        if d == dim:
            arrays.append(index)
        else:
            shape = [1] * index.ndim
            shape[d] = index.shape[d]
            arrays.append(np.broadcast_to(np.arange(index.shape[d]).reshape(shape), index.shape))
    return arrays


def pick_along(node: str, x, d: int, index, floating=False):
    """``x`` indexed by the integer array ``index`` along dim ``d`` (one gather, recorded as node ``node``)."""
    spec = (sh.slice_item(None, None, None),) * d + (("array", 0),)
    idx = np.asarray(index, np.int64)
    return apply(node, lambda v: sh.gather(v, [idx], spec), x, floating=floating)


def _check_index(x, dim, index, what):
    if index.dtype.kind not in "iu":
        raise RuntimeError(f"{what}(): Expected dtype int64 for index")
    if index.ndim != max(x.dim(), 1) and index.size:
        raise RuntimeError(f"Index tensor must have the same number of dimensions as input tensor ({what})")
    size = x.shape[dim] if x.dim() else 1
    if index.size and (index.max() >= size or index.min() < -size):
        raise RuntimeError(f"index {int(index.max())} is out of bounds for dimension {dim} with size {size}")


def gather(input, dim, index, *, sparse_grad=False, out=None):  # noqa: A002 - torch names
    x = operand(input)
    idx = as_int_array(index)
    d = dim_tuple(dim, x.dim(), "gather")[0]
    _check_index(x, d, idx, "gather")
    arrays = _along(idx % max(x.shape[d] if x.dim() else 1, 1), d)
    spec = tuple(("array", k) for k in range(len(arrays)))
    return apply("GatherBackward0", lambda v: sh.gather(v, arrays, spec), x, floating=False)


def _scatter_add_fn(x, d, idx, src_shape):
    src_idx = _along(idx % max(x.shape[d], 1), d)
    spec = tuple(("array", k) for k in range(len(src_idx)))
    full = tuple(x.shape)

    def fn(v, s):
        s = sh.index(s, tuple(sh.slice_item(0, n, None) for n in idx.shape)) if tuple(s.shape) != idx.shape else s
        return ew.add(v, sh.gather_grad(s, src_idx, spec, full))
    return fn


def scatter_add(input, dim, index, src):  # noqa: A002
    x, src = operand(input), operand(src)
    idx = as_int_array(index)
    d = dim_tuple(dim, x.dim(), "scatter_add")[0]
    _check_index(x, d, idx, "scatter_add")
    return apply("ScatterAddBackward0", _scatter_add_fn(x, d, idx, src.shape), x, src, floating=False)


def scatter(input, dim, index, src=None, *, value=None, reduce=None):  # noqa: A002
    """``out[index[i][j]][j] = src[i][j]`` (dim 0); ``reduce='add'`` accumulates (torch's legacy form)."""
    if reduce == "add":
        return scatter_add(input, dim, index, src)
    if reduce is not None:
        raise RuntimeError(f"scatter(): reduce={reduce!r} is not supported by gradc's facade (use 'add')")
    x = operand(input)
    idx = as_int_array(index)
    d = dim_tuple(dim, x.dim(), "scatter")[0]
    _check_index(x, d, idx, "scatter")
    if src is None or isinstance(src, (int, float, bool)):
        src = Tensor._wrap(np.full(idx.shape, src if src is not None else value, x._data.dtype))
    src = operand(src)[tuple(slice(0, n) for n in idx.shape)]
    out = x.clone()
    out[tuple(Tensor._wrap(a) for a in _along(idx, d))] = src
    return out


def index_select(input, dim, index, *, out=None):  # noqa: A002
    x = operand(input)
    d = dim_tuple(dim, x.dim(), "index_select")[0]
    idx = as_int_array(index).reshape(-1)
    return pick_along("IndexSelectBackward0", x, d, idx % max(x.shape[d], 1))


def index_add(input, dim, index, source, *, alpha=1):  # noqa: A002
    x, source = operand(input), operand(source)
    d = dim_tuple(dim, x.dim(), "index_add")[0]
    idx = as_int_array(index).reshape(-1)
    spec = (sh.slice_item(None, None, None),) * d + (("array", 0),)
    full = tuple(x.shape)
    return apply("IndexAddBackward0", lambda v, s: ew.add(v, ew.mul(sh.gather_grad(s, [idx], spec, full),
                                                                    float(alpha))), x, source, floating=False)


def masked_fill(input, mask, value):  # noqa: A002
    x = operand(input)
    m = np.asarray(as_int_array(mask), bool)
    if not isinstance(value, Tensor):  # a number is a constant of the node: one slot, as torch's
        dtypes.refuse_complex_into_real(x._data.dtype, value)
        number = float(value) if x.dtype.kind == 2 else value
        return apply("MaskedFillBackward0", lambda a: ew.where(m, number, a), x, floating=False)
    return apply("MaskedFillBackward0", lambda a, b: ew.where(m, b, a), x, operand(value), floating=False)


def masked_select(input, mask):  # noqa: A002
    x = operand(input)
    m = np.asarray(as_int_array(mask), bool)
    shape = np.broadcast_shapes(tuple(x.shape), m.shape)
    return x.expand(*shape)[Tensor._wrap(np.broadcast_to(m, shape))]


def take(input, index):  # noqa: A002
    return operand(input).reshape(-1)[Tensor._wrap(as_int_array(index))]


def take_along_dim(input, indices, dim=None):  # noqa: A002
    x = operand(input)
    if dim is None:
        return take(x, indices)
    idx = as_int_array(indices)
    d = dim_tuple(dim, x.dim(), "take_along_dim")[0]
    shape = list(np.broadcast_shapes(tuple(s for k, s in enumerate(x.shape) if k != d),
                                     tuple(s for k, s in enumerate(idx.shape) if k != d)))
    x = x.expand(*(shape[:d] + [x.shape[d]] + shape[d:]))
    return gather(x, d, np.broadcast_to(idx, tuple(shape[:d] + [idx.shape[d]] + shape[d:])))


def sort(input, dim=-1, descending=False, stable=False, *, out=None):  # noqa: A002
    x = operand(input)
    d = dim_tuple(dim, x.dim(), "sort")[0] if x.dim() else 0
    data = x._data if x.dim() else x._data.reshape(1)
    order = np.argsort(-data if descending and data.dtype.kind != "b" else data, axis=d, kind="stable")
    if descending and data.dtype.kind == "b":
        order = np.flip(np.argsort(data, axis=d, kind="stable"), d)
    if not x.dim():
        order = order.reshape(())
        return SortResult(x.clone(), Tensor._wrap(np.zeros((), np.int64)))
    arrays = _along(order, d)
    spec = tuple(("array", k) for k in range(len(arrays)))
    values = apply("SortBackward0", lambda v: sh.gather(v, arrays, spec), x, floating=False)
    return SortResult(values, Tensor._wrap(order.astype(np.int64)))


def argsort(input, dim=-1, descending=False, stable=False):  # noqa: A002
    return sort(input, dim, descending, stable).indices


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):  # noqa: A002
    x = operand(input)
    d = dim_tuple(dim, x.dim(), "topk")[0] if x.dim() else 0
    if not 0 <= int(k) <= (x.shape[d] if x.dim() else 1):
        raise RuntimeError("selected index k out of range")
    order = sort(x.detach(), d, descending=largest).indices._data
    order = order[(slice(None),) * d + (slice(0, int(k)),)] if x.dim() else order
    arrays = _along(order, d) if x.dim() else []
    spec = tuple(("array", k) for k in range(len(arrays)))
    values = apply("TopkBackward0", lambda v: sh.gather(v, arrays, spec) if arrays else v, x, floating=False)
    return TopkResult(values, Tensor._wrap(order.astype(np.int64)))


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):  # noqa: A002
    x = operand(input)
    d = dim_tuple(dim, x.dim(), "kthvalue")[0]
    s = sort(x, d)
    sl = (slice(None),) * d + (slice(int(k) - 1, int(k)),)
    values, indices = s.values[sl], s.indices[sl]
    return KthvalueResult(values if keepdim else values.squeeze(d), indices if keepdim else indices.squeeze(d))


def median(input, dim=None, keepdim=False, *, out=None):  # noqa: A002
    """The lower median (torch's: no averaging of the two middle values)."""
    x = operand(input)
    if dim is None:
        flat = x.reshape(-1)
        return kthvalue(flat, (flat.shape[0] + 1) // 2, 0).values
    d = dim_tuple(dim, x.dim(), "median")[0]
    r = kthvalue(x, (x.shape[d] + 1) // 2, d, keepdim)
    return MedianResult(r.values, r.indices)


def nonzero(input, *, as_tuple=False, out=None):  # noqa: A002
    data = operand(input)._data
    found = np.nonzero(np.atleast_1d(data)) if data.ndim == 0 else np.nonzero(data)
    if as_tuple:
        return tuple(Tensor._wrap(a.astype(np.int64)) for a in found)
    return Tensor._wrap(np.stack(found, axis=1).astype(np.int64) if found else np.zeros((0, 0), np.int64))


def count_nonzero(input, dim=None):  # noqa: A002
    x = operand(input)
    axis = None if dim is None else dim_tuple(dim, x.dim(), "count_nonzero")
    return Tensor._wrap(np.asarray(np.count_nonzero(x._data, axis=axis), np.int64))


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    data = operand(input)._data
    values, inverse, counts = np.unique(data, return_inverse=True, return_counts=True, axis=dim)
    out = [Tensor._wrap(values)]
    if return_inverse:
        out.append(Tensor._wrap(inverse.reshape(data.shape if dim is None else (-1,)).astype(np.int64)))
    if return_counts:
        out.append(Tensor._wrap(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)


def bincount(input, weights=None, minlength=0):  # noqa: A002
    counts = np.bincount(as_int_array(input), None if weights is None else operand(weights)._data, minlength)
    return Tensor._wrap(counts if weights is not None else counts.astype(np.int64))


def roll(input, shifts, dims=None):  # noqa: A002
    x = operand(input)
    if dims is None:
        return roll(x.reshape(-1), shifts, 0).reshape(x.shape)
    shifts = shifts if isinstance(shifts, (tuple, list)) else (shifts,)
    dims = dims if isinstance(dims, (tuple, list)) else (dims,)
    return roll_by("RollBackward0", x, {d: int(s) for s, d in zip(shifts, dim_tuple(dims, x.dim(), "roll"))})


def roll_by(node: str, x, shifts: dict):
    """``x`` rolled by ``shifts[d]`` along each dim ``d``, one recorded node (``torch.roll``, ``fft.fftshift``)."""
    plan = [(d, (np.arange(x.shape[d]) - s) % max(x.shape[d], 1)) for d, s in shifts.items()]

    def fn(v):
        for d, idx in plan:
            v = sh.gather(v, [idx], (sh.slice_item(None, None, None),) * d + (("array", 0),))
        return v
    return apply(node, fn, x, floating=False)


def tile(input, dims):  # noqa: A002
    x = operand(input)
    dims = tuple(dims)
    if len(dims) < x.dim():
        dims = (1,) * (x.dim() - len(dims)) + dims
    return x.repeat(*dims)


def broadcast_to(input, size):  # noqa: A002
    return operand(input).expand(*size)


def broadcast_tensors(*tensors):
    ts = [operand(t) for t in tensors]
    shape = np.broadcast_shapes(*(tuple(t.shape) for t in ts))
    return tuple(t.expand(*shape) for t in ts)


def meshgrid(*tensors, indexing="ij"):
    ts = [operand(t) for t in (tensors[0] if len(tensors) == 1 and isinstance(tensors[0], (list, tuple))
                               else tensors)]
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: {indexing}")
    if indexing == "xy" and len(ts) >= 2:
        ts[0], ts[1] = ts[1], ts[0]
    shape = tuple(t.numel() for t in ts)
    grids = [t.reshape(*[-1 if k == i else 1 for k in range(len(ts))]).expand(*shape) for i, t in enumerate(ts)]
    if indexing == "xy" and len(ts) >= 2:
        grids = [grids[1], grids[0], *grids[2:]]  # the first two in the caller's order
    return tuple(grids)


def _atleast(t, n):
    t = operand(t)
    while t.dim() < n:
        t = t.unsqueeze(0) if t.dim() == 0 or n == 2 else t.unsqueeze(-1)
    return t


def hstack(tensors):
    ts = [_atleast(t, 1) for t in tensors]
    return _cat(ts, 0 if ts[0].dim() == 1 else 1)


def vstack(tensors):
    return _cat([_atleast(t, 2) for t in tensors], 0)


def dstack(tensors):
    ts = [operand(t) for t in tensors]
    ts = [t.reshape(1, -1, 1) if t.dim() <= 1 else t.unsqueeze(-1) if t.dim() == 2 else t for t in ts]
    return _cat(ts, 2)


def column_stack(tensors):
    ts = [operand(t) for t in tensors]
    return _cat([t.reshape(-1, 1) if t.dim() <= 1 else t for t in ts], 1)


def concat(tensors, dim=0):
    return _cat([operand(t) for t in tensors], dim)


concatenate = concat

FUNCTIONS = ("gather", "scatter", "scatter_add", "index_select", "index_add", "masked_fill", "masked_select", "take",
             "take_along_dim", "sort", "argsort", "topk", "kthvalue", "median", "nonzero", "count_nonzero", "unique",
             "bincount", "roll", "tile", "broadcast_to", "broadcast_tensors", "meshgrid", "hstack", "vstack",
             "dstack", "column_stack", "concat", "concatenate")
METHODS = ("gather", "scatter", "scatter_add", "index_select", "index_add", "masked_fill", "masked_select", "take",
           "take_along_dim", "sort", "argsort", "topk", "kthvalue", "median", "nonzero", "count_nonzero", "unique",
           "bincount", "roll", "tile", "broadcast_to")


def _in_place(fn):
    def method(self, *args, **kwargs):
        return self._inplace(lambda s: fn(s, *args, **kwargs))  # the facade's one in-place path
    method.__name__ = fn.__name__ + "_"
    return method


def install(T) -> None:
    """Attach ``METHODS`` and the in-place forms ``scatter_``, ``scatter_add_``, ``index_add_``, ``masked_fill_``."""
    g = globals()
    for name in METHODS:
        setattr(T, name, g[name])
    for name in ("scatter", "scatter_add", "index_add", "masked_fill"):
        setattr(T, name + "_", _in_place(g[name]))

accept_traced_everywhere(globals(), FUNCTIONS)  # torch-style code given to gradc.grad on NumPy arrays
