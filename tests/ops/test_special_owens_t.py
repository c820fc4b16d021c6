"""Owen's T function on both targets: values against SciPy over a seeded grid (signs, |a| on both sides of 1,
tiny and huge arguments, infinities, NaN) and against mpmath's quadrature where SciPy itself loses digits;
derivatives in h and a against central differences, second order included; skewnorm.cdf built on it."""
from __future__ import annotations

import mpmath
import numpy as np
import pytest
import scipy.special
import scipy.stats
from finite_differences import central_gradient

import gradc

S = scipy.special


def _grid():
    rng = np.random.default_rng(24)
    h = np.concatenate([rng.uniform(-10, 10, 400), 10 ** rng.uniform(-8, 1.5, 400), [0.0, -0.0, 1e-300, 37.0]])
    a = np.concatenate([rng.uniform(-10, 10, 400), -(10 ** rng.uniform(-8, 8, 400)), [0.0, 1.0, 1e308, 2.0]])
    return h, a


def _mp_owens_t(h, a):
    with mpmath.workdps(30):
        h, a = mpmath.mpf(h), mpmath.mpf(a)
        integral = mpmath.quad(lambda x: mpmath.exp(-h * h * (1 + x * x) / 2) / (1 + x * x), [0, a])
        return float(integral / (2 * mpmath.pi))


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_values_agree_with_scipy(target):
    h, a = _grid()
    got = gradc.jit(lambda h, a: S.owens_t(h, a), target=target)(h, a)
    # SciPy's own error reaches ~1e-9 for tiny a and large h (mpmath below decides those)
    np.testing.assert_allclose(got, S.owens_t(h, a), rtol=5e-9, atol=1e-300)


@pytest.mark.parametrize("h,a", [(7.40562755, 1.20840428e-08), (20.41010246, 1.14892332e-08), (0.3, 0.999),
                                 (0.3, 1.001), (2.0, 50.0), (1e-3, 3.0), (6.0, 0.5), (-1.5, -0.2)])
def test_c_values_agree_with_mpmath(h, a):
    got = gradc.jit(lambda h, a: S.owens_t(h, a), target="c")(np.array([h]), np.array([a]))
    # the function's own condition number in h is about h**2 (its factor e^(-h^2/2))
    np.testing.assert_allclose(got[0], _mp_owens_t(h, a), rtol=5e-16 * (4 + h * h))


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_special_values(target):
    h = np.array([np.inf, 1.0, 0.0, np.nan, -np.inf, 2.0, 1.0, 0.0])
    a = np.array([1.0, np.inf, np.inf, 1.0, 2.0, -np.inf, np.nan, 0.5])
    got = gradc.jit(lambda h, a: S.owens_t(h, a), target=target)(h, a)
    np.testing.assert_allclose(got, S.owens_t(h, a), rtol=1e-14)
    assert got[2] == 0.25 and np.isnan(got[3]) and np.isnan(got[6])
    np.testing.assert_allclose(got[7], np.arctan(0.5) / (2 * np.pi), rtol=1e-15)


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_float32_stays_float32(target):
    h = np.linspace(-3, 3, 7, dtype=np.float32)
    got = gradc.jit(lambda h: S.owens_t(h, np.float32(1.5)), target=target)(h)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, S.owens_t(h, np.float32(1.5)), rtol=1e-6)


