"""More of torch's tensor functions: ``einsum``, ``repeat_interleave``, ``logsumexp``, ``cross``, cumulative sums,
triangles, trigonometry, the special functions' top-level names, and the Tensor methods that go with them.

Each is a gradc op (or composition) lifted into one recorded node (``gradc.facade.lift``), so
it is differentiable through the facade's autograd. ``install(Tensor)`` adds the methods;
``FUNCTIONS`` are the ``torch.*`` names ``torch_api`` exports.

>>> import gradc.torch as torch
>>> a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
>>> torch.einsum("ij,ij->", a, a).backward(); a.grad
tensor([[2., 4.],
        [6., 8.]])
>>> torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([2, 1]))
tensor([1, 1, 2])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.complex_numbers as cx
import gradc.ops.contract as ct
import gradc.ops.elementwise as ew
import gradc.ops.reduce as rd
import gradc.ops.special_numpy as sn
import gradc.ops.stats as st
from gradc.facade import dtypes, linalg, special
from gradc.facade.lift import accept_traced_everywhere, apply, as_int_array, dim_tuple, operand
from gradc.facade.tensor import Tensor
from gradc.facade.torch_args import with_out
from gradc.ops.linalg_decomp import tri
from gradc.ops.values import aval


def einsum(equation, *operands):
    """``torch.einsum(equation, *operands)`` (or a list of operands): any NumPy einsum equation."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str):
        raise TypeError("einsum(): the first argument must be the equation string (the sublist form is not "
                        "supported by gradc's facade)")
    ts = [operand(x) for x in operands]
    # torch's einsum ends in a reshape (ViewBackward0) after its contraction, in a permute or sum alone
    eq = equation.replace(" ", "")
    node = "ViewBackward0"
    if len(ts) == 1:
        node = "PermuteBackward0" if "->" in eq and len(eq.split("->")[1]) == len(eq.split("->")[0]) else "SumBackward1"
    return apply(node, lambda *xs: ct.einsum(eq, *xs), *ts, floating=False, same_dtype=True)  # ints stay ints


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):  # noqa: A002 - torch name
    """Each element (or slice along ``dim``) repeated ``repeats`` times; ``repeats`` an int or a 1-D tensor.

    With only a tensor of counts, ``repeat_interleave(counts)`` repeats ``0, 1, ...`` by the counts.
    """
    if repeats is None:
        counts = as_int_array(input)
        if counts.ndim > 1:
            raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
        return Tensor._wrap(np.repeat(np.arange(counts.shape[0], dtype=np.int64), counts))
    x = operand(input)
    if dim is None:
        x, dim = x.reshape(-1), 0
    d = dim_tuple(dim, x.dim(), "repeat_interleave")[0]
    counts = as_int_array(repeats).astype(np.int64)
    size = x.shape[d] if x.dim() else 1
    if counts.ndim > 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    if counts.ndim == 1 and counts.shape[0] not in (1, size):
        raise RuntimeError("repeats must have the same size as input along dim, but got repeats.size(0) = "
                           f"{counts.shape[0]} and input.size({d}) = {size}")
    if np.any(counts < 0):
        raise RuntimeError("repeats can not be negative")
    index = np.repeat(np.arange(size, dtype=np.int64), np.broadcast_to(counts, (size,)))
    if output_size is not None and int(output_size) != index.shape[0]:
        raise RuntimeError(f"allocated size does not match required size ({output_size} vs {index.shape[0]})")
    if x.dim() == 0:
        x = x.reshape(1)
    from gradc.facade.tensor_select import pick_along
    return pick_along("ViewBackward0", x, d, index)


def logsumexp(input, dim, keepdim=False, *, out=None):  # noqa: A002 - dim is required, as in torch
    return special.logsumexp(input, dim, keepdim, out=out)


def cross(input, other, dim=None, *, out=None):  # noqa: A002
    """``torch.cross``: without ``dim``, the first dimension of length 3 (torch's deprecated default)."""
    input, other = operand(input), operand(other)
    if dim is None:
        shape = np.broadcast_shapes(tuple(input.shape), tuple(other.shape))
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return linalg.cross(input, other, dim=dim, out=out)


def _cumulative(name, node):
    def fn(input, dim, *, dtype=None, out=None):  # noqa: A002
        x = operand(input)
        if dtype is not None:  # torch casts the input first
            x = x.to(dtypes.to_dtype(dtype))
        d = dim_tuple(dim, x.dim(), name)[0] if x.dim() else 0
        scan = st.cumsum if name == "cumsum" else st.cumprod
        if name == "cumsum" and x.dtype.kind == 3:  # a linear scan: of each part
            scan = _complex_cumsum
        result = apply(node, lambda v: scan(v, d) if len(v.shape) else v, x,
                       floating=False)
        if result.dtype.kind < 2 and name == "cumsum" and result.dtype.name != "int64":
            result = result.long()
        return with_out(result, out, name)
    fn.__name__ = name
    return fn


