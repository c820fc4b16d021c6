"""gradc's C math library for SciPy's special functions of issue 24 (incomplete gamma and beta and their inverses,
Bessel functions of real order, erfcx) against SciPy over grids that reach the tails and zero, and against mpmath
(50 digits) where SciPy's own error is the larger one. Each bound is stated at its assertion."""
from __future__ import annotations

import ctypes
import subprocess

import numpy as np
import pytest
import scipy.special as S

from gradc.backends.c import build as c_build
from gradc.backends.c import mathlib as c_mathlib

mpmath = pytest.importorskip("mpmath")

FUNCTIONS = {  # C name -> (number of double arguments, the C call of loop arguments a, b, x)
    "gradc_erfcx": (1, "gradc_erfcx(x[i])"),
    "gradc_gammainc": (2, "gradc_gammainc(a[i], x[i])"),
    "gradc_gammaincc": (2, "gradc_gammaincc(a[i], x[i])"),
    "gradc_gammaincinv": (2, "gradc_gammaincinv(a[i], x[i])"),
    "gradc_gammainccinv": (2, "gradc_gammainccinv(a[i], x[i])"),
    "gradc_betainc": (3, "gradc_betainc(a[i], b[i], x[i])"),
    "gradc_betaincinv": (3, "gradc_betaincinv(a[i], b[i], x[i])"),
    "gradc_iv": (2, "gradc_iv(a[i], x[i])"),
    "gradc_ive": (2, "gradc_ive(a[i], x[i])"),
    "gradc_kv": (2, "gradc_kv(a[i], x[i])"),
    "gradc_kve": (2, "gradc_kve(a[i], x[i])"),
    **{f"gradc_{n}": (1, f"gradc_{n}(x[i])") for n in ("i0", "i1", "i0e", "i1e", "k0", "k1", "k0e", "k1e")},
    "gradc_ivf": (2, "gradc_ivf(a[i], (float)x[i])"),
    "gradc_jv_real": (2, "gradc_jv_real(a[i], x[i])"),
    "gradc_yv_real": (2, "gradc_yv_real(a[i], x[i])"),
}


@pytest.fixture(scope="module")
def c_function(tmp_path_factory):
    """``call(name, *arrays)``: the C function ``name`` on broadcast float64 arrays."""
    cc = c_build.find_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    tmp = tmp_path_factory.mktemp("special_c")
    params = {1: "const double *x", 2: "const double *a, const double *x",
              3: "const double *a, const double *b, const double *x"}
    loop = "void loop_{}({}, double *y, long n)\n{{\n    for (long i = 0; i < n; ++i) y[i] = {};\n}}\n"
    loops = [loop.format(name, params[k], call) for name, (k, call) in FUNCTIONS.items()]
    src = tmp / "special.c"
    src.write_text(c_mathlib.source(list(FUNCTIONS)) + "\n" + "\n".join(loops))
    so = tmp / "special.so"
    flags = list(c_build.FLAGS) + list(c_build.tuning_flags(cc))
    subprocess.run([cc, *flags, "-Wall", "-Werror", str(src), "-o", str(so), "-lm"], check=True, capture_output=True)
    lib = ctypes.CDLL(str(so))

    def call(name, *arrays):
        arrays = [np.ascontiguousarray(a, dtype=np.float64) for a in np.broadcast_arrays(*arrays)]
        y = np.empty_like(arrays[0])
        getattr(lib, f"loop_{name}")(*[a.ctypes.data_as(ctypes.c_void_p) for a in arrays],
                                     y.ctypes.data_as(ctypes.c_void_p), ctypes.c_long(y.size))
        return y
    return call


def relative_error(got, expected):
    return np.abs(got - expected) / np.abs(expected)


def mp_values(fn, *columns):
    with mpmath.workdps(50):
        return np.array([float(fn(*(mpmath.mpf(float(c)) for c in row))) for row in zip(*columns)])


