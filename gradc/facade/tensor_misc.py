"""The rest of torch's everyday surface: rounding and remainders, logical ops, ``cdist``, ``dist``,
``cosine_similarity``, ``std_mean``, ``cummax``, ``logcumsumexp``, ``diff``, index grids, ``baddbmm``, the
constants ``pi``/``e``/``inf``/``nan``, ``finfo``/``iinfo``, ``typename``, ``result_type`` and a few Tensor
methods (``type_as``, ``element_size``, ``where``, ...).

Differentiable ones are gradc ops lifted into one recorded node (``gradc.facade.lift``).

>>> import gradc.torch as torch
>>> torch.remainder(torch.tensor([-3.0, 3.0]), 2)
tensor([1., 1.])
>>> torch.finfo(torch.float32).eps
1.1920928955078125e-07
"""
from __future__ import annotations

import math

import numpy as np

import gradc.ops.contract as ct
import gradc.ops.elementwise as ew
import gradc.ops.reduce as rd
import gradc.ops.special_numpy as sn
import gradc.ops.stats as st
import gradc.ops.stats_scan as scan
from gradc.facade import dtypes
from gradc.facade import grad_fn as gf
from gradc.facade.functional import stack as _stack
from gradc.facade.lift import accept_traced_everywhere, apply, dim_tuple, operand
from gradc.facade.linalg import _return_type
from gradc.facade.tensor import Tensor

pi, e, inf, nan = math.pi, math.e, math.inf, math.nan
CumResult = _return_type("cummax", "values indices")


def _elementwise(name, node, f, floating=False, nondiff=False):
    def fn(input, *others, out=None):  # noqa: A002 - torch name
        from gradc.facade.torch_args import with_out
        return with_out(apply(node, f, input, *others, floating=floating, nondiff=nondiff), out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


ceil = _elementwise("ceil", "CeilBackward0", sn.ceil)
trunc = fix = _elementwise("trunc", "TruncBackward0", sn.trunc)
frac = _elementwise("frac", "FracBackward0", lambda x: ew.sub(x, sn.trunc(x)))
sgn = _elementwise("sgn", "SgnBackward0", ew.sign)
def _integer_divisor(f):
    """``f`` refusing an integer zero divisor with torch's error (NumPy would give 0 and a warning)."""
    def checked(x, y):
        if type(y) is np.ndarray and y.dtype.kind in "iub" and not y.all():
            raise RuntimeError("ZeroDivisionError")
        return f(x, y)
    return checked


fmod = _elementwise("fmod", "FmodBackward0", _integer_divisor(sn.fmod))
remainder = _elementwise("remainder", "RemainderBackward0", _integer_divisor(sn.mod))
floor_divide = _elementwise("floor_divide", "FloorDivideBackward0", _integer_divisor(sn.floor_divide), nondiff=True)
fmax = _elementwise("fmax", "FmaxBackward0", sn.fmax)
fmin = _elementwise("fmin", "FminBackward0", sn.fmin)
heaviside = _elementwise("heaviside", "HeavisideBackward0", ew.heaviside, nondiff=True)
logical_and = _elementwise("logical_and", "LogicalAndBackward0", ew.logical_and, nondiff=True)
logical_or = _elementwise("logical_or", "LogicalOrBackward0", ew.logical_or, nondiff=True)
logical_not = _elementwise("logical_not", "LogicalNotBackward0", ew.logical_not, nondiff=True)
logical_xor = _elementwise("logical_xor", "LogicalXorBackward0",
                           lambda a, b: ew.not_equal(ew.not_equal(a, 0), ew.not_equal(b, 0)), nondiff=True)


def _bool(t):
    return t if t.dtype is dtypes.bool_ else Tensor._wrap(t._data.astype(bool))


for _name in ("logical_and", "logical_or", "logical_not", "logical_xor"):
    globals()[_name] = (lambda f: lambda *a, **k: _bool(f(*a, **k)))(globals()[_name])
    globals()[_name].__name__ = _name


def clamp_min(input, min):  # noqa: A002
    out = operand(input).clamp(min=min)
    return gf.rename(out, "ClampMinBackward0" if isinstance(min, (int, float)) else "ClampMinBackward1")


def clamp_max(input, max):  # noqa: A002
    out = operand(input).clamp(max=max)
    return gf.rename(out, "ClampMaxBackward0" if isinstance(max, (int, float)) else "ClampMaxBackward1")


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):  # noqa: A002
    x = operand(input)
    big = np.finfo(x._data.dtype) if x.dtype.kind == 2 else None
    hi = posinf if posinf is not None else (big.max if big is not None else 0)
    lo = neginf if neginf is not None else (big.min if big is not None else 0)
    return apply("NanToNumBackward0",
                 lambda v: ew.where(np.isnan(x._data), nan, ew.where(np.isposinf(x._data), hi,
                                                                     ew.where(np.isneginf(x._data), lo, v))),
                 x, floating=False)


