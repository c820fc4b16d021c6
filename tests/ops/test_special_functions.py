"""SciPy's incomplete gamma and beta functions, Bessel functions, rgamma, gammasgn and erfcx through gradc: values
against SciPy on the NumPy and C targets (special values included), first and second derivatives against central
differences of SciPy's own functions, the tails of log_ndtr's and ndtri's derivatives, and the refusals."""
from __future__ import annotations

import numpy as np
import op_cases  # noqa: F401  (first: it merges the special families)
import pytest
import scipy.special as S

import gradc
from gradc.backends.c import build as c_build
from gradc.errors import TraceError

HAS_CC = c_build.find_compiler() is not None
TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(not HAS_CC, reason="no C compiler"))]


def differences(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def compiled_value(fn, x, target):
    return gradc.compile(fn, x, mode="vjp", target=target).forward(x)


def of_x(fn, *constants):
    """``x -> fn(*constants, x)``: SciPy's function with its orders or shape parameters fixed."""
    return lambda x: fn(*constants, x)


# ---------------------------------------------------------------- values on both targets, special values included
UNARY = {  # name -> inputs (tails, zero, signs, infinities, NaN)
    **{n: np.array([-3.0, -0.0, 0.0, 1e-300, 1e-8, 0.5, 2.0, 2.5, 30.0, 800.0, 1e5, np.inf, -np.inf, np.nan])
       for n in ("i0", "i1", "i0e", "i1e", "k0", "k1", "k0e", "k1e")},
    **{n: np.array([-7.5, -0.0, 0.0, 1e-300, 1e-8, 0.5, 2.4048255576957727, 30.0, 1e4, np.inf, -np.inf, np.nan])
       for n in ("j0", "j1", "y0", "y1")},
    "rgamma": np.array([-3.0, -2.5, -1.0, -0.0, 0.0, 0.5, 1.0, 5.5, 171.5, 200.0, np.inf, -np.inf, np.nan]),
    "gammasgn": np.array([-3.0, -2.5, -1.5, -0.5, -0.0, 0.0, 0.5, 3.0, np.inf, -np.inf, np.nan]),
    "erfcx": np.array([-30.0, -26.0, -5.0, -1e-8, 0.0, 0.5, 3.0, 24.9, 25.1, 1e3, 1e9, 1e300, np.inf, -np.inf,
                       np.nan]),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_scipy(name, target):
    x = UNARY[name]
    fn = getattr(S, name)
    with np.errstate(all="ignore"):
        got, expected = compiled_value(of_x(fn), x, target), fn(x)
    # C: gradc's implementations within 1e-13 of SciPy's; libm's J and Y within 1e-12 relative or 1e-15 absolute
    # (next to their zeros, where relative error means nothing)
    rtol, atol = (1e-15, 0.0) if target == "numpy" else ((1e-12, 1e-15) if name[0] in "jy" else (1e-13, 0.0))
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(expected))


ORDERED = {
    "jv": [0, 1, 2, -3, 5, 0.5, -1.5, 2.25, -7.75], "yv": [0, 1, 2, -3, 5, 0.5, -1.5, 2.25, -7.75],
    "iv": [0, 1, -2, 0.5, -1.5, 2.25, 7.0],
    "ive": [0, 1, -2, 0.5, -1.5, 2.25, 7.0], "kv": [0, 1, -2, 0.5, -1.5, 2.25, 7.0],
    "kve": [0, 1, -2, 0.5, -1.5, 2.25, 7.0],
}
X_ORDERED = np.array([-4.0, -0.5, 0.0, 1e-9, 0.3, 1.999, 2.0, 2.001, 6.5, 40.0, 2e4, np.inf, np.nan])


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(ORDERED))
def test_ordered_values_match_scipy(name, target):
    fn = getattr(S, name)
    for v in ORDERED[name]:
        with np.errstate(all="ignore"):
            got, expected = compiled_value(of_x(fn, v), X_ORDERED, target), fn(v, X_ORDERED)
        # C: within 1e-12 of SciPy (J and Y: or 1e-14 absolutely, near their zeros)
        atol = 1e-14 if target == "c" and name in ("jv", "yv") else 0.0
        np.testing.assert_allclose(got, expected, rtol=1e-15 if target == "numpy" else 1e-12, atol=atol,
                                   equal_nan=True, err_msg=f"{name}({v}, x)")


