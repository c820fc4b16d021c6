"""Integer arithmetic on the C target (issue 22): every integer op and reduction gradc traces, on int64
arrays with negative entries, against the user's function run by NumPy and central differences.

The random programs of ``tests/test_random_integer_programs.py`` are the generator of this class;
``test_c_properties`` checks the ops over the whole int64 range.
"""
import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler
from gradc.errors import TraceError

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")

X = np.array([0.5, 1.0, 1.5, 2.0])
K = np.array([-3, -9, 2, 7], dtype=np.int64)

PROGRAMS = {
    "mod_of_sum": lambda x, k: np.sum(x * ((k + 1) % 3)),  # issue 22: printed (k_[k] + 1 % 3) as a double
    "floor_divide": lambda x, k: np.sum(x * (k // 2) + x * (-k // 4)),
    "mod_negative_divisor": lambda x, k: np.sum(x * (k % -4) + np.fmod(k, 3)),
    "by_zero": lambda x, k: np.sum(x * (k % (k - k)) + x * (k // (k * 0))),  # NumPy: 0 (with a warning)
    "true_divide": lambda x, k: np.sum(x * (k / 2) + k / (k + 10)),
    "shifts": lambda x, k: np.sum(x * ((k << 2) + (k >> 1) + (k << (k % 3)))),
    "bits": lambda x, k: np.sum(x * ((k & 6) + (k | 1) - (k ^ 5) + ~k)),
    "bits_on_booleans": lambda x, k: np.sum(x * (((k > 0) & (k < 5)) | ((k % 2 == 0) ^ (k > 3)))),
    "abs_neg_sign": lambda x, k: np.sum(x * (np.abs(k) - k + np.sign(k))),
    "maximum_minimum": lambda x, k: np.sum(x * (np.maximum(k, 1) + np.minimum(k, -k))),
    "compare": lambda x, k: np.sum(np.where(k > 1, x, 0.0) + (k >= -3) * x),
    "power": lambda x, k: np.sum(x * k ** 3 + x * (k % 4) ** (k % 3)),
    "clip_by_ints": lambda x, k: np.sum(x * np.clip(k, -2, 3)),
    "clip_by_floats": lambda x, k: np.sum(x * np.clip(k, -2.5, 3)),  # a float result, as in NumPy
    "max_min": lambda x, k: np.sum(x) * (np.max(k) + np.min(k - 100)),  # no infinity in an int64 accumulator
    "sum_prod_mean": lambda x, k: np.sum(x) * (np.sum(k) + np.prod(k) + np.mean(k)),
    "arg_cumsum": lambda x, k: x[np.argmax(k)] * np.argmin(k) + np.sum(x * np.cumsum(k)),
    "index_by_int_arithmetic": lambda x, k: np.sum(x[(k * 3) // 2 % 4] * x),
    # C's isinf, isfinite and signbit take no int (the build failed)
    "float_tests": lambda x, k: np.sum(x * (np.isinf(k) + 2 * np.isfinite(k) + 4 * np.signbit(k) + 8 * np.isnan(k))),
    "heaviside_rounding": lambda x, k: np.sum(x * (np.heaviside(k, 0.5) + np.floor(k / 2) + np.ceil(k) + np.rint(k)
                                                   + np.trunc(k) + np.round(k, -1))),
}


def _loop(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        out[i] = x[i] ** 2 * x[(i + 1) % n]  # issue 22: read past the end in C
    return np.sum(out)


def _floor_mod_in_loop(x):
    s = 0.0
    for i in range(4):
        s = s + x[i] * ((i * 3) // 2 % 5)  # issue 22: double % int did not compile
    return s


def _central(f, x, k):
    g = np.zeros_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = 1e-6
        g[j] = (f(x + e, k) - f(x - e, k)) / 2e-6
    return g


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_integer_program_matches_python(name):
    f = PROGRAMS[name]
    with np.errstate(all="ignore"):
        want = f(X, K)
        fd = _central(f, X, K)
        got = [gradc.compile(f, X, K, wrt=("x",), target=t)(X, K) for t in ("numpy", "c")]
    for target, (value, (grad,)) in zip(("numpy", "c"), got):
        np.testing.assert_allclose(value, want, rtol=1e-12, err_msg=f"{target} value")
        np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-6, err_msg=f"{target} gradient")


@pytest.mark.parametrize("f", [_loop, _floor_mod_in_loop])
def test_index_arithmetic_in_loops(f):
    value, grad = gradc.compile(f, X, target="c")(X)
    np.testing.assert_allclose(value, f(X), rtol=1e-12)
    np.testing.assert_allclose(grad, _central(lambda x, k: f(x), X, None), rtol=1e-6)


@pytest.mark.parametrize("f", [lambda x, k: np.sum(x & k), lambda x, k: np.sum(~x), lambda x, k: np.sum(k << 1.5)])
def test_bits_of_floats_are_refused(f):
    with pytest.raises(TraceError, match="takes integers"):
        gradc.compile(f, X, K, wrt=("x",))