def var_mean(input, dim=None, *, correction=None, keepdim=False, unbiased=None):  # noqa: A002
    corr = (1 if unbiased is None or unbiased else 0) if correction is None else correction
    x = operand(input)
    return x.var(dim, correction=corr, keepdim=keepdim), x.mean(dim, keepdim=keepdim) if dim is not None else x.mean()


def std_mean(input, dim=None, *, correction=None, keepdim=False, unbiased=None):  # noqa: A002
    corr = (1 if unbiased is None or unbiased else 0) if correction is None else correction
    x = operand(input)
    return x.std(dim, correction=corr, keepdim=keepdim), x.mean(dim, keepdim=keepdim) if dim is not None else x.mean()


def dist(input, other, p=2):  # noqa: A002
    from gradc.facade.linalg import vector_norm
    return vector_norm(operand(input) - operand(other), p)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """Pairwise ``p``-norm distances between the rows of ``x1`` and ``x2`` (batches broadcast)."""
    a, b = operand(x1), operand(x2)
    if a.dim() < 2 or b.dim() < 2 or a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"cdist only supports at least 2D tensors with the same number of columns, got "
                           f"{tuple(a.shape)} and {tuple(b.shape)}")
    from gradc.facade.linalg import vector_norm
    return vector_norm(a.unsqueeze(-2) - b.unsqueeze(-3), p, dim=-1)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    def fn(a, b):
        na = ew.maximum(ew.sqrt(rd.sum_(ew.mul(a, a), dim)), eps)
        nb = ew.maximum(ew.sqrt(rd.sum_(ew.mul(b, b), dim)), eps)
        return ew.div(rd.sum_(ew.mul(a, b), dim), ew.mul(na, nb))
    return apply("CosineSimilarityBackward0", fn, x1, x2)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    from gradc.facade.linalg import vector_norm
    return vector_norm(operand(x1) - operand(x2) + eps, p, dim=-1, keepdim=keepdim)


def _running_arg(data, d, better):
    """The index of the running extreme along ``d`` (the latest among equal values, as torch picks)."""
    moved = np.moveaxis(data, d, 0)
    idx = np.zeros(moved.shape, np.int64)
    best = moved[0].copy()
    for i in range(1, moved.shape[0]):
        take = better(moved[i], best) | (moved[i] == best) | np.isnan(moved[i])
        best = np.where(take, moved[i], best)
        idx[i] = np.where(take, i, idx[i - 1])
    return np.moveaxis(idx, 0, d)


def cummax(input, dim):  # noqa: A002
    return _cumulative(input, dim, np.greater, "cummax")


def cummin(input, dim):  # noqa: A002
    return _cumulative(input, dim, np.less, "cummin")


def _cumulative(input, dim, better, name):  # noqa: A002
    from gradc.facade.tensor_select import gather
    x = operand(input)
    flat = x if x.dim() else x.reshape(1)
    d = dim_tuple(dim, flat.dim(), name)[0]
    idx = _running_arg(flat._data, d, better)
    return CumResult(gather(flat, d, idx).reshape(x.shape), Tensor._wrap(idx.reshape(x._data.shape)))


def logcumsumexp(input, dim):  # noqa: A002
    x = operand(input)
    d = dim_tuple(dim, x.dim(), "logcumsumexp")[0]
    top = np.max(x._data, axis=d, keepdims=True) if x._data.size else 0.0
    top = np.where(np.isfinite(top), top, 0.0)
    return apply("LogcumsumexpBackward0", lambda v: ew.add(ew.log(st.cumsum(ew.exp(ew.sub(v, top)), d)), top), x)


def diff(input, n=1, dim=-1, prepend=None, append=None):  # noqa: A002
    ops = [operand(input)] + [operand(t) for t in (prepend, append) if t is not None]
    has_pre, has_app = prepend is not None, append is not None

    def fn(v, *extra):
        pre = extra[0] if has_pre else None
        app = extra[-1] if has_app else None
        return scan.diff(v, n, dim, prepend=pre, append=app)
    return apply("DiffBackward0", fn, *ops, floating=False)


