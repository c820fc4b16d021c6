"""torch-level tensor functions (``torch.add``, ``torch.matmul``, ``torch.sum``, ...) for the facade.

Each function checks arguments the way torch words its errors, then records one node
(``gradc.facade.record``) whose forward and VJP are gradc ops.
"""
from __future__ import annotations

import warnings

import numpy as np

import gradc.ops.complex_numbers as cx
import gradc.ops.elementwise as ew
import gradc.ops.linalg as la
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.facade import dtypes, fast_ops, grad_mode, torch_sum
from gradc.facade.creation import tensor
from gradc.facade.fast_ops import SAVES
from gradc.facade.fast_ops import saved_by as _saved_by
from gradc.facade.record import record
from gradc.facade.tensor import MinMax, Tensor


def as_tensor_operand(x):
    """Tensors and Python numbers pass through; arrays and lists become Tensors."""
    if isinstance(x, (Tensor, bool, int, float, complex)):
        return x
    return tensor(x)


def cast(x, dt):
    """``x`` (array, Tensor stand-in or Python number) in dtype ``dt`` (a gradc op when it changes)."""
    if isinstance(x, (bool, int, float, complex)):
        return scalar_array(x, dt)
    return ew.astype(x, dtype_key(dt))


def scalar_array(x, dt):
    """A Python number as a 0-d array of ``dt``; an int out of a narrow integer's range wraps as torch's cast does
    (``uint8 + 300`` adds 44), where NumPy would raise OverflowError.

    >>> import gradc.torch as torch
    >>> int(scalar_array(300, torch.uint8))
    44
    """
    if dt.kind == 1 and type(x) is int and dt.np.itemsize < 8:
        return np.asarray(np.int64(x)).astype(dt.np)
    return np.asarray(x, dt.np)


_KEYS = {"float32": "f32", "float64": "f64", "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8",
         "uint8": "u8", "bool": "bool", "complex64": "c64", "complex128": "c128"}


def dtype_key(dt):
    """The IR's dtype for the facade dtype ``dt``; a clear error for one gradc does not compute in (float16).

    >>> import gradc.torch as torch
    >>> dtype_key(torch.float32)
    'f32'
    """
    key = _KEYS.get(dt.name)
    if key is None:
        raise TypeError(f"gradc's Tensor facade cannot compute in torch.{dt.name}: its ops run in "
                        f"{', '.join('torch.' + name for name in _KEYS)}; convert with .float() or .double()")
    return key


def check_broadcast(a, b):
    data_a, data_b = getattr(a, "_data", None), getattr(b, "_data", None)
    if data_a is not None and data_b is not None and data_a.shape == data_b.shape:
        return
    sa = tuple(getattr(a, "shape", ()))
    sb = tuple(getattr(b, "shape", ()))
    for i in range(1, min(len(sa), len(sb)) + 1):
        x, y = sa[-i], sb[-i]
        if x != y and x != 1 and y != 1:
            dim = max(len(sa), len(sb)) - i
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {dim}")


_BINARY = {"add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div, "pow": ew.power,
           "maximum": ew.maximum, "minimum": ew.minimum}


def binary(op, a, b, name, out_dtype=None, slots=None):
    if out_dtype is None:
        out = fast_ops.binary(op, a, b, name)
        if out is not None:
            return out
    a, b = as_tensor_operand(a), as_tensor_operand(b)
    check_broadcast(a, b)
    dt = dtypes.promote(a, b)
    if op in ("div", "pow") and out_dtype is None and dt.kind < 2 and (op == "div" or _is_float(b)):
        dt = dtypes.DEFAULT[0]
    gfn = _BINARY[op]

    def fn(x, y):
        return gfn(_cast_fast(x, dt), _cast_fast(y, dt))
    return record(name, fn, [a, b], saves=op in SAVES, saved=_saved_by(op, a, b))


