"""np.nanmedian / nanquantile / nanpercentile: NumPy's values (NaNs anywhere, all-NaN slices), derivatives by
central differences, and the C target."""
import warnings

import numpy as np
import pytest

import gradc


def central(fun, x, eps=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        if np.isnan(x.flat[i]):
            continue
        e = np.zeros_like(x)
        e.flat[i] = eps
        g.flat[i] = (fun(x + e) - fun(x - e)) / (2 * eps)
    return g


def with_nans(rng, shape, fraction):
    x = rng.normal(size=shape)
    x[rng.uniform(size=shape) < fraction] = np.nan
    return x


CASES = [
    ("nanmedian", lambda x: np.nanmedian(x, axis=1)),
    ("nanmedian_all", lambda x: np.nanmedian(x)),
    ("nanquantile", lambda x: np.nanquantile(x, [0.1, 0.5, 0.9], axis=0)),
    ("nanquantile_lower", lambda x: np.nanquantile(x, 0.3, axis=1, method="lower")),
    ("nanquantile_nearest", lambda x: np.nanquantile(x, 0.3, axis=1, method="nearest", keepdims=True)),
    ("nanpercentile", lambda x: np.nanpercentile(x, 75, axis=-1)),
    ("nanpercentile_midpoint", lambda x: np.nanpercentile(x, [20, 40], axis=1, method="midpoint")),
]


@pytest.mark.parametrize("name, fn", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("seed", range(4))
def test_values_and_gradients(name, fn, seed):
    rng = np.random.default_rng(seed)
    x = with_nans(rng, (4, 5), [0.0, 0.2, 0.5, 0.9][seed])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy warns on all-NaN slices
        want = fn(x)
        for target in ("numpy", "c"):
            got = gradc.compile(fn, x, mode="jvp", target=target).forward(x)
            np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
        w = rng.normal(size=np.shape(want))

        def loss(x):
            return np.nansum(fn(x) * w)
        grad = gradc.grad(loss)(x)
        reference = central(loss, x)
    np.testing.assert_allclose(np.nan_to_num(grad), reference, rtol=1e-6, atol=1e-8)
