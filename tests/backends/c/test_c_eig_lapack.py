"""eig of large matrices through LAPACK's geev found at load time (gradc/backends/c/lapack.py), and without it.

Both paths (``GRADC_BLAS=none`` keeps gradc's own Hessenberg QR) give valid eigenpairs (NumPy's eigenvalues as a
multiset, ``A V = V diag(w)``, unit vectors with the largest entry real and positive) and the NumPy target's
gradient for an order-free loss; with LAPACK, a complex matrix's eigenpairs are NumPy's own, order included.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_c_eig import check_eigenpairs, eig_packed, raw

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import lapack

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")
HAVE_SCIPY_LAPACK = lapack._scipy_geev() is not None
N = lapack.EIG_LAPACK_MIN + 8


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _matrix(dtype, n=N, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    return (a + 1j * rng.standard_normal((n, n)) if np.dtype(dtype).kind == "c" else a).astype(dtype)


@pytest.mark.parametrize("choice", ["none", "auto"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32, np.complex64])
def test_both_paths_give_valid_eigenpairs(monkeypatch, choice, dtype):
    monkeypatch.setenv("GRADC_BLAS", choice)
    a = _matrix(dtype)
    single = dtype in (np.float32, np.complex64)
    positive = choice == "none" or np.dtype(dtype).kind == "c" or lapack.found_lapack() is None
    check_eigenpairs(a, raw(eig_packed, a), 1e-4 if single else 1e-12, positive=positive)


@pytest.mark.skipif(not HAVE_SCIPY_LAPACK, reason="scipy.linalg.cython_lapack has no geev here")
@pytest.mark.parametrize("dtype", [np.complex128, np.float64])
def test_with_lapack_the_eigenpairs_are_numpys(monkeypatch, dtype):
    monkeypatch.setenv("GRADC_BLAS", "auto")
    assert lapack.found_lapack()[-1] == "scipy.linalg.cython_lapack"
    a = _matrix(dtype, seed=3)
    out = raw(eig_packed, a)
    w, v = np.linalg.eig(a)
    np.testing.assert_allclose(out[0], w, rtol=1e-12, atol=1e-12)  # the order too
    np.testing.assert_allclose(out[1:], v, rtol=1e-10, atol=1e-12)  # and the phases
    if dtype == np.float64:
        pairs = np.abs(np.imag(out[0])) > 0
        assert np.isin(out[0][pairs], np.conj(out[0][pairs])).all()  # conjugate pairs exactly


@pytest.mark.parametrize("choice", ["none", "auto"])
def test_gradient_equals_the_numpy_targets(monkeypatch, choice):
    monkeypatch.setenv("GRADC_BLAS", choice)
    a = _matrix(np.float64, seed=5) + 0.5 * np.eye(N)

    def loss(x):
        w, v = np.linalg.eig(x)
        return np.sum(np.abs(w) ** 2) + np.sum(np.abs(v) ** 2 * np.arange(N)[:, None] * np.real(w))
    c = gradc.compile(loss, a, target="c")
    assert "_use_lapack" in c.source and "zgeev" in c.source
    value, grad = c.value_and_grad(a)
    want_value, want_grad = gradc.compile(loss, a).value_and_grad(a)
    np.testing.assert_allclose(value, want_value, rtol=1e-10)
    np.testing.assert_allclose(grad, want_grad, rtol=1e-7, atol=1e-9)


def test_header_names_the_setter():
    a = np.eye(3)
    c = gradc.compile(lambda x: np.sum(np.abs(np.linalg.eigvals(x))), a, target="c")
    assert "_use_lapack(zgeev, cgeev, dgeev, sgeev)" in c.source
    np.testing.assert_allclose(c.forward(a), 3.0)
