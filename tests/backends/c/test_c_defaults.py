"""The C target keeps the user's default arguments as the NumPy target does (issue 22, item 11).

``def f(x, scale=2.0)`` compiled with ``target="c"`` once needed ``scale`` at every call; now its
``forward``, ``grad`` and ``value_and_grad`` take the call the NumPy target's take (defaults left out,
keywords), and give the same numbers.
"""
from __future__ import annotations

import inspect
import random

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")
pytestmark = needs_cc


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def f(x, scale=2.0):
    return np.sum(x * x) * scale


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_the_issues_example():
    x = np.arange(3.0)
    c, n = gradc.compile(f, x, target="c"), gradc.compile(f, x)
    for args, kwargs in [((x,), {}), ((x, 3.0), {}), ((x,), {"scale": 0.5}), ((), {"x": x, "scale": 4.0})]:
        for name in ("forward", "grad", "value_and_grad"):
            _same(getattr(c, name)(*args, **kwargs), getattr(n, name)(*args, **kwargs))
    assert c.forward(x) == f(x)
    with pytest.raises(TypeError):
        c.grad()


def _random_function(rng):
    """A def of 1 to 4 float parameters, the last few with defaults (a float default, or an array one passed)."""
    k = rng.randint(1, 4)
    names = [f"p{i}" for i in range(k)]
    n_default = rng.randint(0, k - 1)
    defaults = {p: round(rng.uniform(0.5, 2.0), 3) for p in names[k - n_default:]}
    params = ", ".join(f"{p}={defaults[p]!r}" if p in defaults else p for p in names)
    terms = [f"np.sum(np.sin({names[0]}) * {p})" for p in names[1:]] + [f"np.sum({names[0]} ** 2)"]
    namespace = {"np": np}
    exec(f"def g({params}):\n    return {' + '.join(terms)}\n", namespace)
    return namespace["g"], names, defaults


@pytest.mark.parametrize("seed", range(6))
def test_random_signatures_agree_with_the_numpy_target(seed):
    rng = random.Random(seed)
    g, names, defaults = _random_function(rng)
    x = np.linspace(-1.0, 1.0, 4)
    required = len(names) - len(defaults)
    example = [x] + [0.7] * (required - 1)
    c, n = gradc.compile(g, *example, wrt=0, target="c"), gradc.compile(g, *example, wrt=0)
    assert str(c.signature) == str(inspect.signature(g))
    for given in range(required, len(names) + 1):
        args = [x] + [rng.uniform(-2, 2) for _ in names[1:given]]
        keywords = {names[i]: args[i] for i in range(1, given) if rng.random() < 0.5}
        positional = args[:min([i for i in range(given) if names[i] in keywords], default=given)]
        for name in ("forward", "grad", "value_and_grad"):
            want = getattr(n, name)(*positional, **{k: v for k, v in keywords.items()
                                                   if names.index(k) >= len(positional)})
            got = getattr(c, name)(*positional, **{k: v for k, v in keywords.items()
                                                  if names.index(k) >= len(positional)})
            _same(got, want)
        assert c.forward(*args) == pytest.approx(g(*args), rel=1e-12)
        _same(c._slow_grad(*positional, **{k: v for k, v in keywords.items() if names.index(k) >= len(positional)}),
              n.grad(*args))  # the ctypes path binds the same way


def test_the_entry_points_are_the_extensions_and_bad_calls_are_type_errors():
    c = gradc.compile(f, np.ones(2), target="c")
    if c.fast:
        assert type(c.grad).__name__ == "builtin_function_or_method"
    for bad in [lambda: c.grad(np.ones(2), 1.0, 2.0), lambda: c.grad(np.ones(2), y=1.0),
                lambda: c.forward(scale=1.0), lambda: c.value_and_grad(np.ones(2), 1.0, scale=1.0)]:
        with pytest.raises(TypeError):
            bad()
