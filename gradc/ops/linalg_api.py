"""``np.linalg`` and ``scipy.linalg`` as their users call them, built on the matrix primitives.

Few primitives, many functions: ``inv`` is a solve with the identity, ``det`` is
``sign * exp(log|det|)``, ``pinv`` and ``lstsq`` come from the SVD, ``cho_solve`` is two
triangular solves; so each has its derivative, forward mode and batching for free.
Operands are promoted to one float dtype and batch axes broadcast first.

>>> import numpy as np
>>> round(float(det(np.array([[2.0, 1.0], [1.0, 3.0]]))), 12)
5.0
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as red
import gradc.ops.shape as sh
from gradc.errors import ShapeError, TraceError
from gradc.ir import dims
from gradc.ir.registry import bind
from gradc.ir.types import INEXACT_DTYPES
from gradc.ops.linalg import matmul
from gradc.ops.linalg_decomp import conj_of, eye_like, mT, real_of
from gradc.ops.linalg_decomp import solve as solve_raw
from gradc.ops.linalg_svd import unpack_qr, unpack_svd
from gradc.ops.values import aval, broadcast_shapes, result_dtype

SlogdetResult = namedtuple("SlogdetResult", "sign logabsdet")
EighResult = namedtuple("EighResult", "eigenvalues eigenvectors")
SVDResult = namedtuple("SVDResult", "U S Vh")
QRResult = namedtuple("QRResult", "Q R")


def as_float(*xs):
    """The operands in one float or complex dtype (integers become float64)."""
    dtype = result_dtype(*xs)
    dtype = dtype if dtype in INEXACT_DTYPES else "f64"
    return [ew.astype(x, dtype) for x in xs]


# the functions gradc computes on real matrices only; every other one takes complex matrices too
REAL_ONLY: frozenset = frozenset()


def refuse_complex(x, what):
    """A clear refusal of a complex operand of ``what`` where gradc computes it on real matrices only."""
    t = aval(x)
    if t.dtype is not None and t.is_complex and what in REAL_ONLY:
        raise TraceError(f"{what} of a complex matrix ({t}) is not supported by gradc: it computes it on real "
                         "matrices only",
                         hint="split the matrix into real and imaginary parts, or use a supported function")


def _matrices(x, what):
    (x,) = as_float(x)
    refuse_complex(x, what)
    t = aval(x)
    if t.ndim < 2:
        raise ShapeError(f"{what} needs a matrix (at least 2-D), not {t}", hint="pass a 2-D array (or a stack)")
    return x


def _squares(x, what):
    x = _matrices(x, what)
    t = aval(x)
    if t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{what} needs square matrices, not {t}", hint="pass an (..., n, n) array")
    return x


def _with_batch(x, batch):
    t = aval(x)
    return sh.broadcast_to(x, batch + t.shape[-2:])


# ---------------------------------------------------------------- solves, inverse, determinants
def solve(a, b, what="np.linalg.solve"):
    """``np.linalg.solve``: b of shape (n,) is one vector, else (..., n, k) stacked right-hand sides (NumPy 2).

    >>> solve(np.diag([2.0, 4.0]), np.array([1.0, 1.0]))
    array([0.5 , 0.25])
    """
    a = _squares(a, what)
    a, b = as_float(a, b)
    ta, tb = aval(a), aval(b)
    vector = tb.ndim == 1
    if vector:
        b = sh.reshape(b, tb.shape + (1,))
    tb = aval(b)
    if tb.ndim < 2 or tb.shape[-2] != ta.shape[-1]:
        raise ShapeError(f"{what}: a {ta} and b {aval(b)} do not fit", hint="b needs shape (n,) or (..., n, k)")
    batch = broadcast_shapes(ta.shape[:-2], tb.shape[:-2], what=f"{what} batch dimensions")
    x = solve_raw(_with_batch(a, batch), _with_batch(b, batch))
    return sh.reshape(x, batch + ta.shape[-1:]) if vector else x


def inv(a):
    """``np.linalg.inv`` as a solve with the identity.

    >>> inv(np.diag([2.0, 4.0]))
    array([[0.5 , 0.  ],
           [0.  , 0.25]])
    """
    a = _squares(a, "np.linalg.inv")
    return solve_raw(a, eye_like(a))


def slogdet(a):
    """``np.linalg.slogdet``: ``(sign, logabsdet)``, the sign without a derivative.

    >>> [float(v) for v in slogdet(np.diag([-1.0, np.e]))]
    [-1.0, 1.0]
    """
    a = _squares(a, "np.linalg.slogdet")
    if aval(a).is_complex:  # the sign is a phase that moves with a (gradc.ops.complex_numbers)
        return SlogdetResult(bind("det_phase", a), bind("logabsdet", a))
    return SlogdetResult(bind("det_sign", a), bind("logabsdet", a))


def det(a):
    """``np.linalg.det`` as ``sign * exp(log|det|)`` (see the module docstring)."""
    a = _squares(a, "np.linalg.det")
    sign, logabsdet = slogdet(a)
    return ew.mul(sign, ew.exp(logabsdet))


def matrix_power(a, n):
    """``np.linalg.matrix_power`` by repeated squaring (a solve first for n < 0).

    >>> matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3)
    array([[1., 3.],
           [0., 1.]])
    """
    a = _squares(a, "np.linalg.matrix_power")
    if not isinstance(n, (int, np.integer)):
        raise TraceError("np.linalg.matrix_power needs a Python int exponent", hint="pass n as an int")
    if n < 0:
        a, n = inv(a), -n
    out, base = eye_like(a), a
    while n:  # binary powering: log2(n) products
        if n & 1:
            out = matmul(out, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return out


def multi_dot(arrays):
    """``np.linalg.multi_dot``, left to right.

    >>> multi_dot([np.eye(2), np.ones((2, 1)), np.ones((1, 2))])
    array([[1., 1.],
           [1., 1.]])
    """
    out = arrays[0]
    for x in arrays[1:]:
        out = matmul(out, x)
    return out


# ---------------------------------------------------------------- factorisations
def cholesky(a, upper=False, what="np.linalg.cholesky"):
    """``np.linalg.cholesky``: the lower factor from the lower triangle (``upper``: the upper from the upper).

    >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]), upper=True)
    array([[2., 1.],
           [0., 2.]])
    """
    a = _squares(a, what)
    if upper:  # the upper factor reads the upper triangle (as LAPACK's 'U')
        return mT(bind("cholesky", mT(a)))
    return bind("cholesky", a)


def eigh(a, UPLO="L"):
    """``np.linalg.eigh``: ``(eigenvalues, eigenvectors)`` from one triangle; derivatives need distinct eigenvalues.

    >>> eigh(np.diag([2.0, 1.0])).eigenvalues
    array([1., 2.])
    """
    packed = bind("eigh", _squares(a, "np.linalg.eigh"), lower=_uplo(UPLO))
    t = aval(packed)
    lead = (sh.slice_item(None, None, None),) * (t.ndim - 2)
    from gradc.ops.complex_numbers import real
    return EighResult(real(sh.index(packed, lead + (("int", 0),))),  # real also for a Hermitian (complex) matrix
                      sh.index(packed, lead + (sh.slice_item(1, None, None),)))


EigResult = namedtuple("EigResult", "eigenvalues eigenvectors")


def eig(a, what="np.linalg.eig"):
    """``np.linalg.eig``: complex eigenvalues and unit-norm eigenvectors (complex always, as JAX's; see
    ``gradc.ops.linalg_eig``).

    >>> eig(np.diag([2.0, 1.0])).eigenvalues
    array([2.+0.j, 1.+0.j])
    """
    packed = bind("eig", _squares(a, what))
    t = aval(packed)
    lead = (sh.slice_item(None, None, None),) * (t.ndim - 2)
    return EigResult(sh.index(packed, lead + (("int", 0),)), sh.index(packed, lead + (sh.slice_item(1, None, None),)))


def eigvals(a):
    """``np.linalg.eigvals``: ``eig``'s eigenvalues.

    >>> eigvals(np.diag([2.0, 1.0]))
    array([2.+0.j, 1.+0.j])
    """
    return eig(a, "np.linalg.eigvals").eigenvalues


def eigvalsh(a, UPLO="L"):
    """``np.linalg.eigvalsh``.

    >>> eigvalsh(np.diag([2.0, 1.0]))
    array([1., 2.])
    """
    return bind("eigvalsh", _squares(a, "np.linalg.eigvalsh"), lower=_uplo(UPLO))


def _uplo(uplo):
    if uplo not in ("L", "U", "l", "u"):
        raise TraceError(f"UPLO={uplo!r} is not 'L' or 'U'", hint="pass UPLO='L' or UPLO='U'")
    return uplo in ("L", "l")


def svd(a, full_matrices=True, compute_uv=True, hermitian=False, what="np.linalg.svd"):
    """``np.linalg.svd``; full matrices only where they are unique (square input).

    >>> svd(np.diag([3.0, -2.0]), compute_uv=False)
    array([3., 2.])
    """
    a = _matrices(a, what)
    m, n = aval(a).shape[-2:]
    if hermitian:  # NumPy's: from eigh (its lower triangle), so the gradient lives on that triangle too
        return _hermitian_svd(_squares(a, what), compute_uv)
    if not compute_uv:
        return bind("svdvals", a)
    if full_matrices and m != n:
        raise TraceError(f"{what} with full_matrices=True of a {m}x{n} matrix: the extra singular vectors are not "
                         "unique, so they have no derivative", hint="pass full_matrices=False")
    from gradc.ops.complex_numbers import conj, real
    u, s, v = unpack_svd(bind("svd", a), m)
    return SVDResult(u, real(s), conj(mT(v)))  # singular values real also of a complex matrix; Vh = V^H


def _hermitian_svd(a, compute_uv):
    """``svd(a, hermitian=True)`` as NumPy computes it: s = |w| of ``eigh`` in descending order, U its eigenvectors,
    Vh = (U sign(w))^H."""
    from gradc.ops.complex_numbers import conj
    from gradc.ops.stats import argsort, flip
    w, v = eigh(a)
    size = ew.abs_(w)
    last = aval(w).ndim - 1
    order = flip(argsort(size, last), last)
    s = sh.take_along_axis(size, order, last)
    if not compute_uv:
        return s
    t = aval(v)
    columns = sh.broadcast_to(sh.reshape(order, t.shape[:-2] + (1, t.shape[-1])), t.shape)
    u = sh.take_along_axis(v, columns, t.ndim - 1)
    signs = ew.astype(sh.take_along_axis(ew.sign(w), order, last), t.dtype)
    return SVDResult(u, s, conj(mT(ew.mul(u, _rows_of(signs)))))


def _rows_of(v):
    t = aval(v)
    return sh.reshape(v, t.shape[:-1] + (1,) + t.shape[-1:])


def qr(a, mode="reduced", what="np.linalg.qr"):
    """``np.linalg.qr`` (modes 'reduced' and 'r'; 'complete' where it equals 'reduced').

    >>> qr(np.diag([2.0, 3.0]), mode="r")
    array([[2., 0.],
           [0., 3.]])
    """
    a = _matrices(a, what)
    m, n = aval(a).shape[-2:]
    if mode in ("complete", "full") and m > n:
        raise TraceError(f"{what} mode={mode!r} of a tall matrix: the extra columns of Q are not unique, so they "
                         "have no derivative", hint="use mode='reduced' (NumPy) or mode='economic' (SciPy)")
    if mode not in ("reduced", "complete", "full", "economic", "r"):
        raise TraceError(f"{what} mode={mode!r} is not supported", hint="use mode='reduced' or mode='r'")
    q, r = unpack_qr(bind("qr", a), m, n)
    return r if mode == "r" else QRResult(q, r)


# ---------------------------------------------------------------- pinv, lstsq, norm
def _cutoff_inverse(s, rcond):
    """1/s where s > rcond * max(s), else 0 (NumPy's rank decision, fixed by the values)."""
    big = ew.greater(s, ew.mul(red.max_(s, -1, keepdims=True), rcond))
    return ew.where(big, ew.div(1.0, ew.where(big, s, 1.0)), 0.0)


def pinv(a, rcond=None, hermitian=False, rtol=None):
    """``np.linalg.pinv`` from the SVD; singular values below ``rcond * max(s)`` count as zero.

    >>> pinv(np.array([[2.0, 0.0]]))
    array([[0.5],
           [0. ]])
    """
    a = _matrices(a, "np.linalg.pinv")
    m, n = aval(a).shape[-2:]
    cut = rcond if rcond is not None else rtol if rtol is not None else 1e-15  # np.linalg.pinv's default
    if hermitian:  # NumPy's: from eigh (its lower triangle): V diag(1/w) V^H, |w| at most cut * max|w| as zero
        w, v = eigh(_squares(a, "np.linalg.pinv"))
        big = ew.greater(ew.abs_(w), ew.mul(red.max_(ew.abs_(w), -1, keepdims=True), cut))
        inverse = ew.where(big, ew.div(1.0, ew.where(big, w, 1.0)), 0.0)
        return matmul(ew.mul(v, _rows_of(ew.astype(inverse, aval(v).dtype))), conj_of(mT(v)))
    u, s, v = unpack_svd(bind("svd", a), m)
    s = real_of(s)  # (packed with complex singular vectors, the singular values are real all the same)
    return matmul(ew.mul(v, sh.reshape(_cutoff_inverse(s, cut), aval(s).shape[:-1] + (1,) + aval(s).shape[-1:])),
                  conj_of(mT(u)))  # V S^-1 U^H


def lstsq(a, b, rcond=None, what="np.linalg.lstsq"):
    """``np.linalg.lstsq``: ``(x, residuals, rank, s)``; rank is min(m, n) (gradc differentiates at full rank).

    >>> lstsq(np.array([[1.0], [1.0]]), np.array([1.0, 3.0]))[0]
    array([2.])
    """
    a = _matrices(a, what)
    a, b = as_float(a, b)
    refuse_complex(b, what)
    m, n = aval(a).shape
    if aval(b).ndim not in (1, 2) or aval(b).shape[0] != m:
        raise ShapeError(f"{what}: a {aval(a)} and b {aval(b)} do not fit", hint="b needs shape (m,) or (m, k)")
    cut = np.finfo(aval(a).np_dtype).eps * max(m, n) if rcond is None else rcond
    u, s, v = unpack_svd(bind("svd", a), m)
    s = real_of(s)
    x = matmul(ew.mul(v, sh.reshape(_cutoff_inverse(s, cut), (1, min(m, n)))), matmul(conj_of(mT(u)), b))
    if m > n:
        r = ew.sub(b, matmul(a, x))
        residuals = red.sum_(ew.mul(r, r) if not aval(r).is_complex else _abs_squared(r), 0)  # real: |r|^2
        residuals = sh.reshape(residuals, (1,)) if aval(b).ndim == 1 else residuals
    else:
        residuals = np.zeros((0,), aval(s).np_dtype)
    return x, residuals, min(m, n), s


def _abs_squared(z):
    from gradc.ops.complex_numbers import imag, real
    return ew.add(ew.mul(real(z), real(z)), ew.mul(imag(z), imag(z)))


def norm(x, ord=None, axis=None, keepdims=False):
    """``np.linalg.norm``: vector ords 0, 1, 2, inf, -inf, any p; matrix 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.

    >>> float(norm(np.array([3.0, 4.0])))
    5.0
    """
    (x,) = as_float(x)
    t = aval(x)
    spectral = ord in (2, -2, "nuc") and (t.ndim == 2 if axis is None else len(tuple(np.atleast_1d(axis))) == 2)
    if t.is_complex and not spectral:  # the entrywise norms are those of |x|; the spectral ones: the complex SVD's
        x = ew.abs_(x)
        t = aval(x)
    if axis is None and ord is None:
        return _keep(ew.root_of_squares(red.sum_(ew.mul(x, x))), t.ndim, tuple(range(t.ndim)), keepdims)
    if axis is None:
        axis = tuple(range(t.ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    axes = tuple(int(a) % t.ndim for a in axes)
    if len(axes) == 1:
        return _keep(_vector_norm(x, ord, axes[0]), t.ndim, axes, keepdims)
    if len(axes) == 2:
        return _keep(_matrix_norm(x, ord, axes), t.ndim, axes, keepdims)
    raise TraceError(f"np.linalg.norm over {len(axes)} axes with ord={ord!r}", hint="give one or two axes")


def _keep(value, ndim, axes, keepdims):
    if not keepdims:
        return value
    shape = list(aval(value).shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    return sh.reshape(value, shape)


def _vector_norm(x, ord, axis):
    if ord is None or ord == 2:
        return ew.root_of_squares(red.sum_(ew.mul(x, x), axis))
    if ord == np.inf:
        return red.max_(ew.abs_(x), axis)
    if ord == -np.inf:
        return red.min_(ew.abs_(x), axis)
    if ord == 0:
        return red.sum_(ew.astype(ew.not_equal(x, 0.0), aval(x).dtype), axis)
    if ord == 1:
        return red.sum_(ew.abs_(x), axis)
    if isinstance(ord, str):
        raise TraceError(f"np.linalg.norm ord={ord!r} is a matrix norm; this is a vector",
                         hint="pass axis=(i, j) for a matrix norm or a numeric ord")
    p = float(ord)
    return ew.power(red.sum_(ew.power(ew.abs_(x), p), axis), 1.0 / p)


def _matrix_norm(x, ord, axes):
    r, c = axes
    if ord in (None, "fro"):
        return ew.root_of_squares(red.sum_(ew.mul(x, x), axes))
    if ord in (1, -1):
        sums = red.sum_(ew.abs_(x), r)
        return (red.max_ if ord == 1 else red.min_)(sums, c - 1 if c > r else c)
    if ord in (np.inf, -np.inf):
        sums = red.sum_(ew.abs_(x), c)
        return (red.max_ if ord > 0 else red.min_)(sums, r - 1 if r > c else r)
    if ord in ("nuc", 2, -2):
        nd = aval(x).ndim
        rest = [i for i in range(nd) if i not in (r, c)]
        s = bind("svdvals", sh.transpose(x, rest + [r, c]))
        if ord == "nuc":
            return red.sum_(s, -1)
        return (red.max_ if ord == 2 else red.min_)(s, -1)
    raise TraceError(f"np.linalg.norm ord={ord!r} is not a matrix norm", hint="use 'fro', 'nuc', 1, -1, 2, -2, inf")


def cond(x, p=None):
    """``np.linalg.cond``: s_max / s_min for p None or 2 (from the singular values), else |x| |inv(x)|.

    >>> float(cond(np.diag([4.0, 2.0])))
    2.0
    """
    x = _matrices(x, "np.linalg.cond")
    if p in (None, 2, -2):
        s = bind("svdvals", x)
        big, small = red.max_(s, -1), red.min_(s, -1)
        return ew.div(big, small) if p != -2 else ew.div(small, big)
    return ew.mul(norm(x, p, (-2, -1)), norm(inv(x), p, (-2, -1)))


def tensorinv(a, ind=2):
    """``np.linalg.tensorinv``: ``inv`` of ``a`` reshaped to a square matrix.

    >>> tensorinv(np.eye(4).reshape(4, 2, 2), 1).shape
    (2, 2, 4)
    """
    t = aval(a)
    rows, cols = t.shape[:ind], t.shape[ind:]
    n = dims.prod(rows)
    return sh.reshape(inv(sh.reshape(a, (n, n))), cols + rows)


def tensorsolve(a, b, axes=None):
    """``np.linalg.tensorsolve``: ``solve`` of ``a`` reshaped to a square matrix.

    >>> tensorsolve(np.eye(4).reshape(4, 2, 2), np.arange(4.0))
    array([[0., 1.],
           [2., 3.]])
    """
    if axes is not None:
        raise TraceError("np.linalg.tensorsolve with axes= is not supported", hint="move the axes with np.moveaxis")
    ta, tb = aval(a), aval(b)
    rest = ta.shape[tb.ndim:]
    n = dims.prod(rest)
    x = solve(sh.reshape(a, (tb.size, n)), sh.reshape(b, (tb.size,)), what="np.linalg.tensorsolve")
    return sh.reshape(x, rest)
