"""scipy.special functions gradc composes from its ops (Box-Cox, orthogonal polynomials, lpmv, complete elliptic
integrals, powm1, cosm1, huber, pseudo_huber, the degree-argument trigonometry): values against SciPy on both
targets (edges, singular points and special values included), first derivatives in every traced argument against
central differences of SciPy's own function, second derivatives against differences of gradc's first, a seeded
generator over degrees and shape parameters, and the refusals."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special as S

import gradc
from gradc.backends.c import build as c_build
from gradc.errors import TraceError

HAS_CC = c_build.find_compiler() is not None
TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(not HAS_CC, reason="no C compiler"))]


def compiled_value(fn, args, target):
    return gradc.compile(fn, *args, mode="vjp", target=target).forward(*args)


def grid(*axes):
    """Every combination of the axes' values, as flat float64 arrays."""
    return [a.ravel() for a in np.meshgrid(*[np.asarray(v, dtype=np.float64) for v in axes], indexing="ij")]


def bound(fn, *static):
    """``x -> fn(*static, x)``: SciPy's function with its degree and shape parameters fixed."""
    return lambda x: fn(*static, x)


def summed(fn, arity):
    """``fn``'s sum as a function of ``arity`` named parameters (gradc differentiates named parameters)."""
    if arity == 1:
        return lambda a: np.sum(fn(a))
    if arity == 2:
        return lambda a, b: np.sum(fn(a, b))
    return lambda a, b, c: np.sum(fn(a, b, c))


def differences(f, args, index, h=1e-6):
    up, down = list(args), list(args)
    up[index] = args[index] + h
    down[index] = args[index] - h
    return (f(*up) - f(*down)) / (2 * h)