# ---------------------------------------------------------------- erfcx
def test_erfcx(c_function):
    x = np.concatenate([np.linspace(-26.5, 40.0, 6001), np.geomspace(1e-300, 1e300, 601),
                        -np.geomspace(1e-300, 26, 300)])
    got = c_function("gradc_erfcx", x)
    right = x >= -5.0  # below, SciPy's exp(x*x) carries x^2 rounding errors (6e-14 at -23): mpmath decides there
    assert relative_error(got[right], S.erfcx(x[right])).max() < 3e-15
    left = np.linspace(-26.5, -5.0, 40)
    assert relative_error(c_function("gradc_erfcx", left), mp_values(lambda t: mpmath.exp(t * t) * mpmath.erfc(t),
                                                                     left)).max() < 3e-15
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -27.0, 1e308])
    np.testing.assert_array_equal(c_function("gradc_erfcx", special), S.erfcx(special))


# ---------------------------------------------------------------- incomplete gamma and beta
A_GRID = np.geomspace(0.1, 300.0, 40)[:, None]
X_GRID = np.geomspace(1e-3, 600.0, 120)[None, :]


@pytest.mark.parametrize("name", ["gammainc", "gammaincc"])
def test_incomplete_gamma_over_a_grid(c_function, name):
    a, x = np.broadcast_arrays(A_GRID, X_GRID)
    got, expected = c_function(f"gradc_{name}", a, x), getattr(S, name)(a, x)
    shown = expected > 1e-100
    # SciPy's own error reaches 3e-13 for large a (mpmath below), ours stays within 4e-14 of mpmath
    assert relative_error(got[shown], expected[shown]).max() < 5e-13
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-15)  # and absolutely, everywhere (1 - P near 1)
    rng = np.random.default_rng(3)
    pick = rng.choice(a.size, 40, replace=False)
    upper = name == "gammaincc"
    exact = mp_values(lambda s, t: mpmath.gammainc(s, t, mpmath.inf, regularized=True) if upper
                      else mpmath.gammainc(s, 0, t, regularized=True), a.ravel()[pick], x.ravel()[pick])
    keep = exact > 1e-300
    # e^E with |E| = -log(value) large carries E's rounding: ~|log value| ulp in the far tails
    assert np.all(relative_error(got.ravel()[pick][keep], exact[keep]) < 2e-16 * (50 + np.abs(np.log(exact[keep]))))


def test_upper_incomplete_gamma_for_small_a_keeps_relative_accuracy(c_function):
    # Q(a, x) ~ a E1(x) as a -> 0: 1 - P would lose it (1e-7 relative at a = 1e-8)
    a, x = (t.ravel() for t in np.meshgrid([1e-10, 1e-8, 1e-6, 1e-4, 1e-3, 0.01, 0.1, 0.3, 0.49],
                                           [1e-5, 1e-3, 0.1, 0.5, 1.0, 1.2, 1.45]))
    exact = mp_values(lambda s, t: mpmath.gammainc(s, t, mpmath.inf, regularized=True), a, x)
    assert relative_error(c_function("gradc_gammaincc", a, x), exact).max() < 1e-14
    exact = mp_values(lambda s, t: mpmath.gammainc(s, 0, t, regularized=True), a, x)
    assert relative_error(c_function("gradc_gammainc", a, x), exact).max() < 1e-14


def test_incomplete_gamma_special_values(c_function):
    a = np.array([0.0, 0.0, 1.0, 1.0, -1.0, 1.0, np.inf, 1.0, np.nan, 2.5])
    x = np.array([1.0, 0.0, 0.0, np.inf, 1.0, -1.0, 1.0, np.nan, 1.0, 1e-300])
    for name in ("gammainc", "gammaincc"):
        np.testing.assert_array_equal(c_function(f"gradc_{name}", a, x), getattr(S, name)(a, x), err_msg=name)


