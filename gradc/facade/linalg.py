"""``torch.linalg``: norms, solves, inverses, determinants and the decompositions, on gradc's linear algebra.

Each function is gradc's NumPy-level linear algebra (``gradc.ops.linalg_api``, ``contract``,
``linalg_scipy``) lifted into one recorded node (``gradc.facade.lift``), so its gradient is the
registry's VJP rules, the ones the compiler differentiates with. Results that torch returns as
named tuples (``slogdet``, ``eigh``, ``svd``, ``qr``, ``lstsq``) are named tuples here too.
``eig`` and ``eigvals`` return complex tensors (complex64 for float32 input, as torch's).

>>> import gradc.torch as torch
>>> a = torch.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
>>> torch.linalg.det(a).backward(); a.grad.round(decimals=4)
tensor([[ 3., -1.],
        [-1.,  2.]])
"""
from __future__ import annotations

import numpy as np

import gradc.ops.contract as ct
import gradc.ops.elementwise as ew
import gradc.ops.linalg_api as la
import gradc.ops.linalg_scipy as ls
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.facade.functional import matmul as _facade_matmul
from gradc.facade.lift import accept_traced_everywhere, apply, apply_each, dim_tuple, operand
from gradc.facade.tensor import Tensor
from gradc.facade.torch_args import with_out
from gradc.ops.linalg import matmul as _matmul
from gradc.ops.linalg_decomp import mT


def _return_type(name, fields):
    """A named tuple printed as torch prints ``torch.return_types.<name>``."""
    import collections
    base = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{name}(\n{body})"
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": "torch.return_types"})


SlogdetResult = _return_type("linalg_slogdet", "sign logabsdet")
EighResult = _return_type("linalg_eigh", "eigenvalues eigenvectors")
EigResult = _return_type("linalg_eig", "eigenvalues eigenvectors")
SVDResult = _return_type("linalg_svd", "U S Vh")
QRResult = _return_type("linalg_qr", "Q R")
LstsqResult = _return_type("linalg_lstsq", "solution residuals rank singular_values")
InvExResult = _return_type("linalg_inv_ex", "inverse info")
CholeskyExResult = _return_type("linalg_cholesky_ex", "L info")


def _floating(A, what):
    """torch's refusal of integer input to ``torch.linalg`` (no promotion there, unlike elementwise ops)."""
    A = operand(A)
    if A.dtype.kind < 2:
        raise RuntimeError(f"linalg.{what}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype.legacy[:-len('Tensor')]}")
    return A


def _matrix(A, what):
    A = _floating(A, what)
    if A.dim() < 2:
        raise RuntimeError(f"linalg.{what}: The input tensor A must have at least 2 dimensions.")
    return A


def _square(A, what):
    A = _matrix(A, what)
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.{what}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")
    return A


