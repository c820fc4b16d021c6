"""Log-sigmoid and softplus written naively take stable forms before reverse mode (``gradc.transforms.stabilise``).

Against the unrewritten graph (the interpreter, where the naive form is finite), NumPy running the user's
function, central differences, and the closed forms where the naive form overflows
(``d/dx log sigmoid(x) = sigmoid(-x)``, ``d/dx softplus(x) = sigmoid(x)``); on both targets.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient as _central

import gradc
from gradc.backends.c.build import find_compiler
from gradc.ir.interpret import evaluate
from gradc.ir.verify import verify
from gradc.transforms.stabilise import stabilise


def log_sigmoid(x):
    return np.sum(np.log(1.0 / (1.0 + np.exp(-x))))


def softplus(x):
    return np.sum(np.log(1 + np.exp(2.0 * x)))


def both_and_a_reader(x):  # the sigmoid itself is read as well: it stays, the log is rewritten
    s = 1.0 / (1.0 + np.exp(-x))
    return np.sum(np.log(s) * 0.5 + s * x) + np.sum(np.log(np.exp(x) + 1.0))


def logistic_loss(w, X, y):  # as users write it: a mean of log-sigmoids of the margins
    margins = y * (X @ w)
    return -np.mean(np.log(1 / (1 + np.exp(-margins))))


def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))



@pytest.mark.parametrize("f", [log_sigmoid, softplus, both_and_a_reader], ids=lambda f: f.__name__)
def test_agrees_with_the_unrewritten_graph_numpy_and_finite_differences(f):
    x = np.random.default_rng(0).uniform(-4.0, 4.0, 7)
    graph = gradc.trace(f, x)
    rewritten = stabilise(graph)
    verify(rewritten)
    assert sum(e.op == "logaddexp" for e in rewritten.eqns) >= 1
    np.testing.assert_allclose(evaluate(rewritten, x)[0], evaluate(graph, x)[0], rtol=1e-13)
    value, grad = gradc.compile(f, x).value_and_grad(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-13)
    np.testing.assert_allclose(grad, _central(f, x), rtol=1e-7, atol=1e-9)


def test_large_arguments_stay_finite_with_closed_form_gradients():
    x = np.array([-800.0, -40.0, 0.0, 40.0, 800.0])
    value, grad = gradc.compile(log_sigmoid, x).value_and_grad(x)
    np.testing.assert_allclose(value, -np.sum(np.logaddexp(0.0, -x)), rtol=1e-15)
    np.testing.assert_allclose(grad, _sigmoid(-x), rtol=1e-15)
    value, grad = gradc.compile(softplus, x).value_and_grad(x)
    np.testing.assert_allclose(value, np.sum(np.logaddexp(0.0, 2.0 * x)), rtol=1e-15)
    np.testing.assert_allclose(grad, 2.0 * _sigmoid(2.0 * x), rtol=1e-15)


def test_a_logistic_loss_gradient():
    rng = np.random.default_rng(1)
    X, y, w = rng.normal(size=(20, 3)), np.sign(rng.normal(size=20)), rng.normal(size=3)
    grad = gradc.compile(logistic_loss, w, X, y).grad(w, X, y)
    np.testing.assert_allclose(grad, _central(lambda v: logistic_loss(v, X, y), w), rtol=1e-7, atol=1e-10)
    far = 500.0 * w  # margins in the hundreds: the naive form's exp overflows
    assert np.all(np.isfinite(gradc.compile(logistic_loss, far, X, y).grad(far, X, y)))


def test_other_logs_are_left_alone():
    x = np.linspace(0.5, 2.0, 4)
    graph = gradc.trace(lambda v: np.sum(np.log(2.0 + np.exp(v)) + np.log(1.0 / (3.0 + v))), x)
    assert str(stabilise(graph)) == str(graph)


@pytest.mark.skipif(find_compiler() is None, reason="no C compiler")
def test_the_c_target_uses_the_stable_form():
    x = np.array([-800.0, -1.0, 0.5, 800.0])
    value, grad = gradc.compile(log_sigmoid, x, target="c").value_and_grad(x)
    np.testing.assert_allclose(value, -np.sum(np.logaddexp(0.0, -x)), rtol=1e-14)
    np.testing.assert_allclose(grad, _sigmoid(-x), rtol=1e-14)
