"""Sorting and searching on the C target (gradc/backends/c/sorting.py): ``argsort`` and everything that
gathers at its indices (``np.sort``, ``median``, ``quantile``, ``percentile``, the ``nan*`` ones), and
``searchsorted`` with what uses it (``np.interp``; ``np.digitize`` and the ``nan*`` quantiles are not traced yet).

References are the user's function run by NumPy (``kind='stable'`` where the order of ties is asked) and
central differences; inputs come from a seeded generator over shapes, axes, dtypes, ties, signed zeros,
infinities and NaN, and strided (transposed, sliced) operands.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.sorting import helper_text

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def forward_c(fn, *args):
    """``fn(*args)`` by the C target (a float argument leads, so integer operands need no derivative)."""
    with_lead = [lambda lead, a: fn(a), lambda lead, a, b: fn(a, b), lambda lead, a, b, c: fn(a, b, c)][len(args) - 1]
    return gradc.compile(with_lead, 0.0, *args, target="c", mode="vjp").forward(0.0, *args)


def _awkward(rng, shape, dtype):
    """Values with ties, signed zeros, infinities and (for floats) NaN."""
    if dtype in (np.int64, np.int32):
        return rng.integers(-3, 4, shape).astype(dtype)
    pool = np.array([0.0, -0.0, 1.5, -2.0, 1.5, np.inf, -np.inf, np.nan, 3.25, np.nan], dtype=dtype)
    x = rng.normal(size=shape).astype(dtype)
    mask = rng.random(shape) < 0.5
    x[mask] = rng.choice(pool, size=int(mask.sum()))
    return x


@pytest.mark.parametrize("seed", range(8))
def test_argsort_is_numpys_stable_order(seed):
    rng = np.random.default_rng(seed)
    ndim = int(rng.integers(1, 4))
    shape = tuple(int(n) for n in rng.integers(1, 7, ndim))
    dtype = [np.float64, np.float32, np.int64][seed % 3]
    x = _awkward(rng, shape, dtype)
    axis = int(rng.integers(-ndim, ndim))
    got = forward_c(lambda x: np.argsort(x, axis=axis, kind="stable"), x)
    np.testing.assert_array_equal(got, np.argsort(x, axis=axis, kind="stable"))
    assert got.dtype == np.int64


@pytest.mark.parametrize("seed", range(4))
def test_sort_of_strided_views_and_flattened(seed):
    rng = np.random.default_rng(100 + seed)
    x = _awkward(rng, (5, 7), np.float64)
    np.testing.assert_array_equal(forward_c(lambda x: np.sort(x.T[::2], axis=0), x), np.sort(x.T[::2], axis=0))
    np.testing.assert_array_equal(forward_c(lambda x: np.sort(x, axis=None), x), np.sort(x, axis=None))
    np.testing.assert_array_equal(forward_c(lambda x: np.argsort(x[:, ::-1] * 2.0, axis=1, kind="stable"), x),
                                  np.argsort(x[:, ::-1] * 2.0, axis=1, kind="stable"))


def test_default_kind_gives_a_sorting_permutation():
    """NumPy's default kind is unstable: its order of ties is its own; the C order sorts and is stable."""
    x = np.array([2.0, 1.0, 2.0, np.nan, 1.0, -0.0, 0.0, 2.0] * 5)
    got = forward_c(lambda x: np.argsort(x), x)
    np.testing.assert_array_equal(np.sort(got), np.arange(x.size))
    np.testing.assert_array_equal(x[got], np.sort(x))
    np.testing.assert_array_equal(got, np.argsort(x, kind="stable"))


def test_long_rows_merge_sort():
    rng = np.random.default_rng(7)
    x = rng.integers(0, 50, 1000).astype(np.float64)
    np.testing.assert_array_equal(forward_c(lambda x: np.argsort(x, kind="stable"), x), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("name, fn", [
    ("median", lambda x: np.median(x, axis=1)),
    ("median_all", lambda x: np.median(x)),
    ("quantile", lambda x: np.quantile(x, [0.1, 0.5, 0.93], axis=0)),
    ("percentile", lambda x: np.percentile(x, 37.0, axis=1)),
    ("median_nan", lambda x: np.median(x, axis=0)),
    ("quantile_nan", lambda x: np.quantile(x, 0.3, axis=1)),
    ("sort_desc", lambda x: -np.sort(-x, axis=1)),
    ("ptp", lambda x: np.ptp(x, axis=0)),
])
@pytest.mark.parametrize("seed", range(2))
def test_order_statistics_agree_with_numpy(name, fn, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(4, 6))
    x[rng.random(x.shape) < 0.3] = 0.5  # ties
    if name.endswith("nan"):
        x[rng.random(x.shape) < 0.2] = np.nan  # NaN sorts last: NumPy's median and quantile then give NaN
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's NaN warnings
        expected = fn(x)
        got = forward_c(fn, x)
    np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-15, equal_nan=True)