LAMBDAS = [-2.5, -1.0, -1e-20, 0.0, 1e-20, 1e-12, 0.5, 1.0, 3.0]
VALUES = {  # name -> (SciPy's function, its arguments' grid, rtol on NumPy, rtol on C)
    "boxcox": (S.boxcox, grid([0.0, 1e-300, 1e-8, 0.3, 1.0, 2.5, 1e8, np.inf, -1.0, np.nan], LAMBDAS)),
    "boxcox1p": (S.boxcox1p, grid([-1.0, -0.5, 0.0, 1e-300, 1e-8, 0.3, 2.5, 1e8, np.inf, -2.0, np.nan], LAMBDAS)),
    "inv_boxcox": (S.inv_boxcox, grid([-3.0, -0.4, 0.0, 1e-9, 0.7, 2.0, 40.0, np.nan], LAMBDAS)),
    "inv_boxcox1p": (S.inv_boxcox1p, grid([-3.0, -0.4, 0.0, 1e-9, 0.7, 2.0, 40.0, np.nan], LAMBDAS)),
    "powm1": (S.powm1, grid([0.0, 1e-5, 0.5, 1.0, 2.0, 1e3, np.inf], [-2.0, -1e-9, 0.0, 1e-9, 0.5, 3.0])),
    "pseudo_huber": (S.pseudo_huber, grid([0.0, 1e-3, 1.0, 10.0, -1.0], [-50.0, -1.0, 0.0, 1e-9, 0.4, 1e3])),
    "huber": (S.huber, grid([0.0, 1e-3, 1.0, 10.0, -1.0], [-50.0, -1.0, 0.0, 1e-9, 0.4, 1e3])),
    "cosm1": (S.cosm1, grid([-4.0, -1e-9, 0.0, 1e-300, 1e-5, 0.5, 3.0, 100.0])),
    "sindg": (S.sindg, grid([-540.0, -180.0, -90.0, -30.0, 0.0, 30.0, 45.0, 90.0, 180.0, 270.0, 360.0, 725.0])),
    "cosdg": (S.cosdg, grid([-540.0, -180.0, -90.0, -30.0, 0.0, 30.0, 45.0, 90.0, 180.0, 270.0, 360.0, 725.0])),
    "tandg": (S.tandg, grid([-135.0, -30.0, 0.0, 30.0, 45.0, 60.0, 135.0, 200.0])),
    "cotdg": (S.cotdg, grid([-135.0, -30.0, 30.0, 45.0, 60.0, 90.0, 135.0, 200.0])),
    "radian": (S.radian, grid([0.0, 30.0, -180.0], [0.0, 15.0], [0.0, 30.0])),
    "exp10": (S.exp10, grid([-310.0, -3.0, 0.0, 0.5, 2.0, 300.0])),
    "ellipk": (S.ellipk, grid([-np.inf, -1e300, -1e17, -3.0, 0.0, 1e-300, 0.1, 0.5, 0.9, 1 - 1e-12, 1 - 1e-16, 1.0,
                               1.5, np.nan])),
    "ellipkm1": (S.ellipkm1, grid([0.0, 1e-300, 1e-20, 0.3, 1.0, 5.0, 1e10, 1e300, -1.0, np.nan])),
    "ellipe": (S.ellipe, grid([-np.inf, -1e300, -1e17, -3.0, 0.0, 1e-300, 0.1, 0.5, 0.9, 1 - 1e-12, 1 - 1e-16, 1.0,
                               1.5, np.nan])),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_match_scipy(name, target):
    fn, args = VALUES[name]
    with np.errstate(all="ignore"):
        got, expected = compiled_value(fn, args, target), fn(*args)
    np.testing.assert_allclose(got, expected, rtol=4e-15, atol=1e-300, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(expected))


X = np.array([-1.3, -1.0, -0.77, -0.2, 0.0, 0.31, 0.5, 0.93, 1.0, 1.6, 4.0, np.nan])
POLYNOMIALS = {  # name -> (shape parameters' values, degrees)
    "eval_legendre": ([()], [-4, -1, 0, 1, 2, 5, 12, 30]),
    "eval_chebyt": ([()], [-3, 0, 1, 2, 7, 30]),
    "eval_chebyu": ([()], [-5, -2, -1, 0, 1, 2, 7, 30]),
    "eval_hermite": ([()], [-1, 0, 1, 2, 7, 20]),
    "eval_hermitenorm": ([()], [-2, 0, 1, 2, 7, 20]),
    "eval_laguerre": ([()], [-1, 0, 1, 2, 7, 20]),
    "eval_genlaguerre": ([(a,) for a in (-1.5, -1.0, -0.5, 0.0, 2.5)], [-1, 0, 1, 2, 7, 15]),
    "eval_gegenbauer": ([(a,) for a in (-1.5, -1.0, -0.7, -0.5, 0.0, 0.5, 1.0, 2.5)], [-1, 0, 1, 2, 7, 15]),
    "eval_jacobi": ([(a, b) for a in (-0.5, 0.0, 1.5) for b in (-0.3, 0.0, 2.0)], [0, 1, 2, 7, 15]),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(POLYNOMIALS))
def test_polynomial_values_match_scipy(name, target):
    shapes, degrees = POLYNOMIALS[name]
    fn = getattr(S, name)
    for n in degrees:
        for shape in shapes:
            with np.errstate(all="ignore"):
                got = compiled_value(bound(fn, n, *shape), [X], target)
                expected = fn(n, *shape, X)
            if name == "eval_gegenbauer" and n >= 2 and (2 * shape[0]).is_integer() and shape[0] <= -0.5:
                expected = np.full_like(X, np.nan)  # SciPy's NaN (its x = 0 series aside: documented)
            assert np.array_equal(np.isnan(got), np.isnan(expected)), f"{name}({n}, {shape}, x): {got} {expected}"
            # a recurrence and SciPy's own evaluation agree to a few ulps (relative), absolutely near the roots
            np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-13, equal_nan=True,
                                       err_msg=f"{name}({n}, {shape}, x)")


