"""``grad`` of an output of one element and any shape ((1,), (1, 1)), as autograd takes it: the gradient of that
element; the value keeps its shape. An output of more elements is still refused with the fix."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.errors import ShapeError
from tests.finite_differences import central_gradient


def keepdims_loss(x):
    return np.sum(x ** 2 * np.sin(x), keepdims=True)


def matrix_loss(x):
    return x[None, :1] ** 2 * x[1] + np.outer(x[1:2], x[2:3])


@pytest.mark.parametrize("fn", [keepdims_loss, matrix_loss], ids=lambda f: f.__name__)
def test_grad_of_one_element(fn):
    x = np.array([0.3, -0.7, 1.1])
    value, grad = gradc.value_and_grad(fn)(x)
    assert value.shape == fn(x).shape
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    reference = central_gradient(lambda v: fn(v).item(), x)
    np.testing.assert_allclose(grad, reference, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gradc.grad(fn)(x), reference, rtol=1e-6, atol=1e-9)
    hessian = gradc.hessian(fn)(x)  # a Jacobian of a Jacobian: the output's axes first, as JAX's and autograd's
    assert hessian.shape == fn(x).shape + (3, 3)
    np.testing.assert_allclose(hessian.reshape(3, 3), gradc.hessian(lambda v: np.sum(fn(v)))(x), rtol=1e-12)


def test_more_elements_are_still_refused():
    with pytest.raises(ShapeError, match="scalar output"):
        gradc.grad(lambda x: x[:2] ** 2)(np.ones(3))