def test_incomplete_beta_over_a_grid(c_function):
    ab = np.geomspace(0.1, 200.0, 25)
    a, b, x = np.meshgrid(ab, ab, np.linspace(0.001, 0.999, 41), indexing="ij")
    got, expected = c_function("gradc_betainc", a, b, x), S.betainc(a, b, x)
    shown = expected > 1e-100
    assert relative_error(got[shown], expected[shown]).max() < 1e-12  # (both lose ~|log I| ulp in the tails)
    # absolutely: lgamma's own absolute error (~1e-16 of lgamma(a + b) ~ 1000 for a + b = 400) in B(a, b)
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-13)
    special_a = np.array([0.0, 1.0, 1.0, 1.0, 1.0, -1.0, 2.0, np.nan])
    special_b = np.array([1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 2.0, 1.0])
    special_x = np.array([0.5, 0.5, 0.0, 1.0, 1.5, 0.5, -0.1, 0.5])
    np.testing.assert_array_equal(c_function("gradc_betainc", special_a, special_b, special_x),
                                  S.betainc(special_a, special_b, special_x))


def test_incomplete_beta_for_small_b_keeps_relative_accuracy(c_function):
    # I_x(a, b) ~ b for tiny b: the complement 1 - I_{1-x}(b, a) would lose it (3e-8 relative at b = 1e-8)
    a, b, x = (t.ravel() for t in np.meshgrid([1e-4, 0.01, 0.5, 2.0, 50.0], [1e-8, 1e-4, 0.01, 0.5],
                                              [1e-6, 0.01, 0.3, 0.7, 0.99, 0.999]))
    exact = mp_values(lambda p, q, t: mpmath.betainc(p, q, 0, t, regularized=True), a, b, x)
    shown = exact > 1e-280
    # (|log I| ulp in the far tails: 1e-13 at I = 1e-72)
    assert relative_error(c_function("gradc_betainc", a, b, x)[shown], exact[shown]).max() < 2e-13


@pytest.mark.parametrize("name", ["gammaincinv", "gammainccinv"])
def test_incomplete_gamma_inverses(c_function, name):
    a, y = np.broadcast_arrays(np.geomspace(0.05, 300.0, 40)[:, None],
                               np.concatenate([[1e-300, 1e-20], np.linspace(0.001, 0.999, 99), [1 - 1e-12]])[None, :])
    got, expected = c_function(f"gradc_{name}", a, y), getattr(S, name)(a, y)
    # x underflows for tiny y and small a, (y Gamma(a + 1))^(1/a): subnormal results keep fewer digits
    normal = expected > 1e-300
    np.testing.assert_allclose(got[~normal], expected[~normal], rtol=0, atol=1e-310)
    assert relative_error(got[normal], expected[normal]).max() < 5e-13
    special = np.array([0.0, 1.0, -0.5, 1.5, np.nan])
    np.testing.assert_array_equal(c_function(f"gradc_{name}", 1.5, special), getattr(S, name)(1.5, special))


def test_incomplete_beta_inverse(c_function):
    ab = np.geomspace(0.3, 60.0, 15)
    a, b, y = np.meshgrid(ab, ab, np.linspace(0.01, 0.99, 25), indexing="ij")
    got = c_function("gradc_betaincinv", a, b, y)
    # SciPy's own inverse is off by up to 4e-10 here (at a = b, y = 1/2 its x is not 1/2): its forward decides,
    # where x is not so near 0 or 1 that its own rounding moves I_x(a, b) more (x = 1 - 8e-9: 1e-8 relative in 1 - x)
    inside = np.minimum(got, 1 - got) > 1e-4
    residual = np.abs(S.betainc(a, b, got) - y) / np.minimum(y, 1 - y)
    assert residual[inside].max() < 1e-12
    assert relative_error(got, S.betaincinv(a, b, y)).max() < 1e-9
    special = np.array([0.0, 1.0, -0.1, 1.1, np.nan])
    np.testing.assert_array_equal(c_function("gradc_betaincinv", 2.0, 3.0, special), S.betaincinv(2.0, 3.0, special))


