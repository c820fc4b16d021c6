"""``np.linalg`` and NumPy's contractions on traced values (merged into ``numpy_dispatch.FUNCTIONS``).

Each entry takes NumPy's signature and calls the gradc function of the same name
(``gradc.ops.linalg_api``, ``gradc.ops.contract``). ``public_name`` gives the path a
user wrote (``np.linalg.solve``, not ``np.solve``) for messages.

>>> public_name(np.linalg.solve)
'np.linalg.solve'
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ops import contract as ct
from gradc.ops import linalg as la
from gradc.ops import linalg_api as lin


def public_name(func) -> str:
    """``np.linalg.solve`` for NumPy's functions, ``module.name`` for others."""
    module = getattr(func, "__module__", None) or "numpy"
    name = getattr(func, "__name__", repr(func))
    if module == "numpy" or module.startswith("numpy._") or module.startswith("numpy.core"):
        return f"np.{name}"
    if module.startswith("numpy."):
        return f"np.{module.split('.')[1]}.{name}"
    return f"{module}.{name}"


def _no_out(fn, name):
    def apply(*args, out=None, **kwargs):
        if out is not None:
            raise TraceError(f"{name}(..., out=...) writes into an array in place", hint="drop out= and assign")
        return fn(*args, **kwargs)
    return apply


def _cholesky(a, /, *, upper=False):
    return lin.cholesky(a, upper=upper)


def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    return lin.svd(a, full_matrices, compute_uv, hermitian)


def _matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return lin.norm(x, ord, (-2, -1), keepdims)


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    if axis is None:
        shape = (1,) * x.ndim if keepdims else ()
        return la.shape_ops.reshape(lin.norm(la.shape_ops.reshape(x, (x.size,)), ord, 0), shape)
    return lin.norm(x, ord, axis, keepdims)


FUNCTIONS = {
    np.linalg.solve: lambda a, b: lin.solve(a, b), np.linalg.inv: lin.inv, np.linalg.det: lin.det,
    np.linalg.slogdet: lin.slogdet, np.linalg.cholesky: _cholesky, np.linalg.eigh: lin.eigh,
    np.linalg.eigvalsh: lin.eigvalsh, np.linalg.svd: _svd, np.linalg.qr: lambda a, mode="reduced": lin.qr(a, mode),
    np.linalg.norm: lin.norm, np.linalg.lstsq: lambda a, b, rcond=None: lin.lstsq(a, b, rcond),
    np.linalg.pinv: lin.pinv, np.linalg.matrix_power: lin.matrix_power,
    np.linalg.multi_dot: _no_out(lin.multi_dot, "np.linalg.multi_dot"),
    np.einsum: ct.einsum, np.tensordot: ct.tensordot, np.inner: ct.inner, np.vdot: ct.vdot, np.kron: ct.kron,
    np.trace: _no_out(ct.trace, "np.trace"), np.diag: ct.diag, np.diagonal: ct.diagonal,
    np.swapaxes: ct.swapaxes, np.moveaxis: ct.moveaxis,
}

FUNCTIONS.update({
    np.dot: ct.dot, np.cross: ct.cross, np.einsum_path: ct.einsum_path, np.linalg.cond: lin.cond,
    np.linalg.tensorinv: lin.tensorinv, np.linalg.tensorsolve: lin.tensorsolve,
})


def _refusal(name, why, hint):
    def refuse(*args, **kwargs):
        raise TraceError(f"{name} is not supported by gradc: {why}", hint=hint)
    return refuse


FUNCTIONS.update({
    np.linalg.eig: lin.eig, np.linalg.eigvals: lin.eigvals,
    np.linalg.matrix_rank: _refusal("np.linalg.matrix_rank", "the rank is an integer that depends on the values",
                                    "compute it outside the differentiated function and pass it in as an int"),
})

# NumPy 2 names (absent from older NumPy)
_NEWER = {
    "svdvals": lambda x: lin.svd(x, compute_uv=False), "matrix_norm": _matrix_norm, "vector_norm": _vector_norm,
    "vecdot": lambda x1, x2, /, *, axis=-1: ct.vecdot(x1, x2, axis), "tensordot": ct.tensordot,
    "trace": lambda x, /, *, offset=0, dtype=None: ct.trace(x, offset, -2, -1),
    "diagonal": lambda x, /, *, offset=0: ct.diagonal(x, offset, -2, -1),
    "matrix_transpose": lambda x, /: lin.mT(x), "outer": lambda a, b, /: la.outer(a, b),
    "matmul": lambda a, b, /: la.matmul(a, b),
    "cross": lambda x1, x2, /, *, axis=-1: ct.cross(x1, x2, axis=axis),  # 3-vectors only, as NumPy's
}
for _name, _fn in _NEWER.items():
    if _fn is not None and hasattr(np.linalg, _name):
        FUNCTIONS[getattr(np.linalg, _name)] = _fn
if hasattr(np, "matrix_transpose"):
    FUNCTIONS[np.matrix_transpose] = lambda x, /: lin.mT(x)
if hasattr(np, "permute_dims"):
    FUNCTIONS[np.permute_dims] = lambda a, axes=None: la.shape_ops.transpose(a, axes)

# ``np.vecdot`` is a ufunc in NumPy 2 (it arrives through ``__array_ufunc__``)
UFUNCS = {np.vecdot: ct.vecdot} if isinstance(getattr(np, "vecdot", None), np.ufunc) else {}

__all__ = ["FUNCTIONS", "UFUNCS", "public_name"]
