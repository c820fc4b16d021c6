"""Every NumPy and SciPy function of the dispatch table given complex arrays: NumPy's value, or a clear refusal.

A generator over the whole table (it would have found np.var of complex values dropping their imaginary
parts): for each function, the first call form NumPy itself accepts on complex arrays (one to three
arguments of shape (3,) or (2, 3)) is taken and traced with every argument traced. gradc's value must
equal NumPy's, imaginary parts included, or gradc must refuse with one of its own errors (naming the
user's line); never a different number, never an exception from inside gradc.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import gradc
from gradc.errors import GradcError
from tests.dispatch_table import finite_values, functions, name_of

# call forms that are not functions of complex array values (shapes, types, constructors) or random positions
_SKIP = {"shape", "ndim", "size", "copyto", "empty_like", "full_like", "zeros_like", "ones_like", "result_type",
         "can_cast", "iscomplexobj", "isrealobj", "isscalar", "unstack", "histogram", "histogram_bin_edges",
         "histogramdd", "histogram2d", "bincount", "digitize", "searchsorted", "lexsort"}


def _call_form(f, rng):
    """The first complex arguments NumPy accepts for ``f`` with a finite float or complex result, or None."""
    for shape in ((3,), (2, 3)):
        for arity in (1, 2, 3):
            args = [rng.uniform(0.5, 1.5, shape) + 1j * rng.uniform(-0.5, 0.5, shape) for _ in range(arity)]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # a ComplexWarning: NumPy itself drops imaginary parts there
                    value = f(*args)
            except Exception:  # noqa: BLE001  (NumPy refuses this form: try the next)
                continue
            if finite_values(value, "fc") and not any(value is a for a in args):
                return args
    return None


CASES = []
_rng = np.random.default_rng(24)
for _f in functions(_SKIP):
    _args = _call_form(_f, _rng)
    if _args is not None:
        CASES.append(pytest.param(_f, _args, id=name_of(_f)))


def test_the_generator_covers_the_table():
    assert len(CASES) > 60


@pytest.mark.parametrize("f, args", CASES)
def test_numpy_s_value_or_a_clear_refusal(f, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = f(*args)
        wrapper = {1: lambda a: f(a), 2: lambda a, b: f(a, b), 3: lambda a, b, c: f(a, b, c)}[len(args)]
        try:
            got = gradc.jit(wrapper)(*args)
        except GradcError as refusal:
            assert not isinstance(refusal, gradc.ArgumentError), refusal  # the function refused, not the call
            assert "test_complex_table.py" in str(refusal), f"the refusal names no line of the caller: {refusal}"
            return
    got_leaves = list(got) if isinstance(got, (tuple, list)) else [got]
    want_leaves = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-12)
