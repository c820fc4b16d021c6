"""``polygamma``, ``betaln`` and ``beta`` on the C target (gradc/backends/c/mathlib/beta_zeta.py).

Values against SciPy over seeded random arguments (positive, negative non-integer, large), against mpmath
where SciPy itself loses digits (``betaln(1e6, 2.5)``), SciPy's special values (poles, signs, infinities,
NaN) exactly, float32, and gradients (which call ``polygamma`` of the next order and ``digamma``) against
central differences.
"""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.special as sc
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import mathlib as c_mathlib

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def forward_c(fn, *args):
    return gradc.compile(fn, *args, target="c", mode="vjp").forward(*args)


def _close(got, expected, rtol):
    got, expected = np.asarray(got), np.asarray(expected)
    same_special = ~np.isfinite(expected)
    np.testing.assert_array_equal(got[same_special], expected[same_special])
    np.testing.assert_allclose(got[~same_special], expected[~same_special], rtol=rtol, atol=0)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7])
def test_polygamma_against_scipy(n):
    rng = np.random.default_rng(n)
    x = np.concatenate([rng.uniform(0.05, 40.0, 40), rng.uniform(-6.0, -0.05, 20), 10.0 ** rng.uniform(-3, 6, 10)])
    x = x[np.abs(x - np.round(x)) > 0.02]  # near a pole both lose digits (their sums cancel)
    _close(forward_c(lambda x: sc.polygamma(n, x), x), sc.polygamma(n, x), 1e-12)


def _polygamma_of_order(n):
    return lambda x: sc.polygamma(n, x)


def _of_pair(fn, swap=False):
    return (lambda a, b: fn(b, a)) if swap else (lambda a, b: fn(a, b))


def test_polygamma_special_values():
    x = np.array([0.0, -0.0, -1.0, -4.0, np.inf, -np.inf, np.nan, 1e-300, 1e300])
    for n in (1, 2, 3):
        got, expected = forward_c(_polygamma_of_order(n), x), sc.polygamma(n, x)
        np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(expected))


def test_polygamma_float32():
    x = np.linspace(0.3, 8.0, 13).astype(np.float32)
    got, expected = forward_c(lambda x: sc.polygamma(2, x), x), sc.polygamma(2, x)
    assert got.dtype == expected.dtype  # (SciPy's polygamma gives float64 for float32, and so does gradc)
    np.testing.assert_allclose(got, expected, rtol=1e-12)


@pytest.mark.parametrize("name", ["betaln", "beta"])
@pytest.mark.parametrize("seed", range(3))
def test_beta_against_scipy(name, seed):
    rng = np.random.default_rng(seed)
    a = np.concatenate([rng.uniform(0.01, 30.0, 30), rng.uniform(-20.0, -0.01, 10), rng.uniform(100, 160, 5)])
    b = np.concatenate([rng.uniform(0.01, 30.0, 30), rng.uniform(0.01, 20.0, 10), rng.uniform(1.0, 9.0, 5)])
    a = np.where(np.abs(a - np.round(a)) < 0.02, a + 0.05, a)  # away from the poles of Gamma(a)
    keep = np.abs((a + b) - np.round(a + b)) > 0.02
    a, b = a[keep], b[keep]
    fn = getattr(sc, name)
    _close(forward_c(lambda a, b: fn(a, b), a, b), fn(a, b), 1e-11)


@pytest.mark.parametrize("a, b", [(1e6, 2.5), (1e10, 1e-10), (300.0, 0.5), (1e5, 1e5), (2e3, 170.0),
                                  (1e300, 1e300), (250.5, -40.3)])
def test_beta_large_arguments_against_mpmath(a, b):
    mpmath.mp.dps = 50
    exact = mpmath.beta(mpmath.mpf(a), mpmath.mpf(b))
    got_ln = forward_c(lambda a, b: sc.betaln(a, b), np.float64(a), np.float64(b))
    np.testing.assert_allclose(got_ln, float(mpmath.log(abs(exact))), rtol=1e-13)
    if abs(exact) > mpmath.mpf(10) ** -300:
        np.testing.assert_allclose(forward_c(lambda a, b: sc.beta(a, b), np.float64(a), np.float64(b)),
                                   float(exact), rtol=1e-12)


def test_beta_special_values_are_scipys():
    a = np.array([0.5, -1.0, -1.0, -1.0, 0.0, -1.5, 2.5, np.inf, -3.0, -3.0, -3.0, -2.0, np.nan, 1.0, -0.5])
    b = np.array([-1.5, 2.0, 3.0, 2.5, 1.0, -0.5, -0.5, 1.0, 1.0, 2.0, 3.0, 1.0, 1.0, np.nan, -0.5])
    for name in ("betaln", "beta"):
        fn = getattr(sc, name)
        got, expected = forward_c(_of_pair(fn), a, b), fn(a, b)
        np.testing.assert_allclose(got, expected, rtol=1e-14, equal_nan=True)
        swapped = forward_c(_of_pair(fn, swap=True), a, b)  # symmetric, also at the poles
        np.testing.assert_allclose(swapped, expected, rtol=1e-14, equal_nan=True)


def test_beta_float32():
    a, b = np.float32([0.5, 2.0, 7.5]), np.float32([1.5, 3.0, 0.25])
    for fn in (sc.beta, sc.betaln):
        got = forward_c(_of_pair(fn), a, b)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, fn(a, b).astype(np.float32), rtol=2e-7)


def test_gradients_through_c_match_central_differences():
    def loss(x, a, b):
        return np.sum(sc.polygamma(1, x) * sc.polygamma(3, x)) + np.sum(sc.betaln(a, b) + sc.beta(a, b) ** 2)

    x, a, b = np.array([0.7, 2.3, 5.1]), np.array([0.8, 1.9]), np.array([1.3, 3.4])
    grads = gradc.compile(loss, x, a, b, argnums=(0, 1, 2), target="c").grad(x, a, b)
    for k, arg in enumerate((x, a, b)):
        def partial(v, k=k):
            args = [x, a, b]
            args[k] = v
            return loss(*args)
        np.testing.assert_allclose(grads[k], central_gradient(partial, arg), rtol=1e-6, atol=1e-8)


def test_the_library_compiles_without_warnings(tmp_path):
    import subprocess

    cc = c_build.find_compiler()
    names = ["gradc_polygamma", "gradc_polygammaf", "gradc_betaln", "gradc_betalnf", "gradc_beta", "gradc_betaf"]
    src = tmp_path / "beta_zeta.c"
    uses = "\n".join(f"double use_{n}(void) {{ return {n}({'2, ' if 'poly' in n else '0.5, '}1.5); }}" for n in names)
    src.write_text(c_mathlib.source(names) + "\n" + uses + "\n")
    subprocess.run([cc, *c_build.FLAGS, "-Wall", "-Wextra", "-Werror", "-c", str(src), "-o", str(tmp_path / "o.o")],
                   check=True, capture_output=True)