INCOMPLETE = [  # (name, shape parameters, x): tails, edges, both branches of the series and fractions
    ("gammainc", (np.array([0.1, 0.5, 1.0, 3.0, 30.0, 250.0]),), np.array([1e-3, 0.4, 1.0, 3.5, 40.0, 300.0])),
    ("gammaincc", (np.array([0.1, 0.5, 1.0, 3.0, 30.0, 250.0]),), np.array([1e-3, 0.4, 1.0, 3.5, 40.0, 300.0])),
    ("gammainc", (2.5,), np.array([0.0, np.inf, -1.0, np.nan, 1e-200, 1e300])),
    ("gammaincc", (2.5,), np.array([0.0, np.inf, -1.0, np.nan, 1e-200, 1e300])),
    ("gammaincinv", (np.array([0.2, 0.7, 1.0, 4.0, 60.0, 250.0]),), np.array([1e-9, 0.01, 0.5, 0.3, 0.999, 0.6])),
    ("gammainccinv", (np.array([0.2, 0.7, 1.0, 4.0, 60.0, 250.0]),), np.array([1e-9, 0.01, 0.5, 0.3, 0.999, 0.6])),
    ("gammaincinv", (1.5,), np.array([0.0, 1.0, -0.5, 1.5, np.nan])),
    ("betainc", (np.array([0.3, 1.0, 2.0, 5.0, 40.0, 0.5]), np.array([0.7, 1.0, 3.0, 0.5, 60.0, 200.0])),
     np.array([0.01, 0.5, 0.3, 0.99, 0.4, 1e-4])),
    ("betainc", (2.0, 3.0), np.array([0.0, 1.0, -0.1, 1.1, np.nan])),
    ("betaincinv", (np.array([0.5, 1.0, 2.0, 5.0, 40.0]), np.array([0.7, 1.0, 3.0, 0.5, 60.0])),
     np.array([0.01, 0.5, 0.3, 0.99, 0.4])),
    ("betaincinv", (2.0, 3.0), np.array([0.0, 1.0, -0.1, 1.1, np.nan])),
]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", INCOMPLETE, ids=lambda c: f"{c[0]}_{len(c[2])}")
def test_incomplete_values_match_scipy(case, target):
    name, shapes, x = case
    fn = getattr(S, name)
    with np.errstate(all="ignore"):
        got, expected = compiled_value(of_x(fn, *shapes), x, target), fn(*shapes, x)
    np.testing.assert_allclose(got, expected, rtol=1e-15 if target == "numpy" else 1e-11, atol=0, equal_nan=True)


# ---------------------------------------------------------------- derivatives: first against differences, second
FIRST = [  # (function of x, points): central differences of SciPy's function
    *[(of_x(getattr(S, n)), np.array([0.3, 1.7, 4.4, 9.0])) for n in UNARY if n != "gammasgn"],
    (lambda x: S.i0e(x) + S.i1e(x), np.array([-4.0, -0.6])),
    *[(of_x(getattr(S, n), v), np.array([0.3, 1.7, 4.4, 9.0]))
      for n in ORDERED for v in (0, 1, -2, 0.5, 3.25) if n not in ("jv", "yv") or float(v).is_integer()],
    (lambda x: S.jv(2.5, x) + S.yv(-0.5, x), np.array([0.3, 1.7, 4.4])),
    (lambda x: S.gammainc(0.5, x) * S.gammaincc(40.0, x), np.array([0.2, 3.0, 38.0, 45.0])),
    (lambda x: S.betainc(0.5, 3.5, x) + S.betaincinv(2.0, 0.8, x), np.array([0.05, 0.5, 0.93])),
    (lambda y: S.gammaincinv(0.6, y) + S.gammainccinv(12.0, y), np.array([0.05, 0.5, 0.93])),
]


@pytest.mark.parametrize("index", range(len(FIRST)))
def test_first_derivative_matches_central_differences(index):
    f, x = FIRST[index]
    grad = gradc.grad(_summed(f))(x)
    expected = differences(f, x)
    np.testing.assert_allclose(grad, expected, rtol=1e-6, atol=1e-8)


SECOND = [  # (f, points): grad(grad) against central differences of gradc's first derivative
    (lambda x: S.j1(x), np.array([0.4, 2.0, 7.0])),
    (lambda x: S.kv(1.5, x), np.array([0.4, 2.0, 7.0])),
    (lambda x: S.ive(2, x), np.array([-3.0, 0.4, 7.0])),
    (lambda x: S.k0e(x), np.array([0.4, 2.0, 7.0])),
    (lambda x: S.gammainc(3.5, x), np.array([0.4, 2.0, 7.0])),
    (lambda x: S.betainc(2.5, 1.5, x), np.array([0.2, 0.5, 0.8])),
    (lambda y: S.gammaincinv(2.5, y), np.array([0.2, 0.5, 0.8])),
    (lambda x: S.rgamma(x), np.array([-1.5, 0.4, 3.0])),
    (lambda x: S.erfcx(x), np.array([-1.5, 0.4, 3.0])),
]


