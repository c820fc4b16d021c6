"""The extension entry points (``pyglue``) for functions with static parameters and for the derivative modes.

A Python int parameter (compiled in) and the modes' units (``jacobian``, ``hvp``, ``jvp``, ``vjp``,
``hessian``) are called through the extension module, not ctypes; each case checks the result
against the user's function (central differences) and the NumPy target, and the slow path's clear
errors for a changed static value or a wrong shape.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import pyglue

HAVE_GLUE = c_build.find_compiler() is not None and pyglue.python_include() is not None
pytestmark = pytest.mark.skipif(not HAVE_GLUE, reason="needs a C compiler and Python's headers")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def stepped(x, steps):
    y = x
    for _ in range(steps):
        y = y + 0.1 * np.sin(y) * x
    return np.sum(y ** 2)


def central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("steps", [1, 3])
def test_static_int_goes_through_the_extension(steps):
    x = np.random.default_rng(steps).normal(size=5)
    c = gradc.compile(stepped, x, steps, target="c")
    assert c.fast and type(c.grad).__name__ == "builtin_function_or_method"
    expected = central(lambda v: stepped(v, steps), x)
    np.testing.assert_allclose(c.grad(x, steps), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(c.grad(x, steps=steps), expected, rtol=1e-7, atol=1e-9)  # keywords: slow path
    value, grad = c.value_and_grad(x, steps)
    assert value == pytest.approx(stepped(x, steps), rel=1e-13)
    np.testing.assert_allclose(grad, gradc.compile(stepped, x, steps).grad(x, steps), rtol=1e-13)


def test_changed_static_value_is_a_clear_error():
    x = np.ones(4)
    c = gradc.compile(stepped, x, 2, target="c")
    with pytest.raises(ValueError, match=r"argument 'steps' was 2 when this code was compiled, got 3; recompile"):
        c.grad(x, 3)
    with pytest.raises(ValueError, match=r"argument 'steps' was 2 when this code was compiled, got 'two'"):
        c.grad(x, "two")


def quadratic(a, b):
    return np.sum(np.tanh(a * b[:3]) ** 2) + np.sum(b ** 3)


@pytest.mark.parametrize("mode", ["jacobian", "hessian", "hvp", "jvp", "vjp"])
def test_modes_go_through_the_extension(mode):
    rng = np.random.default_rng(11)
    a, b = rng.normal(size=3), rng.normal(size=4)
    c = gradc.compile(quadratic, a, b, target="c", mode=mode)
    n = gradc.compile(quadratic, a, b, mode=mode)
    assert c.fast
    extra = {"hvp": (rng.normal(size=3),), "jvp": (rng.normal(size=3),), "vjp": (1.5,)}.get(mode, ())
    got, want = getattr(c, mode)(a, b, *extra), getattr(n, mode)(a, b, *extra)
    for g, w in zip(np.atleast_1d(np.asarray(got, dtype=object)), np.atleast_1d(np.asarray(want, dtype=object))):
        np.testing.assert_allclose(np.asarray(g, float), np.asarray(w, float), rtol=1e-12, atol=1e-13)
    assert c.forward(a, b) == pytest.approx(quadratic(a, b), rel=1e-13)


def test_jacobian_matches_central_differences():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=3), rng.normal(size=4)
    f = lambda v: np.tanh(v * b[:3]) * b[3]  # noqa: E731
    c = gradc.compile(lambda a, b: np.tanh(a * b[:3]) * b[3], a, b, target="c", mode="jacobian")
    jac = c.jacobian(a, b)
    expected = np.stack([central(lambda v, i=i: f(v)[i], a) for i in range(3)])
    np.testing.assert_allclose(jac, expected, rtol=1e-7, atol=1e-9)


def test_mode_wrong_shape_is_a_clear_error():
    a, b = np.ones(3), np.ones(4)
    c = gradc.compile(quadratic, a, b, target="c", mode="jacobian")
    with pytest.raises(ValueError, match=r"argument 'b' must be float64 array of shape \(4,\)"):
        c.jacobian(a, np.ones(5))