def _is_float(x):
    return isinstance(x, (float, complex)) or getattr(getattr(x, "dtype", None), "kind", 0) >= 2


def compare(op, a, b):
    a, b = as_tensor_operand(a), as_tensor_operand(b)
    check_broadcast(a, b)
    dt = dtypes.promote(a, b)
    if dt.kind == 3 and op not in ("equal", "not_equal"):  # complex numbers have no order
        kernel = {"less": "lt", "less_equal": "le", "greater": "gt", "greater_equal": "ge"}.get(op, op)
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for \'{dt.legacy[:-len("Tensor")]}\'')
    gfn = getattr(ew, op)
    return record(op, lambda x, y: gfn(cast(x, dt), cast(y, dt)), [a, b], nondiff=True)


def add(a, b, alpha=1):
    return binary("add", a, b, "AddBackward0") if alpha == 1 else _scaled("add", a, b, alpha, "AddBackward0")


def refuse_bool_subtraction(a, b) -> None:
    """torch's refusal of ``-`` when an operand is a bool (tensor or Python bool), in its words.

    >>> try:
    ...     refuse_bool_subtraction(True, 1.0)
    ... except RuntimeError as e:
    ...     print(str(e)[:60])
    Subtraction, the `-` operator, with a bool tensor is not sup
    """
    bools = [type(x) is bool or getattr(getattr(x, "dtype", None), "kind", 1) == 0 for x in (a, b)]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
                           "`logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
                           "invert a mask, use the `~` or `logical_not()` operator instead.")


def sub(a, b, alpha=1):
    refuse_bool_subtraction(a, b)
    return binary("sub", a, b, "SubBackward0") if alpha == 1 else _scaled("sub", a, b, alpha, "SubBackward0")


def _scaled(op, a, b, alpha, name):
    """``a op alpha * b`` as one node, as torch's ``add``/``sub`` with ``alpha``."""
    a, b = as_tensor_operand(a), as_tensor_operand(b)
    check_broadcast(a, b)
    dt = dtypes.promote(a, b)
    gfn = _BINARY[op]
    return record(name, lambda x, y: gfn(_cast_fast(x, dt), ew.mul(_cast_fast(y, dt), _cast_fast(alpha, dt))),
                  [a, b])


def rsub(a, other):
    """``other - a`` for a Python number ``other`` (torch's RsubBackward1, one slot)."""
    refuse_bool_subtraction(other, a)
    dt = dtypes.promote(a, other)
    return record("RsubBackward1", lambda x: ew.sub(scalar_array(other, dt), cast(x, dt)), [a])


def mul(a, b):
    return binary("mul", a, b, "MulBackward0")


def div(a, b):
    return binary("div", a, b, "DivBackward0")


def reciprocal(a):
    dt = a.dtype if a.dtype.kind >= 2 else dtypes.DEFAULT[0]
    return record("ReciprocalBackward0", lambda x: ew.div(np.asarray(1, dt.np), cast(x, dt)), [a],
                  saves=True, saved=[a])


def pow(a, b):  # noqa: A001 - torch name
    if isinstance(a, (bool, int, float)):
        dt = dtypes.promote(a, b)
        return record("PowBackward2", lambda y: ew.power(scalar_array(a, dt), cast(y, dt)), [b],
                      saves=True, saved=[b])
    name = "PowBackward1" if isinstance(b, Tensor) else "PowBackward0"
    return binary("pow", a, b, name)


def maximum(a, b):
    return binary("maximum", a, b, "MaximumBackward0")


def minimum(a, b):
    return binary("minimum", a, b, "MinimumBackward0")


