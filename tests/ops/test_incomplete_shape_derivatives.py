"""Derivatives of ``scipy.special.gammainc``/``gammaincc``/``betainc`` and their inverses in the shape parameters.

References: mpmath's numerical derivative of its own incomplete gamma/beta (50 digits, 140 in the far tails) on
a grid that includes the hard regions (tiny and large shape parameters, ``x`` near the switch ``a + 1`` and near
the mean, far tails), and central differences of SciPy's functions on seeded random points; both targets
(emitted NumPy and C).
"""
from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest
import scipy.special as S

import gradc
from gradc.errors import TraceError

GAMMA_A = [1e-3, 0.1, 0.5, 1.0, 2.5, 10.0, 50.0, 300.0, 3000.0]
BETA_AB = [1e-3, 0.3, 4.0, 60.0, 500.0]
BETA_X = [1e-4, 0.1, 0.5, 0.9, 0.9999]


def _gamma_grid():
    a, x = [], []
    for s in GAMMA_A:
        for y in (1e-5, 0.3, 0.9 * s, s, s + 0.999, s + 1.0, 1.1 * s + 2.0, 3.0 * s + 5.0, 60.0):
            a.append(s)
            x.append(y)
    return np.array(a), np.array(x)


def _mp_gamma_da(a, x):
    with mp.workdps(50):
        if x < a + 1:
            return float(mp.diff(lambda s: mp.gammainc(s, 0, x, regularized=True), a))
        return float(-mp.diff(lambda s: mp.gammainc(s, x, mp.inf, regularized=True), a))


def _mp_beta_grad(a, b, x, digits=50):
    """mpmath's derivatives; its upper tail is ``1 - lower`` inside: tiny ones are recomputed with more digits."""
    with mp.workdps(digits):
        if x < a / (a + b):
            def f(p, q):
                return mp.betainc(p, q, 0, x, regularized=True)
            sign = 1.0
        else:
            def f(p, q):
                return mp.betainc(p, q, x, 1, regularized=True)
            sign = -1.0
        da, db = sign * mp.diff(lambda s: f(s, b), a), sign * mp.diff(lambda s: f(a, s), b)
    if digits == 50 and min(abs(da), abs(db)) < 1e-30:
        return _mp_beta_grad(a, b, x, 140)
    return float(da), float(db)


def _per_element_shape_grad(fn, *args, argnums, target):
    """The elementwise derivative of ``fn`` (elementwise) in ``argnums``: the gradient of its sum."""
    if len(args) == 2:
        def total(a, x):
            return np.sum(fn(a, x))
    else:
        def total(a, b, x):
            return np.sum(fn(a, b, x))
    return gradc.compile(total, *args, argnums=argnums, target=target).grad(*args)


def _close(got, want, rtol):
    got, want = np.asarray(got), np.asarray(want)
    scale = np.maximum(np.abs(want), 1e-280)
    return np.abs(got - want) <= rtol * scale


@pytest.fixture(scope="module")
def gamma_reference():
    a, x = _gamma_grid()
    return a, x, np.array([_mp_gamma_da(s, y) for s, y in zip(a, x)])


@pytest.fixture(scope="module")
def beta_reference():
    pts = [(a, b, x) for a in BETA_AB for b in BETA_AB for x in BETA_X]
    a, b, x = (np.array(v) for v in zip(*pts))
    ref = np.array([_mp_beta_grad(*p) for p in pts])
    return a, b, x, ref[:, 0], ref[:, 1]


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_gammainc_and_gammaincc_in_a_match_mpmath_on_the_hard_grid(gamma_reference, target):
    a, x, ref = gamma_reference
    got = _per_element_shape_grad(S.gammainc, a, x, argnums=0, target=target)
    bad = ~_close(got, ref, 1e-9)
    assert not bad.any(), list(zip(a[bad], x[bad], got[bad], ref[bad]))
    got_q = _per_element_shape_grad(S.gammaincc, a, x, argnums=0, target=target)
    np.testing.assert_allclose(got_q, -got, rtol=1e-15)


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_betainc_in_a_and_b_match_mpmath_on_the_hard_grid(beta_reference, target):
    a, b, x, ref_a, ref_b = beta_reference
    got_a, got_b = _per_element_shape_grad(S.betainc, a, b, x, argnums=(0, 1), target=target)
    for got, ref in ((got_a, ref_a), (got_b, ref_b)):
        meaningful = np.abs(ref) > 1e-95  # below, mpmath's upper tail at 140 digits is noise
        bad = meaningful & ~_close(got, ref, 1e-8)
        assert not bad.any(), list(zip(a[bad], b[bad], x[bad], got[bad], ref[bad]))


def _central(fn, args, i, h):
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h, args[i] - h
    return (fn(*up) - fn(*down)) / (2 * h)


