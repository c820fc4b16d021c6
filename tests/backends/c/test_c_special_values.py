"""The C target gives the NumPy target's values and gradients at special points.

0, -0.0, +-1, +-inf, nan, huge and tiny values through the ops where C's libm and
NumPy could part ways (domain edges, overflow, NaN propagation of max/min, floor
division and modulo of floats), on float scalars and 1-element arrays. The NumPy
target is the reference here: tests/backends/test_special_values.py checks it
against NumPy running the user's function.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler

pytestmark = pytest.mark.skipif(find_compiler() is None, reason="no C compiler")

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, np.inf, -np.inf, np.nan, 1e308, 710.0]
UNARY = [np.sqrt, np.log, np.arcsin, np.arccos, np.exp, np.log1p, np.tanh, np.arctanh, np.cosh, np.expm1,
         np.abs, np.sign, np.floor]
BINARY = [np.divide, np.power, np.maximum, np.minimum, np.arctan2, np.hypot, np.mod, np.floor_divide, np.fmod,
          np.logaddexp]


def _same(a, b) -> bool:
    a, b = np.asarray(a, float).ravel(), np.asarray(b, float).ravel()
    return bool(np.all((np.isnan(a) & np.isnan(b)) | np.isclose(a, b, rtol=1e-9, atol=1e-300) | (a == b)))


@pytest.mark.parametrize("kind", ["scalar", "array"])
@pytest.mark.parametrize("ufunc", UNARY + BINARY, ids=lambda u: u.__name__)
def test_c_agrees_with_numpy_at_special_points(ufunc, kind):
    nin = ufunc.nin
    if kind == "scalar":
        f = (lambda x: ufunc(x)) if nin == 1 else (lambda x, y: ufunc(x, y))
        example = [0.5] * nin
    else:
        f = (lambda x: np.sum(ufunc(x))) if nin == 1 else (lambda x, y: np.sum(ufunc(x, y)))
        example = [np.array([0.5])] * nin
    c_target = gradc.compile(f, *example, target="c", wrt=tuple(range(nin)))
    numpy_target = gradc.compile(f, *example, wrt=tuple(range(nin)))
    points = [(v,) for v in SPECIAL] if nin == 1 else list(itertools.product(SPECIAL[:9], repeat=2))
    mismatches = []
    for point in points:
        args = [float(v) for v in point] if kind == "scalar" else [np.array([v]) for v in point]
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            c_value, c_grads = c_target(*args)
            value, grads = numpy_target(*args)
        c_grads = c_grads if isinstance(c_grads, tuple) else (c_grads,)
        grads = grads if isinstance(grads, tuple) else (grads,)
        if not _same(c_value, value) or not all(_same(a, b) for a, b in zip(c_grads, grads)):
            mismatches.append(f"{point}: C {c_value}, {c_grads}; NumPy {value}, {grads}")
    assert not mismatches, f"{ufunc.__name__}: " + "; ".join(mismatches[:5])
