"""Large matrix products through the BLAS found at load time, and gradc's kernels when there is none.

Products of at least ``blas.BLAS_MIN`` multiply-adds are emitted twice: a gemm call and the
register-blocked kernels. Each case runs both paths (``GRADC_BLAS=none`` forces the kernels) and
checks values and gradients against the user's function run by NumPy and, for the gradient, a
closed form (``A.T @ G``-style products written out by hand); a seeded generator draws shapes,
transposes and dtypes.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import blas
from gradc.backends.c import build as c_build

HAVE_CC = c_build.find_compiler() is not None
pytestmark = pytest.mark.skipif(not HAVE_CC, reason="no C compiler found ($CC, cc or gcc): the C target cannot build")
HAVE_SCIPY_BLAS = blas._scipy_gemm() is not None


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _loss(ta, tb):
    def loss(a, b, w):
        z = (a.T if ta else a) @ (b.T if tb else b)
        return np.sum(np.tanh(z) * w)
    return loss


def _by_hand(ta, tb, a, b, w):
    """The loss's value and gradients in a and b, written out."""
    A, B = (a.T if ta else a), (b.T if tb else b)
    z = A @ B
    g = w * (1.0 - np.tanh(z) ** 2)
    ga, gb = g @ B.T, A.T @ g
    return np.sum(np.tanh(z) * w), (ga.T if ta else ga), (gb.T if tb else gb)


def _case(rng, m, k, n, ta, tb, dtype):
    a = rng.normal(size=(k, m) if ta else (m, k)).astype(dtype)
    b = rng.normal(size=(n, k) if tb else (k, n)).astype(dtype)
    w = rng.normal(size=(m, n)).astype(dtype)
    return a, b, w


@pytest.mark.parametrize("choice", ["none", "auto"])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_large_products_both_paths(monkeypatch, choice, ta, tb):
    monkeypatch.setenv("GRADC_BLAS", choice)
    rng = np.random.default_rng(7)
    a, b, w = _case(rng, 70, 65, 66, ta, tb, np.float64)
    c = gradc.compile(_loss(ta, tb), a, b, w, wrt=("a", "b"), target="c")
    assert "_use_blas" in c.source  # the product is above BLAS_MIN: both paths emitted
    assert (c.blas is None) == (choice == "none")
    value, (ga, gb) = c.value_and_grad(a, b, w)
    ref_value, ref_ga, ref_gb = _by_hand(ta, tb, a, b, w)
    np.testing.assert_allclose(value, _loss(ta, tb)(a, b, w), rtol=1e-11)
    np.testing.assert_allclose(value, ref_value, rtol=1e-11)
    np.testing.assert_allclose(ga, ref_ga, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gb, ref_gb, rtol=1e-10, atol=1e-12)


def test_blas_found_here():
    """SciPy is installed with the project's test dependencies: its BLAS is what ``auto`` finds."""
    if not HAVE_SCIPY_BLAS:
        pytest.skip("scipy.linalg.cython_blas has no dgemm capsule here")
    assert blas.found_blas()[2] == "scipy.linalg.cython_blas"