# ---------------------------------------------------------------- Bessel functions I and K
X_BESSEL = np.concatenate([np.geomspace(1e-300, 1e300, 400), np.linspace(0.0, 50.0, 1001), [1.9999, 2.0, 2.0001]])


@pytest.mark.parametrize("name", ["i0", "i1", "i0e", "i1e", "k0", "k1", "k0e", "k1e"])
def test_integer_order_bessel_i_and_k(c_function, name):
    x = np.concatenate([X_BESSEL, -X_BESSEL[:400], [np.inf, -np.inf, np.nan, -0.0]])
    with np.errstate(all="ignore"):
        got, expected = c_function(f"gradc_{name}", x), getattr(S, name)(x)
    normal = np.isfinite(expected) & (np.abs(expected) > 1e-300)
    assert relative_error(got[normal], expected[normal]).max() < 3e-15
    special = ~np.isfinite(expected) | (expected == 0)  # infinities, NaN, zeros: exactly SciPy's
    np.testing.assert_array_equal(got[special], expected[special])


ORDERS = np.concatenate([np.linspace(-10.0, 10.0, 81), [0.3, -0.7, 25.0, 60.5, -33.25]])


@pytest.mark.parametrize("name", ["iv", "ive", "kv", "kve"])
def test_real_order_bessel_i_and_k_over_a_grid(c_function, name):
    v, x = np.meshgrid(ORDERS, np.concatenate([np.geomspace(1e-6, 3e4, 300), [1.9999, 2.0, 2.0001]]))
    with np.errstate(all="ignore"):
        got, expected = c_function(f"gradc_{name}", v, x), getattr(S, name)(v, x)
    normal = np.isfinite(expected) & (np.abs(expected) > 1e-280) & (np.abs(expected) < 1e280)
    if name.startswith("i"):  # I_{-v} = I_v + (2/pi) sin(v pi) K_v crosses zero: relative error means nothing there
        with np.errstate(all="ignore"):
            normal &= np.abs(expected) > 1e-2 * np.abs(getattr(S, name)(np.abs(v), x))
    # SciPy's (Amos's) own error reaches ~1e-13 (mpmath below): a bound on both
    assert relative_error(got[normal], expected[normal]).max() < 3e-13
    assert np.median(relative_error(got[normal], expected[normal])) < 1e-15


@pytest.mark.parametrize("name", ["iv", "kv", "ive", "kve"])
def test_real_order_bessel_against_mpmath(c_function, name):
    v, x = (a.ravel() for a in np.meshgrid(np.linspace(0.0, 3.0, 13), [1e-7, 0.1, 0.5, 1.0, 1.9999, 2.0, 2.0001, 3.0,
                                                                       10.0, 30.0, 2e4]))
    fn = mpmath.besseli if name.startswith("i") else mpmath.besselk
    scale = {"iv": lambda t: 1, "kv": lambda t: 1, "ive": lambda t: mpmath.exp(-t), "kve": mpmath.exp}[name]
    exact = mp_values(lambda s, t: fn(s, t) * scale(t), v, x)
    shown = (exact > 1e-300) & (exact < 1e300)
    assert relative_error(c_function(f"gradc_{name}", v, x)[shown], exact[shown]).max() < 1e-14


# ---------------------------------------------------------------- Bessel functions J and Y of real order
def test_real_order_bessel_j_and_y_over_a_grid(c_function):
    v, x = np.meshgrid(np.concatenate([np.linspace(-10.25, 10.25, 83), [0.3, -0.7, 25.5, 60.5, -33.25]]),
                       np.concatenate([np.geomspace(1e-6, 3e4, 400), [1.9999, 2.0, 2.0001, 24.99, 25.01]]))
    with np.errstate(all="ignore"):
        j, y = c_function("gradc_jv_real", v, x), c_function("gradc_yv_real", v, x)
        j_ref, y_ref = S.jv(v, x), S.yv(v, x)
        modulus = np.hypot(j_ref, y_ref)  # J and Y oscillate: errors relative to sqrt(J^2 + Y^2) (zeros included)
    for got, expected in ((j, j_ref), (y, y_ref)):
        normal = np.isfinite(expected) & (modulus > 1e-280) & (modulus < 1e280)
        # SciPy's own error reaches 6e-13 of the modulus (at v = 60.5, x = 847: mpmath below)
        assert (np.abs(got[normal] - expected[normal]) / modulus[normal]).max() < 1e-12
        assert np.median(relative_error(got[normal], expected[normal])) < 2e-15
        special = ~np.isfinite(expected)
        np.testing.assert_array_equal(got[special], expected[special])