LPMV_X = np.array([-1.2, -1.0, -0.9, -0.31, 0.0, 0.25, 0.5, 0.99, 1.0, 2.0, np.nan])


@pytest.mark.parametrize("target", TARGETS)
def test_lpmv_values_match_scipy(target):
    for m in (-3, -2, -1, 0, 1, 2, 3, 5):
        for v in (-4, -1, 0, 1, 2, 3, 6, 12):
            with np.errstate(all="ignore"):
                got = compiled_value(bound(S.lpmv, m, v), [LPMV_X], target)
                expected = S.lpmv(m, v, LPMV_X)
            assert np.array_equal(np.isnan(got), np.isnan(expected)), f"lpmv({m}, {v}, x): {got} {expected}"
            finite = np.isfinite(expected)
            scale = np.maximum(1.0, np.abs(expected[finite]).max(initial=1.0))
            np.testing.assert_allclose(got[finite], expected[finite], rtol=1e-13, atol=1e-14 * scale,
                                       err_msg=f"lpmv({m}, {v}, x)")


# ---------------------------------------------------------------- derivatives against central differences
FIRST = [  # (SciPy's function, points, which arguments are traced)
    (S.boxcox, (np.array([0.3, 1.7, 4.4]), np.array([-1.5, 0.4, 2.0])), (0, 1)),
    (S.boxcox, (np.array([0.3, 1.7, 4.4]), np.array([0.0, 0.0, 0.0])), (0, 1)),  # in lambda at 0: the limit
    (S.boxcox1p, (np.array([-0.5, 0.7, 4.4]), np.array([-1.5, 0.0, 2.0])), (0, 1)),
    (S.inv_boxcox, (np.array([-0.3, 0.7, 2.0]), np.array([-0.5, 0.0, 2.0])), (0, 1)),
    (S.inv_boxcox1p, (np.array([-0.3, 0.7, 2.0]), np.array([-0.5, 0.0, 2.0])), (0, 1)),
    (S.powm1, (np.array([0.3, 1.7, 4.4]), np.array([-1.5, 0.4, 2.0])), (0, 1)),
    (S.pseudo_huber, (np.array([0.3, 1.7, 4.4]), np.array([-1.5, 0.4, 2.0])), (0, 1)),
    (S.huber, (np.array([0.3, 1.7, 4.4]), np.array([-1.5, 0.4, 6.0])), (0, 1)),
    (S.cosm1, (np.array([-2.0, 1e-3, 0.7]),), (0,)),
    (S.sindg, (np.array([-100.0, 10.0, 200.0]),), (0,)),
    (S.cosdg, (np.array([-100.0, 10.0, 200.0]),), (0,)),
    (S.tandg, (np.array([-100.0, 10.0, 200.0]),), (0,)),
    (S.ellipk, (np.array([-5.0, -0.3, 0.2, 0.7, 0.999]),), (0,)),
    (S.ellipkm1, (np.array([1e-3, 0.2, 0.7, 3.0]),), (0,)),
    (S.ellipe, (np.array([-5.0, -0.3, 0.2, 0.7, 0.999]),), (0,)),
    (lambda a, x: S.eval_genlaguerre(5, a, x), (np.array([-0.5, 0.3, 2.5]), np.array([0.2, 1.5, 4.0])), (0, 1)),
    (lambda a, x: S.eval_gegenbauer(6, a, x), (np.array([-0.3, 0.5, 2.5]), np.array([-0.8, 0.3, 0.9])), (0, 1)),
    (lambda a, b, x: S.eval_jacobi(5, a, b, x),
     (np.array([-0.5, 0.3, 2.5]), np.array([1.5, -0.2, 0.4]), np.array([-0.8, 0.3, 0.9])), (0, 1, 2)),
    (lambda x: S.eval_legendre(9, x) + S.eval_chebyt(7, x) + S.eval_chebyu(6, x), (np.array([-0.8, 0.3, 1.4]),),
     (0,)),
    (lambda x: S.eval_hermite(6, x) + S.eval_hermitenorm(5, x) + S.eval_laguerre(7, x), (np.array([-1.8, 0.3, 2.4]),),
     (0,)),
    (lambda x: S.lpmv(2, 5, x) + S.lpmv(-1, 3, x) + S.lpmv(0, 4, x), (np.array([-0.8, 0.3, 0.9]),), (0,)),
]