def _complex_cumsum(v, d):
    one_j = np.asarray(1j, np.complex64 if aval(v).dtype == "c64" else np.complex128)
    key = aval(v).dtype
    return ew.add(ew.astype(st.cumsum(cx.real(v), d), key), ew.mul(ew.astype(st.cumsum(cx.imag(v), d), key), one_j))


cumsum = _cumulative("cumsum", "CumsumBackward0")
cumprod = _cumulative("cumprod", "CumprodBackward0")


def tril(input, diagonal=0, *, out=None):  # noqa: A002
    return with_out(apply("TrilBackward0", lambda v: tri(v, True, int(diagonal)), input, floating=False), out, "tril")


def triu(input, diagonal=0, *, out=None):  # noqa: A002
    return with_out(apply("TriuBackward0", lambda v: tri(v, False, int(diagonal)), input, floating=False), out, "triu")


def outer(input, vec2, *, out=None):  # noqa: A002
    # torch builds it as a column view times the row: MulBackward0 over (ViewBackward0 of input, vec2)
    column = operand(input).reshape(-1, 1)
    return with_out(apply("MulBackward0", lambda a, b: ew.mul(a, b), column, vec2), out, "outer")


def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    return with_out(apply("TensordotBackward0", lambda x, y: ct.tensordot(x, y, dims), a, b), out, "tensordot")


def kron(input, other, *, out=None):  # noqa: A002
    return with_out(apply("KronBackward0", ct.kron, input, other), out, "kron")


def trace(input):  # noqa: A002
    x = operand(input)
    if x.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.dim()}")
    return apply("TraceBackward0", ct.trace, x, floating=False)


def diag(input, diagonal=0, *, out=None):  # noqa: A002
    return with_out(apply("DiagBackward0", lambda v: ct.diag(v, int(diagonal)), input, floating=False), out, "diag")


def _simple(name, node, f, floating=True):
    def fn(input, *, out=None):  # noqa: A002
        return with_out(apply(node, f, input, floating=floating), out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


def _pair(name, node, f):
    def fn(input, other, *, out=None):  # noqa: A002
        return with_out(apply(node, f, input, other), out, name)
    fn.__name__ = fn.__qualname__ = name
    return fn


asin = arcsin = _simple("asin", "AsinBackward0", sn.arcsin)
acos = arccos = _simple("acos", "AcosBackward0", sn.arccos)
asinh = arcsinh = _simple("asinh", "AsinhBackward0", sn.arcsinh)
acosh = arccosh = _simple("acosh", "AcoshBackward0", sn.arccosh)
atanh = arctanh = _simple("atanh", "AtanhBackward0", sn.arctanh)
log2 = _simple("log2", "Log2Backward0", sn.log2)
log10 = _simple("log10", "Log10Backward0", sn.log10)
rsqrt = _simple("rsqrt", "RsqrtBackward0", lambda v: ew.div(1.0, ew.sqrt(v)))
erf, erfc, erfinv, exp2 = special.erf, special.erfc, special.erfinv, special.exp2
lgamma, digamma, i0, sinc = special.gammaln, special.digamma, special.i0, special.sinc
xlogy, polygamma, logit = special.xlogy, special.polygamma, special.logit
mvlgamma = special.multigammaln
atan2 = arctan2 = _pair("atan2", "Atan2Backward0", sn.arctan2)
hypot = _pair("hypot", "HypotBackward0", sn.hypot)
logaddexp = _pair("logaddexp", "LogaddexpBackward0", ew.logaddexp)
det, inverse, slogdet, logdet = linalg.det, linalg.inv, linalg.slogdet, linalg.logdet
matrix_exp, matrix_power, pinverse = linalg.matrix_exp, linalg.matrix_power, linalg.pinv


def lerp(input, end, weight, *, out=None):  # noqa: A002
    return with_out(apply("LerpBackward0", lambda a, b, w: ew.add(a, ew.mul(w, ew.sub(b, a))), input, end, weight),
                    out, "lerp")


def addmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):  # noqa: A002
    input, mat1, mat2 = operand(input), operand(mat1), operand(mat2)  # noqa: A001
    for name, t in (("self", input), ("mat1", mat1)):  # torch checks self first, then mat1; never promotes
        if isinstance(t, Tensor) and t.dtype is not mat2.dtype:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got {t.dtype.legacy[:-6]} and "
                               f"{mat2.dtype.legacy[:-6]}")
    return with_out(apply("AddmmBackward0", lambda c, a, b: ew.add(ew.mul(c, float(beta)),
                                                                   ew.mul(ct.einsum("ij,jk->ik", a, b), float(alpha))),
                          input, mat1, mat2), out, "addmm")


def addcmul(input, tensor1, tensor2, *, value=1, out=None):  # noqa: A002
    return with_out(apply("AddcmulBackward0", lambda c, a, b: ew.add(c, ew.mul(ew.mul(a, b), float(value))),
                          input, tensor1, tensor2), out, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):  # noqa: A002
    return with_out(apply("AddcdivBackward0", lambda c, a, b: ew.add(c, ew.mul(ew.div(a, b), float(value))),
                          input, tensor1, tensor2), out, "addcdiv")


