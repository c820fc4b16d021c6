"""NumPy's elementwise math and SciPy's special functions and distributions: values against SciPy and NumPy
(special values included), second derivatives against finite differences of SciPy's own first derivatives
or closed forms, the refusals, and what the emitted modules import."""
from __future__ import annotations

import numpy as np
import op_cases  # noqa: F401  (first: it merges op_cases_special)
import pytest
import scipy.linalg
import scipy.special
import scipy.stats

import gradc
from gradc.errors import TraceError

RNG = np.random.default_rng(7)


def forward(fn, *args):
    """``fn``'s value as the emitted NumPy code computes it."""
    return gradc.compile(fn, *args, mode="vjp").forward(*args)


def second_derivative_by_differences(first, x, h=1e-5):
    return (first(x + h) - first(x - h)) / (2 * h)


def check_second_order(f, first, x, rtol=1e-6):
    """grad(f) equals ``first`` (SciPy's or a closed form), grad(grad(f)) the differences of ``first``."""
    d1 = gradc.grad(f)
    d2 = gradc.grad(gradc.grad(f))
    assert abs(d1(x) - first(x)) <= 1e-10 * (1 + abs(first(x))), (d1(x), first(x))
    expected = second_derivative_by_differences(first, x)
    assert abs(d2(x) - expected) <= rtol * (1 + abs(expected)), (d2(x), expected)


# ---------------------------------------------------------------- second order
SECOND_ORDER = {
    # SciPy's own first derivatives: gammaln' = digamma, digamma' = polygamma(1), polygamma(n)' = polygamma(n+1)
    "gammaln": (lambda x: scipy.special.gammaln(x), scipy.special.digamma, 1.7),
    "digamma": (lambda x: scipy.special.digamma(x), lambda x: scipy.special.polygamma(1, x), 0.8),
    "polygamma_2": (lambda x: scipy.special.polygamma(2, x), lambda x: scipy.special.polygamma(3, x), 2.3),
    "gamma": (lambda x: scipy.special.gamma(x), lambda x: scipy.special.gamma(x) * scipy.special.digamma(x), 2.6),
    "loggamma": (lambda x: scipy.special.loggamma(x), scipy.special.digamma, 3.1),
    "expit": (lambda x: scipy.special.expit(x), lambda x: scipy.special.expit(x) * scipy.special.expit(-x), -0.7),
    "log_expit": (lambda x: scipy.special.log_expit(x), lambda x: scipy.special.expit(-x), 1.3),
    "logit": (lambda x: scipy.special.logit(x), lambda x: 1.0 / (x * (1.0 - x)), 0.35),
    "ndtr": (lambda x: scipy.special.ndtr(x), lambda x: scipy.stats.norm.pdf(x), 0.4),
    "log_ndtr": (lambda x: scipy.special.log_ndtr(x), lambda x: scipy.stats.norm.pdf(x) / scipy.special.ndtr(x), -3.0),
    # closed forms, evaluated with SciPy
    "erf": (lambda x: scipy.special.erf(x), lambda x: 2 / np.sqrt(np.pi) * np.exp(-x * x), 0.6),
    "erfc": (lambda x: scipy.special.erfc(x), lambda x: -2 / np.sqrt(np.pi) * np.exp(-x * x), -0.3),
    "erfinv": (lambda x: scipy.special.erfinv(x),
               lambda x: np.sqrt(np.pi) / 2 * np.exp(scipy.special.erfinv(x) ** 2), 0.45),
    "erfcinv": (lambda x: scipy.special.erfcinv(x),
                lambda x: -np.sqrt(np.pi) / 2 * np.exp(scipy.special.erfcinv(x) ** 2), 1.3),
    "ndtri": (lambda x: scipy.special.ndtri(x), lambda x: 1.0 / scipy.stats.norm.pdf(scipy.special.ndtri(x)), 0.7),
    "xlogy_in_y": (lambda y: scipy.special.xlogy(1.5, y), lambda y: 1.5 / y, 0.8),
    "entr": (lambda x: scipy.special.entr(x), lambda x: -np.log(x) - 1.0, 0.4),
    "arcsin": (lambda x: np.arcsin(x), lambda x: 1 / np.sqrt(1 - x * x), 0.55),
    "arccosh": (lambda x: np.arccosh(x), lambda x: 1 / np.sqrt(x * x - 1), 1.6),
    "arctanh": (lambda x: np.arctanh(x), lambda x: 1 / (1 - x * x), -0.4),
    "cbrt": (lambda x: np.cbrt(x), lambda x: 1 / (3 * np.cbrt(x) ** 2), -1.7),
    "sinc": (lambda x: np.sinc(x), lambda x: (np.cos(np.pi * x) - np.sinc(x)) / x, 0.37),
    "log2": (lambda x: np.log2(x), lambda x: 1 / (x * np.log(2)), 2.2),
    "exp2": (lambda x: np.exp2(x), lambda x: np.exp2(x) * np.log(2), 0.9),
}


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_derivative_against_scipys_first(name):
    f, first, x = SECOND_ORDER[name]
    check_second_order(f, first, x)


