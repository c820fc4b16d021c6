"""The Cholesky adjoint as one op, ``cholesky_grad``: blocked, so it costs about two Cholesky factorisations.

``cholesky_grad(lf, g)`` is the cotangent of ``a`` when ``l = cholesky(a)`` receives the
cotangent ``g`` (Murray 2016): with ``P = Phi(L^T G)`` and ``S = L^-T P L^-1``, the result is
``Phi(S + S^T)``, on the lower triangle (``Phi``: the lower triangle, diagonal halved). It reads
the lower triangles of ``l`` and ``g`` only, and is linear in ``g``.

Written as that formula the adjoint is a triangular product and two triangular solves with
``n`` right-hand sides, three times a Cholesky's ``n^3/3`` multiply-adds over; Murray's blocked
algorithm (his Algorithm 3, "chol_blocked_rev") goes backwards over blocks of ``BLOCK``
columns with solves and products of those blocks only, about twice a Cholesky's work, and
applies the formula to each diagonal block. Matrices of at most ``BLOCK`` columns (and
batched stacks, through the batching rule) take the formula directly.

The VJP (for second order) differentiates the formula: with ``W = Phi(C) + Phi(C)^T`` for the
cotangent ``C``, ``X = L^-1 W`` and ``Q = Phi(X L^-T)``, ``g_bar = L Q`` and
``l_bar = tril(tril(G) Q^T - (A + A^T) X^T)``, ``A`` the op's result (``A + A^T = S + S^T``).

>>> import numpy as np
>>> lf = np.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]]))
>>> cholesky_grad(lf, np.eye(2))  # d(l00 + l11)/da, read on the lower triangle
array([[ 0.3125,  0.    ],
       [-0.25  ,  0.25  ]])
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
from gradc.errors import ShapeError
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.linalg import matmul
from gradc.ops.linalg_decomp import (
    _leading_batch,
    _square,
    conj_of,
    empty_or,
    mT,
    phi,
    tri,
    tri_matmul,
    triangular_solve,
)
from gradc.ops.values import aval, batch_size, with_batch

BLOCK = 128  # columns per block: from 96 to 160 the n = 500 adjoint runs within 5 % of its best


def cholesky_grad(lf, g):
    """The cotangent of ``a`` for ``l = cholesky(a)`` and the cotangent ``g`` of ``l`` (lower triangle).

    >>> float(cholesky_grad(np.array([[2.0]]), np.array([[1.0]]))[0, 0])  # d sqrt(a)/da at a = 4
    0.25
    """
    if aval(lf).ndim > 2:  # a stack: the formula, batched by its ops
        return adjoint_formula(lf, g)
    return bind("cholesky_grad", lf, g)


def adjoint_formula(lf, g):
    """``Phi(S + S^T)`` with ``S = L^-T Phi(L^T G) L^-1``, in gradc ops (for stacks and small matrices)."""
    p = phi(tri_matmul(lf, g, lower=True, trans=True))  # L^T G, with L triangular
    y = triangular_solve(lf, p, lower=True, trans=True)  # L^-T P
    s = mT(triangular_solve(lf, mT(y), lower=True, trans=True))  # L^-T P L^-1
    return phi(ew.add(s, mT(s)))


def _infer(types, params):
    lf, g = types
    if lf.ndim != 2 or lf.shape[0] != lf.shape[1] or lf != g or not lf.is_float:
        raise ShapeError(f"cholesky_grad takes two square float matrices of one type, not {lf} and {g} (internal)")
    return lf


def _phi_np(x):
    out = np.tril(x)
    out[np.diag_indices(out.shape[0])] *= 0.5
    return out


def _block_formula(d, dbar):
    import scipy.linalg
    p = _phi_np(np.tril(d).T @ dbar)
    s = scipy.linalg.solve_triangular(d, scipy.linalg.solve_triangular(d, p, trans=1, lower=True).T,
                                      trans=1, lower=True)  # S^T
    return _phi_np(s + s.T)


def blocks(n):
    """``(j, k)``: the column blocks ``j:k`` of an n x n adjoint, last first (equal sizes, at most ``BLOCK``).

    >>> blocks(300)
    [(200, 300), (100, 200), (0, 100)]
    """
    if not isinstance(n, int):  # a symbolic size: one block, the formula
        return [(0, n)]
    count = -(-n // BLOCK)
    edges = [round(i * n / count) for i in range(count + 1)]
    return [(edges[i], edges[i + 1]) for i in reversed(range(count))]


def _impl(lf, g):
    """Murray's blocked reverse-mode Cholesky (the same steps as the emitted code)."""
    import scipy.linalg
    n = lf.shape[-1]
    a = np.tril(g).astype(np.result_type(lf, g), copy=True)
    if n == 0:
        return a
    for j, k in blocks(n):
        d = lf[j:k, j:k]
        if k < n:
            a[k:, j:k] = scipy.linalg.solve_triangular(d, a[k:, j:k].T, trans=1, lower=True).T  # Cbar D^-1
            a[k:, :j] -= a[k:, j:k] @ lf[j:k, :j]
            a[j:k, j:k] -= np.tril(a[k:, j:k].T @ lf[k:, j:k])
        a[j:k, j:k] = _block_formula(d, a[j:k, j:k])
        a[j:k, :j] -= a[k:, j:k].T @ lf[k:, :j] + (a[j:k, j:k] + a[j:k, j:k].T) @ lf[j:k, :j]
    return a


