"""A generator over the ``scipy.stats`` sample functions gradc routes: random shapes, axes, limits and data
(hypothesis), each call compiled and compared with SciPy itself on the same data."""
from __future__ import annotations

import numpy as np
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hs

import gradc

FUNCTIONS = {
    "trim_mean": lambda a, axis, q: st.trim_mean(a, q / 2.5, axis=axis),
    "tmean": lambda a, axis, q: st.tmean(a, (q, q + 1.0), axis=axis),
    "tvar": lambda a, axis, q: st.tvar(a, (None, q + 1.5), axis=axis),
    "iqr": lambda a, axis, q: st.iqr(a, axis=axis, rng=(100 * q / 3.0, 90.0)),
    "median_abs_deviation": lambda a, axis, q: st.median_abs_deviation(a, axis=axis),
    "entropy": lambda a, axis, q: st.entropy(a, axis=0 if axis is None else axis, base=1.0 + q),
    "describe": lambda a, axis, q: st.describe(a, axis=axis).variance,
    "circmean": lambda a, axis, q: st.circmean(a, high=1.0 + q, axis=axis),
    "kstat": lambda a, axis, q: st.kstat(a, 1 + int(3 * q) % 4, axis=axis),
    "zmap": lambda a, axis, q: st.zmap(a, a * 2.0 + q, axis=0 if axis is None else axis),
    "skew": lambda a, axis, q: st.skew(a, axis=axis, bias=q > 0.5),
    "rankdata": lambda a, axis, q: st.rankdata(np.round(a * 2.0), axis=axis),
}


@settings(max_examples=60, deadline=None, derandomize=True)
@given(name=hs.sampled_from(sorted(FUNCTIONS)), shape=hs.lists(hs.integers(4, 6), min_size=1, max_size=3),
       axis_pick=hs.integers(-1, 2), q=hs.floats(0.05, 0.95), seed=hs.integers(0, 2 ** 16))
def test_random_shapes_and_axes_agree_with_scipy(name, shape, axis_pick, q, seed):
    a = np.random.default_rng(seed).uniform(0.2, 3.0, shape)
    axis = None if axis_pick == -1 or axis_pick >= len(shape) else axis_pick
    f = FUNCTIONS[name]
    with np.errstate(all="ignore"):
        expected = f(a, axis, q)
    np.testing.assert_allclose(gradc.jit(lambda a: f(a, axis, q))(a), expected, rtol=1e-9, atol=1e-12)