UNARY = {
    "exp": (ew.exp, "ExpBackward0", "out"), "log": (ew.log, "LogBackward0", "in"),
    "sin": (ew.sin, "SinBackward0", "in"), "cos": (ew.cos, "CosBackward0", "in"),
    "tanh": (ew.tanh, "TanhBackward0", "out"), "sqrt": (ew.sqrt, "SqrtBackward0", "out"),
    "abs": (ew.abs_, "AbsBackward0", "in"), "neg": (ew.neg, "NegBackward0", None),
    "log1p": (ew.log1p, "Log1PBackward0", "in"), "expm1": (ew.expm1, "Expm1Backward0", "out"),
    "tan": (ew.tan, "TanBackward0", "out"), "sinh": (ew.sinh, "SinhBackward0", "in"),
    "cosh": (ew.cosh, "CoshBackward0", "in"), "atan": (ew.arctan, "AtanBackward0", "in"),
    "sign": (ew.sign, "SignBackward0", None), "floor": (ew.floor, "FloorBackward0", None),
}


def _float_of(a):
    return a.dtype if a.dtype.kind >= 2 else dtypes.DEFAULT[0]  # complex stays complex


# the array function of each (op, dtype), made once: a closure per call would be two more objects per graph node
_UNARY_FNS: dict = {}


def _unary_fn(gfn, dt):
    def fn(x):
        return gfn(cast(x, dt))
    return fn


def unary(name, a):
    gfn, node, saves = UNARY[name]
    dt = _float_of(a) if name not in ("neg", "abs", "sign") else a.dtype
    fn = _UNARY_FNS.get((name, dt))
    if fn is None:
        fn = _UNARY_FNS[name, dt] = _unary_fn(gfn, dt)
    out = fast_ops.unary(node, fn, a, saves is not None, saves == "in", saves == "out")
    if out is not None:
        return out
    return record(node, fn, [a], saves=saves is not None, saved=[a] if saves == "in" else (),
                  out_saved=saves == "out")


def sigmoid(a):
    dt = _float_of(a)
    fn = _UNARY_FNS.get(("sigmoid", dt))
    if fn is None:
        fn = _UNARY_FNS["sigmoid", dt] = _unary_fn(_sigmoid, dt)
    out = fast_ops.unary("SigmoidBackward0", fn, a, True, False, True)
    if out is not None:
        return out
    return record("SigmoidBackward0", fn, [a], saves=True, out_saved=True)


def _sigmoid(x):
    return ew.div(1.0, ew.add(ew.exp(ew.neg(x)), 1.0))


def relu(a):
    out = fast_ops.unary("ReluBackward0", _relu, a, True, False, True)
    if out is not None:
        return out
    return record("ReluBackward0", _relu, [a], saves=True, out_saved=True)


def _relu(x):
    return ew.where(ew.greater(x, 0), x, ew.zeros_like(x))


def square(a):
    return pow(a, 2)


def clamp(a, min=None, max=None):  # noqa: A002 - torch names
    if a.dtype.kind == 3:  # complex numbers have no order
        raise NotImplementedError("clamp is not supported for complex types")
    return record("ClampBackward1", lambda x: ew.clip(x, min, max), [a], saves=True, saved=[a])


def _condition(cond):
    """``where``'s condition as torch takes it: a bool tensor (a traced one stays traced under torch.compile), a
    uint8 one with torch's deprecation warning; other dtypes refused in torch's words."""
    if not isinstance(cond, Tensor):
        return np.asarray(cond, bool)
    if cond.dtype.kind != 0:
        if cond.dtype.name != "uint8":
            raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor with dtype "
                               + cond.dtype.legacy[:-len("Tensor")])
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and will be removed in "
                      "a future version of PyTorch. Use a boolean condition instead.", UserWarning, stacklevel=3)
        return ew.astype(cond._data, "bool")
    return cond._data


def where(cond, a, b):
    a, b = as_tensor_operand(a), as_tensor_operand(b)
    dt = dtypes.promote(a, b)
    c = _condition(cond)
    return record("WhereBackward0", lambda x, y: ew.where(c, cast(x, dt), cast(y, dt)), [a, b],
                  saves=True)