def test_betaln_second_derivatives_against_digamma():
    def f(a, b):
        return scipy.special.betaln(a, b)

    a, b, h = 1.3, 2.4, 1e-5
    psi = scipy.special.digamma
    d_a = gradc.grad(f, wrt=0)
    assert abs(d_a(a, b) - (psi(a) - psi(a + b))) < 1e-12
    expected_aa = (psi(a + h) - psi(a + h + b) - psi(a - h) + psi(a - h + b)) / (2 * h)
    expected_ab = (psi(a) - psi(a + b + h) - psi(a) + psi(a + b - h)) / (2 * h)
    assert abs(gradc.grad(d_a, wrt=0)(a, b) - expected_aa) < 1e-6 * (1 + abs(expected_aa))
    assert abs(gradc.grad(d_a, wrt=1)(a, b) - expected_ab) < 1e-6 * (1 + abs(expected_ab))


def test_logsumexp_gradient_is_scipys_softmax_and_its_hessian_the_differences():
    def f(a):
        return scipy.special.logsumexp(a)

    a = RNG.standard_normal(4)
    np.testing.assert_allclose(gradc.grad(f)(a), scipy.special.softmax(a), rtol=1e-12)
    h = 1e-5
    expected = np.stack([(scipy.special.softmax(a + h * e) - scipy.special.softmax(a - h * e)) / (2 * h)
                         for e in np.eye(4)])
    df = gradc.grad(f)
    hessian = np.stack([gradc.grad(lambda v, e=e: df(v) @ e)(a) for e in np.eye(4)])
    np.testing.assert_allclose(hessian, expected, rtol=1e-6, atol=1e-9)


def test_norm_logpdf_gradient_in_loc_and_scale():
    def f(x, mu, sigma):
        return np.sum(scipy.stats.norm.logpdf(x, loc=mu, scale=sigma))

    x, mu, sigma = RNG.standard_normal(5), 0.3, 1.7
    g_mu, g_sigma = gradc.grad(f, wrt=(1, 2))(x, mu, sigma)
    z = (x - mu) / sigma
    assert abs(g_mu - np.sum(z / sigma)) < 1e-12
    assert abs(g_sigma - np.sum((z * z - 1) / sigma)) < 1e-12


# ---------------------------------------------------------------- values, special values included
SPECIAL_VALUES = np.array([-np.inf, -2.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 1.5, 2.5, np.inf, np.nan])

UNARY_NUMPY = ["arcsin", "arccos", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "cbrt", "rint", "ceil",
               "trunc", "fix", "isnan", "isinf", "isfinite", "signbit", "deg2rad", "rad2deg", "sinc", "nan_to_num"]
UNARY_SCIPY = ["erf", "erfc", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "gammaln", "loggamma", "gamma",
               "digamma", "expit", "logit", "log_expit", "entr"]


@pytest.mark.parametrize("name", UNARY_NUMPY + UNARY_SCIPY)
def test_unary_values_match_numpy_and_scipy(name):
    module = np if name in UNARY_NUMPY else scipy.special
    fn = getattr(module, name)
    with np.errstate(all="ignore"):
        expected = fn(SPECIAL_VALUES)
        actual = forward(lambda x: fn(x), SPECIAL_VALUES)
    np.testing.assert_array_equal(actual, expected)


BINARY = [(np, "arctan2"), (np, "hypot"), (np, "logaddexp2"), (np, "fmax"), (np, "fmin"), (np, "copysign"),
          (np, "mod"), (np, "fmod"), (np, "floor_divide"), (np, "float_power"), (scipy.special, "xlogy"),
          (scipy.special, "xlog1py"), (scipy.special, "rel_entr"), (scipy.special, "kl_div"),
          (scipy.special, "betaln"), (scipy.special, "beta")]


@pytest.mark.parametrize("module, name", BINARY, ids=[n for _, n in BINARY])
def test_binary_values_match_numpy_and_scipy(module, name):
    fn = getattr(module, name)
    x, y = np.meshgrid(SPECIAL_VALUES, SPECIAL_VALUES)
    with np.errstate(all="ignore"):
        expected = fn(x, y)
        actual = forward(lambda a, b: fn(a, b), x, y)
    np.testing.assert_allclose(actual, expected, rtol=1e-15, atol=0)


