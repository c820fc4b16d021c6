"""``compile(f, mode="hvp")``'s ``grad_and_hvp``: the gradient and the Hessian-vector product from one call.

References are independent of gradc: central differences of the user's function for the gradient,
and central differences of those differences along the tangent for ``H v``; the separate
``grad`` and ``hvp`` functions must agree too. Both targets, the CLI unit, pickling, ``gradc.check``.
"""
from __future__ import annotations

import os
import pickle
import sys

import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "cli"))
from cli_harness import run_cli  # noqa: E402

TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(find_compiler() is None, reason="no C compiler"))]


def loss(w, X, y):
    z = X @ w
    return np.sum(np.log1p(np.exp(-y * z))) + 0.5 * np.sum(w ** 2) * np.sum(np.sin(w))


def pair(a, b):
    return np.sum(np.tanh(a * b) ** 2) + np.sum(a ** 3 * np.cos(b))


def _gradient_fd(f, args, k, h=1e-6):
    """Central differences of ``f`` in argument ``k``, entry by entry."""
    x = args[k]
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[k][i] += h
        down[k][i] -= h
        out[i] = (f(*up) - f(*down)) / (2 * h)
    return out


def _hvp_fd(f, args, ks, tangents, k, h=1e-4):
    """``H v`` in argument ``k`` by central differences of the (central-difference) gradient along ``tangents``."""
    up, down = list(args), list(args)
    for j, t in zip(ks, tangents):
        up[j] = args[j] + h * t
        down[j] = args[j] - h * t
    return (_gradient_fd(f, up, k) - _gradient_fd(f, down, k)) / (2 * h)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_one_call_gives_the_gradient_and_the_product(target, seed):
    rng = np.random.default_rng(seed)
    w, X, y = rng.normal(size=3), rng.normal(size=(5, 3)), np.sign(rng.normal(size=5))
    v = rng.normal(size=3)
    unit = gradc.compile(loss, w, X, y, mode="hvp", target=target)
    g, hv = unit.grad_and_hvp(w, X, y, v)
    np.testing.assert_allclose(g, _gradient_fd(loss, [w, X, y], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hv, _hvp_fd(loss, [w, X, y], [0], [v], 0), rtol=1e-4, atol=1e-6)
    # the same numbers as the separate functions (same rules, one sweep)
    np.testing.assert_allclose(hv, unit.hvp(w, X, y, v), rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(g, gradc.grad(loss)(w, X, y), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("target", TARGETS)
def test_several_arguments_give_a_tuple_of_gradients_and_a_tuple_of_products(target):
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=4), rng.normal(size=4)
    da, db = rng.normal(size=4), rng.normal(size=4)
    unit = gradc.compile(pair, a, b, mode="hvp", argnums=(0, 1), target=target)
    (ga, gb), (ha, hb) = unit.grad_and_hvp(a, b, da, db)
    np.testing.assert_allclose(ga, _gradient_fd(pair, [a, b], 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, _gradient_fd(pair, [a, b], 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(ha, _hvp_fd(pair, [a, b], [0, 1], [da, db], 0), rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(hb, _hvp_fd(pair, [a, b], [0, 1], [da, db], 1), rtol=1e-4, atol=1e-6)
    separate = unit.hvp(a, b, da, db)
    np.testing.assert_allclose(ha, separate[0], rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(hb, separate[1], rtol=1e-13, atol=1e-14)


def test_the_numpy_unit_runs_the_forward_once_and_pickles():
    a, b = np.linspace(0.1, 1.0, 4), np.linspace(-1.0, 1.0, 4)
    unit = gradc.compile(pair, a, b, mode="hvp")
    body = unit.source.split("def pair_grad_and_hvp(")[1].split("\ndef ")[0]
    assert body.count("np.tanh(") == 1  # one forward sweep serves both results
    again = pickle.loads(pickle.dumps(unit))
    got, want = again.grad_and_hvp(a, b, np.ones(4)), unit.grad_and_hvp(a, b, np.ones(4))
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    assert gradc.compile(pair, a, b, mode="hvp").source == unit.source  # deterministic


def test_a_non_scalar_function_is_refused_clearly():
    with pytest.raises(gradc.GradcError, match="scalar"):
        gradc.compile(lambda x: np.sin(x), np.ones(3), mode="hvp")


@pytest.mark.parametrize("target", TARGETS)
def test_check_compares_grad_and_hvp_with_finite_differences(target):
    w, X, y = np.array([0.3, -0.2, 0.5]), np.arange(15.0).reshape(5, 3) / 10, np.array([1.0, -1, 1, -1, 1])
    unit = gradc.compile(loss, w, X, y, mode="hvp", target=target)
    report = gradc.check(unit, loss, w, X, y)
    assert report.passed and "grad_and_hvp: gradient" in str(report), str(report)
    right = unit.grad_and_hvp
    unit.grad_and_hvp = lambda *args: (right(*args)[0] * 1.001, right(*args)[1])  # a wrong gradient is caught
    assert not gradc.check(unit, loss, w, X, y, raise_on_failure=False).passed


MODEL = '''\
import numpy as np


def loss(w: "f64[4]", X: "f64[6,4]"):
    return np.sum(np.log1p(np.exp(X @ w))) + 0.1 * np.sum(w ** 2)
'''


@pytest.mark.parametrize("target", TARGETS)
def test_cli_mode_hvp_emits_grad_and_hvp(tmp_path, target):
    (tmp_path / "model.py").write_text(MODEL)
    out = "out.c" if target == "c" else "out.py"
    result = run_cli("compile", "model.py:loss", "--mode", "hvp", "--target", target, "--check", "-o", out,
                     cwd=tmp_path)
    assert result.status == 0, result
    assert "check: ok: hvp agrees with finite differences" in result.stderr
    source = (tmp_path / out).read_text()
    assert ("gradc_fn_loss_grad_and_hvp(" if target == "c" else "def loss_grad_and_hvp(") in source
    if target == "numpy":
        namespace: dict = {}
        exec(source, namespace)
        rng = np.random.default_rng(3)
        w, X, v = rng.normal(size=4), rng.normal(size=(6, 4)), rng.normal(size=4)
        f = namespace["loss"]
        g, hv = namespace["loss_grad_and_hvp"](w, X, v)
        np.testing.assert_allclose(g, _gradient_fd(f, [w, X], 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(hv, _hvp_fd(f, [w, X], [0], [v], 0), rtol=1e-4, atol=1e-6)
