"""``scipy.special.sici`` on both targets: values against SciPy on a seeded grid (both signs, |x| on both sides of
4, tiny and huge x, zeros of Ci) and at the special values; derivatives against central differences and the
closed forms, second order included."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special
from finite_differences import central_gradient

import gradc

S = scipy.special


def _both(x):
    si, ci = S.sici(x)
    return np.stack([si, ci])


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_values_against_scipy(target):
    rng = np.random.default_rng(9)
    x = np.concatenate([rng.uniform(-10, 10, 500), 10 ** rng.uniform(-10, 12, 500), -(10 ** rng.uniform(-5, 5, 100)),
                        [4.0, -4.0, 4.0000001, 3.9999999, 1e-300, 5e-324]])
    got = gradc.jit(_both, target=target)(x)
    # Ci's series cancels against gamma + log x toward x = 4 (and Ci has zeros at 0.6165, 3.3842, ...): SciPy and
    # gradc are each within 1e-15 absolute there (mpmath: gradc 9.4e-16 off at 3.975, SciPy 6e-16)
    np.testing.assert_allclose(got, _both(x), rtol=2e-15, atol=2e-15)


@pytest.mark.parametrize("x", [0.3, 3.379385372165795, 3.9999, 4.0001, 6.612428739425141, 25.0, 1e5])
def test_c_values_against_mpmath(x):
    import mpmath
    got = gradc.jit(_both, target="c")(np.array([x, -x]))
    with mpmath.workdps(30):
        si, ci = float(mpmath.si(x)), float(mpmath.ci(x))
    np.testing.assert_allclose(got[:, 0], [si, ci], rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(got[:, 1], [-si, ci], rtol=1e-15, atol=1e-15)


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_special_values(target):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan])
    got = gradc.jit(_both, target=target)(x)
    np.testing.assert_array_equal(got, _both(x))


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_float32(target):
    x = np.linspace(-7, 7, 9, dtype=np.float32)
    got = gradc.jit(lambda x: S.sici(x)[0], target=target)(x)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, S.sici(x)[0], rtol=1e-6)


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("x", [-7.5, -2.0, 0.3, 1.0, 3.9, 4.1, 12.0])
def test_derivatives(target, x):
    dsi = gradc.jit(gradc.grad(lambda x: S.sici(x)[0]), target=target)
    dci = gradc.jit(gradc.grad(lambda x: S.sici(x)[1]), target=target)
    np.testing.assert_allclose(dsi(x), np.sin(x) / x, rtol=1e-14)
    np.testing.assert_allclose(dci(x), np.cos(x) / x, rtol=1e-14)
    np.testing.assert_allclose(dsi(x), central_gradient(lambda t: S.sici(t)[0], x), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(dci(x), central_gradient(lambda t: S.sici(t)[1], x), rtol=1e-7, atol=1e-9)
    second = gradc.grad(gradc.grad(lambda x: S.sici(x)[0] + S.sici(x)[1]))(x)
    np.testing.assert_allclose(second, (x * np.cos(x) - np.sin(x) - x * np.sin(x) - np.cos(x)) / x ** 2, rtol=1e-12)


def test_sine_integral_derivative_at_zero_is_one():
    np.testing.assert_allclose(gradc.grad(lambda x: S.sici(x)[0])(0.0), 1.0)
