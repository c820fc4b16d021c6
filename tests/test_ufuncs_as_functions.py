"""A NumPy ufunc given to a transform is the function of its inputs (``gradc.grad(np.sin)``), as in JAX:
its keyword options (``out=``, ``dtype=``, ``where=``) are not parameters. Checked against central differences."""
import numpy as np
import pytest

import gradc

UNARY = [np.sin, np.tanh, np.exp, np.log1p, np.arctan, np.sqrt, np.cbrt]
BINARY = [np.multiply, np.arctan2, np.hypot, np.power, np.logaddexp, np.true_divide]


def _slope(f, args, k, h=1e-6):
    up, down = list(args), list(args)
    up[k] += h
    down[k] -= h
    return (f(*up) - f(*down)) / (2 * h)


@pytest.mark.parametrize("ufunc", UNARY, ids=lambda u: u.__name__)
def test_unary_ufunc_through_every_scalar_transform(ufunc):
    x = 0.7
    slope = _slope(ufunc, [x], 0)
    assert gradc.grad(ufunc)(x) == pytest.approx(slope, rel=1e-7)
    assert gradc.value_and_grad(ufunc)(x)[0] == pytest.approx(ufunc(x), rel=1e-15)  # math or NumPy: an ulp
    assert gradc.jvp(ufunc, (x,), (1.0,))[1] == pytest.approx(slope, rel=1e-7)
    assert gradc.vjp(ufunc, x)[1](1.0)[0] == pytest.approx(slope, rel=1e-7)
    curvature = (ufunc(x + 1e-4) - 2 * ufunc(x) + ufunc(x - 1e-4)) / 1e-8
    assert gradc.hessian(ufunc)(x) == pytest.approx(curvature, rel=1e-4, abs=1e-6)


@pytest.mark.parametrize("ufunc", BINARY, ids=lambda u: u.__name__)
def test_binary_ufunc_each_argument(ufunc):
    args = [0.8, 1.3]
    for k in (0, 1):
        assert gradc.grad(ufunc, wrt=k)(*args) == pytest.approx(_slope(ufunc, args, k), rel=1e-7)


def test_a_ufunc_on_arrays_gives_its_jacobian_and_compiles_to_c():
    x = np.array([0.2, 0.9, -0.4])
    assert np.allclose(gradc.jacobian(np.sin)(x), np.diag(np.cos(x)))
    c = gradc.compile(np.arctan2, 1.0, 2.0, target="c")
    assert c.grad(1.0, 2.0) == pytest.approx(2.0 / 5.0)


def test_a_ufunc_with_an_array_output_under_grad_is_a_clear_error():
    with pytest.raises(gradc.GradcError, match=r"tanh returns an array of shape \(2,\).*numpy:tanh"):
        gradc.grad(np.tanh)(np.ones(2))