# ---------------------------------------------------------------- reductions
def _dims(dim, ndim):
    if dim is None:
        return None
    dims = dim if isinstance(dim, (tuple, list)) else (dim,)
    return tuple(int(d) % max(ndim, 1) for d in dims)


def sum(a, dim=None, keepdim=False, dtype=None):  # noqa: A001 - torch name
    if dim is None and dtype is None:
        out = fast_ops.reduce_all("sum", a, "SumBackward0")
        if out is not None:
            return out
    dims = _dims(dim, a.dim())
    dt = dtypes.to_dtype(dtype) or (a.dtype if a.dtype.kind >= 2 else dtypes.int64)
    name = "SumBackward0" if dim is None else "SumBackward1"
    out = record(name, lambda x: rd.sum_(cast(x, dt), dims, keepdims=keepdim and dims is not None), [a])
    return _in_torch_order(out, a, dims, keepdim and dims is not None)


def _in_torch_order(out, a, dims, keepdim, count=None):
    """``out`` (a float32 sum, or a mean when ``count`` is given) with the value torch's summation order gives
    (``gradc.facade.torch_sum``); the recorded node and its gradient are unchanged."""
    data = a._data
    if type(data) is np.ndarray and data.dtype == np.float32 and out._data.dtype == np.float32 and data.size:
        value = torch_sum.torch_order_sum(data, dims, keepdim)
        if value is not None:
            out._data = value if count is None else (value / np.float32(count)).astype(np.float32)
    return out


def mean(a, dim=None, keepdim=False):
    if a.dtype.kind < 2:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point or "
                           "complex dtype. Got: " + a.dtype.legacy[:-len("Tensor")])
    if dim is None:
        out = fast_ops.reduce_all("mean", a, "MeanBackward0")
        if out is not None:
            return out
    dims = _dims(dim, a.dim())
    name = "MeanBackward0" if dim is None else "MeanBackward1"
    out = record(name, lambda x: rd.mean(x, dims, keepdims=keepdim and dims is not None), [a])
    count = a.numel() if dims is None else int(np.prod([a.shape[d] for d in dims], dtype=np.int64))
    return _in_torch_order(out, a, dims, keepdim and dims is not None, count)


def prod(a, dim=None, keepdim=False):
    dims = _dims(dim, a.dim())
    name = "ProdBackward0" if dims is None else "ProdBackward1"
    return record(name, lambda x: rd.prod(x, dims, keepdims=keepdim), [a], saves=True, saved=[a])


def _traced_extremum(kind, a, d, keepdim):
    """``max``/``min`` along ``d`` of a traced tensor: values gathered at the (first) arg-extremum, so the gradient
    goes to that one element as in eager mode and torch."""
    idx = (rd.argmax if kind == "max" else rd.argmin)(a._data, d)
    shape = list(a.shape)
    shape[d] = 1
    pick = sh.reshape(idx, tuple(shape))
    values = record(kind.capitalize() + "Backward0",
                    lambda x: sh.take_along_axis(x, pick, d) if keepdim else
                    sh.reshape(sh.take_along_axis(x, pick, d), tuple(idx.shape)), [a])
    return MinMax(kind, values, Tensor._wrap(pick if keepdim else idx))


def extremum(kind, a, dim=None, keepdim=False):
    red = rd.max_ if kind == "max" else rd.min_
    arg = rd.argmax if kind == "max" else rd.argmin
    cap = kind.capitalize()
    if dim is None:
        return record(cap + "Backward1", lambda x: red(x), [a], saves=True, saved=[a])
    d = _dims(dim, a.dim())[0]
    if type(a._data) is not np.ndarray:  # traced by torch.compile: the index is a value of the graph
        return _traced_extremum(kind, a, d, keepdim)
    idx = np.asarray(arg(a._data, d))
    pick = np.expand_dims(idx, d)

    def fn(x):
        grid = list(np.indices(pick.shape, sparse=True))
        grid[d] = pick
        spec = tuple(("array", k) for k in range(len(grid)))
        out = sh.gather(x, [np.broadcast_to(g, pick.shape) for g in grid], spec)
        return out if keepdim else sh.reshape(out, idx.shape)
    values = record(cap + "Backward0", fn, [a], saves=True, saved=[a])
    return MinMax(kind, values, Tensor._wrap(idx if not keepdim else pick))


