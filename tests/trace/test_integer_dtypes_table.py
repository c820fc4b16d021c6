"""Every NumPy function of the dispatch table on integer arrays (and Python int arguments): the compiled code's
value and dtype are NumPy's.

A generator over the whole table: for each function, the call forms NumPy itself accepts with integer arrays
of shape (4,) and small Python ints after them are taken; the emitted NumPy code must give NumPy's values with
NumPy's dtype. (It finds ``np.clip(i, 0, n - 1)`` computing floats, which then failed as an index.)
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradc
from gradc.errors import GradcError
from tests.dispatch_table import functions, name_of

# not functions of integer arrays' values (random, output arguments, object results, shape queries)
_SKIP = {"shape", "ndim", "size", "copyto", "empty_like", "result_type", "can_cast", "iscomplexobj", "isrealobj",
         "isscalar", "unstack", "put", "place", "putmask", "fill_diagonal", "put_along_axis"}
# integer products computed in float64 (exact below 2**53; README "Limits"): NumPy's values, float64 dtype
FLOAT_PRODUCTS = {"convolve", "correlate", "dot", "inner", "kron", "matmul", "polyder", "polymul", "vdot", "vecdot"}
_FORMS = [("a",), ("a", "b"), ("a", 2), ("a", 1, 3), ("a", "b", "c")]


def _arguments(form, rng):
    arrays = {k: rng.integers(0, 5, size=4) for k in "abc"}
    return [arrays[f] if isinstance(f, str) else f for f in form]


def _cases():
    rng = np.random.default_rng(0)
    out = []
    for f in functions(_SKIP):
        for form in _FORMS:
            args = _arguments(form, rng)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    value = f(*args)
            except Exception:  # noqa: BLE001  (NumPy refuses this form)
                continue
            leaves = value if isinstance(value, tuple) else (value,)
            if all(isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "iub" for v in leaves):
                ints = sum(isinstance(x, int) for x in form)
                out.append(pytest.param(f, args, id=f"{name_of(f)}-{len(form)}-{ints}"))
                break
    return out


@pytest.mark.parametrize("f, args", _cases())
def test_integer_results_keep_numpys_values_and_dtype(f, args):
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    ints = [a if not isinstance(a, np.ndarray) else None for a in args]

    def call(traced):
        it = iter(traced)
        return f(*[next(it) if i is None else i for i in ints])

    user = {1: lambda a, dummy: (call([a]), dummy * 2.0),  # named parameters: gradc traces by name
            2: lambda a, b, dummy: (call([a, b]), dummy * 2.0),
            3: lambda a, b, c, dummy: (call([a, b, c]), dummy * 2.0)}[len(arrays)]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = f(*args)
        try:
            compiled = gradc.compile(user, *arrays, 1.0, mode="jvp", wrt=len(arrays))
        except GradcError:
            pytest.skip("refused (a clear error)")
        try:
            got = compiled.forward(*arrays, 1.0)[0]
        except ValueError as err:  # a run-time refusal: NumPy's result would have a length set by the values
            assert "depend on the values" in str(err)
            pytest.skip("refused when run (a clear error)")
    want_leaves = want if isinstance(want, tuple) else (want,)
    got_leaves = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_array_equal(g, w)
        want_dtype = np.float64 if name_of(f) in FLOAT_PRODUCTS else np.asarray(w).dtype
        assert np.asarray(g).dtype == want_dtype, f"{name_of(f)}: {np.asarray(g).dtype} vs {want_dtype}"
