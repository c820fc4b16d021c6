"""Outputs holding one number in another shape, and list outputs.

Decisions (documented in ``gradc.grad``): an output of size 1 and any shape (``(1,)``, ``(1, 1)``) is
differentiated as its one number, as autograd's ``grad`` and torch's ``backward()`` on a one-element
tensor allow; ``value_and_grad`` returns the value in the shape ``f`` returned it. A one-element list or
tuple is accepted too (autograd-style code returns ``[loss]``; ``value_and_grad`` gives the value back in
it); a dict, or two values, is refused as in
JAX. ``vjp`` of a function returning a list returns a list and takes a list cotangent.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from tests.finite_differences import central_gradient

X = np.array([0.3, -1.1, 2.0])


def loss(x):
    return np.sum(np.sin(x) * x)


@pytest.mark.parametrize("shape", [(1,), (1, 1), (1, 1, 1)])
def test_grad_of_a_one_number_output_of_any_shape(shape):
    want = central_gradient(loss, X)
    f = lambda x: loss(x).reshape(shape)  # noqa: E731
    np.testing.assert_allclose(gradc.grad(f)(X), want, rtol=1e-6, atol=1e-8)
    value, g = gradc.value_and_grad(f)(X)
    assert np.shape(value) == shape and np.isclose(value.item(), loss(X))
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gradc.compile(f, X).grad(X), want, rtol=1e-6, atol=1e-8)


def test_a_one_number_output_computed_by_a_matrix_product():
    w = np.array([[1.0], [2.0], [-1.0]])
    f = lambda x: x[None, :] @ w  # noqa: E731 - shape (1, 1)
    np.testing.assert_allclose(gradc.grad(f)(X), w[:, 0])


def test_grad_inside_a_trace_of_a_one_number_output():
    f = lambda x: gradc.grad(lambda y: np.sum(y ** 2).reshape(1))(x) * x  # noqa: E731 - 2 x^2 per entry
    np.testing.assert_allclose(gradc.jacobian(f)(X), np.diag(4 * X))


@pytest.mark.parametrize("container", [list, tuple])
def test_a_one_element_list_or_tuple_output(container):
    f = lambda x: container([loss(x)])  # noqa: E731
    np.testing.assert_allclose(gradc.grad(f)(X), central_gradient(loss, X), rtol=1e-6, atol=1e-8)
    value, grad = gradc.value_and_grad(f)(X)
    assert type(value) is container and len(value) == 1 and np.isclose(value[0], loss(X))  # as f returned it
    np.testing.assert_allclose(grad, central_gradient(loss, X), rtol=1e-6, atol=1e-8)
    g = lambda p: container([loss(p["x"])])  # noqa: E731 - a pytree argument too
    np.testing.assert_allclose(gradc.grad(g)({"x": X})["x"], central_gradient(loss, X), rtol=1e-6, atol=1e-8)


def test_more_than_one_number_is_refused_clearly():
    with pytest.raises(gradc.ArgumentError, match="returns 2 values; grad needs one scalar"):
        gradc.grad(lambda x: [loss(x), loss(x)])(X)
    with pytest.raises(gradc.ShapeError, match=r"shape \(1, 2\); grad needs a scalar output"):
        gradc.grad(lambda x: np.stack([loss(x), loss(x)]).reshape(1, 2))(X)
    with pytest.raises(gradc.ArgumentError, match="needs one scalar"):
        gradc.grad(lambda p: {"a": loss(p["x"])})({"x": X})


@pytest.mark.parametrize("sections", [1, 3])
def test_vjp_of_a_function_returning_a_list(sections):
    out, pullback = gradc.vjp(lambda x: np.split(x * 2.0, sections), X)
    assert isinstance(out, list) and len(out) == sections
    np.testing.assert_allclose(np.concatenate(out), 2 * X)
    cts = [np.full(3 // sections, k + 1.0) for k in range(sections)]
    (g,) = pullback(cts)
    np.testing.assert_allclose(g, 2 * np.concatenate(cts))
    with pytest.raises(gradc.GradcError, match="cotangent"):
        pullback(np.ones(3))


@pytest.mark.parametrize(("f", "args", "kwargs", "gradc_kind", "words"), [
    (lambda x: x * 2.0, (X,), {}, gradc.ShapeError, "needs a scalar output"),
    (lambda x: x * (1.0 + 0.2j), (1.0,), {}, gradc.ArgumentError, "needs a real-valued output"),
    (lambda x: np.sum(x * 2.0), (X,), {"holomorphic": True}, gradc.ArgumentError, "needs a complex output"),
    (lambda x: np.sum(x > 0.0), (X,), {}, gradc.ArgumentError, "needs a float output"),
], ids=["array", "complex", "holomorphic-real", "bool"])
def test_output_errors_are_type_errors_as_in_jax_and_autograd(f, args, kwargs, gradc_kind, words):
    """Code written for JAX or HIPS autograd catches TypeError for grad of an output that is not a real scalar."""
    with pytest.raises(TypeError, match=words) as info:
        gradc.grad(f, **kwargs)(*args)
    assert isinstance(info.value, gradc_kind)
