"""Issue 26.4's idioms on both targets: each gradient against central differences of the user's own function
run by NumPy, and the classic perturbation-confusion cases (d/dx [x * d/dy (x + y)] = 1)."""
import functools
import shutil

import numpy as np
import pytest

import gradc


def while_true_return(x):
    while True:
        x = x - 0.1 * x
        if np.sum(x * x) < 1e-2:
            return np.sum(x)


def return_inside_for(x):
    for _ in range(10):
        if np.sum(x) > 5.0:
            return np.sum(x ** 2)
        x = x * 1.5
    return np.sum(x)


def delete_at_counter(A):
    s = 0.0
    for j in range(A.shape[1]):
        s = s + np.sum(np.delete(np.delete(A, 0, axis=0), j, axis=1) ** 2) * A[0, j]
    return s


def insert_at_counter(a):
    s = 0.0
    for j in range(3):
        s = s + np.sum(np.insert(a, j, a[j] * 2.0) ** 2)
    return s


def take_at_counter(a):
    s = 0.0
    for j in range(3):
        s = s + np.sum(np.take(a, [j, j + 1]) ** 3)
    return s


def lists_as_array_likes(a):
    xs = [a[0], a[1] * 2, a[2]]
    return (np.mean(xs) + np.std(xs) + np.var(xs) + np.linalg.norm(xs) + np.sum(np.append(xs, a[0]))
            + np.sum(np.array(xs) ** 2))


def integer_casts(a):
    k = np.int64(2)
    return a[k] * float(a[0])


def size_one_output(a):
    return np.reshape(np.sum(a ** 2), (1, 1))


def function_default(a, f=np.sin):
    return np.sum(f(a))


X3 = np.array([0.3, -0.7, 1.2])
IDIOMS = [(while_true_return, X3), (return_inside_for, X3), (delete_at_counter, np.arange(1.0, 17).reshape(4, 4) / 7),
          (insert_at_counter, X3), (take_at_counter, np.arange(1.0, 5)), (lists_as_array_likes, X3),
          (integer_casts, X3), (size_one_output, X3), (function_default, X3)]


def _central(f, x, h=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (float(np.sum(f(x + e))) - float(np.sum(f(x - e)))) / (2 * h)
    return out


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("f, x", IDIOMS, ids=[f.__name__ for f, _ in IDIOMS])
def test_idiom_gradient(f, x, target):
    if target == "c" and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    value, grad = gradc.compile(f, x, target=target).value_and_grad(x)
    np.testing.assert_allclose(np.sum(value), np.sum(f(x)), rtol=1e-12)
    np.testing.assert_allclose(grad, _central(f, x), rtol=1e-5, atol=1e-7)


def test_perturbations_are_not_confused():
    two, three = np.float64(2.0), np.float64(3.0)
    assert gradc.grad(lambda x: x * gradc.grad(lambda y: x + y)(np.float64(1.0)))(two) == pytest.approx(1.0)
    assert gradc.grad(lambda x: gradc.grad(lambda y: x * y)(three))(two) == pytest.approx(1.0)
    assert gradc.grad(lambda x: x * gradc.grad(lambda y: x * y)(three))(two) == pytest.approx(4.0)
    assert gradc.grad(lambda x: gradc.grad(lambda y: x * y ** 2)(x))(three) == pytest.approx(12.0)


def test_ufuncs_and_partials_to_transforms():
    x = X3
    np.testing.assert_allclose(gradc.vjp(np.sin, x)[1](np.ones(3))[0], np.cos(x))
    np.testing.assert_allclose(gradc.grad(functools.partial(np.sum, axis=0))(x), np.ones(3))
    np.testing.assert_allclose(gradc.jacobian(np.sin)(x), np.diag(np.cos(x)))
    np.testing.assert_allclose(gradc.grad(lambda a: [np.sum(a ** 2)])(x), 2 * x)  # a one-element list