# ---------------------------------------------------------------- norms
def _to_last(x, dims):
    """``x`` with axes ``dims`` moved to the end and merged into one (a vector norm over several dims)."""
    nd = len(x.shape) if hasattr(x, "shape") else np.ndim(x)
    rest = [d for d in range(nd) if d not in dims]
    moved = sh.transpose(x, tuple(rest) + tuple(dims))
    shape = tuple(x.shape[d] for d in rest)
    return sh.reshape(moved, shape + (int(np.prod([x.shape[d] for d in dims], dtype=np.int64)),))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002 - torch names
    """``torch.linalg.vector_norm``: ``sum(|x|**ord) ** (1/ord)`` over ``dim`` (all dims by default)."""
    x = _floating(x, "vector_norm")
    nd = x.dim()
    dims = tuple(range(nd)) if dim is None else dim_tuple(dim, nd, "linalg.vector_norm")
    p = float(ord)
    kept = tuple(1 if d in dims else s for d, s in enumerate(x.shape))

    def fn(v):
        if nd == 0:
            v = sh.reshape(v, (1,))
        r = la.norm(_to_last(v, dims) if nd else v, ord=p, axis=-1)
        return sh.reshape(r, kept) if keepdim else r
    with np.errstate(divide="ignore"):  # a negative ord of a vector with a zero is 0, as in torch, without a warning
        return with_out(apply("LinalgVectorNormBackward0", fn, x), out, "linalg.vector_norm")


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """``torch.linalg.matrix_norm``: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf over the two dims ``dim``."""
    A = _matrix(A, "matrix_norm")
    dims = dim_tuple(dim, A.dim(), "linalg.matrix_norm")
    if len(dims) != 2 or dims[0] == dims[1]:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple of different dimensions. Got {dim}")
    if ord not in ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")):
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    node = "LinalgVectorNormBackward0" if ord == "fro" else "LinalgMatrixNormBackward0"  # torch's: fro is a vector norm
    return with_out(apply(node, lambda v: la.norm(v, ord=ord, axis=dims, keepdims=keepdim), A),
                    out, "linalg.matrix_norm")


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    """``torch.linalg.norm``: a vector norm for one dim (or a flattened tensor), a matrix norm for two."""
    A = operand(A)  # integers are refused by vector_norm / matrix_norm, in torch's words
    if isinstance(ord, str) or (dim is not None and isinstance(dim, (tuple, list)) and len(dim) == 2) or (
            dim is None and ord is not None and A.dim() == 2):
        if dim is None and A.dim() != 2:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                               f"Got {A.dim()}D.")
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim, keepdim, out=out)
    if dim is None and ord is not None and A.dim() != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must be 1D or 2D. "
                           f"Got {A.dim()}D.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, out=out)