# ---------------------------------------------------------------- linear algebra
def _mm_error(a, b):
    sa = a.shape if a.dim() == 2 else (1,) + tuple(a.shape)
    raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({sa[0]}x{sa[1]} and {b.shape[0]}x{b.shape[1]})")


_CPP_TYPE = {"float16": "c10::Half", "float32": "float", "float64": "double", "int32": "int", "int64": "long int",
             "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _same_dtype(a, b, kernel: str) -> None:
    """torch's refusal of a matrix product of two dtypes (no promotion there, unlike ``*``), in the words of the
    kernel that ``matmul`` dispatches to (``dot``, ``addmv``, ``mm``, ``bmm``)."""
    da, db = a.dtype, b.dtype
    if da is db:
        return
    ta, tb = da.legacy[:-len("Tensor")], db.legacy[:-len("Tensor")]
    if kernel == "dot":
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found {ta} and {tb}")
    if kernel == "addmv":
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got {tb}, {ta}, and {tb}")
    if kernel == "bmm":
        raise RuntimeError(f"expected scalar type {ta} but found {tb}")
    raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_CPP_TYPE[da.name]} != "
                       f"{_CPP_TYPE[db.name]}")


def _matmul_kernel(da: int, db: int) -> str:
    """The kernel torch's ``matmul`` reaches for operands of ``da`` and ``db`` dimensions (its error's words)."""
    if da == 1 and db == 1:
        return "dot"
    if db == 1:
        return "addmv"
    if db == 2:
        return "mm"
    return "bmm"


def _mm_fn(dt):
    if dt.kind == 1:  # gradc's matmul computes integers in float64 (exact below 2**53): back to dt, wrapping as torch
        key = dtype_key(dt)
        return lambda x, y: ew.astype(ew.astype(la.matmul(_cast_fast(x, dt), _cast_fast(y, dt)), "i64"), key)
    return lambda x, y: la.matmul(_cast_fast(x, dt), _cast_fast(y, dt))


def _cast_fast(x, dt):
    return x if type(x) is np.ndarray and x.dtype is dt.np else cast(x, dt)


def mm(a, b):
    sa, sb = a._data.shape, b._data.shape
    if len(sa) != 2:
        raise RuntimeError("self must be a matrix")
    if len(sb) != 2:
        raise RuntimeError("mat2 must be a matrix")
    if sa[1] != sb[0]:
        _mm_error(a, b)
    _same_dtype(a, b, "mm")
    return record("MmBackward0", _mm_fn(dtypes.promote(a, b)), [a, b], saves=True, saved=[a, b])


def matmul(a, b):
    a, b = as_tensor_operand(a), as_tensor_operand(b)
    da, db = a.dim(), b.dim()
    if da and db:
        _same_dtype(a, b, _matmul_kernel(da, db))
    if da == 1 and db == 2:
        if a._data.shape[0] != b._data.shape[0]:
            _mm_error(a, b)
        return squeeze(mm(a.unsqueeze(0), b), 0, name="SqueezeBackward4")
    if da == 2 and db == 2:
        return mm(a, b)
    dt = dtypes.promote(a, b)
    if da == 1 and db == 1:
        if a.shape[0] != b.shape[0]:
            raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                               f"have the same number of elements, but got {a.shape[0]} and {b.shape[0]} elements "
                               "respectively")
        return record("DotBackward0", _mm_fn(dt), [a, b], saves=True, saved=[a, b])
    if da == 2 and db == 1:
        if a.shape[1] != b.shape[0]:
            _mm_error(a, b)
        return record("MvBackward0", _mm_fn(dt), [a, b], saves=True, saved=[a, b])
    if da == 0 or db == 0:
        return record("UnsafeViewBackward0", _mm_fn(dt), [a, b], saves=True, saved=[a, b])  # NumPy's error
    return _matmul_folded(a, b, da, db)


