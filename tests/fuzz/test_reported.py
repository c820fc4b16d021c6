"""Reproducers the fuzz runs found, kept as regression tests once fixed.

* A Python float started in a loop carry is weak as in NumPy (NEP 50): ``0.0 + float32`` stays float32.
* A second ``for v in h:`` after an earlier loop's ``v`` of another dtype, with a closure whose parameter is
  also ``v``: the loop rebinds ``v`` before reading it, so the earlier type does not matter.
"""
import linecache

import numpy as np
import pytest

import gradc


def _function(source):
    filename = "<fuzz reported>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace["prog"]


CARRY = """def prog(x):
    total = 0.0
    for v in x:
        total = total + v * 0.5
    return np.sum(x * total)
"""

REBOUND = """def prog(x, w, s):
    h = x * 1.0
    total = 0.0
    for v in h:
        total = total + v * -0.393
    h = h + total
    total = 0.0
    for v in h:
        total = total + v * 0.651
    h = h + total
    def g(v):
        return np.exp(-v * v) * w + -0.443
    h = g(h) + g(h[::-1]) * s
    return np.sum(h * h)
"""


def test_python_float_carry_keeps_float32():
    f = _function(CARRY)
    x = np.array([0.1, 0.2, 0.3], np.float32)
    value = gradc.compile(f, x).forward(x)
    assert np.asarray(value).dtype == np.asarray(f(x)).dtype == np.float32


def test_loop_target_rebound_with_another_dtype():
    f = _function(REBOUND)  # found by tests/fuzz/control.py (seed 5); the closure's parameter is also `v`
    x, w, s = np.array([-0.7054406, 0.9433919], np.float32), np.array([0.6, 0.57], np.float32), np.float32(0.74)
    assert gradc.compile(f, x, w, s).forward(x, w, s) == pytest.approx(f(x, w, s), rel=1e-5)
