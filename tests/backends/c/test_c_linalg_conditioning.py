"""The C target's dense linear algebra on ill-conditioned, graded and near-singular matrices, against NumPy/LAPACK.

A seeded generator makes matrices with condition numbers 1e2 .. 1e12 (random singular vectors), graded
ones (rows and columns scaled over 1e-6 .. 1e6: condition numbers near 1e24 with a well-conditioned core),
and near-singular ones (a row repeated up to 1e-13). Each op is held to what a backward-stable algorithm
(LAPACK's) guarantees there, a small multiple of n eps, in the measure that makes it meaningful for that
input: the residual of solve/inv/lstsq, the reconstruction and orthogonality of cholesky, eigh, svd and qr;
the values themselves against NumPy within cond * eps (det, slogdet, pinv, eigenvalues, singular values).
Complex solve/slogdet (the one complex LU) and float32 (cond up to 1e6) are held to the same bounds.
The Jacobi sweeps of eigh/svd give NaN when capped (``linalg_spectral.JACOBI_SWEEPS``), never a silent
partial result: checked by lowering the cap to one sweep.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import linalg_spectral

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

EPS = np.finfo(np.float64).eps
KINDS = ("cond1e2", "cond1e6", "cond1e9", "cond1e12", "graded", "near_singular")


def compiled(f, *examples):
    """``f`` compiled for the C target, called as ``g(*arrays)`` (its raw output: the gradient in a zero ct)."""
    ct = np.zeros(np.shape(f(*examples)))
    if len(examples) == 1:
        def loss(a, ct):
            return np.sum(f(a) * ct)
    else:
        def loss(a, b, ct):
            return np.sum(f(a, b) * ct)
    module = gradc.compile(loss, *examples, ct, wrt="ct", target="c")
    return lambda *xs: module.grad(*xs, ct)


def with_condition(rng, m, n, cond):
    u, _ = np.linalg.qr(rng.standard_normal((m, m)))
    v, _ = np.linalg.qr(rng.standard_normal((n, n)))
    k = min(m, n)
    return (u[:, :k] * np.logspace(0, -np.log10(cond), k)) @ v[:k]


def general(rng, n, kind, m=None):
    m = m or n
    if kind.startswith("cond"):
        return with_condition(rng, m, n, float(kind[4:]))
    if kind == "graded":
        return np.logspace(-6, 6, m)[:, None] * rng.standard_normal((m, n)) * np.logspace(6, -6, n)[None, :]
    a = rng.standard_normal((m, n))  # near singular: the last row is the first one, up to 1e-13
    a[-1] = a[0] + 1e-13 * rng.standard_normal(n)
    return a


def positive_definite(rng, n, kind):
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    if kind == "graded":
        d = np.logspace(-6, 6, n)
        return d[:, None] * ((q * np.logspace(0, -1, n)) @ q.T) * d[None, :]
    cond = float(kind[4:]) if kind.startswith("cond") else 1e13
    return (q * np.logspace(0, -np.log10(cond), n)) @ q.T


def cases(n):
    rng = np.random.default_rng(1000 + n)
    return [(kind, general(rng, n, kind), positive_definite(rng, n, kind), rng.standard_normal((n, 3)))
            for kind in KINDS for _ in range(2)]


SIZES = (3, 8, 13)


def orthogonality(q):
    return np.abs(q.T @ q - np.eye(q.shape[1])).max()


@pytest.mark.parametrize("n", SIZES)
def test_solve_inv_det_slogdet_are_backward_stable(n):
    a0, b0 = cases(n)[0][1], cases(n)[0][3]
    solve = compiled(np.linalg.solve, a0, b0)
    inv = compiled(np.linalg.inv, a0)
    det = compiled(np.linalg.det, a0)
    sign = compiled(lambda a: np.linalg.slogdet(a)[0], a0)
    logabs = compiled(lambda a: np.linalg.slogdet(a)[1], a0)
    for kind, a, _, b in cases(n):
        cond = np.linalg.cond(a)
        x = solve(a, b)
        residual = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x) + np.linalg.norm(b))
        assert residual < 4 * n * EPS, (kind, residual / EPS)
        ai = inv(a)
        assert np.linalg.norm(a @ ai - np.eye(n)) / (np.linalg.norm(a) * np.linalg.norm(ai)) < 4 * n * EPS, kind
        s, expected = np.linalg.slogdet(a)
        budget = 8 * n * EPS * min(cond, 1 / EPS)  # the determinant's error grows with the condition
        assert sign(a) == s, kind
        assert abs(logabs(a) - expected) < budget, (kind, logabs(a) - expected)
        assert abs(det(a) - np.linalg.det(a)) <= budget * abs(np.linalg.det(a)), kind


@pytest.mark.parametrize("n", SIZES)
def test_cholesky_and_eigh_reconstruct_ill_conditioned_matrices(n):
    p0 = cases(n)[0][2]
    cholesky = compiled(np.linalg.cholesky, p0)
    values = compiled(lambda a: np.linalg.eigh(a)[0], p0)
    vectors = compiled(lambda a: np.linalg.eigh(a)[1], p0)
    for kind, a, p, _ in cases(n):
        lower = cholesky(p)
        assert np.linalg.norm(lower @ lower.T - p) < 4 * n * EPS * np.linalg.norm(p), kind
        assert np.allclose(np.triu(lower, 1), 0.0) and (np.diag(lower) > 0).all(), kind
        for sym in (p, a + a.T):
            w, v = values(sym), vectors(sym)
            assert np.all(np.diff(w) >= 0), kind
            scale = np.abs(np.linalg.eigvalsh(sym)).max()
            assert np.abs(w - np.linalg.eigvalsh(sym)).max() < 4 * n * EPS * scale, kind
            assert np.linalg.norm(sym @ v - v * w) < 4 * n * EPS * np.linalg.norm(sym), kind
            assert orthogonality(v) < 4 * n * EPS, kind


@pytest.mark.parametrize("m,n", [(3, 3), (8, 8), (13, 13), (9, 4), (4, 9)])
def test_svd_qr_lstsq_pinv_on_ill_conditioned_matrices(m, n):
    rng = np.random.default_rng(7 * m + n)
    matrices = [(kind, general(rng, n, kind, m)) for kind in KINDS for _ in range(2)]
    a0, b0 = matrices[0][1], rng.standard_normal((m, 2))
    u_of = compiled(lambda a: np.linalg.svd(a, full_matrices=False)[0], a0)
    s_of = compiled(lambda a: np.linalg.svd(a, full_matrices=False)[1], a0)
    vt_of = compiled(lambda a: np.linalg.svd(a, full_matrices=False)[2], a0)
    q_of = compiled(lambda a: np.linalg.qr(a)[0], a0)
    r_of = compiled(lambda a: np.linalg.qr(a)[1], a0)
    pinv = compiled(np.linalg.pinv, a0)
    lstsq = compiled(lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0], a0, b0)
    k = min(m, n)
    for kind, a in matrices:
        norm = np.linalg.norm(a)
        u, s, vt = u_of(a), s_of(a), vt_of(a)
        assert np.abs(s - np.linalg.svd(a, compute_uv=False)).max() < 4 * k * EPS * s[0], kind
        assert np.linalg.norm((u * s) @ vt - a) < 8 * k * EPS * norm, kind
        assert orthogonality(u) < 8 * k * EPS and orthogonality(vt.T) < 8 * k * EPS, kind
        q, r = q_of(a), r_of(a)
        assert np.linalg.norm(q @ r - a) < 4 * k * EPS * norm and orthogonality(q) < 4 * k * EPS, kind
        assert np.allclose(np.tril(r, -1), 0.0), kind
        pinv_budget = _budget(s, 1e-15 * s[0])  # NumPy's default cut-offs: pinv's rcond, lstsq's eps max(m, n)
        if pinv_budget is not None:
            expected = np.linalg.pinv(a)
            assert np.abs(pinv(a) - expected).max() < pinv_budget * np.abs(expected).max(), kind
        lstsq_budget = _budget(s, EPS * max(m, n) * s[0])
        if lstsq_budget is not None:
            b = rng.standard_normal((m, 2))
            x, x_np = lstsq(a, b), np.linalg.lstsq(a, b, rcond=None)[0]
            assert np.abs(x - x_np).max() < lstsq_budget * np.abs(x_np).max(), kind


def _budget(s, cut):
    """The error allowed in a pseudo-inverse keeping the singular values above ``cut`` (16 k eps s_0 / s_rank,
    its condition), or None where one is within a factor 10 of the cut: the rank is then a coin toss."""
    if np.any(np.abs(np.log10(s[s > 0] / cut)) < 1):
        return None
    rank = int((s > cut).sum())
    return 16 * len(s) * EPS * s[0] / s[rank - 1]


def _real_part(f):
    return lambda x: np.real(f(x))


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_jacobi_sweeps_capped_give_nan_not_a_partial_result(monkeypatch, dtype):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 6)) + (1j * rng.standard_normal((6, 6)) if dtype == np.complex128 else 0)
    h = a + a.conj().T
    functions = {"eigh_w": lambda x: np.linalg.eigh(x)[0], "eigh_v": lambda x: np.linalg.eigh(x)[1],
                 "svd_s": lambda x: np.linalg.svd(x)[1], "svd_u": lambda x: np.linalg.svd(x)[0],
                 "svd_vt": lambda x: np.linalg.svd(x)[2]}
    if dtype == np.complex128:  # (a complex raw output: its real part through the loss)
        functions = {k: _real_part(f) for k, f in functions.items()}
    for name, f in functions.items():
        arg = h if name.startswith("eigh") else a
        assert np.isfinite(compiled(f, arg)(arg)).all(), name
    monkeypatch.setattr(linalg_spectral, "JACOBI_SWEEPS", 1)
    for name, f in functions.items():
        arg = h if name.startswith("eigh") else a
        assert np.isnan(compiled(f, arg)(arg)).all(), name


@pytest.mark.parametrize("n", (4, 9))
def test_complex_solve_and_slogdet_through_the_one_complex_lu(n):
    rng = np.random.default_rng(50 + n)

    def complex_with_condition(cond):
        u, _ = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
        v, _ = np.linalg.qr(rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
        return (u * np.logspace(0, -np.log10(cond), n)) @ v

    matrices = [complex_with_condition(10.0 ** k) for k in (2, 6, 9, 12)]
    b = rng.standard_normal((n, 2)) + 1j * rng.standard_normal((n, 2))
    solve_re = compiled(lambda a, b: np.real(np.linalg.solve(a, b)), matrices[0], b)
    solve_im = compiled(lambda a, b: np.imag(np.linalg.solve(a, b)), matrices[0], b)
    phase_re = compiled(lambda a: np.real(np.linalg.slogdet(a)[0]), matrices[0])
    phase_im = compiled(lambda a: np.imag(np.linalg.slogdet(a)[0]), matrices[0])
    logabs = compiled(lambda a: np.linalg.slogdet(a)[1], matrices[0])
    for a in matrices:
        x = solve_re(a, b) + 1j * solve_im(a, b)
        residual = np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x) + np.linalg.norm(b))
        assert residual < 4 * n * EPS, residual / EPS
        phase, expected = np.linalg.slogdet(a)
        budget = 8 * n * EPS * np.linalg.cond(a)
        assert abs(logabs(a) - expected) < budget
        assert abs(phase_re(a) + 1j * phase_im(a) - phase) < budget


@pytest.mark.parametrize("n", (4, 9))
def test_float32_decompositions_stay_backward_stable(n):
    rng = np.random.default_rng(70 + n)
    eps = np.finfo(np.float32).eps
    kinds = [with_condition(rng, n, n, c) for c in (1e2, 1e4, 1e6)]
    spd = [positive_definite(rng, n, kind) for kind in ("cond1e2", "cond1e4")]
    a0, b0 = kinds[0].astype(np.float32), rng.standard_normal((n, 2)).astype(np.float32)
    solve = compiled(np.linalg.solve, a0, b0)
    s_of = compiled(lambda a: np.linalg.svd(a)[1], a0)
    u_of = compiled(lambda a: np.linalg.svd(a)[0], a0)
    vt_of = compiled(lambda a: np.linalg.svd(a)[2], a0)
    w_of = compiled(lambda a: np.linalg.eigh(a)[0], a0)
    v_of = compiled(lambda a: np.linalg.eigh(a)[1], a0)
    cholesky = compiled(np.linalg.cholesky, a0 @ a0.T + n * np.eye(n, dtype=np.float32))
    for a in kinds:
        a = a.astype(np.float32)
        a64 = a.astype(np.float64)
        x = solve(a, b0).astype(np.float64)
        residual = np.linalg.norm(a64 @ x - b0) / (np.linalg.norm(a64) * np.linalg.norm(x) + np.linalg.norm(b0))
        assert residual < 4 * n * eps, residual / eps
        u, s, vt = (f(a).astype(np.float64) for f in (u_of, s_of, vt_of))
        assert np.linalg.norm((u * s) @ vt - a64) < 8 * n * eps * np.linalg.norm(a64)
        assert orthogonality(u) < 8 * n * eps and orthogonality(vt.T) < 8 * n * eps
        sym = (a + a.T).astype(np.float32)
        w, v = w_of(sym).astype(np.float64), v_of(sym).astype(np.float64)
        assert np.linalg.norm(sym @ v - v * w) < 8 * n * eps * np.linalg.norm(sym.astype(np.float64))
        assert orthogonality(v) < 8 * n * eps
    for p in spd:
        p = p.astype(np.float32)
        lower = cholesky(p).astype(np.float64)
        assert np.linalg.norm(lower @ lower.T - p) < 4 * n * eps * np.linalg.norm(p.astype(np.float64))