@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.sort(x, axis=0) * np.arange(1.0, 6.0)[:, None]),
    lambda x: np.sum(np.median(x, axis=1) ** 2),
    lambda x: np.sum(np.quantile(x, [0.2, 0.8], axis=0) * np.array([[1.0], [-2.0]])),
    lambda x: np.percentile(x, 60.0) * 3.0,
], ids=["sort", "median", "quantile", "percentile"])
def test_gradients_through_c_match_central_differences(fn):
    x = np.random.default_rng(3).permutation(np.arange(15.0)).reshape(5, 3) * 0.7  # distinct: no reordering
    grad = gradc.compile(fn, x, target="c").grad(x)
    np.testing.assert_allclose(grad, central_gradient(fn, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("side", ["left", "right"])
def test_searchsorted_both_sides(seed, side):
    rng = np.random.default_rng(seed)
    dtype = [np.float64, np.float32, np.int64][seed % 3]
    a = np.sort(_awkward(rng, (int(rng.integers(1, 12)),), dtype))
    v = _awkward(rng, tuple(int(n) for n in rng.integers(1, 5, int(rng.integers(0, 3)))), dtype)
    v = np.concatenate([v.ravel(), a[: 3]]).reshape(-1) if seed % 2 else v  # exact hits: ties with a
    got = forward_c(lambda a, v: np.searchsorted(a, v, side=side), a, v)
    np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))


def test_searchsorted_of_a_scalar_and_of_a_strided_array():
    a = np.array([0.0, 1.0, 1.0, 2.0, 2.0, 2.0, 5.0, np.nan])
    for side in ("left", "right"):
        assert forward_c(lambda a, s=side: np.searchsorted(a, 2.0, side=s), a) == np.searchsorted(a, 2.0, side=side)
        np.testing.assert_array_equal(forward_c(lambda a, s=side: np.searchsorted(a[::2], a[1::2], side=s), a),
                                      np.searchsorted(a[::2], a[1::2], side=side))


@pytest.mark.parametrize("seed", range(4))
def test_interp(seed):
    rng = np.random.default_rng(seed)
    xp = np.sort(rng.uniform(-3, 3, 9))
    fp = rng.normal(size=9)
    x = np.concatenate([rng.uniform(-4, 4, 12), xp[:2], [-10.0, 10.0]])
    np.testing.assert_allclose(forward_c(lambda x, xp, fp: np.interp(x, xp, fp), x, xp, fp), np.interp(x, xp, fp),
                               rtol=1e-13, atol=1e-15)


def test_interp_gradient_through_c():
    xp, fp = np.linspace(0.0, 2.0, 7), np.cos(np.linspace(0.0, 2.0, 7))

    def loss(x, fp):
        return np.sum(np.interp(x, xp, fp) ** 2)

    x = np.array([0.11, 0.52, 1.37, 1.93])
    gx, gfp = gradc.compile(loss, x, fp, target="c", argnums=(0, 1)).grad(x, fp)
    np.testing.assert_allclose(gx, central_gradient(lambda x: loss(x, fp), x), rtol=1e-6)
    np.testing.assert_allclose(gfp, central_gradient(lambda f: loss(x, f), fp), rtol=1e-6, atol=1e-9)


def test_the_c_source_is_deterministic():
    x = np.array([[3.0, 1.0], [2.0, 0.5]])

    def fn(x):
        return np.sum(np.sort(x, axis=1) * np.searchsorted(np.array([0.0, 1.0, 2.5]), x))

    sources = {gradc.compile(fn, x, target="c").c_source for _ in range(2)}
    assert len(sources) == 1
    text = sources.pop()
    assert "gradc_argsort_f64" in text and "gradc_searchsorted_f64" in text


def test_helpers_compare_nan_last_only_for_floats():
    assert "isnan" in helper_text("argsort", "f32") and "isnan" not in helper_text("argsort", "i64")


def sort_in_a_loop(x):
    s = 0.0
    for i in range(3):
        x = np.sort(x * 1.5 - i)
        s = s + x[0] * (i + 1) + np.median(x)
    return s


def test_sort_inside_a_loop_stays_a_loop_in_c():
    x = np.array([0.3, -1.2, 2.5, 0.9])
    c = gradc.compile(sort_in_a_loop, x, target="c")
    assert "for (long j" in c.c_source
    np.testing.assert_allclose(c.forward(x), sort_in_a_loop(x), rtol=1e-14)
    np.testing.assert_allclose(c.grad(x), central_gradient(sort_in_a_loop, x), rtol=1e-6)


_EVERY_OP = r'''
import numpy as np, scipy.special as sc, gradc
from gradc.ops import nn as nn_ops

def f(x, w):
    v = np.sort(x.ravel())
    k = np.searchsorted(v, x[0, 0], side="right") * 1.0
    c = nn_ops.max_pool2d(nn_ops.conv2d(x[None, None], w, padding=1), 2)
    return (np.sum(np.convolve(v, w.ravel())) + k + np.sum(c) + np.median(x)
            + np.sum(sc.polygamma(2, x * x + 1.0) + sc.betaln(x * x + 1.0, 2.0) + sc.beta(x * x + 1.0, 0.5)))

print(gradc.compile(f, np.arange(16.0).reshape(4, 4) % 5, np.ones((1, 1, 3, 3)), target="c").c_source)
'''


def test_the_c_of_every_new_lowering_is_identical_across_hash_seeds():
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    outs = []
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=root)
        proc = subprocess.run([sys.executable, "-c", _EVERY_OP], env=env, capture_output=True, text=True, cwd=root)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    for name in ("gradc_argsort_f64", "gradc_searchsorted_f64", "gradc_polygamma", "gradc_betaln", "gradc_beta"):
        assert name in outs[0]