def _extreme(name, node, red):
    def fn(input, dim=(), keepdim=False, *, out=None):  # noqa: A002
        x = operand(input)
        dims = tuple(range(x.dim())) if dim in ((), []) else dim_tuple(dim, x.dim(), name)
        return with_out(apply(node, lambda v: red(v, dims, keepdims=keepdim) if len(v.shape) else v, x,
                              floating=False), out, name)
    fn.__name__ = name
    return fn


amax = _extreme("amax", "AmaxBackward0", rd.max_)
amin = _extreme("amin", "AminBackward0", rd.min_)


def _frozen_bool(f):
    def fn(input):  # noqa: A002
        return Tensor._wrap(f(operand(input)._data))
    fn.__name__ = f.__name__
    return fn


isnan, isinf, isfinite = _frozen_bool(np.isnan), _frozen_bool(np.isinf), _frozen_bool(np.isfinite)
isposinf, isneginf = _frozen_bool(np.isposinf), _frozen_bool(np.isneginf)


SVDResult = linalg._return_type("svd", "U S V")


def svd(input, some=True, compute_uv=True, *, out=None):  # noqa: A002 - torch's names
    """``torch.svd`` (before ``torch.linalg.svd``): ``V`` rather than ``Vh`` (its node ``TransposeBackward0``, or
    ``TransposeBackward0`` of the conjugate for complex input), ``some`` for the reduced factors; without
    ``compute_uv``, zero ``U`` (m x m) and ``V`` (n x n), as torch gives them."""
    if not compute_uv:
        values = linalg.svdvals(input)
        m, n = input.shape[-2:]
        batch = tuple(input.shape[:-2])
        zeros = [Tensor._wrap(np.zeros(batch + (k, k), input._data.dtype)) for k in (m, n)]
        return with_out(SVDResult(zeros[0], values, zeros[1]), out, "svd")
    u, values, vh = linalg.svd(input, full_matrices=not some)
    v = vh.transpose(-2, -1) if not vh.is_complex() else vh.transpose(-2, -1).conj()
    return with_out(SVDResult(u, values, v), out, "svd")


FUNCTIONS = ("svd", "einsum", "repeat_interleave", "logsumexp", "cross", "cumsum", "cumprod", "tril", "triu", "outer",
             "tensordot", "kron", "trace", "diag", "asin", "arcsin", "acos", "arccos", "asinh", "arcsinh", "acosh",
             "arccosh", "atanh", "arctanh", "log2", "log10", "rsqrt", "erf", "erfc", "erfinv", "exp2", "lgamma",
             "digamma", "i0", "sinc", "xlogy", "polygamma", "logit", "mvlgamma", "atan2", "arctan2", "hypot",
             "logaddexp", "det", "inverse", "slogdet", "logdet", "matrix_exp", "matrix_power", "pinverse", "lerp",
             "addmm", "addcmul", "addcdiv", "amax", "amin", "isnan", "isinf", "isfinite", "isposinf", "isneginf")

# Tensor methods: the same functions with the tensor first (``x.erf()``, ``x.logsumexp(1)``, ...)
METHODS = ("svd", "repeat_interleave", "logsumexp", "cross", "cumsum", "cumprod", "tril", "triu", "outer", "kron",
           "trace", "diag", "asin", "arcsin", "acos", "arccos", "asinh", "arcsinh", "acosh", "arccosh", "atanh",
           "arctanh", "log2", "log10", "rsqrt", "erf", "erfc", "erfinv", "exp2", "lgamma", "digamma", "i0", "sinc",
           "xlogy", "logit", "mvlgamma", "atan2", "arctan2", "hypot", "logaddexp", "det", "inverse", "slogdet",
           "logdet", "matrix_exp", "matrix_power", "pinverse", "lerp", "addmm", "addcmul", "addcdiv", "amax", "amin",
           "isnan", "isinf", "isfinite", "isposinf", "isneginf")


def _norm_method(self, p="fro", dim=None, keepdim=False, dtype=None):
    """``Tensor.norm``: torch's ``p`` ('fro', 'nuc', a number) over ``dim`` (all dims by default)."""
    if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) != 2):
        p = 2
    if isinstance(p, str):
        return linalg.matrix_norm(self, p, (-2, -1) if dim is None else dim, keepdim)
    return linalg.vector_norm(self, p, dim, keepdim)


def install(T) -> None:
    """Attach ``METHODS`` (and ``polygamma``, whose order comes first in ``torch.polygamma``) to ``T``."""
    g = globals()
    for name in METHODS:
        setattr(T, name, g[name])
    T.polygamma = lambda self, n: polygamma(n, self)
    T.norm = _norm_method

accept_traced_everywhere(globals(), FUNCTIONS)  # torch-style code given to gradc.grad on NumPy arrays