@pytest.mark.parametrize("index", range(len(FIRST)))
def test_first_derivatives_match_central_differences(index):
    fn, args, traced = FIRST[index]
    grads = gradc.grad(summed(fn, len(args)), argnums=traced)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, got in zip(traced, grads):
        np.testing.assert_allclose(got, differences(fn, args, i), rtol=1e-6, atol=1e-8, err_msg=f"argument {i}")


def test_boxcox_derivatives_in_lambda_at_zero_are_the_limits():
    x = np.array([0.3, 1.7, 4.4])
    zero = np.zeros(3)
    first = gradc.grad(lambda x, lam: np.sum(S.boxcox(x, lam)), argnums=1)
    second = gradc.grad(lambda x, lam: np.sum(first(x, lam)), argnums=1)
    np.testing.assert_allclose(first(x, zero), np.log(x) ** 2 / 2, rtol=1e-14)
    np.testing.assert_allclose(second(x, zero), np.log(x) ** 3 / 3, rtol=1e-14)


def test_elliptic_derivatives_have_their_closed_forms():
    m = np.array([-4.0, -0.5, 0.1, 0.5, 0.9, 0.999999])
    expected = (S.ellipe(m) - (1 - m) * S.ellipk(m)) / (2 * m * (1 - m))
    np.testing.assert_allclose(gradc.grad(lambda m: np.sum(S.ellipk(m)))(m), expected, rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(lambda m: np.sum(S.ellipe(m)))(m), (S.ellipe(m) - S.ellipk(m)) / (2 * m),
                               rtol=1e-11)


def test_polynomial_derivatives_have_their_closed_forms():
    x = np.array([-0.9, -0.2, 0.4, 0.8])  # P_n' = n (x P_n - P_{n-1}) / (x^2 - 1); H_n' = 2n H_{n-1}; T_n' = n U_{n-1}
    n = 8
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.eval_legendre(n, x)))(x),
                               n * (x * S.eval_legendre(n, x) - S.eval_legendre(n - 1, x)) / (x * x - 1), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.eval_hermite(n, x)))(x), 2 * n * S.eval_hermite(n - 1, x),
                               rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.eval_chebyt(n, x)))(x), n * S.eval_chebyu(n - 1, x),
                               rtol=1e-12)


SECOND = [
    (lambda x: S.boxcox(x, 0.7), np.array([0.3, 1.7, 4.4])),
    (lambda lam: S.boxcox(2.5, lam), np.array([-1.0, 1e-3, 1.5])),
    (lambda y: S.inv_boxcox1p(y, 0.4), np.array([-0.3, 0.7, 2.0])),
    (lambda m: S.ellipk(m) + S.ellipe(m), np.array([-2.0, 0.3, 0.8])),
    (lambda x: S.eval_jacobi(4, 0.5, 1.5, x) + S.lpmv(1, 4, x), np.array([-0.7, 0.1, 0.6])),
    (lambda a: S.eval_gegenbauer(5, a, 0.4), np.array([0.2, 1.0, 3.0])),
]