# The emitted steps: A (the result, written in place) and L are substituted, j and k are literals.
_FIRST = "A = np.tril(G)"
_SOLVE = "A[k:, j:k] = scipy.linalg.solve_triangular(L[j:k, j:k], A[k:, j:k].T, trans=1, lower=True).T"
_LEFT = "A[k:, :j] -= A[k:, j:k] @ L[j:k, :j]"  # (none left of the first block)
_DOWN = "A[j:k, j:k] -= np.tril(A[k:, j:k].T @ L[k:, j:k])"
_DIAGONAL = """
A[j:k, j:k] = np.tril(np.tril(L[j:k, j:k]).T @ A[j:k, j:k])
np.einsum('ii->i', A[j:k, j:k])[...] *= 0.5
A[j:k, j:k] = scipy.linalg.solve_triangular(L[j:k, j:k], scipy.linalg.solve_triangular(L[j:k, j:k], \
A[j:k, j:k], trans=1, lower=True).T, trans=1, lower=True)
A[j:k, j:k] = np.tril(A[j:k, j:k] + A[j:k, j:k].T)
np.einsum('ii->i', A[j:k, j:k])[...] *= 0.5
"""
_ROWS = "A[j:k, :j] -= A[k:, j:k].T @ L[k:, :j] + (A[j:k, j:k] + A[j:k, j:k].T) @ L[j:k, :j]"
_ROWS_LAST = "A[j:k, :j] -= (A[j:k, j:k] + A[j:k, j:k].T) @ L[j:k, :j]"  # the last block: no rows below


class _Fill(ast.NodeTransformer):
    def __init__(self, names, numbers):
        self.names, self.numbers = names, numbers

    def visit_Name(self, node):
        if node.id in self.numbers:
            return ast.Constant(self.numbers[node.id])
        if node.id in self.names:
            new = self.names[node.id]
            return ast.Name(new, node.ctx) if isinstance(new, str) else new
        return node


def _statements(text, names, numbers):
    tree = ast.parse(text.strip())
    return [_Fill(names, numbers).visit(stmt) for stmt in tree.body]


def _spell(args, params, out, target):
    """The blocked steps unrolled over the blocks, with literal slices (no loop variables to name)."""
    n = out.shape[-1]
    names = {"A": target, "L": args[0], "G": args[1]}
    stmts = _statements(_FIRST, names, {})
    for j, k in blocks(n):
        numbers = {"j": j, "k": k}
        if k < n:
            stmts += _statements(_SOLVE, names, numbers)
            stmts += _statements(_LEFT, names, numbers) if j > 0 else []
            stmts += _statements(_DOWN, names, numbers)
        stmts += _statements(_DIAGONAL, names, numbers)
        if j > 0:
            stmts += _statements(_ROWS if k < n else _ROWS_LAST, names, numbers)
    return [_simplify(s, n) for s in stmts]