POINTS = [tuple(p) for p in np.random.default_rng(7).uniform([-3, -4], [3, 4], (6, 2))]


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("h,a", POINTS)
def test_first_and_second_derivatives_against_central_differences(target, h, a):
    dh = gradc.jit(gradc.grad(lambda h, a: S.owens_t(h, a), argnums=0), target=target)
    da = gradc.jit(gradc.grad(lambda h, a: S.owens_t(h, a), argnums=1), target=target)
    np.testing.assert_allclose(dh(h, a), central_gradient(lambda t: S.owens_t(t, a), h), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(da(h, a), central_gradient(lambda t: S.owens_t(h, t), a), rtol=1e-7, atol=1e-10)
    dhh = gradc.grad(gradc.grad(lambda h, a: S.owens_t(h, a), argnums=0), argnums=0)(h, a)
    dha = gradc.grad(gradc.grad(lambda h, a: S.owens_t(h, a), argnums=0), argnums=1)(h, a)
    np.testing.assert_allclose(dhh, central_gradient(lambda t: float(dh(t, a)), h), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(dha, central_gradient(lambda t: float(dh(h, t)), a), rtol=1e-6, atol=1e-9)


def test_forward_mode_agrees_with_reverse():
    h, a = np.array([0.4, -1.2, 2.0]), np.array([0.5, 3.0, -0.7])
    reverse = gradc.jacobian(lambda h: S.owens_t(h, a))(h)
    forward = gradc.jacfwd(lambda h: S.owens_t(h, a))(h)
    np.testing.assert_allclose(forward, reverse, rtol=1e-13)


def _mp_skewnorm_cdf(x, a):
    """``2 integral_-inf^x phi(t) Phi(a t) dt``, the definition, with break points at the integrand's scale."""
    with mpmath.workdps(30):
        x, a = mpmath.mpf(x), mpmath.mpf(a)
        s = 1 / (abs(x) * (1 + a * a))
        points = [s * k for k in (0, 0.1, 0.3, 1, 2, 3, 5, 8, 13, 20, 30, 50, 100)] + [mpmath.inf]
        return float(2 * mpmath.quad(lambda u: mpmath.npdf(x - u) * mpmath.ncdf(a * (x - u)), points))


@pytest.mark.parametrize("x,a", [(-3.875, 1.6), (-2.44621515, 1.6), (-8.0, 2.0), (-20.0, 0.3), (-3.9, 8.7),
                                 (-0.5, 2.0), (-1.0, 1.0), (-2.0, 0.6), (1.5, -3.0), (-1.3, 0.8), (0.7, 0.4)])
def test_c_skewnorm_cdf_agrees_with_its_definition(x, a):
    """The far left tail (a > 0) keeps its relative accuracy: Phi(x) - 2 T(x, a) would cancel there."""
    got = gradc.jit(lambda x, a: scipy.stats.skewnorm.cdf(x, a), target="c")(np.array([x]), np.array([a]))
    np.testing.assert_allclose(got[0], _mp_skewnorm_cdf(x, a), rtol=2e-15 * (4 + x * x * (1 + a * a)))


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("x,a", POINTS)
def test_skewnorm_distribution_derivatives(target, x, a):
    f = lambda x, a: np.sum(scipy.stats.skewnorm.logcdf(x, a, loc=0.2, scale=1.3))  # noqa: E731
    for i in (0, 1):
        g = gradc.jit(gradc.grad(f, argnums=i), target=target)(x, a)
        fd = central_gradient(lambda t, i=i: f(*[t if j == i else v for j, v in enumerate((x, a))]), (x, a)[i])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("a,b", [(-1.0, 2.0), (0.5, 3.0), (8.0, 9.5), (-12.0, -10.0), (-np.inf, 0.3), (1.0, np.inf)])
def test_truncnorm_quantiles_invert_the_distribution_function(target, a, b):
    q = np.array([1e-12, 0.01, 0.3, 0.5, 0.9, 1 - 1e-10])
    got = gradc.jit(lambda q: scipy.stats.truncnorm.ppf(q, a, b), target=target)(q)
    np.testing.assert_allclose(got, scipy.stats.truncnorm.ppf(q, a, b), rtol=1e-9)
    back = gradc.jit(lambda q: scipy.stats.truncnorm.isf(q, a, b), target=target)(q)
    # against the reflection of SciPy's ppf: SciPy's own isf subtracts (isf(1 - 1e-10, -12, -10) is off by 1.4e-8;
    # mpmath's root gives -11.97042264284341, as gradc)
    np.testing.assert_allclose(back, -scipy.stats.truncnorm.ppf(q, -b, -a), rtol=1e-12)
    # the derivative in q is 1 / pdf at the quantile
    g = gradc.grad(lambda q: np.sum(scipy.stats.truncnorm.ppf(q, a, b)))(q[1:-1])
    np.testing.assert_allclose(g, 1 / scipy.stats.truncnorm.pdf(got[1:-1], a, b), rtol=1e-8)