# ---------------------------------------------------------------- solves and inverses
def _vector_rhs(A, B):
    """torch's rule: B is a (batch of) vector(s) when 1-D or when its shape is A's without the last dim."""
    return B.dim() == 1 or (B.dim() == A.dim() - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def solve(A, B, *, left=True, out=None):
    """``torch.linalg.solve``: ``X`` with ``A @ X = B`` (``X @ A = B`` for ``left=False``), batches broadcast."""
    A, B = _square(A, "solve"), _floating(B, "solve")
    vector = _vector_rhs(A, B)

    def fn(a, b):
        if not left:
            a, b = mT(a), (b if vector else mT(b))
        if vector:
            b = sh.reshape(b, tuple(b.shape) + (1,))
        shape = np.broadcast_shapes(tuple(a.shape[:-2]), tuple(b.shape[:-2]))
        a = sh.broadcast_to(a, shape + tuple(a.shape[-2:]))
        b = sh.broadcast_to(b, shape + tuple(b.shape[-2:]))
        x = la.solve(a, b, what="torch.linalg.solve")
        if vector:
            return sh.reshape(x, tuple(x.shape[:-1]))
        return x if left else mT(x)
    return with_out(apply("LinalgSolveExBackward0", fn, A, B), out, "linalg.solve")


class LinAlgError(RuntimeError):
    """torch.linalg's error for a matrix the operation cannot handle (a singular one, say)."""


SolveExResult = _return_type("linalg_solve_ex", "result info")


def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    result = solve(A, B, left=left)
    return SolveExResult(result, Tensor._wrap(np.zeros(tuple(operand(A).shape[:-2]), np.int32)))


def cond(A, p=None, *, out=None):
    """``torch.linalg.cond``: ``norm(A, p) * norm(inv(A), p)`` (2-norm: the ratio of extreme singular values)."""
    A = _matrix(A, "cond")
    return with_out(apply("LinalgCondBackward0", lambda a: la.cond(a, p), A), out, "linalg.cond")


def vander(x, *, N=None):  # noqa: N803 - torch name
    """``torch.linalg.vander``: columns ``x**0, x**1, ..., x**(N-1)`` (increasing powers, unlike NumPy's default)."""
    x = operand(x)
    n = x.shape[-1] if N is None else int(N)
    powers = [x.unsqueeze(-1) ** k if k else (x.unsqueeze(-1) * 0 + 1) for k in range(n)]
    from gradc.facade.functional import cat
    return cat(powers, -1)


def inv(A, *, out=None):
    return with_out(apply("LinalgInvExBackward0", la.inv, _square(A, "inv")), out, "linalg.inv")


def inv_ex(A, *, check_errors=False, out=None):
    result = inv(A)
    return InvExResult(result, Tensor._wrap(np.zeros(result.shape[:-2], np.int32)))


def det(A, *, out=None):
    return with_out(apply("LinalgDetBackward0", la.det, _square(A, "det")), out, "linalg.det")


def slogdet(A, *, out=None):
    A = _square(A, "slogdet")
    sign = apply("LinalgSlogdetBackward0", lambda a: la.slogdet(a)[0], A, nondiff=True)
    return SlogdetResult(sign, apply("LinalgSlogdetBackward0", lambda a: la.slogdet(a)[1], A))


def logdet(A):
    """``torch.logdet``: ``log(det(A))``, NaN for a negative determinant (as torch)."""
    A = _square(A, "logdet")

    def fn(a):
        sign, logabs = la.slogdet(a)
        return ew.add(ew.log(sign), logabs)
    with np.errstate(invalid="ignore", divide="ignore"):
        return apply("LogdetBackward0", fn, A)


def cholesky(A, *, upper=False, out=None):
    A = _square(A, "cholesky")
    return with_out(apply("LinalgCholeskyExBackward0", lambda a: la.cholesky(a, upper=upper,
                                                                           what="torch.linalg.cholesky"), A),
                    out, "linalg.cholesky")


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    L = cholesky(A, upper=upper)
    return CholeskyExResult(L, Tensor._wrap(np.zeros(L.shape[:-2], np.int32)))


def matrix_power(A, n, *, out=None):
    return with_out(apply("LinalgMatrixPowerBackward0", lambda a: la.matrix_power(a, int(n)),
                          _square(A, "matrix_power")), out, "linalg.matrix_power")


def matrix_exp(A):
    A = _square(A, "matrix_exp")
    if A.dim() != 2:  # one expm per matrix of the batch
        from gradc.facade.functional import stack
        flat = A.reshape(-1, A.shape[-2], A.shape[-1])
        return stack([matrix_exp(flat[i]) for i in range(flat.shape[0])]).reshape(A.shape)
    return apply("LinalgMatrixExpBackward0", lambda a: ls.expm(a, what="torch.linalg.matrix_exp"), A)


def multi_dot(tensors, *, out=None):
    tensors = [operand(t) for t in tensors]
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    return with_out(apply("LinalgMultiDotBackward0", lambda *xs: la.multi_dot(list(xs)), *tensors), out,
                    "linalg.multi_dot")


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    A, B = _square(A, "solve_triangular"), operand(B)
    what = "torch.linalg.solve_triangular"

    def fn(a, b):
        if not left:  # X A = B is A^T X^T = B^T
            return mT(ls.solve_triangular(mT(a), mT(b), lower=upper, unit_diagonal=unitriangular, what=what))
        return ls.solve_triangular(a, b, lower=not upper, unit_diagonal=unitriangular, what=what)
    return with_out(apply("LinalgSolveTriangularBackward0", fn, A, B), out, "linalg.solve_triangular")


# ---------------------------------------------------------------- decompositions
def eigh(A, UPLO="L", *, out=None):  # noqa: N803 - torch name
    A = _square(A, "eigh")
    return EighResult(*apply_each("LinalgEighBackward0", lambda a: tuple(la.eigh(a, UPLO)), 2, A))


def eigvalsh(A, UPLO="L", *, out=None):  # noqa: N803
    return with_out(apply("LinalgEighBackward0", lambda a: la.eigvalsh(a, UPLO), _square(A, "eigvalsh")), out,
                    "linalg.eigvalsh")


def svd(A, full_matrices=True, *, driver=None, out=None):
    A = _matrix(A, "svd")
    m, n = A.shape[-2:]
    if full_matrices and m != n:
        if A.requires_grad:
            raise RuntimeError("linalg.svd: the derivative of full_matrices=True is not defined for a non-square "
                               "matrix (its extra singular vectors are not unique); pass full_matrices=False")
        u, s, vh = np.linalg.svd(A._data, full_matrices=True)
        return SVDResult(Tensor._wrap(u), Tensor._wrap(s), Tensor._wrap(vh))
    return SVDResult(*apply_each("LinalgSvdBackward0", lambda a: tuple(la.svd(a, full_matrices=False,
                                                                             what="torch.linalg.svd")), 3, A))


def svdvals(A, *, driver=None, out=None):
    return with_out(apply("LinalgSvdBackward0", lambda a: la.svd(a, compute_uv=False), _matrix(A, "svdvals")), out,
                    "linalg.svdvals")


def qr(A, mode="reduced", *, out=None):
    A = _matrix(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of 'reduced' (default), 'r', "
                           "or 'complete'")
    if mode == "r":
        r = apply("LinalgQrBackward0", lambda a: la.qr(a, mode="r", what="torch.linalg.qr"), A)
        return QRResult(Tensor._wrap(np.zeros((0,), r._data.dtype)), r)
    return QRResult(*apply_each("LinalgQrBackward0", lambda a: tuple(la.qr(a, mode=mode, what="torch.linalg.qr")),
                                2, A))


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """``torch.linalg.pinv``: singular values at most ``max(atol, rtol * max(S))`` count as zero (torch's
    default ``rtol`` is ``eps * max(m, n)`` when neither is given)."""
    A = _matrix(A, "pinv")
    m, n = A.shape[-2:]
    eps = float(np.finfo(A._data.dtype).eps) if A.dtype.kind == 2 else float(np.finfo(np.float32).eps)
    rel = (eps * max(m, n) if atol is None else 0.0) if rtol is None else float(rtol)
    abs_ = 0.0 if atol is None else float(atol)

    def fn(a):
        u, s, vh = la.svd(a, full_matrices=False)
        cut = ew.maximum(ew.mul(rd.max_(s, -1, keepdims=True), rel), abs_)
        big = ew.greater(s, cut)
        inv_s = ew.where(big, ew.div(1.0, ew.where(big, s, 1.0)), 0.0)
        return _matmul(ew.mul(mT(vh), sh.reshape(inv_s, tuple(s.shape[:-1]) + (1, s.shape[-1]))), mT(u))
    return with_out(apply("LinalgPinvBackward0", fn, A), out, "linalg.pinv")


def lstsq(A, B, rcond=None, *, driver=None):
    """``torch.linalg.lstsq``: the least-squares solution (batches broadcast, one system at a time); residuals and
    singular values are empty and rank is full, as torch's default CPU driver ('gelsy') reports them."""
    A, B = _matrix(A, "lstsq"), _floating(B, "lstsq")
    vector = B.dim() == 1
    if A.dim() == 2 and B.dim() <= 2:
        x = apply("LinalgLstsqBackward0", lambda a, b: la.lstsq(a, b, rcond, what="torch.linalg.lstsq")[0], A, B)
        rank = np.asarray(np.linalg.matrix_rank(A._data), np.int64)
    else:
        from gradc.facade.functional import stack
        if vector:
            raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to other.dim() and "
                               "(input.dim() - other.dim()) <= 1")
        batch = tuple(np.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2])))
        As = A.expand(*batch, *A.shape[-2:]).reshape(-1, *A.shape[-2:])
        Bs = B.expand(*batch, *B.shape[-2:]).reshape(-1, *B.shape[-2:])
        parts = [lstsq(As[i], Bs[i], rcond).solution for i in range(As.shape[0])]
        x = stack(parts).reshape(*batch, *parts[0].shape) if parts else As[:, :0]
        rank = np.asarray(np.linalg.matrix_rank(As._data), np.int64).reshape(batch)
    empty = Tensor._wrap(np.zeros((0,), x._data.dtype))
    return LstsqResult(x, empty, Tensor._wrap(rank), empty)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    A = _matrix(A, "matrix_rank")
    s = np.linalg.svd(A._data, compute_uv=False)
    eps = float(np.finfo(A._data.dtype).eps)
    rel = (eps * max(A.shape[-2:]) if atol is None else 0.0) if rtol is None else float(rtol)
    cut = np.maximum(s.max(-1, keepdims=True, initial=0.0) * rel, 0.0 if atol is None else float(atol))
    return Tensor._wrap(np.asarray((s > cut).sum(-1), np.int64))