@pytest.mark.parametrize("name", ["jv", "yv"])
def test_real_order_bessel_j_and_y_against_mpmath(c_function, name):
    v, x = (a.ravel() for a in np.meshgrid(np.linspace(-3.25, 3.25, 14), [1e-7, 0.1, 0.5, 1.0, 1.9999, 2.0, 3.0, 10.0,
                                                                          24.9, 25.1, 846.98, 9510.66]))
    v = np.append(v, [60.5, 60.5])
    x = np.append(x, [846.9792063691515, 1145.9482208676216])
    exact = mp_values(mpmath.besselj if name == "jv" else mpmath.bessely, v, x)
    modulus = mp_values(lambda s, t: mpmath.sqrt(mpmath.besselj(s, t) ** 2 + mpmath.bessely(s, t) ** 2), v, x)
    shown = modulus < 1e300
    got = c_function(f"gradc_{name}_real", v, x)
    assert (np.abs(got - exact)[shown] / modulus[shown]).max() < 2e-14


def test_bessel_special_values(c_function):
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -2.0])
    for v in (0.0, 1.0, 0.5, -1.5, -2.0, 2.5):
        for name in ("iv", "ive", "kv", "kve", "jv_real", "yv_real"):
            with np.errstate(all="ignore"):
                expected = getattr(S, name.replace("_real", ""))(v, x)
                np.testing.assert_allclose(c_function(f"gradc_{name}", v, x), expected, rtol=1e-15, atol=0,
                                           equal_nan=True, err_msg=f"{name}({v}, x)")


def test_float_twin_rounds_the_double_once(c_function):
    x = np.linspace(0.1, 20.0, 200)
    got = c_function("gradc_ivf", 1.5, x.astype(np.float32).astype(np.float64))
    expected = S.iv(1.5, x.astype(np.float32).astype(np.float64)).astype(np.float32).astype(np.float64)
    np.testing.assert_allclose(got, expected, rtol=1.2e-7)


def test_random_orders_and_arguments(c_function):
    """Seeded random (order, argument) pairs over the whole range, for the four real-order families."""
    rng = np.random.default_rng(2024)
    v = rng.uniform(-20.0, 20.0, 3000)
    x = np.exp(rng.uniform(np.log(1e-3), np.log(1e3), 3000))
    with np.errstate(all="ignore"):
        modulus = np.hypot(S.jv(v, x), S.yv(v, x))
        for name in ("jv_real", "yv_real"):
            got, expected = c_function(f"gradc_{name}", v, x), getattr(S, name[:2])(v, x)
            shown = np.isfinite(expected) & (modulus < 1e280) & (modulus > 1e-280)
            assert (np.abs(got[shown] - expected[shown]) / modulus[shown]).max() < 1e-12, name
        for name in ("ive", "kve"):
            got, expected = c_function(f"gradc_{name}", v, x), getattr(S, name)(v, x)
            shown = np.isfinite(expected) & (np.abs(expected) > 1e-280) & (np.abs(expected) < 1e280)
            if name == "ive":  # away from the zeros of I_{-v} (a difference of two terms there)
                shown &= np.abs(expected) > 1e-2 * np.abs(S.ive(np.abs(v), x))
            # SciPy's own error reaches 2e-12 next to negative integer orders (ours: 1e-13 of mpmath there)
            assert relative_error(got[shown], expected[shown]).max() < 3e-12, name