def rounding(decimals):
    return lambda a: np.round(a, decimals)


def test_round_and_divmod_match_numpy():
    x = np.array([0.5, 1.5, 2.5, -0.5, 2.675, -1.005, 1234.5])
    for decimals in (0, 2, -1):
        np.testing.assert_array_equal(forward(rounding(decimals), x), np.round(x, decimals))
    y = np.array([0.7, -1.3, 2.0, 0.5, -0.25, 3.0, 7.0])
    q, r = forward(lambda a, b: np.divmod(a, b), x, y)
    np.testing.assert_array_equal(q, np.floor_divide(x, y))
    np.testing.assert_array_equal(r, np.mod(x, y))


def test_nan_to_num_passes_gradient_only_where_finite():
    x = np.array([1.0, np.nan, np.inf, -np.inf, -2.0])
    f = gradc.compile(lambda a: np.sum(np.nan_to_num(a, posinf=5.0, neginf=-7.0) * 3.0), x)
    value, grad = f.value_and_grad(x)
    assert value == np.sum(np.nan_to_num(x, posinf=5.0, neginf=-7.0) * 3.0)
    np.testing.assert_array_equal(grad, [3.0, 0.0, 0.0, 0.0, 3.0])


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), ((0, 1), False)])
def test_logsumexp_softmax_match_scipy(axis, keepdims):
    a = RNG.standard_normal((3, 4))
    a[0, 0] = -np.inf
    b = RNG.uniform(0.5, 2.0, (1, 4))
    f = forward(lambda x, w: scipy.special.logsumexp(x, axis=axis, b=w, keepdims=keepdims), a, b)
    np.testing.assert_allclose(f, scipy.special.logsumexp(a, axis=axis, b=b, keepdims=keepdims),
                               rtol=1e-14)
    s = forward(lambda x: scipy.special.softmax(x, axis=axis), a)
    np.testing.assert_allclose(s, scipy.special.softmax(a, axis=axis), rtol=1e-14, atol=1e-300)
    ls = forward(lambda x: scipy.special.log_softmax(x, axis=axis), a)
    np.testing.assert_allclose(ls, scipy.special.log_softmax(a, axis=axis), rtol=1e-14)


def test_multigammaln_matches_scipy():
    a = np.array([2.5, 3.0, 7.25])
    f = forward(lambda x: scipy.special.multigammaln(x, 4), a)
    np.testing.assert_allclose(f, scipy.special.multigammaln(a, 4), rtol=1e-14)


DISTRIBUTIONS = [
    ("norm", ()), ("t", (3.5,)), ("gamma", (2.2,)), ("beta", (1.5, 2.5)), ("expon", ()), ("laplace", ()),
    ("cauchy", ()),
]


def distribution_method(dist, method, shapes):
    return lambda v: getattr(dist, method)(v, *shapes, loc=0.1, scale=0.8)


@pytest.mark.parametrize("name, shapes", DISTRIBUTIONS, ids=[n for n, _ in DISTRIBUTIONS])
def test_distributions_match_scipy_stats(name, shapes):
    from gradc.ops.special_stats import METHODS

    dist = getattr(scipy.stats, name)
    x = np.array([-1.5, -0.2, 0.0, 0.3, 0.5, 0.9, 2.5])
    for method in METHODS[name]:
        with np.errstate(all="ignore"):
            f = forward(distribution_method(dist, method, shapes), x)
            expected = getattr(dist, method)(x, *shapes, loc=0.1, scale=0.8)
        np.testing.assert_allclose(f, expected, rtol=1e-12, atol=1e-300, err_msg=f"{name}.{method}")


def test_frozen_distribution_and_untraced_calls_are_scipys():
    def f(x, mu):
        return np.sum(scipy.stats.norm(mu, 2.0).logpdf(x))

    x = RNG.standard_normal(3)
    assert abs(gradc.compile(f, x, 0.5).forward(x, 0.5) - f(x, 0.5)) < 1e-12
    g = gradc.grad(f, wrt=1)(x, 0.5)
    assert abs(g - np.sum((x - 0.5) / 4.0)) < 1e-12
    assert scipy.stats.norm.ppf(0.5) == 0.0  # SciPy's object is untouched outside tracing


# ---------------------------------------------------------------- refusals
def _refused(fn, *args, match):
    with pytest.raises(TraceError, match=match):
        gradc.grad(fn)(*args)


def test_logsumexp_return_sign_is_refused():
    _refused(lambda x: scipy.special.logsumexp(x, return_sign=True)[0], np.ones(3), match="return_sign=True")