def _matmul_folded(a, b, da, db):
    """torch's graph for a matmul with a batch: fold the batch into rows (``mm``/``mv``), fold a batched right
    operand transposed (``(b.mT @ a.mT).mT``), else expand both batches and ``bmm``."""
    k = a.shape[-1]
    if (da != 1 and k != b.shape[-2 if db >= 2 else 0]) or (da == 1 and k != b.shape[-2]):
        return record("UnsafeViewBackward0", _mm_fn(dtypes.promote(a, b)), [a, b])  # NumPy's error
    if da == 3 and db == 3 and (a.shape[0] == 1) != (b.shape[0] == 1):  # a batch of one against a batch: 2-D
        if a.shape[0] == 1:
            a, da = a.squeeze(0), 2
        else:
            b, db = b.squeeze(0), 2
    if da >= 3 and db <= 2:
        rows = a.reshape(-1, k)
        out = mm(rows, b) if db == 2 else matmul(rows, b)
        return _unsafe_view(out, tuple(a.shape[:-1]) + tuple(b.shape[1:]))
    if db >= 3 and da <= 2:
        cols = b.transpose(-1, -2).reshape(-1, k)
        if da == 1:
            return _unsafe_view(matmul(cols, a), tuple(b.shape[:-2]) + (b.shape[-1],))
        out = _unsafe_view(mm(cols, a.t()), tuple(b.shape[:-2]) + (b.shape[-1], a.shape[0]))
        return contiguous(out.transpose(-1, -2))
    batch = tuple(np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2])))
    n, p = a.shape[-2], b.shape[-1]
    left = a.expand(batch + (n, k)).reshape(-1, n, k)
    right = b.expand(batch + (k, p)).reshape(-1, k, p)
    return _unsafe_view(bmm(left, right), batch + (n, p))


def _unsafe_view(a, shape):
    return record("UnsafeViewBackward0", lambda x: sh.reshape(x, shape), [a])


def bmm(a, b):
    _same_dtype(a, b, "bmm")
    return record("BmmBackward0", _mm_fn(dtypes.promote(a, b)), [a, b], saves=True, saved=[a, b])


# ---------------------------------------------------------------- shape
def squeeze(a, dim=None, name=None):
    shape = a._data.shape
    if dim is None:
        new = tuple(d for d in shape if d != 1)
    elif isinstance(dim, (tuple, list)):  # torch >= 2.0: several dims at once, each squeezed where its size is 1
        n = max(a.dim(), 1)
        dims = []
        for k in dim:
            if not -n <= int(k) < n:
                raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {k})")
            if int(k) % n in dims:
                raise RuntimeError(f"dim {int(k) % n} appears multiple times in the list of dims")
            dims.append(int(k) % n)
        new = tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1))
    else:
        d = int(dim) % max(a.dim(), 1)
        new = shape[:d] + shape[d + 1:] if shape and shape[d] == 1 else shape
    name = name or ("SqueezeBackward0" if dim is None else "SqueezeBackward2" if isinstance(dim, (tuple, list))
                    else "SqueezeBackward1")
    return record(name, lambda x: sh.reshape(x, new), [a])


def unsqueeze(a, dim):
    shape = a._data.shape
    d = int(dim) % (len(shape) + 1)
    new = shape[:d] + (1,) + shape[d:]
    return record("UnsqueezeBackward0", lambda x: sh.reshape(x, new), [a])


def permute(a, dims, name="PermuteBackward0"):
    perm = tuple(int(d) % max(a.dim(), 1) for d in dims)
    return record(name, lambda x: sh.transpose(x, perm), [a])


