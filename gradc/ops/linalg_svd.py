"""SVD, QR and the matrix exponential: primitives with published reverse rules, batched over leading axes.

``svd`` is the thin SVD packed along axis -2 as ``[U; s; V]`` (V, not Vh), shape
(..., m + 1 + n, k), k = min(m, n); ``qr`` packs ``[Q; R]`` along axis -2 for tall or
square input and ``[Q, R]`` along axis -1 for wide input. The user-level functions
(``gradc.ops.linalg_api``) unpack them. The SVD rule assumes distinct nonzero singular
values (Townsend 2016); singular vectors are defined up to sign, so only functions
that do not depend on the signs have a derivative.

>>> import numpy as np
>>> bind("svdvals", np.diag([3.0, 2.0]))
array([3., 2.])
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.errors import ShapeError
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.linalg import matmul
from gradc.ops.linalg_decomp import (
    _cat,
    _cols,
    _item,
    _leading_batch,
    _off_diagonal_inverse,
    _row,
    _rows,
    _square,
    _stmts,
    _swap_ast,
    conj_of,
    empty_or,
    eye_like,
    mT,
    phi,
    real_of,
    tri,
    triangular_solve,
)
from gradc.ops.values import aval


def _matrix(t, what, complex_ok=False):
    if t.ndim < 2 or not (t.is_float or complex_ok and t.is_complex):
        raise ShapeError(f"{what} needs float matrices (..., m, n), not {t}", hint="pass a 2-D (or stacked) array")
    return t


def _real_type(t):
    from gradc.ir.types import REAL_OF_COMPLEX
    return t.with_dtype(REAL_OF_COMPLEX.get(t.dtype, t.dtype))


def take(x, axis, start, stop):
    """``x[..., start:stop, :]`` (axis -2) or ``x[..., start:stop]`` (axis -1)."""
    nd = aval(x).ndim
    spec = [sh.slice_item(None, None, None)] * nd
    spec[nd + axis] = sh.slice_item(start, stop, None)
    return sh.index(x, tuple(spec))


# ---------------------------------------------------------------- svd
def _svd_infer(types, params):
    t = _matrix(types[0], "svd", complex_ok=True)
    m, n = t.shape[-2:]
    return t.with_shape(t.shape[:-2] + (m + 1 + n, min(m, n)))


def _svd_impl(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.concatenate((u, s[..., None, :], np.conj(np.swapaxes(vh, -1, -2))), axis=-2)  # V = Vh^H


def unpack_svd(packed, m):
    u = take(packed, -2, 0, m)
    s = sh.reshape(take(packed, -2, m, m + 1), aval(packed).shape[:-2] + aval(packed).shape[-1:])
    return u, s, take(packed, -2, m + 1, None)


def _svd_vjp(ct, out, a, needs):
    # the rule for the conjugate pairing Re tr(X^H Y) (Townsend 2016; complex: Wan and Zhang 2019), applied to the
    # conjugated cotangents and conjugated back: JAX's pairing Re(sum(X * Y)). Real: every conj is the value itself.
    # A complex pair of singular vectors has a phase of its own: the tangent map puts it in U (i Im(U^H dU_ii))
    m = aval(a).shape[-2]
    u, s, v = unpack_svd(out, m)
    u_bar, s_bar, v_bar = unpack_svd(ct, m)
    s, s_bar, u_bar, v_bar = real_of(s), real_of(s_bar), conj_of(u_bar), conj_of(v_bar)
    uh, vh = conj_of(mT(u)), conj_of(mT(v))
    s2 = ew.mul(s, s)
    f = _off_diagonal_inverse(ew.sub(_rows(s2), _cols(s2)))  # 1 / (s_j^2 - s_i^2)
    ut_ub, vt_vb = matmul(uh, u_bar), matmul(vh, v_bar)
    j = ew.mul(f, ew.sub(ut_ub, conj_of(mT(ut_ub))))
    k = ew.mul(f, ew.sub(vt_vb, conj_of(mT(vt_vb))))
    inner = ew.add(ew.add(ew.mul(j, _rows(s)), ew.mul(eye_like(j), _rows(s_bar))), ew.mul(_cols(s), k))
    inv_s = ew.div(1.0, s)
    if aval(a).is_complex:  # the phase: diag(X - X^H) / 2 = i Im(X_ii), over s_i
        half_diff = ew.mul(eye_like(j), ew.sub(ut_ub, conj_of(mT(ut_ub))))
        inner = ew.add(inner, ew.mul(ew.mul(half_diff, 0.5), _rows(inv_s)))
    a_bar = matmul(matmul(u, inner), vh)
    left = ew.mul(ew.sub(u_bar, matmul(u, ut_ub)), _rows(inv_s))  # (I - U U^H) U_bar S^-1
    right = ew.mul(_cols(inv_s), conj_of(mT(ew.sub(v_bar, matmul(v, vt_vb)))))  # S^-1 V_bar^H (I - V V^H)
    a_bar = ew.add(a_bar, ew.add(matmul(left, vh), matmul(u, right)))
    return (conj_of(a_bar),)


def _svd_spell(args, params, out, target):
    def vectors(t):  # V = Vh^H (conj only for complex: a real V reads as before)
        swapped = _swap_ast(_item(t, 2))
        return spell.call("np.conj", swapped) if out.is_complex else swapped
    return _stmts(lambda a, p: spell.call("np.linalg.svd", a[0], full_matrices=ast.Constant(False)),
                  lambda t, p: _cat([_item(t, 0), _row(_item(t, 1)), vectors(t)], -2))(args, params, out, target)


defop("svd", infer=_svd_infer, impl=_svd_impl, vjp=_svd_vjp, c=c_spell.loop("svd"), batch=_leading_batch("svd"),
      np=_svd_spell,
      doc="a_bar = U (J S + diag(s_bar) + S K) V^T + projections (Townsend 2016; distinct singular values)")


def _svdvals_vjp(ct, out, a, needs):
    u, _, v = unpack_svd(bind("svd", a), aval(a).shape[-2])
    return (matmul(ew.mul(conj_of(u), _rows(ct)), mT(v)),)  # conj(U diag(ct) V^H): JAX's pairing


defop("svdvals", infer=lambda types, params: _real_type(_matrix(types[0], "svd", complex_ok=True).with_shape(
          types[0].shape[:-2] + (min(types[0].shape[-2:]),))),
      impl=lambda a: np.linalg.svd(a, compute_uv=False), vjp=_svdvals_vjp, c=c_spell.loop("svd"),
      np=lambda args, params, out, target: spell.call("np.linalg.svd", args[0], compute_uv=ast.Constant(False)),
      doc="a_bar = U diag(ct) V^T", batch=_leading_batch("svdvals"))


# ---------------------------------------------------------------- qr
def _qr_infer(types, params):
    t = _matrix(types[0], "qr", complex_ok=True)
    m, n = t.shape[-2:]
    return t.with_shape(t.shape[:-2] + ((m + n, n) if m >= n else (m, m + n)))


def _qr_impl(a):
    q, r = np.linalg.qr(a)
    return np.concatenate((q, r), axis=-2 if a.shape[-2] >= a.shape[-1] else -1)


def unpack_qr(packed, m, n):
    if m >= n:
        return take(packed, -2, 0, m), take(packed, -2, m, None)
    return take(packed, -1, 0, m), take(packed, -1, m, None)


def _qr_tall_grad(q, r, q_bar, r_bar):
    """The rule for m >= n: A_bar = (Q_bar + Q copyltu(M)) R^-T, M = R R_bar^T - Q_bar^T Q."""
    m = ew.sub(matmul(r, mT(r_bar)), matmul(mT(q_bar), q))
    sym = ew.add(tri(m, True, 0), mT(tri(m, True, -1)))
    b = ew.add(q_bar, matmul(q, sym))
    return mT(triangular_solve(r, mT(b), lower=False))


def _qr_complex_tall_grad(q, r, q_bar, r_bar):
    """The complex rule for m >= n (R's diagonal real, as LAPACK's): with the conjugate pairing Re tr(X^H Y),
    Q^H dA R^-1 = Q^H dQ + dR R^-1 fixes the skew-Hermitian Q^H dQ (its diagonal imaginary), and transposing gives
    A_bar = (Q_bar + Q N) R^-H, N = M - Phi(M - M^H), M = R_bar R^H - Q^H Q_bar; here applied to conj(ct) and
    conjugated back (JAX's pairing), so M = r_bar R^T - Q^T q_bar with plain transposes. Real: N = copyltu(M^T)."""
    m = ew.sub(matmul(r_bar, mT(r)), matmul(mT(q), q_bar))
    n = ew.sub(m, phi(ew.sub(m, conj_of(mT(m)))))
    b = ew.add(q_bar, matmul(conj_of(q), n))
    return mT(triangular_solve(r, mT(b), lower=False))


def _qr_vjp(ct, out, a, needs):
    m, n = aval(a).shape[-2:]
    q, r = unpack_qr(out, m, n)
    q_bar, r_bar = unpack_qr(ct, m, n)
    tall_grad = _qr_complex_tall_grad if aval(a).is_complex else _qr_tall_grad
    if m >= n:
        return (tall_grad(q, r, q_bar, r_bar),)
    # wide: A = [X | Y] with X square; Q R = [Q U | Q V], V = Q^H Y (Liao et al. 2019)
    y, u = take(a, -1, m, None), take(r, -1, 0, m)
    v_bar = take(r_bar, -1, m, None)
    x_bar = tall_grad(q, u, ew.add(q_bar, matmul(conj_of(y), conj_of(mT(v_bar)))), take(r_bar, -1, 0, m))
    return (sh.concatenate([x_bar, matmul(conj_of(q), v_bar)], aval(a).ndim - 1),)


def _qr_second(t, p, axis):
    return _cat([_item(t, 0), _item(t, 1)], axis)


defop("qr", infer=_qr_infer, impl=_qr_impl, vjp=_qr_vjp, c=c_spell.loop("qr"), batch=_leading_batch("qr"),
      np=lambda args, params, out, target: _stmts(
          lambda a, p: spell.call("np.linalg.qr", a[0]),
          lambda t, p: _qr_second(t, p, -2 if out.shape[-2] > out.shape[-1] else -1))(args, params, out, target),
      doc="a_bar = (Q_bar + Q copyltu(R R_bar^T - Q_bar^T Q)) R^-T (tall; wide by splitting A)")


# ---------------------------------------------------------------- expm
def _expm_impl(a):
    import scipy.linalg  # the emitted code calls SciPy too: NumPy has no matrix exponential
    return np.zeros(np.shape(a), np.asarray(a).dtype) if np.size(a) == 0 else scipy.linalg.expm(a)


def _expm_vjp(ct, out, a, needs):
    """The Frechet derivative at a^T applied to ct: the top-right block of expm([[a^T, ct], [0, a^T]])."""
    nd, n = aval(a).ndim, aval(a).shape[-1]
    at = mT(a)
    top = sh.concatenate([at, ct], nd - 1)
    bottom = sh.concatenate([ew.zeros_like(a), at], nd - 1)
    e = bind("expm", sh.concatenate([top, bottom], nd - 2))
    return (take(take(e, -2, 0, n), -1, n, None),)


defop("expm", infer=lambda types, params: _square(types[0], "expm"), impl=_expm_impl, vjp=_expm_vjp,
      c=c_spell.loop("expm"), np=empty_or(spell.fn("scipy.linalg.expm")), batch=_leading_batch("expm"),
      doc="a_bar = expm([[a^T, ct], [0, a^T]])[:n, n:] (the Frechet derivative)")
