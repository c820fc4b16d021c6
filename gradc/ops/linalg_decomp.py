"""Matrix primitives: solves, factorisations and spectral decompositions, batched over leading axes.

Every op here works on the last two axes and keeps leading (batch) axes as NumPy
does; operands of one equation have equal batch axes (the user-level functions in
``gradc.ops.linalg_api`` broadcast them first). Decompositions with several results
return them packed in one array (``eigh``: eigenvalues as row 0 above the
eigenvectors), since an equation has one output; the functions unpack them.

Derivative rules (written with gradc ops, so they differentiate again): solves as in
Giles (2008), Cholesky as in Murray (2016), eigh/svd/qr as in Seeger et al. (2017),
Townsend (2016) and Walter & Lehmann (2018). Rules never form explicit inverses: they
solve. ``cholesky``/``eigh`` read one triangle of their input, like LAPACK, so their
gradient lives on that triangle.

>>> import numpy as np
>>> bind("cholesky", np.array([[4.0, 2.0], [2.0, 5.0]]))
array([[2., 0.],
       [1., 2.]])
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.errors import ShapeError
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.linalg import matmul, swap_last
from gradc.ops.values import aval, batch_size, with_batch


# ---------------------------------------------------------------- shared helpers
def _square(t, what):
    if t.ndim < 2 or t.shape[-1] != t.shape[-2]:
        raise ShapeError(f"{what} needs square matrices (..., n, n), not {t}",
                         hint="pass a square matrix (or a stack of them)")
    if not t.is_inexact:  # complex matrices: gradc.ops.linalg_api refuses them where gradc cannot
        raise ShapeError(f"{what} of {t} (internal: convert to float first)")
    return t


def _leading_batch(name):
    """Batching rule of an op that already maps over leading axes: give every operand the batch axis."""
    def batch(*xs, batched, **params):
        n = batch_size(xs, batched)
        return bind(name, *(with_batch(x, b, n) for x, b in zip(xs, batched)), **params)
    return batch


def _stmts(first, second):
    """Two statements assigning ``target``: the LAPACK call, then its results packed in one array."""
    def spell_it(args, params, out, target):
        tmp = ast.Name(target, ast.Load())
        return [spell.assign(target, first(args, params)), spell.assign(target, second(tmp, params))]
    return spell_it


def _cat(parts, axis):
    return spell.call("np.concatenate", ast.Tuple(parts, ast.Load()), axis=spell.literal(axis))


def _item(node, i):
    return ast.Subscript(node, ast.Constant(i), ast.Load())


def _row(node):
    """``node[..., None, :]``."""
    return ast.Subscript(node, ast.Tuple([ast.Constant(Ellipsis), ast.Constant(None), ast.Slice()], ast.Load()),
                         ast.Load())


def _swap_ast(node):
    return spell.call("np.swapaxes", node, spell.literal(-1), spell.literal(-2))


def mT(x):
    """The matrix transpose of the last two axes."""
    return swap_last(x)


def eye_like(x):
    """The identity with ``x``'s type (..., n, n) (no derivative: it does not depend on ``x``'s values).

    >>> eye_like(np.zeros((2, 2)))
    array([[1., 0.],
           [0., 1.]])
    """
    return bind("eye_like", x)


def tri(x, lower=True, k=0):
    """``np.tril(x, k)`` (``lower``) or ``np.triu(x, k)``."""
    return bind("tri_mask", x, lower=bool(lower), k=int(k))


def phi(x, lower=True):
    """One triangle of ``x`` with its diagonal halved (Murray's Phi).

    >>> phi(np.ones((2, 2)))
    array([[0.5, 0. ],
           [1. , 0.5]])
    """
    return bind("tri_half", x, lower=bool(lower))


def _rows(v):
    """A (..., k) vector as a (..., 1, k) row, to scale columns of a matrix."""
    t = aval(v)
    return sh.reshape(v, t.shape[:-1] + (1,) + t.shape[-1:])


def _cols(v):
    t = aval(v)
    return sh.reshape(v, t.shape + (1,))


def conj_of(x):
    """``conj(x)`` for a complex ``x``, ``x`` itself for a real one (the ``conj`` op, bound by name: the complex
    numbers' module builds on this one)."""
    return bind("conj", x) if aval(x).is_complex else x


def real_of(x):
    """``real(x)`` for a complex ``x``, ``x`` itself for a real one (see ``conj_of``)."""
    return bind("real", x) if aval(x).is_complex else x


def _lower_grad(g, lower):
    """The gradient on the triangle a LAPACK routine reads, from ``g`` (a gradient for symmetric perturbations;
    Hermitian for complex ``g``: the strict triangle stands for its conjugate mirror too, the diagonal's imaginary
    part is not read, so its entries get ``g + conj(g^T)``, halved on the diagonal: ``Re(g_ii)``)."""
    return phi(ew.add(g, conj_of(mT(g))), lower)


# ---------------------------------------------------------------- eye_like, tri_mask
def _eye_spell(args, params, out, target):
    n = out.shape[-1]
    eye = spell.call("np.eye", ast.Constant(n), **({} if out.dtype == "f64" else
                                                   {"dtype": spell.dotted(f"np.{out.np_dtype.name}")}))
    return eye if out.ndim == 2 else spell.call("np.broadcast_to", eye, spell.literal(out.shape))


defop("eye_like", infer=lambda types, params: _square(types[0], "eye_like"), nondiff=True,
      impl=lambda x: np.broadcast_to(np.eye(np.shape(x)[-1], dtype=np.asarray(x).dtype), np.shape(x)),
      np=_eye_spell, doc="the identity of x's type (constant)", c=c_spell.loop("eye_like"),
      batch=_leading_batch("eye_like"))


def _tri_impl(x, lower, k):
    return np.tril(x, k) if lower else np.triu(x, k)


defop("tri_mask", infer=lambda types, params: types[0], impl=_tri_impl, linear=True,
      vjp=lambda ct, out, x, needs, lower, k: (tri(ct, lower, k),),
      np=lambda args, params, out, target: spell.call("np.tril" if params["lower"] else "np.triu", args[0],
                                                      spell.literal(params["k"])),
      doc="x_bar = tril(ct, k) (triu for the upper triangle)", c=c_spell.loop("triangle"),
      batch=_leading_batch("tri_mask"))


def _tri_half_impl(x, lower):
    out = np.tril(x) if lower else np.triu(x)
    np.einsum("...ii->...i", out)[...] *= 0.5  # a writeable view of the diagonal
    return out


def _tri_half_spell(args, params, out, target):
    diagonal = spell.call("np.einsum", ast.Constant("...ii->...i"), ast.Name(target, ast.Load()))
    view = ast.Subscript(diagonal, ast.Constant(Ellipsis), ast.Store())
    return [spell.assign(target, spell.call("np.tril" if params["lower"] else "np.triu", args[0])),
            ast.AugAssign(view, ast.Mult(), ast.Constant(0.5), lineno=0)]


defop("tri_half", infer=lambda types, params: _square(types[0], "tri_half"), impl=_tri_half_impl, linear=True,
      vjp=lambda ct, out, x, needs, lower: (phi(ct, lower),), np=_tri_half_spell, c=c_spell.loop("triangle"),
      doc="x_bar = tril(ct) with its diagonal halved (the op is its own transpose)", batch=_leading_batch("tri_half"))


# ---------------------------------------------------------------- solve and triangular_solve
def _solve_infer(types, params):
    a, b = types
    _square(a, "solve")
    if b.ndim != a.ndim or b.shape[:-2] != a.shape[:-2] or b.shape[-2] != a.shape[-1] or b.dtype != a.dtype:
        raise ShapeError(f"cannot solve with {a} for right-hand sides {b}",
                         hint="b needs shape (..., n) or (..., n, k) for a of shape (..., n, n)")
    return b


def _solve_vjp(ct, out, a, b, needs):
    b_bar = solve(mT(a), ct)
    a_bar = ew.neg(matmul(b_bar, mT(out))) if needs[0] else None
    return a_bar, b_bar if needs[1] else None


defop("solve", infer=_solve_infer, impl=np.linalg.solve, vjp=_solve_vjp, np=spell.fn("np.linalg.solve"),
      doc="b_bar = solve(a.T, ct); a_bar = -b_bar @ out.T", c=c_spell.loop("solve"), batch=_leading_batch("solve"))


def _trisolve_impl(a, b, lower, trans):
    import scipy.linalg  # the emitted code calls SciPy too: NumPy has no triangular solve
    if np.size(b) == 0:  # SciPy refuses empty batches
        return np.zeros(np.shape(b), np.result_type(a, b))
    if np.ndim(a) > 2 or np.ndim(b) > 2:  # SciPy batches only from 1.16 (Python 3.10 stops at 1.15)
        t = np.tril(a) if lower else np.triu(a)
        return np.linalg.solve(np.swapaxes(t, -1, -2) if trans else t, b)
    return scipy.linalg.solve_triangular(a, b, trans=int(trans), lower=lower)


def empty_or(spelling):
    """A SciPy spelling, or ``np.zeros(shape)`` when the result is empty (SciPy refuses empty batches)."""
    def spell_it(args, params, out, target):
        if out.size == 0:
            kwargs = {} if out.dtype == "f64" else {"dtype": spell.dotted(f"np.{out.np_dtype.name}")}
            return spell.call("np.zeros", spell.literal(out.shape), **kwargs)
        return spelling(args, params, out, target)
    return spell_it


def _trisolve_vjp(ct, out, a, b, needs, lower, trans):
    b_bar = triangular_solve(a, ct, lower, not trans)
    a_bar = None
    if needs[0]:
        outer = matmul(out, mT(b_bar)) if trans else matmul(b_bar, mT(out))
        a_bar = ew.neg(tri(outer, lower))
    return a_bar, b_bar if needs[1] else None


def _trisolve_spell(args, params, out, target):
    if out.ndim > 2:  # a stack of systems: NumPy's solve of the triangle (SciPy batches only from 1.16)
        t = spell.call("np.tril" if params["lower"] else "np.triu", args[0])
        if params["trans"]:
            t = spell.call("np.swapaxes", t, spell.literal(-1), spell.literal(-2))
        return spell.call("np.linalg.solve", t, args[1])
    kwargs = {"lower": ast.Constant(params["lower"])}
    if params["trans"]:
        kwargs = {"trans": ast.Constant(1), **kwargs}
    return spell.call("scipy.linalg.solve_triangular", args[0], args[1], **kwargs)


defop("triangular_solve", infer=_solve_infer, impl=_trisolve_impl, vjp=_trisolve_vjp, np=empty_or(_trisolve_spell),
      doc="b_bar = triangular_solve(a, ct, transposed); a_bar = -tril(b_bar @ out.T) (of a's triangle)",
      c=c_spell.loop("trisolve"), batch=_leading_batch("triangular_solve"))


# ---------------------------------------------------------------- tri_matmul: a triangle times a matrix
def _trimatmul_impl(a, b, lower, trans):
    t = np.tril(a) if lower else np.triu(a)
    return np.matmul(np.swapaxes(t, -1, -2) if trans else t, b)


def _trimatmul_vjp(ct, out, a, b, needs, lower, trans):
    a_bar = None
    if needs[0]:
        a_bar = tri(matmul(b, mT(ct)) if trans else matmul(ct, mT(b)), lower)
    return a_bar, tri_matmul(a, ct, lower, not trans) if needs[1] else None


def _trimatmul_spell(args, params, out, target):
    """BLAS's trmm for matrices (half a general product's work); a masked matmul for stacks."""
    if out.ndim == 2 and out.size:
        kwargs = {"lower": ast.Constant(int(params["lower"]))}
        if params["trans"]:
            kwargs["trans_a"] = ast.Constant(1)
        fn = f"scipy.linalg.blas.{'d' if out.dtype == 'f64' else 's'}trmm"
        return spell.call(fn, ast.Constant(1.0), args[0], args[1], **kwargs)
    t = spell.call("np.tril" if params["lower"] else "np.triu", args[0])
    return ast.BinOp(_swap_ast(t) if params["trans"] else t, ast.MatMult(), args[1])


defop("tri_matmul", infer=_solve_infer, impl=_trimatmul_impl, vjp=_trimatmul_vjp, np=_trimatmul_spell,
      c=c_spell.loop("trimm"),
      doc="out = tril(a) @ b (or its transpose @ b); a_bar = tril(ct @ b.T); b_bar = tril(a).T @ ct",
      batch=_leading_batch("tri_matmul"))


def tri_matmul(a, b, lower=True, trans=False):
    """``tril(a) @ b`` (``tril(a).T @ b`` with ``trans``; ``triu`` when not ``lower``).

    >>> tri_matmul(np.ones((2, 2)), np.ones((2, 1)))
    array([[1.],
           [2.]])
    """
    return bind("tri_matmul", a, b, lower=bool(lower), trans=bool(trans))


def solve(a, b):
    """Solve ``a x = b`` for stacked right-hand sides (..., n, k) with equal batch axes.

    >>> solve(np.diag([2.0, 4.0]), np.ones((2, 1)))
    array([[0.5 ],
           [0.25]])
    """
    return bind("solve", a, b)


def triangular_solve(a, b, lower=True, trans=False):
    """Solve ``T x = b`` (``T.T x = b`` with ``trans``), T the lower (or upper) triangle of ``a``.

    >>> triangular_solve(np.array([[2.0, 9.0], [1.0, 1.0]]), np.array([[2.0], [2.0]]))
    array([[1.],
           [1.]])
    """
    return bind("triangular_solve", a, b, lower=bool(lower), trans=bool(trans))


# ---------------------------------------------------------------- cholesky, log|det|, sign(det)
# (cholesky itself, with its blocked adjoint, is defined in linalg_cholesky, which builds on this module)


def _det_infer(types, params):
    return _square(types[0], "det").with_shape(types[0].shape[:-2])


def _logabsdet_infer(types, params):  # real also of a complex matrix
    t = _det_infer(types, params)
    return t.with_dtype({"c64": "f32", "c128": "f64"}.get(t.dtype, t.dtype))


def _logabsdet_vjp(ct, out, a, needs):
    inv_t = solve(mT(a), eye_like(a))  # the gradient of log|det a| is inv(a).T, here solved for
    return (ew.mul(inv_t, _cols(_cols(ct))),)


def _slogdet_spell(i):
    return lambda args, params, out, target: _item(spell.call("np.linalg.slogdet", args[0]), i)


defop("logabsdet", infer=_logabsdet_infer, impl=lambda a: np.linalg.slogdet(a)[1], vjp=_logabsdet_vjp,
      np=_slogdet_spell(1), doc="a_bar = ct * solve(a.T, I)", c=c_spell.loop("slogdet"),
      batch=_leading_batch("logabsdet"))
defop("det_sign", infer=_det_infer, impl=lambda a: np.linalg.slogdet(a)[0], nondiff=True,
      np=_slogdet_spell(0), doc="the sign of det(a) (locally constant)", c=c_spell.loop("slogdet"),
      batch=_leading_batch("det_sign"))


# ---------------------------------------------------------------- eigh (packed: eigenvalues on row 0)
def _eigh_infer(types, params):
    t = _square(types[0], "eigh")
    return t.with_shape(t.shape[:-2] + (t.shape[-1] + 1, t.shape[-1]))


def _eigh_impl(a, lower):
    w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    return np.concatenate((w[..., None, :], v), axis=-2)


def _off_diagonal_inverse(d):
    """1 / d where d is not zero, 0 where it is: on the diagonal, and for a pair of equal eigenvalues (singular
    values), whose term is 0 / 0 for any function of the matrix that does not depend on how a basis of their
    shared subspace is chosen (e.g. V f(w) V^T, or the eigenvalues alone); otherwise it has no derivative."""
    degenerate = ew.equal(d, 0.0)
    safe = ew.where(degenerate, ew.full_like(d, 1.0), d)
    return ew.where(degenerate, ew.zeros_like(d), ew.div(1.0, safe))


def _eigh_vjp(ct, out, a, needs, lower):
    # complex (Hermitian) a: the transpose of the tangent map for JAX's pairing Re(sum(a * b)), so conj(V) where a
    # real V is V; the eigenvectors' phases are fixed as the tangent map fixes them (V^H dV has a zero diagonal)
    w, v = _unpack_rows(out, 1)
    w_bar, v_bar = _unpack_rows(ct, 1)
    w, w_bar = real_of(w), real_of(w_bar)  # (packed with complex eigenvectors, the eigenvalues are real all the same)
    f = _off_diagonal_inverse(ew.sub(_rows(w), _cols(w)))  # 1 / (w_j - w_i), the distinct-eigenvalue rule
    inner = ew.add(ew.mul(eye_like(f), _rows(w_bar)), ew.mul(f, matmul(mT(v), v_bar)))
    g = matmul(matmul(conj_of(v), inner), mT(v))
    return (_lower_grad(g, lower),)


def _unpack_rows(packed, k):
    """``packed[..., :k, :]`` squeezed to a vector when k == 1, and ``packed[..., k:, :]``."""
    t = aval(packed)
    lead = (sh.slice_item(None, None, None),) * (t.ndim - 2)
    head = sh.index(packed, lead + (("int", 0),) if k == 1 else lead + (sh.slice_item(0, k, None),))
    return head, sh.index(packed, lead + (sh.slice_item(k, None, None),))


defop("eigh", infer=_eigh_infer, impl=_eigh_impl, vjp=_eigh_vjp, c=c_spell.loop("eigh"), batch=_leading_batch("eigh"),
      np=_stmts(lambda a, p: spell.call("np.linalg.eigh", a[0], UPLO=ast.Constant("L" if p["lower"] else "U")),
                lambda t, p: _cat([_row(_item(t, 0)), _item(t, 1)], -2)),
      doc="a_bar = V (diag(w_bar) + F * (V^T V_bar)) V^T, F_ij = 1/(w_j - w_i) (distinct eigenvalues)")


def _eigvalsh_vjp(ct, out, a, needs, lower):
    _, v = _unpack_rows(bind("eigh", a, lower=lower), 1)
    g = matmul(ew.mul(conj_of(v), _rows(ct)), mT(v))
    return (_lower_grad(g, lower),)


def _eigvalsh_infer(types, params):
    from gradc.ir.types import REAL_OF_COMPLEX
    t = _square(types[0], "eigvalsh").with_shape(types[0].shape[:-1])
    return t.with_dtype(REAL_OF_COMPLEX.get(t.dtype, t.dtype))  # a Hermitian matrix's eigenvalues are real


defop("eigvalsh", infer=_eigvalsh_infer,
      impl=lambda a, lower: np.linalg.eigvalsh(a, UPLO="L" if lower else "U"), vjp=_eigvalsh_vjp,
      c=c_spell.loop("eigh"), np=lambda args, params, out, target: spell.call("np.linalg.eigvalsh", args[0],
                                                      UPLO=ast.Constant("L" if params["lower"] else "U")),
      doc="a_bar = V diag(ct) V^T", batch=_leading_batch("eigvalsh"))

