"""More ``scipy.stats`` sample functions on traced values: values against SciPy on seeded data, gradients against
central differences (zero for the ranks), the C target, and the refusals."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError

W = np.linspace(0.5, 1.5, 8)

CASES = {
    "circmean": lambda a: st.circmean(a),
    "circmean_range_axis": lambda a: st.circmean(a, high=3.0, low=-1.0, axis=1),
    "circvar": lambda a: st.circvar(a, axis=0),
    "circstd": lambda a: st.circstd(a, high=36.0, axis=1) + st.circstd(a, normalize=True, axis=1),
    "gstd": lambda a: st.gstd(a),
    "gstd_none": lambda a: st.gstd(a, axis=None, ddof=0),
    "zmap": lambda a: st.zmap(a[0], a[1:], axis=None),
    "gzscore": lambda a: st.gzscore(a, axis=1, ddof=1),
    "scoreatpercentile": lambda a: st.scoreatpercentile(a[0], [20.0, 70.0]),
    "scoreatpercentile_lower": lambda a: st.scoreatpercentile(a, 35, interpolation_method="higher", axis=0),
    "wasserstein": lambda a: st.wasserstein_distance(a[0], a[1, :5]),
    "wasserstein_weights": lambda a: st.wasserstein_distance(a[0], a[1], W, a[2]),
    "energy": lambda a: st.energy_distance(a[0], a[2], u_weights=a[3]),
    "kstat": lambda a: np.stack([st.kstat(a, n) for n in (1, 2, 3, 4)]),
    "kstat_axis": lambda a: st.kstat(a, 3, axis=1),
    "kstatvar": lambda a: st.kstatvar(a) + st.kstatvar(a, 1),
    "boxcox": lambda a: st.boxcox(a, 0.4) + st.boxcox(a, 0.0),
    "boxcox_traced_lambda": lambda a: st.boxcox(a[0], a[1, 0] - 1.0),
    "yeojohnson": lambda a: st.yeojohnson(a - 1.7, 0.6) + st.yeojohnson(a - 1.7, 0.0) + st.yeojohnson(1.7 - a, 2.0),
}


def _data(seed):
    rng = np.random.default_rng(seed)  # distinct values (no sample sits on another's step)
    return rng.permutation(np.linspace(0.5, 3.0, 32)).reshape(4, 8) + rng.uniform(0.0, 0.02, (4, 8))


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(2))
def test_against_scipy_and_central_differences(name, seed):
    f = CASES[name]
    a = _data(seed)
    np.testing.assert_allclose(gradc.jit(f)(a), f(a), rtol=1e-10, atol=1e-13)

    def loss(a):
        return np.sum(f(a) * np.linspace(1.0, 2.0, np.size(f(a))).reshape(np.shape(f(a))))

    np.testing.assert_allclose(gradc.grad(loss)(a), fd_grad(loss, a), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("name", ["circmean_range_axis", "wasserstein_weights", "kstat", "yeojohnson"])
def test_c_target(name):
    f = CASES[name]
    a = _data(4)
    np.testing.assert_allclose(gradc.jit(f, target="c")(a), f(a), rtol=1e-10, atol=1e-13)
    loss = lambda a: np.sum(f(a))  # noqa: E731
    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(a), fd_grad(loss, a), rtol=1e-5, atol=1e-8)


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_rankdata_ties_against_scipy(method, axis):
    a = np.random.default_rng(3).integers(0, 4, (5, 6)).astype(float)
    f = lambda a: st.rankdata(a, method, axis=axis)  # noqa: E731
    got = gradc.jit(f)(a)
    np.testing.assert_array_equal(got, f(a))
    assert got.dtype == f(a).dtype
    np.testing.assert_array_equal(gradc.jit(f, target="c")(a), f(a))
    np.testing.assert_array_equal(gradc.grad(lambda a: np.sum(f(a) * a[0, 0]))(a)[1:], 0.0)  # ranks: no derivative


@pytest.mark.parametrize("call, match", [
    (lambda a: st.boxcox(a), "fits it by maximum likelihood"),
    (lambda a: st.yeojohnson(a), "fits it by maximum likelihood"),
    (lambda a: st.sigmaclip(a), "scipy.stats.sigmaclip is not supported"),
    (lambda a: st.multiscale_graphcorr(a, a), "permutation test"),
    (lambda a: st.rankdata(a, "first"), "method='first'"),
    (lambda a: st.kstat(a, 5), "n=5 must be 1, 2, 3 or 4"),
    (lambda a: st.scoreatpercentile(a, 50, limit=(0, 1)), "limit="),
    (lambda a: st.wasserstein_distance(a[None], a[None]), "more than one axis"),
])
def test_refusals(call, match):
    with pytest.raises(GradcError, match=match) as info:
        gradc.jit(call)(np.linspace(0.5, 2.0, 6))
    assert "test_stats_samples.py" in str(info.value)


@pytest.mark.parametrize("lmbda", [0.0, 3e-8, -3e-8, 2.0, 2.0 + 3e-8, 0.7])
def test_power_transforms_differentiate_in_lambda_through_the_special_points(lmbda):
    x, y = np.array([0.4, 1.7, 3.0]), np.array([-1.3, 0.0, 2.2])
    for f in (lambda lam: np.sum(st.boxcox(x, lam)), lambda lam: np.sum(st.yeojohnson(y, lam))):
        np.testing.assert_allclose(gradc.jit(f)(lmbda), f(lmbda), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(gradc.grad(f)(lmbda), fd_grad(f, np.float64(lmbda), h=1e-5), rtol=1e-6)


@pytest.mark.parametrize("kind", ["rank", "strict", "weak", "mean"])
@pytest.mark.parametrize("target", ["numpy", "c"])
def test_percentileofscore_against_scipy(kind, target):
    a = np.random.default_rng(2).integers(0, 5, 9).astype(float)  # ties
    scores = np.array([-1.0, 0.0, 2.0, 2.5, 4.0, 9.0, np.nan])
    f = lambda a, s: st.percentileofscore(a, s, kind=kind)  # noqa: E731
    np.testing.assert_array_equal(gradc.jit(f, target=target)(a, scores), f(a, scores))
    np.testing.assert_array_equal(gradc.jit(f, target=target)(a, 2.0), f(a, 2.0))
    with_nan = np.concatenate([a, [np.nan]])
    assert np.all(np.isnan(gradc.jit(f, target=target)(with_nan, scores)))