def _index_grid(lower):
    def fn(row, col, offset=0, *, dtype=None, device=None, layout=None):
        rows, cols = (np.tril_indices if lower else np.triu_indices)(int(row), int(offset), int(col))
        return Tensor._wrap(np.stack([rows, cols]).astype((dtypes.to_dtype(dtype) or dtypes.int64).np))
    fn.__name__ = "tril_indices" if lower else "triu_indices"
    return fn


tril_indices, triu_indices = _index_grid(True), _index_grid(False)


def cartesian_prod(*tensors):
    from gradc.facade.tensor_select import meshgrid
    if len(tensors) == 1:
        return operand(tensors[0])
    return _stack([g.reshape(-1) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):  # noqa: A002
    import itertools
    x = operand(input)
    pick = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    rows = np.asarray(list(pick(range(x.shape[0]), r)), np.int64).reshape(-1, r)
    if rows.shape[0] == 0:
        return Tensor._wrap(np.zeros((0,) if r != 1 else (0, 1), x._data.dtype))
    return x[Tensor._wrap(rows)]


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1, out=None):  # noqa: A002
    return apply("BaddbmmBackward0", lambda c, a, b: ew.add(ew.mul(c, float(beta)),
                                                             ew.mul(ct.einsum("bij,bjk->bik", a, b), float(alpha))),
                 input, batch1, batch2)


def addmv(input, mat, vec, *, beta=1, alpha=1, out=None):  # noqa: A002
    return apply("AddmvBackward0", lambda c, a, v: ew.add(ew.mul(c, float(beta)),
                                                           ew.mul(ct.einsum("ij,j->i", a, v), float(alpha))),
                 input, mat, vec)


def chain_matmul(*matrices, out=None):
    from gradc.facade.linalg import multi_dot
    return multi_dot(list(matrices)) if len(matrices) > 1 else operand(matrices[0]).clone()


class _Info:
    def __init__(self, info, dt):
        self.bits, self.max, self.min, self.dtype = info.bits, info.max.item() if hasattr(info.max, "item") else \
            info.max, info.min.item() if hasattr(info.min, "item") else info.min, dt.name
        for name in ("eps", "tiny", "smallest_normal", "resolution"):
            if hasattr(info, name):
                setattr(self, name, float(getattr(info, name)))


def finfo(type=None):  # noqa: A002 - torch name
    """Machine limits of a floating dtype (the default dtype when omitted)."""
    dt = dtypes.to_dtype(type) or dtypes.DEFAULT[0]
    if dt.kind != 2:
        raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                        "'torch.finfo'")
    return _Info(np.finfo(dt.np), dt)


def iinfo(type):  # noqa: A002
    dt = dtypes.to_dtype(type)
    if dt.kind != 1:
        raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle 'torch.iinfo'")
    return _Info(np.iinfo(dt.np), dt)


def typename(obj):
    if isinstance(obj, Tensor):
        return f"torch.{obj.dtype.legacy}"
    return f"{type(obj).__module__}.{type(obj).__qualname__}" if type(obj).__module__ != "builtins" else \
        type(obj).__qualname__


def result_type(tensor, other):
    return dtypes.promote(tensor, other)


def promote_types(type1, type2):
    return dtypes.promote(Tensor._wrap(np.zeros(1, type1.np)), Tensor._wrap(np.zeros(1, type2.np)))


def is_floating_point(input):  # noqa: A002
    return operand(input).dtype.kind == 2


def round(input, *, decimals=0, out=None):  # noqa: A001, A002
    return operand(input).round(decimals=decimals)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False, out=None):
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    values = np.power(float(base), np.linspace(float(start), float(end), int(steps), dtype=np.float64))
    return Tensor._wrap(values.astype(dt.np), requires_grad=requires_grad)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    """The ``q``-th quantiles (linear interpolation between the sorted values, differentiable in ``input``)."""
    from gradc.facade.tensor_select import sort
    if interpolation != "linear":
        raise RuntimeError(f"quantile(): interpolation={interpolation!r} is not supported by gradc's facade "
                           "(use 'linear')")
    x = operand(input)
    if dim is None:
        x, dim = x.reshape(-1), 0
    d = dim_tuple(dim, x.dim(), "quantile")[0]
    qs = np.atleast_1d(np.asarray(q._data if isinstance(q, Tensor) else q, np.float64))
    if np.any((qs < 0) | (qs > 1)):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    ordered = sort(x, d).values
    pos = qs * (x.shape[d] - 1)
    lo, hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
    frac_w = pos - lo
    parts = []
    for i in range(len(qs)):
        a = ordered.select(d, int(lo[i]))
        b = ordered.select(d, int(hi[i]))
        v = a + (b - a) * float(frac_w[i])
        parts.append(v.unsqueeze(d) if keepdim else v)
    out_t = _stack(parts, 0)
    return out_t.squeeze(0) if np.ndim(q._data if isinstance(q, Tensor) else q) == 0 else out_t


