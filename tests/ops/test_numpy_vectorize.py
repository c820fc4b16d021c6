"""``np.vectorize`` of traceable scalar functions on traced arrays: values against NumPy's own vectorize on seeded
inputs (branches on the element, several arguments broadcast, keywords, excluded=, otypes=, tuple results,
signature= core dimensions, decorators made outside the traced function), gradients against central differences,
and the C target."""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as fd_grad

import gradc
from gradc.errors import GradcError


def piecewise(t, scale=1.0):
    if t > 0.3:
        return scale * t * t
    return np.sin(t) * scale


@np.vectorize
def decorated(t):
    return np.exp(-t) if t < 1.0 else 1.0 / (t * np.e)


@np.vectorize(otypes=[np.float64])
def decorated_with_types(t, u):
    return t * u + 1.0


def pair(t):
    return t * 2.0, np.cos(t)


def weighted(v, w):
    return np.dot(v, w)


CASES = {
    "branch": lambda x: np.vectorize(piecewise)(x),
    "broadcast_two": lambda x: np.vectorize(piecewise)(x, x[:, :1] + 2.0),
    "keyword": lambda x: np.vectorize(piecewise)(x, scale=x[0]),
    "excluded": lambda x: np.vectorize(lambda t, c: t * c[0] + c[1], excluded={1})(x, [2.0, -1.0]),
    "decorated": lambda x: decorated(x + 0.5),
    "decorated_otypes": lambda x: decorated_with_types(x, x.T[:, :1][:1]),
    "tuple_result": lambda x: sum(np.vectorize(pair)(x)),
    "signature": lambda x: np.vectorize(weighted, signature="(n),(n)->()")(x, x[0]),
    "lambda_math": lambda x: np.vectorize(lambda t: np.tanh(t) ** 2 + t)(x.ravel()),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("seed", range(2))
def test_against_numpy_and_central_differences(name, seed):
    f = CASES[name]
    x = np.random.default_rng(seed).uniform(-1.0, 2.0, (3, 4))
    x = np.where(np.abs(x - 0.3) < 0.02, x + 0.05, x)  # off the branch point
    x = np.where(np.abs(x + 0.5 - 1.0) < 0.02, x + 0.05, x)
    np.testing.assert_allclose(gradc.jit(f)(x), f(x), rtol=1e-12, atol=1e-14)

    def loss(x):
        return np.sum(np.sin(f(x)))

    np.testing.assert_allclose(gradc.grad(loss)(x), fd_grad(loss, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("name", ["branch", "signature", "decorated"])
def test_c_target(name):
    f = CASES[name]
    x = np.random.default_rng(5).uniform(-1.0, 2.0, (3, 4))
    np.testing.assert_allclose(gradc.jit(f, target="c")(x), f(x), rtol=1e-12, atol=1e-14)

    def loss(x):
        return np.sum(f(x))

    np.testing.assert_allclose(gradc.jit(gradc.grad(loss), target="c")(x), fd_grad(loss, x), rtol=1e-6, atol=1e-8)


def test_concrete_calls_stay_numpys():
    def f(x):
        return x * np.vectorize(piecewise)(np.array([0.1, 1.0])).sum()

    np.testing.assert_allclose(gradc.grad(f)(2.0), np.vectorize(piecewise)(np.array([0.1, 1.0])).sum())


@pytest.mark.parametrize("call, match", [
    (lambda x: np.vectorize(piecewise)(x[:0]), "empty array"),
    (lambda x: np.vectorize(weighted, signature="(n),(n)")(x, x), "has no '->'"),
    (lambda x: np.vectorize(weighted, signature="(n),(n)->()")(x), "has 2 inputs, the call passes 1"),
])
def test_refusals(call, match):
    with pytest.raises(GradcError, match=match) as info:
        gradc.jit(call)(np.ones((2, 3)))
    assert "test_numpy_vectorize.py" in str(info.value)