def transpose(a, d0, d1, name="TransposeBackward0"):
    perm = list(range(a.dim()))
    d0, d1 = int(d0) % max(a.dim(), 1), int(d1) % max(a.dim(), 1)
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return permute(a, perm, name)


def cat(tensors, dim=0):
    d = int(dim) % tensors[0].dim()
    dt = dtypes.promote(*tensors)
    fn = _CAT_FNS.get((dt, d))
    if fn is None:  # one function per (dtype, dim), shared by every node (a closure per call: three more objects)
        fn = _CAT_FNS[dt, d] = _cat_fn(dt, d)
    return record("CatBackward0", fn, list(tensors))


_CAT_FNS: dict = {}


def _cat_fn(dt, d):
    return lambda *xs: sh.concatenate([cast(x, dt) for x in xs], d)


def stack(tensors, dim=0):
    d = int(dim) % (tensors[0].dim() + 1)
    new = tuple(tensors[0].shape[:d]) + (1,) + tuple(tensors[0].shape[d:])
    return record("StackBackward0", lambda *xs: sh.concatenate([sh.reshape(x, new) for x in xs], d),
                  list(tensors))


def norm(a):
    return record("LinalgVectorNormBackward0", lambda x: ew.sqrt(rd.sum_(ew.mul(x, x))), [a], saves=True, saved=[a])


def var(a, dim=None, unbiased=True, keepdim=False, correction=None, name="VarBackward0"):
    dims = _dims(dim, a.dim())
    n = a.numel() if dims is None else int(np.prod([a.shape[d] for d in dims]))
    ddof = (1 if unbiased else 0) if correction is None else correction

    def fn(x):
        centred = ew.sub(x, rd.mean(x, dims, keepdims=True))
        if a.dtype.kind == 3:  # torch: the mean of |z - mean|**2, a real value
            re, im = cx.real(centred), cx.imag(centred)
            squares = ew.add(ew.mul(re, re), ew.mul(im, im))
        else:
            squares = ew.mul(centred, centred)
        v = ew.div(rd.sum_(squares, dims, keepdims=keepdim), float(n - ddof))
        return ew.sqrt(v) if name == "StdBackward0" else v
    return record(name, fn, [a], saves=True, saved=[a], out_saved=name == "StdBackward0")


def std(a, dim=None, unbiased=True, keepdim=False, correction=None):
    return var(a, dim, unbiased, keepdim, correction, name="StdBackward0")


def repeat(a, *reps):
    reps = tuple(reps[0]) if len(reps) == 1 and isinstance(reps[0], (tuple, list)) else tuple(int(r) for r in reps)
    shape = (1,) * (len(reps) - a.dim()) + tuple(a.shape)
    split = tuple(v for s in shape for v in (1, s))
    wide = tuple(v for r, s in zip(reps, shape) for v in (r, s))
    final = tuple(r * s for r, s in zip(reps, shape))
    return record("RepeatBackward0", lambda x: sh.reshape(sh.broadcast_to(sh.reshape(x, split), wide), final), [a])


def _frozen(f):
    """A zero-derivative function of the data (the result never carries a graph)."""
    def apply(x):
        return Tensor._wrap(f(x._data)) if isinstance(x, Tensor) else f(np.asarray(x))
    return apply


def round(a, decimals=0):  # noqa: A001 - torch name
    return record("RoundBackward0", _frozen(lambda v: np.round(v, decimals)), [a])


def contiguous(a):
    data = a._data
    if type(data) is not np.ndarray:  # traced: torch.compile's trace knows the memory layout
        tracing = grad_mode._STATE["tracing"]
        if tracing is None or tracing.contiguous(data):
            return a
    elif data.flags["C_CONTIGUOUS"]:
        return a
    out = record("CloneBackward0", lambda x: x, [a])
    out._data = np.ascontiguousarray(out._data) if type(data) is np.ndarray else out._data.copy()
    return out