@pytest.mark.parametrize("index", range(len(SECOND)))
def test_second_derivatives_match_differences_of_the_first(index):
    f, x = SECOND[index]
    first = gradc.grad(lambda x: np.sum(f(x)))
    second = gradc.grad(lambda x: np.sum(first(x)))(x)
    np.testing.assert_allclose(second, (first(x + 1e-5) - first(x - 1e-5)) / 2e-5, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("target", TARGETS)
def test_c_gradient_matches_numpy_gradient(target):
    def f(x, a):
        return np.sum(S.eval_jacobi(4, a, 0.5, x) * S.ellipk(x * 0.5) + S.boxcox(x + 2.0, a) + S.lpmv(2, 3, x))
    x, a = np.array([-0.6, 0.2, 0.7]), np.array([0.3, 1.1, 2.0])
    value, (gx, ga) = gradc.compile(f, x, a, wrt=(0, 1), target=target)(x, a)
    assert np.isclose(value, f(x, a), rtol=1e-13)
    np.testing.assert_allclose(gx, _gradient_by_differences(f, (x, a), 0), rtol=1e-6)
    np.testing.assert_allclose(ga, _gradient_by_differences(f, (x, a), 1), rtol=1e-6)


def _gradient_by_differences(f, args, which, h=1e-6):
    out = np.empty_like(args[which])
    for i in range(out.size):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[which][i] += h
        down[which][i] -= h
        out[i] = (f(*up) - f(*down)) / (2 * h)
    return out


def _with_lambda(fn, lam):
    return lambda y: fn(y, lam)


def _round_trip(lam):
    return lambda y: S.inv_boxcox(S.boxcox(y, lam), lam)


def test_random_degrees_and_parameters_against_scipy():
    rng = np.random.default_rng(2404)
    for _ in range(40):
        n = int(rng.integers(0, 14))
        a, b = rng.uniform(-0.45, 4.0, 2)
        x = rng.uniform(-1.0, 1.0, 5)
        cases = [(S.eval_jacobi, (n, a, b)), (S.eval_gegenbauer, (n, a)), (S.eval_genlaguerre, (n, a)),
                 (S.eval_legendre, (n,)), (S.eval_chebyt, (n,)), (S.eval_chebyu, (n,))]
        for fn, static in cases:
            got = gradc.jit(bound(fn, *static))(x)
            np.testing.assert_allclose(got, fn(*static, x), rtol=1e-11, atol=1e-12, err_msg=f"{fn.__name__}{static}")
        m = int(rng.integers(-3, 4))
        v = int(rng.integers(0, 9))
        got = gradc.jit(bound(S.lpmv, m, v))(x)
        np.testing.assert_allclose(got, S.lpmv(m, v, x), rtol=1e-11, atol=1e-12, err_msg=f"lpmv({m}, {v})")
        lam, y = rng.uniform(-2.0, 2.0), rng.uniform(0.05, 3.0, 5)
        np.testing.assert_allclose(gradc.jit(_with_lambda(S.boxcox, lam))(y), S.boxcox(y, lam), rtol=1e-14)
        np.testing.assert_allclose(gradc.jit(_round_trip(lam))(y), y, rtol=1e-12)


# ---------------------------------------------------------------- refusals
def test_traced_degree_is_refused_by_name():
    with pytest.raises(TraceError, match=r"eval_legendre: the degree n must be a Python int"):
        gradc.grad(lambda n, x: np.sum(S.eval_legendre(n, x)))(np.float64(2.0), np.ones(2))


def test_fractional_degree_is_refused_by_name():
    with pytest.raises(TraceError, match=r"eval_jacobi: the degree n 2.5 is not an integer"):
        gradc.grad(lambda x: np.sum(S.eval_jacobi(2.5, 0.1, 0.2, x)))(np.ones(2))


def test_traced_lpmv_order_is_refused_and_negative_jacobi_degree_too():
    with pytest.raises(TraceError, match=r"lpmv: the order m must be a Python int"):
        gradc.grad(lambda m, x: np.sum(S.lpmv(m, 2, x)))(np.float64(1.0), np.full(2, 0.5))
    with pytest.raises(TraceError, match=r"eval_jacobi: the degree n must be >= 0"):
        gradc.grad(lambda x: np.sum(S.eval_jacobi(-1, 0.1, 0.2, x)))(np.ones(2))


def test_keyword_out_is_refused_by_name():
    with pytest.raises(TraceError, match=r"scipy.special.boxcox with out= is not supported"):
        gradc.grad(lambda x: np.sum(S.boxcox(x, 0.5, out=np.empty(2))))(np.ones(2))


NDTRI_EXP_Y = np.array([1.0, 0.0, -0.0, -1e-300, -1e-20, -0.1, -0.6931, -0.7, -5.0, -100.0, -699.0, -700.0, -701.0,
                        -745.0, -746.0, -1e4, -1e9, -1e11, -1e300, -np.inf, np.nan])


@pytest.mark.parametrize("target", TARGETS)
def test_ndtri_exp_matches_scipy(target):
    with np.errstate(all="ignore"):
        got, expected = compiled_value(S.ndtri_exp, [NDTRI_EXP_Y], target), S.ndtri_exp(NDTRI_EXP_Y)
    # 2e-14: SciPy's own value at -1e4 is 1.85e-14 off (mpmath, below); absolutely next to the root at -log 2
    np.testing.assert_allclose(got, expected, rtol=2e-14, atol=1e-15, equal_nan=True)
    assert np.array_equal(np.isnan(got), np.isnan(expected))


def test_ndtri_exp_in_the_far_tail_against_mpmath():
    mpmath = pytest.importorskip("mpmath")
    y = np.array([-746.0, -1e4, -1e6])
    got = gradc.jit(S.ndtri_exp)(y)
    with mpmath.workdps(40):
        expected = [float(mpmath.findroot(lambda x, v=v: mpmath.log(mpmath.ncdf(x)) - v, float(g)))
                    for v, g in zip(y, got)]
    np.testing.assert_allclose(got, expected, rtol=2e-15)


def test_ndtri_exp_derivatives_match_differences_in_every_branch():
    y = np.array([-0.1, -3.0, -690.0, -710.0, -2000.0, -1e12])
    got = gradc.grad(lambda y: np.sum(S.ndtri_exp(y)))(y)
    h = 1e-6 * np.abs(y)
    np.testing.assert_allclose(got, (S.ndtri_exp(y + h) - S.ndtri_exp(y - h)) / (2 * h), rtol=1e-6)
    # the exact inverse's: 1 / (d/dx log ndtr(x)) at x = ndtri_exp(y) (where log ndtr(x) + x**2 / 2 cancels
    # no more than ~700 to ~1: 1e-12)
    x = S.ndtri_exp(y[:5])
    np.testing.assert_allclose(got[:5], np.exp(S.log_ndtr(x) + x * x / 2) * np.sqrt(2 * np.pi), rtol=1e-12)
    first = gradc.grad(lambda y: np.sum(S.ndtri_exp(y)))
    second = gradc.grad(lambda y: np.sum(first(y)))(y[:5])
    np.testing.assert_allclose(second, (first(y[:5] + 1e-4) - first(y[:5] - 1e-4)) / 2e-4, rtol=1e-5)


PHI = np.array([-7.0, -2.0, -1.0, -0.0, 0.0, 1e-300, 0.3, 1.0, np.pi / 2, 1.5707, 2.0, 3.5, 10.0, 40.0, np.nan])
M_VALUES = [-5.0, -0.5, 0.0, 1e-300, 0.3, 0.9, 0.999999, 1.0, 1.5, np.nan]


def _elliptic_of_phi(fn, m):
    return lambda phi: fn(phi, m)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", ["ellipkinc", "ellipeinc"])
def test_incomplete_elliptic_values_match_scipy(name, target):
    fn = getattr(S, name)
    for m in M_VALUES:
        with np.errstate(all="ignore"):
            got = compiled_value(_elliptic_of_phi(fn, m), [PHI], target)
            expected = fn(PHI, m)
        # 1e-13: next to m = 1, phi = pi/2 (the logarithmic singularity) both evaluations lose a few digits
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-300, equal_nan=True, err_msg=f"{name}(phi, {m})")
        assert np.array_equal(np.isnan(got), np.isnan(expected))