def cross(input, other, *, dim=-1, out=None):  # noqa: A002 - torch name
    """``torch.linalg.cross`` of 3-vectors along ``dim`` (batches broadcast)."""
    input, other = operand(input), operand(other)
    for t in (input, other):
        if t.dim() == 0 or t.shape[dim] != 3:
            raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                               f"{input.shape[dim] if input.dim() else 0} and {other.shape[dim] if other.dim() else 0}")
    nd = max(input.dim(), other.dim())
    axis = dim_tuple(dim, nd, "linalg.cross")[0] - nd  # negative: the same axis of both after broadcasting
    return with_out(apply("LinalgCrossBackward0", lambda a, b: ct.cross(a, b, axis=axis), input, other,
                          floating=False, same_dtype=True), out,
                    "linalg.cross")


def vecdot(x, y, *, dim=-1, out=None):
    return with_out(apply("LinalgVecdotBackward0", lambda a, b: rd.sum_(ew.mul(a, b), dim), x, y), out,
                    "linalg.vecdot")


def matmul(input, other, *, out=None):  # noqa: A002 - torch.linalg.matmul is torch.matmul
    return with_out(_facade_matmul(operand(input), operand(other)), out, "linalg.matmul")


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return operand(A).diagonal(offset, dim1, dim2)


