"""Infinite and NaN constants in a program (``x == -np.inf``, ``np.clip(x, 0, np.inf)``,
``np.maximum(x, -np.inf)``) give NumPy's values and gradients on the C target.

SymPy's reals are finite, so with its ``oo`` for the constant the C target decided ``x == -inf`` false
before the program ran (a gradient of the wrong branch at every infinite ``x``). The reference here is
the function run by NumPy and the gradient written out by hand, not gradc's other target.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")

CONSTANTS = [np.inf, -np.inf, np.nan, 0.0, -0.0, 1e308]
COMPARISONS = [np.equal, np.not_equal, np.less, np.less_equal, np.greater, np.greater_equal]
DATA = np.array([-np.inf, -1e308, -2.0, -0.0, 0.0, 3.0, 1e308, np.inf, np.nan])
WEIGHTS = np.arange(1.0, 10.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("compare", COMPARISONS, ids=lambda f: f.__name__)
def test_a_comparison_with_a_special_constant(compare, dtype):
    x = DATA.astype(dtype)
    for c in CONSTANTS:
        def f(x, c=dtype(c)):  # noqa: B023 (each f is compiled and called before the next)
            return np.sum(np.where(compare(x, c), 2.0 * x, -3.0 * x) * WEIGHTS.astype(x.dtype))

        taken = compare(x, dtype(c))
        want_grad = np.where(taken, 2.0, -3.0) * WEIGHTS
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            value, grad = gradc.compile(f, x, target="c", static_argnames=("c",)).value_and_grad(x)
            want = f(x)
        np.testing.assert_array_equal(grad, want_grad.astype(dtype), err_msg=f"{compare.__name__} {c}")
        np.testing.assert_array_equal(value, want, err_msg=f"{compare.__name__} {c}")


PROGRAMS = {
    "clip_to_inf": lambda x: np.clip(x, 0.0, np.inf),
    "clip_from_ninf": lambda x: np.clip(x, -np.inf, 1.0),
    "maximum_ninf": lambda x: np.maximum(x, -np.inf),
    "minimum_inf": lambda x: np.minimum(x, np.inf),
    "fmax_nan": lambda x: np.fmax(x, np.nan),
    "where_inf_arm": lambda x: np.where(x > 0, np.inf, x),
    "isclose_ninf": lambda x: np.where(np.isclose(x, -np.inf), 5.0, x),
    "logaddexp_ninf": lambda x: np.logaddexp(x, -np.inf),
    "nan_to_num": lambda x: np.nan_to_num(x, posinf=7.0, neginf=-7.0),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_programs_with_special_constants_match_numpy(name):
    g = PROGRAMS[name]

    def f(x):
        return np.sum(g(x) * WEIGHTS)

    x = np.where(np.abs(DATA) == 1e308, DATA / 1e8, DATA)  # the weighted sum does not overflow (C may fuse
    # its multiply-adds, NumPy does not) and sums in another order: values agree to rounding
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        numpy_value, numpy_grad = gradc.compile(f, x).value_and_grad(x)
        c_value, c_grad = gradc.compile(f, x, target="c").value_and_grad(x)
        want = f(x)
    np.testing.assert_allclose(numpy_value, want, rtol=1e-14)
    np.testing.assert_allclose(c_value, want, rtol=1e-14)
    np.testing.assert_array_equal(c_grad, numpy_grad)
    # away from the infinities the gradient is also the central difference of NumPy's (elementwise) function
    with np.errstate(all="ignore"):
        smooth = np.isfinite(g(x)) & (np.abs(x) < 1e290) & (x != 0)
    for i in np.flatnonzero(smooth):
        with np.errstate(all="ignore"):
            fd = (g(x + 1e-6)[i] - g(x - 1e-6)[i]) / 2e-6 * WEIGHTS[i]
        assert c_grad[i] == pytest.approx(fd, rel=1e-6, abs=1e-6), (name, i)