def test_incomplete_elliptic_derivatives_have_their_closed_forms():
    phi = np.array([-4.0, -0.7, 0.2, 1.0, 1.4, 2.9, 7.0])
    m = np.array([-3.0, 0.1, 0.5, 0.8, 0.95, 0.3, 0.6])
    d_phi_f, d_m_f = gradc.grad(lambda p, m: np.sum(S.ellipkinc(p, m)), argnums=(0, 1))(phi, m)
    d_phi_e, d_m_e = gradc.grad(lambda p, m: np.sum(S.ellipeinc(p, m)), argnums=(0, 1))(phi, m)
    root = np.sqrt(1 - m * np.sin(phi) ** 2)
    np.testing.assert_allclose(d_phi_f, 1 / root, rtol=1e-12)
    np.testing.assert_allclose(d_phi_e, root, rtol=1e-12)
    f, e = S.ellipkinc(phi, m), S.ellipeinc(phi, m)
    # DLMF 19.4.2 (in m = k^2): dE/dm = (E - F) / (2m); dF/dm = (E/(1-m) - F)/(2m) - sin(2 phi)/(4 (1-m) root)
    np.testing.assert_allclose(d_m_e, (e - f) / (2 * m), rtol=1e-11)
    np.testing.assert_allclose(d_m_f, (e / (1 - m) - f) / (2 * m) - np.sin(2 * phi) / (4 * (1 - m) * root), rtol=1e-11)