@pytest.mark.parametrize("index", range(len(SECOND)))
def test_second_derivative_matches_differences_of_the_first(index):
    f, x = SECOND[index]
    first = gradc.grad(_summed(f))
    second = gradc.grad(_summed(gradc.grad(_summed(f))))(x)
    np.testing.assert_allclose(second, differences(first, x, 1e-5), rtol=1e-5, atol=1e-7)


def test_closed_forms_of_the_derivatives():
    x = np.array([0.3, 1.7, 4.4])
    np.testing.assert_allclose(gradc.grad(lambda x: S.j0(x).sum())(x), -S.j1(x), rtol=1e-15)
    np.testing.assert_allclose(gradc.grad(lambda x: S.kv(2.5, x).sum())(x), S.kvp(2.5, x), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(lambda x: S.iv(-1.5, x).sum())(x), S.ivp(-1.5, x), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(lambda x: S.yv(3, x).sum())(x), S.yvp(3, x), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(lambda x: S.gammainc(2.0, x).sum())(x), x * np.exp(-x), rtol=1e-14)
    np.testing.assert_allclose(gradc.grad(lambda x: S.betainc(2.0, 1.0, x).sum())(x / 5), 2 * x / 5, rtol=1e-14)
    np.testing.assert_allclose(gradc.grad(lambda x: S.erfcx(x).sum())(x), 2 * x * S.erfcx(x) - 2 / np.sqrt(np.pi),
                               rtol=1e-13)


def test_rgamma_derivative_at_the_poles_is_the_limit():
    x = np.array([0.0, -1.0, -2.0, -3.0])  # d/dx 1/Gamma(x) at -n is (-1)^n n!
    np.testing.assert_allclose(gradc.grad(lambda x: S.rgamma(x).sum())(x), [1.0, -1.0, 2.0, -6.0], rtol=1e-14)


def test_gammasgn_has_zero_derivative():
    x = np.array([-2.5, -0.5, 1.5])
    assert np.array_equal(gradc.grad(lambda x: (S.gammasgn(x) * x).sum())(x), S.gammasgn(x))


def test_log_ndtr_and_ndtri_derivatives_in_the_tails():
    # log_ndtr' = pdf / ndtr: ~ -x far left (where ndtr underflows), ~ pdf far right
    x = np.array([-40.0, -10.0, 0.0, 8.0, 40.0])
    # mpmath's npdf / ncdf at 50 digits
    expected = np.array([40.024968847207264, 10.098093233962512, 0.79788456080286536, 5.0522710835368954e-15, 0.0])
    got = gradc.grad(lambda x: S.log_ndtr(x).sum())(x)
    # exp(-x^2/2 - log_ndtr(x)) cancels ~x^2/2 in the exponent: 800 ulp at -40
    np.testing.assert_allclose(got, expected, rtol=2e-13, atol=1e-300)
    # ndtri' = 1 / pdf(ndtri(p)), both tails
    p = np.array([1e-300, 1e-10, 0.5, 1.0 - 1e-10])
    got = gradc.grad(lambda p: S.ndtri(p).sum())(p)
    np.testing.assert_allclose(got, np.sqrt(2 * np.pi) * np.exp(S.ndtri(p) ** 2 / 2), rtol=1e-12)


def _mixed(a, b, v):
    return lambda x: S.betainc(a, b, x) + S.gammaincc(a, 10 * x) + S.kve(v, 3 * x) + S.iv(v, 2 * x)


def _summed(f):
    return lambda x: f(x).sum()


def _summed2(f):
    return lambda a, x: f(a, x).sum()


def test_random_points_against_differences():
    rng = np.random.default_rng(24)
    for _ in range(20):
        a, b = rng.uniform(0.3, 8.0, 2)
        x = rng.uniform(0.05, 0.95, 3)
        v = float(rng.uniform(-3.0, 3.0))
        f = _mixed(a, b, v)
        np.testing.assert_allclose(gradc.grad(_summed(f))(x), differences(f, x), rtol=1e-6, atol=1e-8)


def test_float32_follows_scipys_loop_choice():
    x32 = np.array([0.5, 2.0], dtype=np.float32)
    for fn in (lambda x: S.gammainc(2.5, x), lambda x: S.betainc(2.0, 3.0, x / 4), lambda x: S.jv(1, x),
               lambda x: S.yn(1, x), lambda x: S.jn(2, x), lambda x: S.kve(0.5, x)):
        got = gradc.compile(fn, x32, mode="vjp").forward(x32)  # noqa: B023 (compiled here, not later)
        assert got.dtype == fn(x32).dtype


