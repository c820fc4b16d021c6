"""scipy.special.expn, exp1 and expi through gradc: values against SciPy on the NumPy and C targets (zero, the
signs, the series/fraction switch at 1, Ei's root and its asymptotic range, overflow, infinities, NaN), derivatives
against central differences and their closed forms, second order, a seeded generator, and the refusals."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as S

import gradc
from gradc.backends.c import build as c_build
from gradc.errors import TraceError

HAS_CC = c_build.find_compiler() is not None
TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(not HAS_CC, reason="no C compiler"))]

X = np.array([-5.0, -1e-300, -0.0, 0.0, 1e-300, 1e-8, 0.37250741078136663, 0.5, 0.999999, 1.0, 1.000001, 2.0, 7.5,
              39.9, 40.0, 40.1, 100.0, 700.0, 709.0, 710.0, 746.0, 1e10, np.inf, -np.inf, np.nan])


def _of_order(n):
    return lambda x: S.expn(n, x)


def compiled_value(fn, x, target):
    return gradc.compile(fn, x, mode="vjp", target=target).forward(x)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["exp1", "expi"])
def test_values_match_scipy(name, target):
    fn = getattr(S, name)
    with np.errstate(all="ignore"):
        got, expected = compiled_value(fn, X, target), fn(X)
    # C: gradc's series and fractions within a few ulps of SciPy's (3e-14: SciPy's own Ei is 2.6e-14 off just past
    # 40, against mpmath, where gradc's is not: test_expi_against_mpmath); Ei next to its root (0.3725) absolutely
    rtol = 1e-15 if target == "numpy" else 3e-14
    # (and below 1e-300: SciPy's exp1 cuts to 0 a little after x = 709.78, where gradc's C cuts, as SciPy's expn)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-15 if name == "expi" else 1e-300, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    both_zero = (expected == 0) & (got == 0)
    assert np.array_equal(np.signbit(got[both_zero]), np.signbit(expected[both_zero]))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [-1, 0, 1, 2, 3, 7, 30])
def test_expn_values_match_scipy(n, target):
    with np.errstate(all="ignore"):
        got, expected = compiled_value(_of_order(n), X, target), S.expn(n, X)
    np.testing.assert_allclose(got, expected, rtol=1e-15 if target == "numpy" else 2e-14, atol=0, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(expected))


def test_float32_is_computed_in_double_like_scipy():
    x = np.array([0.3, 1.5, 9.0], np.float32)
    for target in ["numpy", *(["c"] if HAS_CC else [])]:
        got = compiled_value(S.exp1, x, target)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, S.exp1(x), rtol=1e-6)
        got = compiled_value(_of_order(2), x, target)
        assert got.dtype == np.float64  # SciPy's expn has only a (long, double) loop
        np.testing.assert_allclose(got, S.expn(2, x), rtol=1e-15 if target == "numpy" else 2e-14)


def _differences(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


FIRST = [
    (S.exp1, np.array([0.05, 0.7, 1.0, 3.0, 30.0])),
    (S.expi, np.array([-30.0, -3.0, -0.4, 0.05, 0.7, 3.0, 45.0])),
    *[(_of_order(n), np.array([0.05, 0.7, 1.0, 3.0, 12.0])) for n in (0, 1, 2, 5)],
]


@pytest.mark.parametrize("index", range(len(FIRST)))
def test_first_derivatives_match_central_differences(index):
    f, x = FIRST[index]
    got = gradc.grad(lambda x: np.sum(f(x)))(x)
    np.testing.assert_allclose(got, _differences(f, x, 1e-6 * np.maximum(1.0, np.abs(x))), rtol=1e-6)


def test_derivatives_have_their_closed_forms():
    x = np.array([0.1, 1.0, 5.0, 50.0])
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.exp1(x)))(x), -np.exp(-x) / x, rtol=1e-15)
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.expi(x)))(x), np.exp(x) / x, rtol=1e-15)
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.expn(4, x)))(x), -S.expn(3, x), rtol=1e-15)


@pytest.mark.parametrize("f", [S.exp1, S.expi, _of_order(0), _of_order(3)])
def test_second_derivative_matches_differences_of_the_first(f):
    x = np.array([0.3, 1.2, 4.0])
    first = gradc.grad(lambda x: np.sum(f(x)))
    second = gradc.grad(lambda x: np.sum(first(x)))(x)
    np.testing.assert_allclose(second, (first(x + 1e-5) - first(x - 1e-5)) / 2e-5, rtol=1e-6)


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
def test_random_points_on_c_match_scipy():
    rng = np.random.default_rng(824)
    x = np.concatenate([rng.uniform(0.0, 2.0, 200), np.exp(rng.uniform(-30.0, 6.5, 200)), -rng.uniform(0, 50, 50)])
    c = gradc.compile(lambda x: S.exp1(x) + 0 * S.expi(x), x, mode="vjp", target="c").forward
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(c(x), S.exp1(x), rtol=2e-14, equal_nan=True)
    e = gradc.compile(S.expi, x, mode="vjp", target="c").forward
    np.testing.assert_allclose(e(x), S.expi(x), rtol=3e-14, atol=1e-15)
    n3 = gradc.compile(_of_order(3), x, mode="vjp", target="c").forward
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(n3(x), S.expn(3, x), rtol=2e-14, equal_nan=True)


def test_traced_or_fractional_order_is_refused():
    with pytest.raises(TraceError, match=r"expn: the order n must be a Python int"):
        gradc.grad(lambda n, x: np.sum(S.expn(n, x)))(np.float64(2.0), np.ones(2))
    with pytest.raises(TraceError, match=r"expn: the order n must be an integer, not 2.5"):
        gradc.grad(lambda x: np.sum(S.expn(2.5, x)))(np.ones(2))


@pytest.mark.skipif(not HAS_CC, reason="no C compiler")
def test_expi_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    x = np.array([0.01, 0.5, 3.0, 12.0, 39.0, 40.1, 41.0, 45.0, 49.9, 50.1, 60.0, 300.0, 700.0])
    got = gradc.compile(S.expi, x, mode="vjp", target="c").forward(x)
    with mpmath.workdps(40):
        expected = np.array([float(mpmath.ei(v)) for v in x])
    np.testing.assert_allclose(got, expected, rtol=4e-15)


SPENCE_Z = np.array([-1.0, -0.0, 0.0, 1e-300, 1e-10, 0.3, 0.4999, 0.5, 0.75, 1.0 - 1e-12, 1.0, 1.0 + 1e-12, 1.5, 2.0,
                     2.0001, 7.0, 1e10, 1e300, np.inf, np.nan])


@pytest.mark.parametrize("target", TARGETS)
def test_spence_values_match_scipy(target):
    with np.errstate(all="ignore"):
        got, expected = compiled_value(S.spence, SPENCE_Z, target), S.spence(SPENCE_Z)
    # C: the Bernoulli series and reflections within a few ulps of SciPy's (both within 3e-16 of mpmath's)
    np.testing.assert_allclose(got, expected, rtol=1e-15 if target == "numpy" else 3e-15, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(expected))


def test_spence_derivatives():
    z = np.array([0.01, 0.3, 0.9, 1.0, 1.2, 2.5, 40.0])
    first = gradc.grad(lambda z: np.sum(S.spence(z)))
    with np.errstate(all="ignore"):
        closed = np.where(z == 1.0, -1.0, np.log(z) / (1 - z))
    np.testing.assert_allclose(first(z), closed, rtol=1e-14)
    np.testing.assert_allclose(first(z), _differences(S.spence, z, 1e-6 * z), rtol=1e-6)
    second = gradc.grad(lambda z: np.sum(first(z)))(z)
    np.testing.assert_allclose(second, (first(z + 1e-5 * z) - first(z - 1e-5 * z)) / (2e-5 * z), rtol=1e-5)


DAWSN_X = np.concatenate([np.array([-0.0, 0.0, 1e-300, 1e-10, 0.5, 0.924138873, 6.999, 7.0, 7.001, 100.0, 1e10, 1e300,
                                    np.inf, -np.inf, np.nan, -2.5]), np.linspace(0.0, 12.0, 241)])


@pytest.mark.parametrize("target", TARGETS)
def test_dawsn_values_match_scipy(target):
    with np.errstate(all="ignore"):
        got, expected = compiled_value(S.dawsn, DAWSN_X, target), S.dawsn(DAWSN_X)
    # C: the positive series and the asymptotic one within 1.3e-15 of SciPy's (each within 1e-15 of mpmath's)
    np.testing.assert_allclose(got, expected, rtol=1e-15 if target == "numpy" else 2e-15, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    assert np.array_equal(np.signbit(got[:2]), np.signbit(expected[:2]))


def test_dawsn_derivatives():
    x = np.array([-3.0, -0.4, 0.0, 0.924138873, 2.0, 8.0])
    first = gradc.grad(lambda x: np.sum(S.dawsn(x)))
    np.testing.assert_allclose(first(x), 1 - 2 * x * S.dawsn(x), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(first(x), _differences(S.dawsn, x), rtol=1e-6, atol=1e-9)
    second = gradc.grad(lambda x: np.sum(first(x)))(x)
    np.testing.assert_allclose(second, (first(x + 1e-5) - first(x - 1e-5)) / 2e-5, rtol=1e-5, atol=1e-8)


SHICHI_X = np.array([-2.0, -0.0, 0.0, 1e-300, 1e-10, 0.3, 0.4999, 0.5, 0.5238225713898644, 1.0, 5.0, 100.0, 709.0,
                     711.0, np.inf, -np.inf, np.nan])


def _shi(x):
    return S.shichi(x)[0]


def _chi(x):
    return S.shichi(x)[1]


@pytest.mark.parametrize("target", TARGETS)
def test_shichi_values_match_scipy(target):
    with np.errstate(all="ignore"):
        shi, chi = compiled_value(_shi, SHICHI_X, target), compiled_value(_chi, SHICHI_X, target)
        expected_shi, expected_chi = S.shichi(SHICHI_X)
    # absolutely next to Chi's root (0.5238), where both evaluations keep 1e-16 of Ei - E1
    np.testing.assert_allclose(shi, expected_shi, rtol=2e-15, equal_nan=True)
    np.testing.assert_allclose(chi, expected_chi, rtol=2e-15, atol=1e-16, equal_nan=True)
    assert np.array_equal(np.signbit(shi[:3]), np.signbit(expected_shi[:3]))


def test_shichi_derivatives():
    x = np.array([-2.0, 0.1, 0.4, 0.7, 3.0])
    got = gradc.grad(lambda x: np.sum(S.shichi(x)[0] + 2.0 * S.shichi(x)[1]))(x)
    np.testing.assert_allclose(got, np.sinh(x) / x + 2.0 * np.cosh(x) / x, rtol=1e-14)
    first = gradc.grad(lambda x: np.sum(S.shichi(x)[0]))
    second = gradc.grad(lambda x: np.sum(first(x)))(x)
    np.testing.assert_allclose(second, (x * np.cosh(x) - np.sinh(x)) / x ** 2, rtol=1e-12)