def test_incomplete_elliptic_second_derivatives():
    phi, m = np.array([0.4, 1.2, 2.5]), np.array([0.2, 0.7, -1.0])
    first = gradc.grad(lambda m: np.sum(S.ellipeinc(phi, m) + S.ellipkinc(phi, m)))
    second = gradc.grad(lambda m: np.sum(first(m)))(m)
    np.testing.assert_allclose(second, (first(m + 1e-5) - first(m - 1e-5)) / 2e-5, rtol=1e-6)


@pytest.mark.parametrize("target", TARGETS)
def test_carlson_forms_and_shifted_polynomials_match_scipy(target):
    rng = np.random.default_rng(2405)
    x, y, z = rng.uniform(0.0, 5.0, (3, 40))
    x[0], y[1], z[2] = 0.0, 0.0, 0.0
    x[3] = y[3] = 0.0  # two zeros: the integral diverges (inf)
    x[4] = -1.0  # negative: NaN
    with np.errstate(all="ignore"):
        got = compiled_value(S.elliprf, [x, y, z], target)
        np.testing.assert_allclose(got, S.elliprf(x, y, z), rtol=2e-15, equal_nan=True)
        z[2] = 1.0
        got = compiled_value(S.elliprd, [x, y, z], target)
        np.testing.assert_allclose(got, S.elliprd(x, y, z), rtol=2e-15, equal_nan=True)
    t = np.linspace(-0.5, 1.5, 11)
    for fn, scale in [(S.eval_sh_legendre, 1.0), (S.eval_sh_chebyt, 1.0), (S.eval_sh_chebyu, 1.0),
                      (S.eval_chebyc, 4.0), (S.eval_chebys, 4.0)]:
        for n in (0, 1, 4, 9):
            got = compiled_value(bound(fn, n), [t * scale], target)
            np.testing.assert_allclose(got, fn(n, t * scale), rtol=1e-13, atol=1e-13, err_msg=f"{fn.__name__}({n})")


def test_carlson_form_derivatives_match_differences():
    x, y, z = np.array([0.3, 1.0, 2.5]), np.array([1.2, 0.4, 3.0]), np.array([2.0, 0.9, 0.5])
    for fn in (S.elliprf, S.elliprd):
        grads = gradc.grad(summed(fn, 3), argnums=(0, 1, 2))(x, y, z)
        for i, got in enumerate(grads):
            np.testing.assert_allclose(got, differences(fn, (x, y, z), i), rtol=1e-6, err_msg=f"{fn.__name__} {i}")


