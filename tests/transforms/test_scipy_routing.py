"""SciPy's Python functions are routed however the traced code reaches them, at any nesting of transforms.

gradc routes ``scipy.special.logsumexp`` by rewriting the names a function sees; code reached through an
attribute of an object (``holder.fn(x)``), a method, a partial or a dict used to escape that when the caller
was a lambda (lambdas were not rewritten), which broke nested transforms (issue 26). References: SciPy itself
on NumPy arrays and central differences of it."""
import functools

import numpy as np
import pytest
import scipy_routing_helpers as helpers
from finite_differences import central_gradient

import gradc

WAYS = {  # name -> the function of x (a (2, 3) array) whose sum is differentiated
    "attribute_lambda": lambda x: helpers.holder.fn(x),
    "method": lambda x: helpers.holder.method(x),
    "partial": lambda x: helpers.partial_rows(x),
    "dict": lambda x: helpers.table["softplus"](x),
    "alias_of_attribute": lambda x: (lambda f: f(x))(helpers.holder.fn),
    "partial_here": lambda x: functools.partial(helpers.rows, axis=0)(x),
}


def _loss(way):
    fn = WAYS[way]
    return lambda x: np.sum(np.sin(fn(x)))


def _have_cc():
    import shutil
    return shutil.which("cc") is not None or shutil.which("gcc") is not None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("way", sorted(WAYS))
def test_gradient_matches_scipy_finite_differences(way, seed):
    x = np.random.default_rng(seed).standard_normal((2, 3))
    loss = _loss(way)
    np.testing.assert_allclose(gradc.grad(loss)(x), central_gradient(loss, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("way", sorted(WAYS))
def test_c_target_matches_numpy(way):
    if not _have_cc():
        pytest.skip("no C compiler")
    x = np.random.default_rng(7).standard_normal((2, 3))
    loss = _loss(way)
    value, grad = gradc.compile(loss, x, target="c").value_and_grad(x)
    np.testing.assert_allclose(value, loss(x), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(loss, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("way", sorted(WAYS))
def test_hessian_vector_product_nested(way):
    """grad of <grad(loss), v>: the inner transform traces the same helpers on the outer one's traced values."""
    rng = np.random.default_rng(11)
    x, v = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    g = gradc.grad(_loss(way))
    hv = gradc.grad(lambda a: np.sum(g(a) * v))(x)
    np.testing.assert_allclose(hv, central_gradient(lambda a: np.sum(g(a) * v), x, h=1e-5), rtol=1e-5, atol=1e-7)


def test_lambdas_on_one_line_are_told_apart():
    """Two lambdas on one line: each is rewritten as itself (its instructions' columns), never the other."""
    f, g = (lambda x: np.sum(helpers.holder.fn(x))), (lambda x: np.sum(helpers.holder.fn(2.0 * x)))
    x = np.random.default_rng(3).standard_normal((2, 3))
    np.testing.assert_allclose(gradc.grad(f)(x), central_gradient(f, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gradc.grad(g)(x), central_gradient(g, x), rtol=1e-6, atol=1e-8)