FUNCTIONS = {  # name -> (fn, generator of its arguments, shape parameter positions)
    "gammainc": (S.gammainc, lambda r, n: (r.uniform(0.05, 40.0, n), r.uniform(0.01, 60.0, n)), (0,)),
    "gammaincc": (S.gammaincc, lambda r, n: (r.uniform(0.05, 40.0, n), r.uniform(0.01, 60.0, n)), (0,)),
    "gammaincinv": (S.gammaincinv, lambda r, n: (r.uniform(0.2, 30.0, n), r.uniform(0.02, 0.98, n)), (0,)),
    "gammainccinv": (S.gammainccinv, lambda r, n: (r.uniform(0.2, 30.0, n), r.uniform(0.02, 0.98, n)), (0,)),
    "betainc": (S.betainc, lambda r, n: (r.uniform(0.05, 30.0, n), r.uniform(0.05, 30.0, n),
                                         r.uniform(0.01, 0.99, n)), (0, 1)),
    "betaincinv": (S.betaincinv, lambda r, n: (r.uniform(0.3, 20.0, n), r.uniform(0.3, 20.0, n),
                                               r.uniform(0.02, 0.98, n)), (0, 1)),
}


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_random_points_against_central_differences_of_scipy(name, target):
    fn, make, shapes = FUNCTIONS[name]
    rng = np.random.default_rng(sorted(FUNCTIONS).index(name) + 2411)
    args = make(rng, 24)
    grads = _per_element_shape_grad(fn, *args, argnums=shapes, target=target)
    grads = grads if isinstance(grads, tuple) else (grads,)
    for i, got in zip(shapes, grads):
        h = 1e-6 * np.maximum(args[i], 1.0)
        want = _central(fn, args, i, h)
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-8, err_msg=f"{name} in argument {i}")


def test_mixed_second_derivative_in_x_of_the_shape_derivative():
    def da(a, x):
        return gradc.grad(lambda s: np.sum(S.gammainc(s, x) + S.betainc(s, 2.0, x / 10)))(a)

    a, x = 2.3, np.array([0.4, 1.7, 5.0])
    got = gradc.grad(lambda x: da(a, x))(x)
    h = 1e-5
    want = np.array([(da(a, x + h * e) - da(a, x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_values_at_the_edges_follow_the_function():
    a = np.array([2.0, 2.0, 2.0, -1.0, 0.0, np.nan, 2.0])
    x = np.array([0.0, np.inf, 1e300, 1.0, 1.0, 1.0, -1.0])
    got = _per_element_shape_grad(S.gammainc, a, x, argnums=0, target="numpy")
    np.testing.assert_array_equal(got[:3], 0.0)  # constant in a there
    assert np.isnan(got[3:]).all()
    a, b = np.array([2.0, 2.0, 2.0, 2.0, -1.0]), np.array([3.0, 3.0, 3.0, 0.0, 3.0])
    x = np.array([0.0, 1.0, 1.5, 0.5, 0.5])
    got_a, got_b = _per_element_shape_grad(S.betainc, a, b, x, argnums=(0, 1), target="numpy")
    np.testing.assert_array_equal(got_a[:2], 0.0)
    assert np.isnan(got_a[2:]).all() and np.isnan(got_b[2:]).all()
    c_a, c_b = _per_element_shape_grad(S.betainc, a, b, x, argnums=(0, 1), target="c")
    np.testing.assert_array_equal(c_a, got_a)
    np.testing.assert_array_equal(c_b, got_b)


def test_float32():
    a = np.array([0.7, 2.5, 9.0], dtype=np.float32)
    x = np.array([0.3, 2.0, 12.0], dtype=np.float32)
    for target in ("numpy", "c"):
        got = _per_element_shape_grad(S.gammainc, a, x, argnums=0, target=target)
        assert got.dtype == np.float32
        want = _per_element_shape_grad(S.gammainc, a.astype(float), x.astype(float), argnums=0, target="numpy")
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_emitted_numpy_carries_the_algorithm_and_imports_only_numpy_and_scipy():
    compiled = gradc.compile(lambda a, b, x: np.sum(S.betainc(a, b, x) + S.gammainc(a, x)),
                             np.ones(2), np.ones(2), np.full(2, 0.5), argnums=(0, 1))
    source = compiled.source
    assert "def _gammainc_da(" in source and "def _betainc_dab(" in source
    imports = [line for line in source.splitlines() if line.startswith(("import ", "from "))]
    assert imports == ["import numpy as np", "import scipy.special"]
    namespace: dict = {}
    exec(compile(source, "emitted", "exec"), namespace)  # noqa: S102 (gradc's emitted module, alone)
    args = (np.array([0.5, 3.0]), np.array([2.0, 0.7]), np.array([0.2, 0.6]))
    fn = [v for k, v in namespace.items() if k.endswith("_grad") and callable(v)][0]
    np.testing.assert_allclose(fn(*args), compiled.grad(*args), rtol=1e-15)


def test_a_user_name_like_the_helper_does_not_collide():
    def f(a, _gammainc_da):
        return np.sum(S.gammainc(a, _gammainc_da))

    got = gradc.compile(f, np.ones(2), np.ones(2)).grad(np.array([1.5, 2.0]), np.array([1.0, 3.0]))
    want = _central(lambda a, x: S.gammainc(a, x), (np.array([1.5, 2.0]), np.array([1.0, 3.0])), 0, 1e-6)
    np.testing.assert_allclose(got, want, rtol=1e-7)


def test_second_derivative_in_a_is_refused_at_the_users_line():
    def f(a):
        return np.sum(S.gammainc(a, np.array([0.5, 2.0])))

    with pytest.raises(TraceError, match=r"second derivative in a is not available") as e:
        gradc.grad(gradc.grad(f))(1.5)
    assert "test_incomplete_shape_derivatives.py" in str(e.value)