@pytest.mark.parametrize("seed", range(6))
def test_random_products_agree(monkeypatch, seed):
    """Random shapes around the threshold, transposes and dtypes: the BLAS and the kernels agree with NumPy."""
    rng = np.random.default_rng(100 + seed)
    m, k, n = (int(v) for v in rng.integers(40, 90, size=3))
    ta, tb = bool(rng.integers(2)), bool(rng.integers(2))
    dtype = np.float32 if seed % 3 == 2 else np.float64
    a, b, w = _case(rng, m, k, n, ta, tb, dtype)
    rtol = 2e-4 if dtype == np.float32 else 1e-10
    results = []
    for choice in ("auto", "none"):
        monkeypatch.setenv("GRADC_BLAS", choice)
        c = gradc.compile(_loss(ta, tb), a, b, w, wrt=("a", "b"), target="c")
        assert ("_use_blas" in c.source) == (m * k * n >= blas.BLAS_MIN)  # every side is above BLAS_MIN_SIDE
        results.append(c.value_and_grad(a, b, w))
    ref_value, ref_ga, ref_gb = _by_hand(ta, tb, *(x.astype(np.float64) for x in (a, b, w)))
    for value, (ga, gb) in results:
        np.testing.assert_allclose(value, ref_value, rtol=rtol * 10, atol=rtol)
        np.testing.assert_allclose(ga, ref_ga, rtol=rtol, atol=rtol)
        np.testing.assert_allclose(gb, ref_gb, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("choice", ["none", "auto"])
def test_named_shared_axis_decided_at_run_time(monkeypatch, choice):
    """``X.T @ dz`` over ``n`` rows: the BLAS is called only when the product is large enough when it runs."""
    monkeypatch.setenv("GRADC_BLAS", choice)

    def loss(x, w):
        return np.sum(np.tanh(x @ w) ** 2)
    c = gradc.compile(loss, gradc.spec("f64[n,96]"), np.zeros((96, 80)), wrt="w", target="c")
    rng = np.random.default_rng(3)
    w = rng.normal(size=(96, 80)) * 0.1
    for rows in (1, 5, 40, 300):  # 300 * 96 * 80 multiply-adds pass BLAS_MIN; 5 * 96 * 80 do not
        x = rng.normal(size=(rows, 96))
        t = np.tanh(x @ w)
        np.testing.assert_allclose(c.grad(x, w), x.T @ (2 * t * (1 - t * t)), rtol=1e-10, atol=1e-12)


def test_small_products_have_no_blas_branch():
    c = gradc.compile(lambda a, b: np.sum(a @ b), np.ones((8, 8)), np.ones((8, 8)), target="c")
    assert "gradc_blas" not in c.source and c.blas is None
    thin = gradc.compile(lambda a, b: np.sum(a @ b), np.ones((500, 16)), np.ones((16, 500)), target="c")
    assert "gradc_blas" not in thin.source  # 4 M multiply-adds, but k = 16 < BLAS_MIN_SIDE


def test_unknown_choice_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("GRADC_BLAS", "mkl-please")
    a = np.ones((70, 70))
    with pytest.raises(ValueError, match="GRADC_BLAS='mkl-please': expected one of auto, scipy, system, none"):
        gradc.compile(lambda a, b: np.sum(a @ b), a, a, target="c")


def product_sum(a, b):
    return np.sum(a @ b)


def test_header_declares_the_setter():
    a = np.ones((70, 70))
    c = gradc.compile(product_sum, a, a, target="c")
    assert "void gradc_fn_product_sum_use_blas(void (*dgemm)(void), void (*sgemm)(void));" in c.header


def test_a_c_caller_that_never_sets_the_blas_runs_the_kernels(tmp_path):
    """The source stays standalone C: without ``NAME_use_blas`` the kernels run (no BLAS to link)."""
    import subprocess

    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(70, 66)), rng.normal(size=(66, 72))
    c = gradc.compile(product_sum, a, b, target="c")
    assert "void gradc_fn_product_sum(const double *a, const double *b, double *value);" in c.header
    (tmp_path / "unit.c").write_text(c.source)
    (tmp_path / "unit.h").write_text(c.header)
    (tmp_path / "main.c").write_text(
        '#include <stdio.h>\n#include "unit.h"\n'
        "static double a[70 * 66], b[66 * 72], value;\n"
        "int main(void) {\n"
        "    for (int i = 0; i < 70 * 66; ++i) a[i] = (i % 7) - 3.0;\n"
        "    for (int i = 0; i < 66 * 72; ++i) b[i] = (i % 5) - 2.0;\n"
        "    gradc_fn_product_sum(a, b, &value);\n"
        '    printf("%.17g\\n", value);\n'
        "    return 0;\n}\n")
    cc = c_build.find_compiler()
    exe = tmp_path / "main"
    built = subprocess.run([cc, "-O2", "-o", str(exe), str(tmp_path / "main.c"), str(tmp_path / "unit.c"), "-lm"],
                           capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    a = (np.arange(70 * 66) % 7 - 3.0).reshape(70, 66)
    b = (np.arange(66 * 72) % 5 - 2.0).reshape(66, 72)
    assert float(out) == np.sum(a @ b)