# ---------------------------------------------------------------- refusals
def test_second_derivative_in_shape_parameters_is_refused_at_the_users_line():
    # the first derivative in a shape parameter is gradc.ops.special_incomplete_shape's (tests/ops/
    # test_incomplete_shape_derivatives.py); the second has no rule
    x = np.array([0.5, 2.0])
    for fn, name, what in [(lambda a, x: S.gammainc(a, x), "gammainc", "a"),
                           (lambda a, x: S.gammaincc(a, x), "gammaincc", "a"),
                           (lambda a, x: S.betainc(a, 2.0, x / 3), "betainc", "a"),
                           (lambda b, x: S.betainc(1.5, b, x / 3), "betainc", "b"),
                           (lambda a, y: S.gammaincinv(a, y / 3), "gammaincinv", "a")]:
        refusal = rf"scipy\.special\.{name[:8] if name.startswith('gammainc') else name}\w*: the second " \
                  rf"derivative in {what} is not available"
        first = gradc.grad(_summed2(fn), argnums=0)
        with pytest.raises(TraceError, match=refusal) as e:
            gradc.grad(first, argnums=0)(np.float64(2.0), x)
        assert "test_special_functions.py" in str(e.value) and "differentiate once" in str(e.value)
        # the first derivative in both and the mixed one (in x of the derivative in the shape) are fine
        assert np.all(np.isfinite(gradc.grad(_summed2(fn), argnums=(0, 1))(np.float64(2.0), x)[1]))
        assert np.all(np.isfinite(gradc.grad(first, argnums=1)(np.float64(2.0), x)))


def test_traced_or_array_orders_are_refused():
    x = np.array([0.5, 2.0])
    with pytest.raises(TraceError, match=r"scipy\.special\.jv: the order must be a constant"):
        gradc.grad(lambda x: S.jv(x[0], x).sum())(x)
    with pytest.raises(TraceError, match=r"scipy\.special\.kv: the order must be one number"):
        gradc.grad(lambda x: S.kv(np.array([1.0, 2.0]), x).sum())(x)
    with pytest.raises(TraceError, match=r"scipy\.special\.yn: the order must be an integer"):
        gradc.grad(lambda x: S.yn(1.5, x).sum())(x)
    with pytest.raises(TraceError, match=r"scipy\.special\.iv with out= is not supported"):
        gradc.grad(lambda x: S.iv(1, x, out=x).sum())(x)


def test_non_finite_order_is_refused():
    with pytest.raises(TraceError, match=r"scipy\.special\.iv: the order must be finite"):
        gradc.grad(_summed(of_x(S.iv, np.inf)))(np.array([0.5, 2.0]))


def test_float32_with_a_python_float_follows_scipy_for_the_older_ufuncs():
    x32 = np.array([0.5, 2.0], dtype=np.float32)
    for fn in (lambda x: S.xlogy(1.5, x), lambda x: S.xlog1py(x, 0.5), lambda x: S.betaln(2.0, x),
               lambda x: S.beta(x, 3.0), lambda x: S.kl_div(x, 1.0), lambda x: S.rel_entr(x, 2.0)):
        got = gradc.compile(fn, x32, mode="vjp").forward(x32)  # noqa: B023 (compiled here, not later)
        assert got.dtype == fn(x32).dtype
        np.testing.assert_allclose(got, fn(x32), rtol=1e-6)


def test_a_caller_standing_for_another_public_function_is_named_in_the_refusal():
    from gradc.ops import special_incomplete as inc

    def cdf(df, x):  # as scipy.stats' chi2.cdf would call it
        return inc.gammainc(df / 2, x / 2, public="scipy.stats.chi2.cdf", shape_names=("df",)).sum()

    x = np.array([0.5, 2.0])
    with pytest.raises(TraceError, match=r"scipy\.stats\.chi2\.cdf: the second derivative in df is not") as e:
        gradc.grad(gradc.grad(cdf, argnums=0))(np.float64(3.0), x)
    assert "test_special_functions.py" in str(e.value)
    h = 1e-6
    fd = (S.gammainc(1.5 + h / 2, x / 2).sum() - S.gammainc(1.5 - h / 2, x / 2).sum()) / (2 * h)
    np.testing.assert_allclose(gradc.grad(cdf, argnums=0)(np.float64(3.0), x), fd, rtol=1e-7)
    chi2_pdf = np.exp(0.5 * np.log(x / 2) - x / 2 - S.gammaln(1.5)) / 2
    np.testing.assert_allclose(gradc.grad(cdf, argnums=1)(np.float64(3.0), x), chi2_pdf, rtol=1e-14)
