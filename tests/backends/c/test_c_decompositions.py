"""The C target's dense decompositions (gradc/backends/c/linalg_decomp.py, linalg_spectral.py).

Raw values of eigh, eigvalsh, svd, svdvals, qr and expm from the C target against NumPy/SciPy on
seeded random inputs of several kinds (symmetric, general, ill-conditioned, repeated eigenvalues,
rank-deficient, 1 x 1, tall and wide; float64 and float32); gradients through the C target against
central differences of the user's function run by NumPy; the C and NumPy targets agreeing on
value and gradient (stacks and strided operands too); NaN input; byte-identical emitted C.

The raw output of a function ``f`` is read as the gradient of ``sum(f(x) * ct)`` in ``ct``.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import gradc
from gradc.backends.c import build as c_build
from gradc.ops import linalg_scipy as lsp

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")

SIZES = [(1, 1), (2, 2), (3, 3), (5, 5), (8, 8)]
RECTANGLES = [(1, 1), (1, 4), (4, 1), (5, 3), (3, 5), (7, 2), (6, 6)]


def raw(f, x):
    """``f(x)`` computed by the C target (the gradient of sum(f(x) * ct) in ct)."""
    def loss(x, ct):
        return np.sum(f(x) * ct)
    ct = np.zeros(np.shape(f(np.nan_to_num(x).astype(np.float64))), x.dtype)  # (NumPy refuses NaN: shape only)
    return gradc.compile(loss, x, ct, wrt="ct", target="c").grad(x, ct)


def tol(dtype):
    return 2e-4 if dtype == np.float32 else 1e-11


# ---------------------------------------------------------------- inputs
def symmetric(rng, n, kind):
    a = rng.standard_normal((n, n))
    if kind == "random":
        return a + a.T
    q, _ = np.linalg.qr(a)
    if kind == "repeated":  # eigenvalues 1, 1, ..., -2, -2 ...
        w = np.where(np.arange(n) < n // 2, 1.0, -2.0)
    elif kind == "ill":  # eigenvalues spanning 12 orders of magnitude
        w = np.logspace(-12, 0, n) * np.where(np.arange(n) % 2, 1, -1)
    else:  # rank deficient: half the eigenvalues zero
        w = np.where(np.arange(n) < n // 2, 0.0, rng.uniform(1, 2, n))
    return (q * w) @ q.T


def general(rng, shape, kind):
    a = rng.standard_normal(shape)
    if kind == "random":
        return a
    m, n = shape
    k = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal((m, k)))
    v, _ = np.linalg.qr(rng.standard_normal((n, k)))
    if kind == "ill":
        s = np.logspace(0, -10, k)
    elif kind == "repeated":
        s = np.ones(k)
    else:  # rank deficient
        s = np.where(np.arange(k) < max(k // 2, 1), rng.uniform(1, 2, k), 0.0) if k > 1 else np.zeros(1)
    return (u * s) @ v.T


def aligned(v, ref):
    """``v``'s columns with the signs of ``ref``'s (eigenvectors and singular vectors are defined up to sign)."""
    signs = np.sign(np.sum(v * ref, axis=0))
    return v * np.where(signs == 0, 1, signs)


# ---------------------------------------------------------------- values against NumPy and SciPy
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["random", "repeated", "ill", "rank"])
@pytest.mark.parametrize("n", [n for n, _ in SIZES])
def test_eigh_and_eigvalsh_values(n, kind, dtype):
    rng = np.random.default_rng(100 * n + len(kind))
    a = symmetric(rng, n, kind).astype(dtype)
    scale = max(np.abs(np.linalg.eigvalsh(a.astype(np.float64))).max(), 1e-300)
    w_ref = np.linalg.eigvalsh(a.astype(np.float64))
    w = raw(lambda x: np.linalg.eigvalsh(x), a)
    assert w.dtype == dtype
    np.testing.assert_allclose(w, w_ref, atol=tol(dtype) * scale * n, rtol=0)
    packed = raw(lambda x: np.concatenate([np.linalg.eigh(x)[0][None, :], np.linalg.eigh(x)[1]]), a)
    w2, v = packed[0], packed[1:].astype(np.float64)
    np.testing.assert_allclose(w2, w_ref, atol=tol(dtype) * scale * n, rtol=0)
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=tol(dtype) * n)
    np.testing.assert_allclose(a.astype(np.float64) @ v, v * w2, atol=tol(dtype) * scale * n)
    biggest = np.abs(v).argmax(axis=0)  # the documented sign: each column's largest entry positive
    assert np.all(v[biggest, np.arange(n)] > 0)
    _, v_ref = np.linalg.eigh(a.astype(np.float64))
    gaps = np.diff(w_ref)
    if kind == "random" and (n == 1 or gaps.min() > 1e-2 * scale):
        np.testing.assert_allclose(aligned(v, v_ref), v_ref, atol=100 * tol(dtype) * n)


def test_eigh_reads_the_named_triangle():
    a = np.random.default_rng(3).standard_normal((4, 4))
    for uplo, tri in (("L", np.tril), ("U", np.triu)):
        sym = tri(a) + tri(a, -1 if uplo == "L" else 1).T
        w = raw(lambda x, u=uplo: np.linalg.eigvalsh(x, UPLO=u), a)
        np.testing.assert_allclose(w, np.linalg.eigvalsh(sym), atol=1e-12)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["random", "repeated", "ill", "rank"])
@pytest.mark.parametrize("shape", RECTANGLES)
def test_svd_values(shape, kind, dtype):
    rng = np.random.default_rng(10 * shape[0] + shape[1] + len(kind))
    a = general(rng, shape, kind).astype(dtype)
    m, n = shape
    k = min(m, n)
    ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    scale = max(ref.max(), 1e-300)
    s = raw(lambda x: np.linalg.svd(x, compute_uv=False), a)
    assert s.dtype == dtype and s.shape == (k,)
    np.testing.assert_allclose(s, ref, atol=tol(dtype) * scale * max(m, n), rtol=0)

    def parts(x):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        return np.concatenate([u.ravel(), s, vh.ravel()])
    flat = raw(parts, a).astype(np.float64)
    u, s2, vh = flat[:m * k].reshape(m, k), flat[m * k:m * k + k], flat[m * k + k:].reshape(k, n)
    np.testing.assert_allclose(s2, ref, atol=tol(dtype) * scale * max(m, n), rtol=0)
    np.testing.assert_allclose(u.T @ u, np.eye(k), atol=tol(dtype) * max(m, n) * 10)
    np.testing.assert_allclose(vh @ vh.T, np.eye(k), atol=tol(dtype) * max(m, n) * 10)
    np.testing.assert_allclose((u * s2) @ vh, a, atol=tol(dtype) * scale * max(m, n))
    u_ref, s_ref, vh_ref = np.linalg.svd(a.astype(np.float64), full_matrices=False)
    if kind == "random" and (k == 1 or np.diff(s_ref).max() < -1e-2 * scale) and s_ref.min() > 1e-2 * scale:
        np.testing.assert_allclose(aligned(vh.T, vh_ref.T), vh_ref.T, atol=100 * tol(dtype) * max(m, n))
        np.testing.assert_allclose(aligned(u, u_ref), u_ref, atol=100 * tol(dtype) * max(m, n))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["random", "ill", "rank"])
@pytest.mark.parametrize("shape", RECTANGLES)
def test_qr_values_equal_numpys_signs_included(shape, kind, dtype):
    rng = np.random.default_rng(7 * shape[0] + shape[1] + len(kind))
    a = general(rng, shape, kind).astype(dtype)
    m, n = shape
    k = min(m, n)

    def parts(x):
        q, r = np.linalg.qr(x)
        return np.concatenate([q.ravel(), r.ravel()])
    flat = raw(parts, a).astype(np.float64)
    q, r = flat[:m * k].reshape(m, k), flat[m * k:].reshape(k, n)
    scale = max(np.abs(a).max(), 1e-300)
    np.testing.assert_allclose(q @ r, a, atol=tol(dtype) * scale * max(m, n))
    np.testing.assert_allclose(q.T @ q, np.eye(k), atol=tol(dtype) * max(m, n))
    assert np.all(np.tril(r, -1) == 0)
    if kind != "rank":  # R's diagonal signs are LAPACK's (Householder): Q and R are NumPy's
        q_ref, r_ref = np.linalg.qr(a.astype(np.float64))
        np.testing.assert_allclose(r, r_ref, atol=10 * tol(dtype) * scale * max(m, n))
        np.testing.assert_allclose(q, q_ref, atol=10 * tol(dtype) * max(m, n) / (1e-10 if kind == "ill" else 1))


def matrix_exponential(x):
    return lsp.expm(x)  # gradc's scipy.linalg.expm (a closure's call of SciPy's is not routed)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("norm", [0.0, 1e-3, 0.5, 3.0, 20.0])
@pytest.mark.parametrize("n", [1, 2, 4, 7])
def test_expm_values(n, norm, dtype):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n))
    a = (a * norm / max(np.abs(a).sum(axis=0).max(), 1e-300)).astype(dtype)
    ref = scipy.linalg.expm(a.astype(np.float64))
    e = raw(matrix_exponential, a)
    assert e.dtype == dtype
    rel = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(e, ref, atol=rel * np.abs(ref).max() * max(norm, 1.0), rtol=0)


def test_expm_of_nilpotent_and_diagonal():
    nilpotent = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(raw(matrix_exponential, nilpotent), np.eye(3) + nilpotent + nilpotent @ nilpotent / 2,
                               atol=1e-14)
    d = np.diag([-30.0, 0.0, 10.0])
    np.testing.assert_allclose(raw(matrix_exponential, d), np.diag(np.exp([-30.0, 0.0, 10.0])), rtol=1e-12,
                               atol=1e-25)


def test_nan_input_gives_nan():
    a = np.eye(3)
    a[1, 0] = a[0, 1] = np.nan
    assert np.all(np.isnan(raw(lambda x: np.linalg.eigvalsh(x), a)))
    assert np.all(np.isnan(raw(lambda x: np.linalg.svd(x, compute_uv=False), a)))
    assert np.all(np.isnan(raw(matrix_exponential, a)))


@pytest.mark.parametrize("magnitude", [1e-200, 1e150, 1e300])
def test_huge_and_tiny_entries(magnitude):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 3))
    sym = (a[:3] + a[:3].T) * magnitude
    np.testing.assert_allclose(raw(lambda x: np.linalg.eigvalsh(x), sym), np.linalg.eigvalsh(sym), rtol=1e-12,
                               atol=1e-12 * np.abs(sym).max())
    big = a * magnitude
    np.testing.assert_allclose(raw(lambda x: np.linalg.svd(x, compute_uv=False), big),
                               np.linalg.svd(big, compute_uv=False), rtol=1e-12)

    def parts(x):
        q, r = np.linalg.qr(x)
        return np.concatenate([q.ravel(), r.ravel() / magnitude])
    np.testing.assert_allclose(raw(parts, big), parts(big), rtol=1e-11, atol=1e-12)


def eigvalsh_sum(a):
    return np.sum(np.linalg.eigvalsh(a))


def test_named_sizes_are_refused_clearly():
    with pytest.raises(gradc.GradcError, match="does not take named sizes for op eigvalsh") as info:
        gradc.compile(eigvalsh_sum, gradc.spec("f64[n,n]"), target="c")
    assert "test_c_decompositions.py" in str(info.value) and "target='numpy'" in str(info.value)
