"""The ways users call ``scipy.stats``: positional and keyword loc/scale, frozen distributions made inside the
traced function (traced parameters) and outside it (constants), ``from scipy.stats import norm`` and
``import scipy.stats as st``; multivariate_normal (covariance as matrix, diagonal, scalar) and dirichlet."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.special
import scipy.stats
import scipy.stats as st
from distribution_cases import central_differences
from scipy.stats import dirichlet, multivariate_normal, norm

import gradc

RNG = np.random.default_rng(24)
X = RNG.standard_normal(5)
PRIOR = norm(0.5, 2.0)  # frozen with constants, outside the traced function
GAMMA_PRIOR = st.gamma(2.0, scale=1.5)
MVN = multivariate_normal(np.zeros(2), np.array([[2.0, 0.3], [0.3, 1.0]]))


def _agrees(f, *args, wrt=None):
    """Value and gradient (every argument by default) equal to SciPy's value and its central differences."""
    wrt = tuple(range(len(args))) if wrt is None else wrt
    value, grads = gradc.compile(f, *args, argnums=wrt).value_and_grad(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for g, i in zip(grads, wrt):
        np.testing.assert_allclose(g, central_differences(f, list(args), i), rtol=1e-6, atol=1e-7)


def test_positional_and_keyword_loc_scale_agree():
    def positional(x, mu, s):
        return np.sum(scipy.stats.norm.logpdf(x, mu, s))

    def keywords(x, mu, s):
        return np.sum(scipy.stats.norm.logpdf(x=x, scale=s, loc=mu))

    def shape_keyword(x, df, mu, s):
        return np.sum(scipy.stats.t.logpdf(x, df=df, loc=mu, scale=s))

    _agrees(positional, X, 0.3, 1.7)
    _agrees(keywords, X, 0.3, 1.7)
    _agrees(shape_keyword, X, 4.5, 0.3, 1.7)


def test_imported_names_and_module_alias_reach_the_same_code():
    def from_import(x, s):
        return np.sum(norm.logcdf(x, scale=s))

    def alias(x, s):
        return np.sum(st.norm.logcdf(x, scale=s))

    _agrees(from_import, X, 1.4)
    _agrees(alias, X, 1.4)
    def body(fn):
        return gradc.compile(fn, X, 1.4).source.replace(fn.__name__, "f")

    assert body(from_import) == body(alias)


def test_frozen_inside_with_traced_parameters():
    def f(x, mu, s):
        return np.sum(norm(mu, s).logpdf(x)) + np.sum(st.gamma(2.5, scale=s).logsf(x * x))

    def shape_only(x, df):
        return np.sum(scipy.stats.t(df).cdf(x))

    _agrees(f, X, 0.2, 1.3)
    _agrees(shape_only, X, 3.0, wrt=(0,))


def test_frozen_outside_with_constants():
    def f(x):
        return np.sum(PRIOR.logpdf(x)) + np.sum(GAMMA_PRIOR.logpdf(x * x + 0.1)) + np.sum(PRIOR.ppf(0.3 + 0 * x))

    _agrees(f, X)
    assert PRIOR.logpdf(0.5) == norm.logpdf(0.5, 0.5, 2.0)  # SciPy's objects are untouched


def test_frozen_methods_gradc_lacks_go_to_scipy_when_nothing_is_traced():
    def f(x):
        return x * PRIOR.mean() + norm(1.0, 2.0).std()

    assert gradc.grad(f)(0.3) == 0.5


@pytest.mark.parametrize("cov", [np.array([[2.0, 0.3, 0.1], [0.3, 1.0, -0.2], [0.1, -0.2, 1.5]]),
                                 np.array([2.0, 1.0, 0.5]), 1.7], ids=["matrix", "diagonal", "scalar"])
def test_multivariate_normal_logpdf_in_x_mean_and_cov(cov):
    x = RNG.standard_normal((4, 3))
    mean = RNG.standard_normal(3)

    def f(x, mean, cov):
        return np.sum(multivariate_normal.logpdf(x, mean, cov) * np.array([1.0, 0.5, 2.0, 1.5]))

    _agrees(f, x, mean, cov)


def test_multivariate_normal_upper_triangle_does_not_matter_as_in_scipy():
    cov = np.array([[2.0, 0.3], [0.3, 1.0]])

    def f(c):
        return multivariate_normal.logpdf(np.array([0.4, -0.2]), np.zeros(2), c)

    g = gradc.grad(f)(cov)
    np.testing.assert_allclose(g, central_differences(f, [cov], 0), rtol=1e-6, atol=1e-8)
    assert g[0, 1] == 0.0


def test_multivariate_normal_forms():
    x = RNG.standard_normal((6, 2))

    def one_point(x0, mean):
        return multivariate_normal(mean=mean, cov=np.eye(2)).pdf(x0)

    def default_mean(x):
        return np.sum(st.multivariate_normal.logpdf(x, cov=np.array([[1.0, 0.2], [0.2, 2.0]])))

    def frozen_outside(x):
        return np.sum(MVN.logpdf(x))

    def one_dimensional(x, m, v):
        return np.sum(multivariate_normal.logpdf(x, m, v))

    _agrees(one_point, x[0], np.array([0.1, -0.3]))
    _agrees(default_mean, x)
    _agrees(frozen_outside, x)
    _agrees(one_dimensional, X, 0.3, 2.0)
    out = gradc.compile(lambda v: multivariate_normal.logpdf(v, np.zeros(2), np.eye(2)), x, mode="vjp").forward(x)
    assert out.shape == (6,)


def test_dirichlet_logpdf_and_pdf():
    alpha = np.array([1.5, 2.0, 3.5])
    x = RNG.dirichlet(alpha, 4).T  # (K, N), as SciPy takes it

    def f(x, alpha):
        return np.sum(dirichlet.logpdf(x, alpha) * np.array([1.0, 2.0, 0.5, 1.5]))

    def g(x, alpha):
        return dirichlet(alpha).pdf(x)

    def short(x, alpha):
        return np.sum(dirichlet.logpdf(x, alpha))

    _agrees(f, x, alpha, wrt=(1,))  # in x, SciPy's differences would leave the simplex: the closed form
    np.testing.assert_allclose(gradc.grad(f)(x, alpha), (alpha[:, None] - 1) / x * np.array([1.0, 2.0, 0.5, 1.5]),
                               rtol=1e-12)
    _agrees(g, x[:, 0], alpha, wrt=(1,))
    _agrees(short, x[:2], alpha)  # K - 1 components: the last is one minus their sum


def test_discrete_forms():
    k = np.array([0.0, 1.0, 3.0, 6.0])

    def f(mu, p):
        return (np.sum(scipy.stats.poisson.logpmf(k, mu)) + np.sum(scipy.stats.binom(8, p).pmf(k))
                + np.sum(scipy.stats.poisson.cdf(k, mu=mu)) + np.sum(scipy.stats.geom.logsf(k + 1, p))
                + np.sum(scipy.stats.nbinom.logpmf(k, 3.5, p)) + np.sum(scipy.stats.binom.sf(k, 8, p, loc=1)))

    _agrees(f, 2.5, 0.35)


def test_c_target_multivariate_and_frozen():
    from gradc.backends.c import build as c_build
    if c_build.find_compiler() is None:
        pytest.skip("no C compiler")
    x = RNG.standard_normal((4, 2))
    cov = np.array([[1.5, 0.4], [0.4, 1.0]])

    def f(x, mean, cov, s):
        return np.sum(multivariate_normal.logpdf(x, mean, cov)) + np.sum(norm(mean[0], s).logcdf(x))

    args = (x, np.array([0.1, 0.2]), cov, 1.3)
    c = gradc.compile(f, *args, argnums=(0, 1, 2, 3), target="c")
    value, grads = c.value_and_grad(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    for g, i in zip(grads, range(4)):
        np.testing.assert_allclose(g, central_differences(f, list(args), i), rtol=1e-6, atol=1e-7)


def test_multivariate_normal_singular_covariance_as_scipy():
    cov = np.diag((1.0, 1.0, 0.0, 0.0))
    x = np.concatenate((RNG.standard_normal(2), np.zeros(2)))
    mean = np.concatenate((RNG.standard_normal(2), np.zeros(2)))

    def f(x, mean, cov):
        return multivariate_normal.logpdf(x, mean, cov, allow_singular=True)

    value, (gx, gm) = gradc.compile(f, x, mean, cov, argnums=(0, 1)).value_and_grad(x, mean, cov)
    assert abs(value - f(x, mean, cov)) < 1e-12
    with np.errstate(invalid="ignore"):  # differences off the support (the last two coordinates) are -inf - -inf
        for g, i in ((gx, 0), (gm, 1)):
            np.testing.assert_allclose(g[:2], central_differences(f, [x, mean, cov], i)[:2], rtol=1e-6)
    off = x + np.array([0.0, 0.0, 0.0, 0.5])  # a deviation where the covariance has no spread
    assert gradc.compile(f, off, mean, cov, mode="vjp").forward(off, mean, cov) == f(off, mean, cov) == -np.inf
    a = RNG.standard_normal((3, 3))
    spd = a @ a.T + np.eye(3)
    _agrees(lambda x, c: np.sum(multivariate_normal.logpdf(x, np.zeros(3), c, True)), RNG.standard_normal((4, 3)),
            spd)


def test_multivariate_normal_entropy():
    a = RNG.standard_normal((3, 3))

    def f(mean, cov):
        return multivariate_normal.entropy(mean, cov)

    def g(v):
        return st.multivariate_normal(np.zeros(2), v).entropy()

    _agrees(f, np.zeros(3), a @ a.T + np.eye(3), wrt=(1,))
    _agrees(g, np.array([1.5, 0.5]))


def test_broadcast_arguments_as_autograd_tests_them():
    x, loc, scale = RNG.standard_normal((4, 3)), RNG.standard_normal((1, 3)), RNG.uniform(0.5, 2.0, (4, 1))

    def f(x, loc, scale):
        return np.sum(scipy.stats.norm.logcdf(x, loc, scale) + scipy.stats.t.logpdf(x, 3.5, loc, scale))

    def g(x, df):
        return np.sum(scipy.stats.t.logpdf(x, df))

    _agrees(f, x, loc, scale)
    _agrees(g, x, RNG.uniform(2.0, 5.0, (1, 3)))


def _closure_with_frozen():
    prior = st.laplace(0.2, 1.5)  # made outside the traced function, seen through a closure cell

    def f(x):
        return np.sum(prior.logpdf(x)) + np.sum(prior.cdf(x))
    return f


def test_frozen_in_a_closure_and_lists_of_traced_values():
    _agrees(_closure_with_frozen(), X)

    def f(a, b):
        return np.sum(norm.logpdf([a, b, 1.0], loc=[0.0, a, b]))

    _agrees(f, 0.3, -0.4)


LOGPDF = scipy.stats.t.logpdf  # a bound method kept in a variable (as a test harness passes SciPy's functions)
FROZEN_LOGCDF = norm(0.5, 2.0).logcdf


def _check_all(fun):
    def f(x, a):
        return np.sum(fun(x, a))
    return f


def test_bound_methods_kept_in_variables_and_closures():
    x = np.array([1.2, 2.5, 3.1])
    _agrees(_check_all(scipy.stats.chi2.pdf), x, 3.0, wrt=(0,))
    _agrees(_check_all(scipy.stats.gamma.logpdf), x, 2.5)
    _agrees(_check_all(multivariate_normal.logpdf), RNG.standard_normal((3, 2)), np.array([0.2, -0.1]))

    def f(x, df):
        return np.sum(LOGPDF(x, df)) + np.sum(FROZEN_LOGCDF(x))  # a frozen one's: its parameters fixed

    _agrees(f, x, 4.0)


def test_a_distribution_method_passed_to_a_transform_itself():
    assert gradc.grad(scipy.stats.norm.logpdf)(0.3) == -0.3
    g = gradc.grad(scipy.stats.t.logcdf, argnums=(0, 2))(0.3, 3.0, 0.1)
    hazard = scipy.stats.t.pdf(0.3, 3.0, 0.1) / scipy.stats.t.cdf(0.3, 3.0, 0.1)
    np.testing.assert_allclose(g, [hazard, -hazard], rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(norm(1.0, 2.0).logpdf)(0.3), 0.7 / 4.0, rtol=1e-14)
    np.testing.assert_allclose(gradc.grad(scipy.stats.poisson.logpmf, argnums=1)(3.0, 2.0), 0.5, rtol=1e-14)
    np.testing.assert_allclose(gradc.grad(multivariate_normal.logpdf, argnums=1)(np.ones(2), np.zeros(2), np.eye(2)),
                               [1.0, 1.0], rtol=1e-14)
    with pytest.raises(gradc.GradcError, match=r"scipy\.stats\.moyal\.logpdf is not supported.*forms\.py:\d+"):
        gradc.grad(scipy.stats.moyal.logpdf)(0.3)


def test_a_nested_helper_calling_scipy_is_routed():
    def outer():
        def density(x, mu):
            return scipy.stats.norm.logcdf(x, mu) + scipy.special.log_ndtr(x)
        return density

    density = outer()

    def f(x, mu):
        return np.sum(density(x, mu))

    _agrees(lambda x, mu: np.sum(density(x, mu)), X, 0.2)
    _agrees(f, X, 0.2)
