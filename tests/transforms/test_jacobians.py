"""Jacobians and Hessians: shapes for every pair of input and output ranks, values against central
differences (NumPy only), forward against reverse, compositions, and the emitted code's form."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import gradc
from gradc.derivatives.jacobians import hessian, jacfwd, jacobian, jacrev

SHAPES = [(), (3,), (2, 3)]


def numeric_jacobian(f, x, h=1e-6):
    """Central differences, laid out as output shape + input shape."""
    x = np.asarray(x, dtype=np.float64)
    out_shape = np.shape(f(x))
    jac = np.zeros(out_shape + x.shape)
    for idx in np.ndindex(*x.shape) if x.shape else [()]:
        e = np.zeros_like(x)
        e[idx] = h
        jac[(Ellipsis,) + tuple(idx)] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return jac


def map_between(in_shape, out_shape):
    """A smooth map from in_shape to out_shape that mixes every input into every output."""
    n_out = int(np.prod(out_shape, dtype=int))
    w = np.linspace(0.3, 1.7, n_out)

    def f(x):
        s = np.sum(np.sin(x) * x) if in_shape else np.sin(x) * x
        flat = np.tanh(w * s + 0.1 * w) + s ** 2 * w
        return flat.reshape(out_shape) if out_shape else flat[0] * 1.5
    return f


@pytest.mark.parametrize("in_shape,out_shape", list(itertools.product(SHAPES, SHAPES)),
                         ids=lambda s: "x".join(map(str, s)) or "scalar")
@pytest.mark.parametrize("transform", [jacfwd, jacrev, jacobian], ids=["jacfwd", "jacrev", "jacobian"])
def test_jacobian_shapes_and_values(transform, in_shape, out_shape):
    f = map_between(in_shape, out_shape)
    rng = np.random.default_rng(len(in_shape) * 10 + len(out_shape))
    x = rng.standard_normal(in_shape) if in_shape else 0.7
    jac = transform(f)(x)
    assert np.shape(jac) == tuple(out_shape) + tuple(in_shape)
    np.testing.assert_allclose(jac, numeric_jacobian(f, x), rtol=1e-6, atol=1e-7)


def test_argnums_tuple_and_tuple_outputs_nest_like_jax():
    def f(x, y):
        return x * y[0], np.sum(x) * y

    x, y = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0])
    for transform in (jacfwd, jacrev):
        (jxx, jxy), (jyx, jyy) = transform(f, argnums=(0, 1))(x, y)
        assert jxx.shape == (3, 3) and jxy.shape == (3, 2) and jyx.shape == (2, 3) and jyy.shape == (2, 2)
        np.testing.assert_allclose(jxx, numeric_jacobian(lambda v: f(v, y)[0], x), atol=1e-7)
        np.testing.assert_allclose(jxy, numeric_jacobian(lambda v: f(x, v)[0], y), atol=1e-7)
        np.testing.assert_allclose(jyx, numeric_jacobian(lambda v: f(v, y)[1], x), atol=1e-7)
        np.testing.assert_allclose(jyy, numeric_jacobian(lambda v: f(x, v)[1], y), atol=1e-7)


@pytest.mark.parametrize("fn", [
    lambda x: np.sum(np.sin(x) * x ** 2),
    lambda x: np.log(np.sum(np.exp(x))),
    lambda x: np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2),
    lambda x: np.prod(np.tanh(x) + 2.0),
])
def test_hessian_against_second_differences(fn):
    x = np.array([0.4, -0.3, 1.1, 0.8])
    h, n = 1e-4, x.size
    eye = np.eye(n)
    expected = np.array([[(fn(x + h * eye[i] + h * eye[j]) - fn(x + h * eye[i] - h * eye[j])
                           - fn(x - h * eye[i] + h * eye[j]) + fn(x - h * eye[i] - h * eye[j])) / (4 * h * h)
                          for j in range(n)] for i in range(n)])
    hess = hessian(fn)(x)
    np.testing.assert_allclose(hess, expected, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(hess, hess.T, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jacfwd(jacrev(fn))(x), hess, rtol=1e-12)
    np.testing.assert_allclose(jacrev(jacrev(fn))(x), hess, rtol=1e-10, atol=1e-12)
    v = np.array([1.0, -2.0, 0.5, 0.25])
    np.testing.assert_allclose(gradc.hvp(fn, (x,), (v,)), hess @ v, rtol=1e-10, atol=1e-12)


def test_hessian_of_a_matrix_input_has_shape_in_plus_in():
    x = np.arange(6.0).reshape(2, 3) / 7
    hess = hessian(lambda m: np.sum(np.sin(m) ** 2))(x)
    assert hess.shape == (2, 3, 2, 3)
    np.testing.assert_allclose(hess.reshape(6, 6), np.diag(2 * np.cos(2 * x).ravel()), atol=1e-12)


def test_hessian_of_a_quadratic_form_is_emitted_in_closed_form():
    def quad(x, A):
        return x @ A @ x

    A = np.arange(16.0).reshape(4, 4) ** 0.5
    x = np.ones(4)
    h = hessian(quad)
    np.testing.assert_allclose(h(x, A), A + A.T, rtol=1e-15)
    source = h.emitted(x, A).source
    body = source.split("def quad_hessian")[1].split("\ndef ")[0]
    assert "A.T" in body and "@" not in body and "np.eye" not in body  # no products with the basis
    assert "C0" not in source  # no identity matrix constant in the module


def test_jacobians_compose_with_grad_and_run_inside_traces():
    f = lambda x: np.sin(x) * np.sum(x)  # noqa: E731
    x = np.array([0.2, 0.5, -0.4])
    g = gradc.grad(lambda x: np.sum(jacfwd(f)(x) ** 2))(x)
    np.testing.assert_allclose(g, numeric_jacobian(lambda v: np.sum(numeric_jacobian(f, v) ** 2), x, h=1e-4),
                               rtol=1e-4, atol=1e-5)
    third = jacfwd(hessian(lambda x: np.sum(x ** 4)))(x)
    expected = np.zeros((3, 3, 3))
    for i in range(3):
        expected[i, i, i] = 24 * x[i]
    np.testing.assert_allclose(third, expected, atol=1e-12)


def test_jacobian_picks_the_cheaper_mode():
    wide = lambda x: np.sum(x ** 2)  # noqa: E731  (many inputs, one output: reverse)
    tall = lambda x: np.outer(x, np.arange(50.0)).ravel()  # noqa: E731  (one input entry, many outputs: forward)
    ops = lambda fn, x: [e.op for e in jacobian(fn).emitted(x).graph.eqns]  # noqa: E731
    assert ops(wide, np.ones(20)) == [e.op for e in jacrev(wide).emitted(np.ones(20)).graph.eqns]
    assert ops(tall, np.ones(1)) == [e.op for e in jacfwd(tall).emitted(np.ones(1)).graph.eqns]
    np.testing.assert_allclose(jacobian(tall)(np.ones(1)), np.arange(50.0).reshape(50, 1))


def test_jacobian_errors_name_the_argument():
    with pytest.raises(gradc.ArgumentError, match="argnums=3 is not a parameter position"):
        jacfwd(lambda x: x, argnums=3)(np.ones(2))
    with pytest.raises(gradc.ArgumentError, match="cannot differentiate with respect to .n.: it is a static"):
        jacrev(lambda x, n: x * n, argnums=1)(np.ones(2), 3)


def test_float32_jacobian_stays_float32():
    jac = jacrev(lambda x: np.tanh(x) * 2)(np.ones(3, np.float32))
    assert jac.dtype == np.float32
    np.testing.assert_allclose(jac, np.diag(2 * (1 - np.tanh(1.0) ** 2) * np.ones(3)), rtol=1e-6)