class _Slices(ast.NodeTransformer):
    """``x[0:k]`` as ``x[:k]`` and ``x[j:n]`` as ``x[j:]``: what a person would write."""

    def __init__(self, n):
        self.n = n

    def visit_Slice(self, node):
        if isinstance(node.lower, ast.Constant) and node.lower.value == 0:
            node.lower = None
        if isinstance(node.upper, ast.Constant) and node.upper.value == self.n:
            node.upper = None
        return node


def _simplify(stmt, n):
    stmt = _Slices(n).visit(stmt)
    ast.fix_missing_locations(stmt)
    return stmt


def _vjp(ct, out, lf, g, needs):
    w = phi(ct)
    w = ew.add(w, mT(w))  # the cotangent of S + S^T, symmetric
    x = triangular_solve(lf, w, lower=True)  # L^-1 W
    q = phi(triangular_solve(lf, mT(x), lower=True))  # Phi(L^-1 W L^-T)
    l_bar = g_bar = None
    if needs[0]:
        l_bar = tri(ew.sub(matmul(tri(g), mT(q)), matmul(ew.add(out, mT(out)), mT(x))))
    if needs[1]:
        g_bar = tri_matmul(lf, q)  # lower times lower: lower
    return l_bar, g_bar


def _batch(lf, g, batched):
    n = batch_size((lf, g), batched)
    return adjoint_formula(with_batch(lf, batched[0], n), with_batch(g, batched[1], n))


defop("cholesky_grad", infer=_infer, impl=_impl, vjp=_vjp, np=empty_or(_spell), c=c_spell.loop("cholesky_grad"),
      batch=_batch,
      doc="l_bar = tril(tril(g) Q^T - (out + out^T) X^T); g_bar = l Q; X = l^-1 W, Q = Phi(X l^-T), "
          "W = Phi(ct) + Phi(ct)^T")


# ---------------------------------------------------------------- cholesky itself
def _cholesky_vjp(ct, out, a, needs):
    if aval(a).is_complex:
        return (hermitian_adjoint(out, ct),)
    return (cholesky_grad(out, ct),)  # Phi(S + S^T), S = L^-T Phi(L^T ct) L^-1, blocked (linalg_cholesky)


def hermitian_adjoint(lf, ct):
    """The cotangent of a Hermitian ``a`` (its lower triangle, the diagonal's imaginary part unread, as LAPACK)
    for ``lf = cholesky(a)``: Murray's rule for the conjugate pairing Re tr(X^H Y), ``Phi(S + S^H)`` with
    ``S = L^-H Phi(L^H G) L^-1``, applied to ``G = conj(ct)`` and conjugated back (JAX's pairing Re(sum(X Y))).

    >>> lf = np.array([[2.0 + 0j, 0], [0.5, 1]])  # a real factor held as complex: the real rule's cotangent
    >>> bool(np.allclose(hermitian_adjoint(lf, np.eye(2) + 0j), cholesky_grad(lf.real, np.eye(2))))
    True
    """
    g = conj_of(ct)
    p = phi(matmul(conj_of(mT(lf)), tri(g)))  # Phi(L^H G)
    y = triangular_solve(conj_of(lf), p, lower=True, trans=True)  # L^-H P
    s = mT(triangular_solve(lf, mT(y), lower=True, trans=True))  # L^-H P L^-1
    return conj_of(phi(ew.add(s, conj_of(mT(s)))))


defop("cholesky", infer=lambda types, params: _square(types[0], "cholesky"), impl=np.linalg.cholesky,
      vjp=_cholesky_vjp, np=spell.fn("np.linalg.cholesky"), c=c_spell.loop("cholesky"),
      batch=_leading_batch("cholesky"),
      doc="a_bar = cholesky_grad(out, ct) = Phi(S + S^T), S = L^-T Phi(L^T ct) L^-1 (Murray 2016; blocked)")