def test_degree_tangents_are_exact_at_45_and_keep_their_derivative():
    x = np.array([-225.0, -135.0, -45.0, 45.0, 135.0, 225.0, 405.0])
    for target in ["numpy", *(["c"] if HAS_CC else [])]:
        assert np.array_equal(compiled_value(S.tandg, [x], target), S.tandg(x))
        assert np.array_equal(compiled_value(S.cotdg, [x], target), S.cotdg(x))
    d2r = np.pi / 180  # d/dx tan(x deg) = (pi/180) / cos(x deg)**2 = 2 pi/180 at the odd multiples of 45
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.tandg(x)))(x), np.full(7, 2 * d2r), rtol=1e-14)
    np.testing.assert_allclose(gradc.grad(lambda x: np.sum(S.cotdg(x)))(x), np.full(7, -2 * d2r), rtol=1e-14)


FLOAT32_CASES = {  # SciPy's result dtypes for float32 input: its loops' (integer degrees give float64)
    "eval_legendre": lambda x: S.eval_legendre(3, x), "eval_hermite": lambda x: S.eval_hermite(3, x),
    "eval_chebyc": lambda x: S.eval_chebyc(2, x), "eval_sh_legendre": lambda x: S.eval_sh_legendre(2, x),
    "eval_jacobi": lambda x: S.eval_jacobi(3, 0.5, 0.5, x), "lpmv": lambda x: S.lpmv(1, 3, x),
    "boxcox": lambda x: S.boxcox(x, 0.5), "boxcox_traced_lambda": lambda x: S.boxcox(2.0, x),
    "inv_boxcox1p": lambda x: S.inv_boxcox1p(x, 0.5), "powm1": lambda x: S.powm1(x, 0.5),
    "huber": lambda x: S.huber(1.0, x), "pseudo_huber": lambda x: S.pseudo_huber(1.0, x),
    "elliprf": lambda x: S.elliprf(x, x, 1.0), "elliprd": lambda x: S.elliprd(x, x, 1.0), "ellipk": S.ellipk,
    "ellipeinc": lambda x: S.ellipeinc(0.5, x), "ndtri_exp": lambda x: S.ndtri_exp(-x), "sindg": S.sindg,
}


@pytest.mark.parametrize("name", sorted(FLOAT32_CASES))
def test_float32_input_gives_scipys_dtype(name):
    fn = FLOAT32_CASES[name]
    x = np.array([0.3, 0.6], np.float32)
    got, expected = gradc.jit(fn)(x), fn(x)
    assert got.dtype == expected.dtype
    np.testing.assert_allclose(got, expected, rtol=2e-6)


SCALAR_CASES = [  # a traced scalar next to Python numbers in every position
    (lambda lam: S.boxcox(2.0, lam), 0.5), (lambda x: S.eval_legendre(3, x), 0.3),
    (lambda a: S.eval_jacobi(2, a, 1.0, 0.3), 0.5), (lambda a: S.eval_gegenbauer(2, a, 0.3), 0.5),
    (lambda a: S.eval_genlaguerre(2, a, 0.3), 0.5), (lambda m: S.ellipkinc(0.7, m), 0.5),
    (lambda x: S.lpmv(1, 2, x), 0.5), (lambda z: S.elliprf(1.0, 2.0, z), 0.5), (lambda m: S.ellipe(m), 0.3),
]


@pytest.mark.parametrize("index", range(len(SCALAR_CASES)))
def test_scalar_arguments_with_python_numbers(index):
    f, a = SCALAR_CASES[index]
    np.testing.assert_allclose(gradc.grad(f)(a), (f(a + 1e-6) - f(a - 1e-6)) / 2e-6, rtol=1e-6)
