"""A ``raise`` or ``assert`` that depends on traced values: a clear TraceError at the user's line with a pattern
that works, never the user's own exception surfacing while gradc traces a branch that may never run."""
from __future__ import annotations

import importlib
import itertools
import linecache
import random

import numpy as np
import pytest

import gradc

api = importlib.import_module("gradc.api")
_COUNTER = itertools.count()


def _compile(source):
    path = f"<data-raise-{next(_COUNTER)}>"
    linecache.cache[path] = (len(source), None, source.splitlines(True), path)
    namespace = {"np": np}
    exec(compile(source, path, "exec"), namespace)
    return namespace["f"], path


def _line_of(source, marker):
    return next(k for k, text in enumerate(source.splitlines(), 1) if marker in text)


CONDITIONS = ["np.any(x < 0)", "np.sum(x) > 100.0", "x[0] < -1.0", "np.max(x) > 1e6"]
EXCEPTIONS = ["ValueError('negative')", "RuntimeError('bad')", "ZeroDivisionError('zero')", "KeyError('k')"]
SHAPES = [
    "def f(x):\n    if {cond}:\n        raise {exc}  # RAISE\n    return np.sum(x ** 2)\n",
    "def f(x):\n    s = np.sum(x ** 2)\n    if {cond}:\n        raise {exc}  # RAISE\n    else:\n        s = s * 2.0\n"
    "    return s\n",
    "def f(x):\n    s = np.sum(x ** 2)\n    if not ({cond}):\n        s = s + 1.0\n    else:\n"
    "        raise {exc}  # RAISE\n    return s\n",
    "def f(x):\n    s = 0.0\n    for i in range(x.shape[0]):\n        if x[i] < -5.0:\n"
    "            raise {exc}  # RAISE\n        s = s + x[i] ** 2\n    return s\n",
    "def f(x):\n    s = np.sum(x)\n    if {cond}:\n        if x.shape[0] > 1:\n            raise {exc}  # RAISE\n"
    "    return s * s\n",
]


def _assert_refused(source, marker="RAISE"):
    f, path = _compile(source)
    with pytest.raises(gradc.TraceError) as info:
        gradc.grad(f)(np.array([1.0, 2.0, 3.0]))  # valid data: NumPy would not raise
    text = str(info.value)
    assert f"{path}:{_line_of(source, marker)}" in text, text
    assert "before calling" in text, text
    return info.value


def test_the_issues_example_is_refused_at_the_raise_and_the_hints_pattern_works():
    src = ("def f(x):\n    if np.any(x < 0):\n        raise ValueError('negative')  # RAISE\n"
           "    return np.sum(np.sqrt(x))\n")
    err = _assert_refused(src)
    assert "ValueError('negative')" in str(err)
    # the hint: the check in plain Python, then the compiled gradient of the function without it
    grad = gradc.grad(lambda x: np.sum(np.sqrt(x)))

    def checked_gradient(x):
        if np.any(x < 0):
            raise ValueError("negative")
        return grad(x)
    np.testing.assert_allclose(checked_gradient(np.array([1.0, 4.0])), [0.5, 0.25])
    with pytest.raises(ValueError, match="negative"):
        checked_gradient(np.array([-1.0, 4.0]))


def test_a_raise_on_a_static_condition_is_plain_python():
    src = "def f(x):\n    if x.shape[0] == 0:\n        raise ValueError('empty')\n    return np.sum(x ** 2)\n"
    f, _ = _compile(src)
    np.testing.assert_allclose(gradc.grad(f)(np.ones(2)), [2.0, 2.0])
    with pytest.raises(ValueError, match="empty"):
        gradc.grad(f)(np.ones(0))


def test_assert_on_traced_values_is_refused_and_on_static_ones_is_pythons():
    src = "def f(x):\n    assert np.all(x >= 0), 'negative'  # RAISE\n    return np.sum(np.sqrt(x))\n"
    err = _assert_refused(src)
    assert "assert np.all(x >= 0)" in str(err)
    static = "def f(x):\n    assert x.ndim == 1, 'a vector'\n    return np.sum(x ** 2)\n"
    f, _ = _compile(static)
    np.testing.assert_allclose(gradc.grad(f)(np.ones(2)), [2.0, 2.0])
    with pytest.raises(AssertionError, match="a vector"):
        gradc.grad(f)(np.ones((2, 2)))


def test_the_c_target_refuses_the_same_way():
    src = "def f(x):\n    if np.any(x < 0):\n        raise ValueError('negative')  # RAISE\n    return np.sum(x ** 2)\n"
    f, path = _compile(src)
    with pytest.raises(gradc.TraceError, match="before calling") as info:
        api.compile(f, np.ones(3), target="c")
    assert f"{path}:3" in str(info.value)


def test_generated_data_dependent_raises_are_refused_at_their_line():
    rng = random.Random(22)
    combos = list(itertools.product(SHAPES, CONDITIONS, EXCEPTIONS))
    rng.shuffle(combos)
    for shape, cond, exc in combos[:40]:
        source = shape.format(cond=cond, exc=exc)
        err = _assert_refused(source)
        assert exc.split("(")[0] in str(err), (source, str(err))