def test_polygamma_order_must_be_static():
    _refused(lambda x: np.sum(scipy.special.polygamma(x[0], x)), np.ones(3), match="must be a Python int")
    _refused(lambda x: np.sum(scipy.special.polygamma(-1, x)), np.ones(3), match="non-negative int")
    _refused(lambda x: np.sum(scipy.special.multigammaln(x, 0)), np.ones(3) * 3, match="at least 1")


def test_unsupported_distribution_method_is_named():
    _refused(lambda x: np.sum(scipy.stats.t.entropy(x)), np.ones(2), match=r"scipy\.stats\.t\.entropy is not supported")
    _refused(lambda x: np.sum(scipy.stats.norm.logpdf(x, 0, 1, 2)), np.ones(2), match="at most 3 arguments")


def test_ufunc_keywords_are_refused():
    _refused(lambda x: np.sum(scipy.special.erf(x, out=np.empty(2))), np.ones(2), match="erf with out=")
    _refused(lambda x: np.sum(np.round(x, out=np.empty(2))), np.ones(2), match="np.round with out=")


# ---------------------------------------------------------------- emitted code
def test_emitted_module_imports_only_the_scipy_subpackages_it_uses():
    x = np.array([0.3, 0.6])
    plain = gradc.compile(lambda v: np.sum(np.arcsin(v) * np.hypot(v, 1.0)), x).source
    assert "scipy" not in plain and "np.arcsin(" in plain and "np.hypot(" in plain
    special = gradc.compile(lambda v: np.sum(scipy.special.erf(v) + scipy.special.gammaln(v)), x).source
    assert "import scipy.special\n" in special and "scipy.linalg" not in special
    assert "scipy.special.digamma(" in special  # gammaln's derivative
    a = np.array([[2.0, 0.0], [1.0, 3.0]])
    both = gradc.compile(lambda m: np.sum(scipy.special.expit(scipy.linalg.solve_triangular(m, x, lower=True))),
                         a).source
    assert "import scipy.linalg\nimport scipy.special\n" in both


def test_all_scalar_code_uses_math():
    source = gradc.compile(lambda v: np.arcsin(v) + scipy.special.erf(v) + np.log2(v), 0.4).source
    fast = source[:source.index("\ndef _lambda__numpy(")]  # NumPy only in the twins, for where Python raises
    assert "np." not in fast.replace("_numpy(", "") and "asin(" in fast and "erf(" in fast and "log2(" in fast


def _elsewhere(source):
    """A function defined in another namespace (another module, for gradc's routing by name)."""
    namespace = {"scipy": scipy, "np": np}
    exec(source, namespace)
    return namespace["helper"]


def test_scipy_functions_work_from_other_modules():
    """A helper of another module is captured as the traced function is: SciPy's ufuncs and its functions
    (scipy.special.logsumexp, a Python function in SciPy) both reach gradc's rules."""
    helper = _elsewhere("def helper(x):\n    return scipy.special.erf(x)\n")
    x = np.array([0.2, -0.4])
    np.testing.assert_allclose(gradc.grad(lambda v: np.sum(helper(v)))(x), 2 / np.sqrt(np.pi) * np.exp(-x * x),
                               rtol=1e-14)
    other = _elsewhere("def helper(x):\n    return scipy.special.logsumexp(x)\n")
    np.testing.assert_allclose(gradc.grad(lambda v: other(v))(x), np.exp(x) / np.sum(np.exp(x)), rtol=1e-14)


def test_fmax_fmin_pass_the_gradient_past_a_nan():
    x, y = np.array([1.0, np.nan, 2.0, 3.0]), np.array([np.nan, 1.0, 2.0, 4.0])
    gx, gy = gradc.grad(lambda a, b: np.sum(np.fmax(a, b)), wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.5, 0.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.5, 1.0])
    gx, gy = gradc.grad(lambda a, b: np.sum(np.fmin(a, b)), wrt=(0, 1))(x, y)
    np.testing.assert_array_equal(gx, [1.0, 0.0, 0.5, 1.0])
    np.testing.assert_array_equal(gy, [0.0, 1.0, 0.5, 0.0])


def test_mod_and_floor_division_operators_on_traced_values():
    x = np.array([0.3, 1.7, 2.2, -1.2])

    def f(v):
        return np.sum((v % 1.0) * 2.0 + (3.0 // v) * v + (7.0 % v))

    assert abs(gradc.compile(f, x).forward(x) - f(x)) < 1e-12
    # d/dv: 2 from v % 1, floor(3 / v) (floor_divide is piecewise constant), -floor(7 / v) from 7 - v floor(7 / v)
    np.testing.assert_allclose(gradc.grad(f)(x), 2.0 + np.floor(3.0 / x) - np.floor(7.0 / x), rtol=1e-14)