def tensorinv(A, ind=2, *, out=None):
    return with_out(apply("LinalgTensorinvBackward0", lambda a: la.tensorinv(a, ind), operand(A)), out,
                    "linalg.tensorinv")


def tensorsolve(A, B, dims=None, *, out=None):
    return with_out(apply("LinalgTensorsolveBackward0", lambda a, b: la.tensorsolve(a, b, dims), A, B), out,
                    "linalg.tensorsolve")


def _complex_result(A):
    """torch's refusal of integer input to a function whose result is complex (before any shape check)."""
    A = operand(A)
    if A.dtype.kind < 2:
        raise RuntimeError(f"Unknown Complex ScalarType for {A.dtype.legacy[:-len('Tensor')]}")
    return A


def eig(A, *, out=None):
    """Eigenvalues and unit-norm eigenvectors of a general square matrix, complex as torch returns them
    (gradient: gradc's ``eig`` rule, which needs distinct eigenvalues, as torch's).

    >>> import gradc.torch as torch
    >>> torch.linalg.eig(torch.tensor([[2.0, 1.0], [0.0, 3.0]])).eigenvalues
    tensor([2.+0.j, 3.+0.j])
    """
    A = _square(_complex_result(A), "eig")
    return EigResult(*apply_each("LinalgEigBackward0", lambda a: tuple(la.eig(a)), 2, A))


def eigvals(A, *, out=None):
    """``eig``'s eigenvalues (torch records them under the same ``LinalgEigBackward0`` node name).

    >>> import gradc.torch as torch
    >>> torch.linalg.eigvals(torch.tensor([[0.0, -1.0], [1.0, 0.0]], dtype=torch.float64))
    tensor([0.+1.j, 0.-1.j], dtype=torch.complex128)
    """
    return with_out(apply("LinalgEigBackward0", lambda a: la.eigvals(a), _square(_complex_result(A), "eigvals")), out,
                    "linalg.eigvals")


__all__ = sorted(n for n, v in dict(globals()).items()
                 if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__)
accept_traced_everywhere(globals(), __all__)  # torch-style code given to gradc.grad on NumPy arrays