def _unfold(self, dimension, size, step):
    """``Tensor.unfold``: windows of ``size`` every ``step`` along ``dimension``, as a new last dim."""
    d = dim_tuple(dimension, self.dim(), "unfold")[0] if self.dim() else 0
    n = self.shape[d] if self.dim() else 1
    starts = np.arange(0, n - int(size) + 1, int(step))
    index = starts[:, None] + np.arange(int(size))[None, :]
    picked = self[(slice(None),) * d + (Tensor._wrap(index),)]
    return picked.movedim(d + 1, -1)


def _fill_diagonal_(self, fill_value, wrap=False):
    """``Tensor.fill_diagonal_``: the main diagonal (all dims equal index); ``wrap`` restarts it below a tall
    matrix's square, every ``ncols + 1`` elements of the flattened storage, as torch does."""
    mask = np.zeros(self._data.shape, bool)
    if wrap and self.dim() == 2:
        mask.reshape(-1)[::self.shape[1] + 1] = True
    else:
        k = np.arange(min(self.shape))
        mask[(k,) * self.dim()] = True
    return self.masked_fill_(Tensor._wrap(mask), fill_value)


FUNCTIONS = ("pi", "e", "inf", "nan", "ceil", "trunc", "fix", "frac", "sgn", "fmod", "remainder", "floor_divide",
             "fmax", "fmin", "heaviside", "logical_and", "logical_or", "logical_not", "logical_xor", "clamp_min",
             "clamp_max", "nan_to_num", "var_mean", "std_mean", "dist", "cdist", "cosine_similarity",
             "pairwise_distance", "cummax", "cummin", "logcumsumexp", "diff", "tril_indices", "triu_indices",
             "cartesian_prod", "combinations", "baddbmm", "addmv", "chain_matmul", "finfo", "iinfo", "typename",
             "result_type", "promote_types", "is_floating_point", "round", "logspace", "quantile")
METHODS = ("ceil", "trunc", "fix", "frac", "sgn", "fmod", "remainder", "floor_divide", "fmax", "fmin", "heaviside",
           "logical_and", "logical_or", "logical_not", "logical_xor", "clamp_min", "clamp_max", "nan_to_num", "dist",
           "cummax", "cummin", "logcumsumexp", "diff", "baddbmm", "addmv", "quantile")


def install(T) -> None:
    g = globals()
    for name in METHODS:
        setattr(T, name, g[name])
    T.type_as = lambda self, other: self.to(other.dtype)
    T.__mod__ = remainder  # ``a % b`` is torch.remainder (Python's sign rule), reflected and in place too
    T.__rmod__ = lambda self, other: remainder(other, self)  # a number first: promoted as torch promotes it
    T.__floordiv__ = floor_divide  # torch's promotion and wrapping, not NumPy's (int8 // 300 is no OverflowError)
    T.__rfloordiv__ = lambda self, other: floor_divide(other, self)
    T.element_size = lambda self: self._data.dtype.itemsize
    T.nelement = T.numel
    T.ndimension = T.dim
    T.where = lambda self, condition, other: _where(condition, self, other)
    T.unfold = _unfold
    T.fill_diagonal_ = _fill_diagonal_
    T.is_contiguous = lambda self, memory_format=None: type(self._data) is not np.ndarray or \
        self._data.flags["C_CONTIGUOUS"]
    T.stride = lambda self, dim=None: (tuple(s // self._data.itemsize for s in self._data.strides) if dim is None
                                       else self._data.strides[dim] // self._data.itemsize)
    T.share_memory_ = T.pin_memory = lambda self, *args, **kwargs: self  # one CPU process: nothing to move
    for name in ("lerp", "clip", "clamp_min", "clamp_max", "remainder", "fmod", "frac", "ceil", "trunc"):
        target = getattr(T, name)
        setattr(T, name + "_", (lambda f: lambda self, *a, **k: self._inplace(lambda s: f(s, *a, **k)))(target))
    T.__imod__ = T.remainder_


def _where(condition, a, b):
    from gradc.facade.functional import where
    return where(condition, a, b)

accept_traced_everywhere(globals(), FUNCTIONS)  # torch-style code given to gradc.grad on NumPy arrays
