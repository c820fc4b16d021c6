"""``gradc compile --mode vjp|jvp|jacobian|hessian|hvp``: the emitted units, their ``--check`` (finite
differences of the function itself), a failing check, and the errors."""
from __future__ import annotations

import ast

import numpy as np
import pytest
from cli_harness import run_cli

import gradc
from gradc.backends.c.build import find_compiler
from gradc.ops import OPS
from gradc.ops import elementwise as ew

MODEL = '''\
import numpy as np


def layer(x: "f64[3]", W: "f64[3,3]"):
    return np.tanh(W @ x) * x


def pair(x: "f64[2]", s: "f64[]"):
    return np.sin(x) * s, np.sum(x ** 2)


def loss(w: "f64[4]", X: "f64[6,4]"):
    return np.sum(np.log1p(np.exp(X @ w))) + 0.1 * np.sum(w ** 2)
'''


@pytest.fixture
def work(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


CASES = [("layer", "vjp"), ("layer", "jvp"), ("layer", "jacobian"), ("pair", "vjp"), ("pair", "jvp"),
         ("pair", "jacobian"), ("loss", "vjp"), ("loss", "jvp"), ("loss", "jacobian"), ("loss", "hessian"),
         ("loss", "hvp")]


@pytest.mark.parametrize("func,mode", CASES)
def test_every_mode_compiles_and_checks(work, func, mode):
    result = run_cli("compile", f"model.py:{func}", "--mode", mode, "--check", "-o", "out.py", cwd=work)
    assert result.status == 0, result
    assert f"check: ok: {mode} agrees with finite differences" in result.stderr
    source = (work / "out.py").read_text()
    names = [n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)]
    assert func in names and f"{func}_{mode}" in names
    assert f"--mode {mode}" in source.splitlines()[1]  # the Regenerate line


def test_emitted_units_compute_the_right_numbers(work):
    run_cli("compile", "model.py:layer", "--mode", "jacobian", "--wrt", "x", "-o", "jac.py", cwd=work)
    run_cli("compile", "model.py:loss", "--mode", "hessian", "--wrt", "w", "-o", "hess.py", cwd=work)
    namespace: dict = {}
    exec((work / "jac.py").read_text(), namespace)
    x, W = np.array([0.2, -0.4, 0.9]), np.arange(9.0).reshape(3, 3) / 10
    t = np.tanh(W @ x)
    expected = (1 - t * t)[:, None] * W * x[:, None] + np.diag(t)
    np.testing.assert_allclose(namespace["layer_jacobian"](x, W), expected, rtol=1e-12)
    exec((work / "hess.py").read_text(), namespace)
    w, X = np.array([0.1, -0.2, 0.3, 0.05]), np.linspace(-1, 1, 24).reshape(6, 4)
    s = 1 / (1 + np.exp(-(X @ w)))
    np.testing.assert_allclose(namespace["loss_hessian"](w, X), (X * (s * (1 - s))[:, None]).T @ X + 0.2 * np.eye(4),
                               rtol=1e-12)


def test_the_check_fails_on_a_wrong_rule(work, monkeypatch):
    """The modes' check is not vacuous: tanh's rule off by a factor fails it (jvp derives from the VJP rule)."""
    monkeypatch.setattr(OPS["tanh"], "vjp", lambda ct, out, x, needs: (ew.mul(ct, 0.5),))
    from gradc.transforms import forward

    forward._RULES.clear()
    try:
        for mode in ("jvp", "vjp", "jacobian"):
            result = run_cli("compile", "model.py:layer", "--mode", mode, "--check", "-o", f"{mode}.py", cwd=work)
            assert result.status == 3, result
            assert "MISMATCH" in result.stderr
    finally:
        forward._RULES.clear()


def test_mode_errors_are_one_line(work):
    result = run_cli("compile", "model.py:layer", "--mode", "hessian", cwd=work)
    assert result.status == 2 and "needs a scalar output" in result.stderr and "model.py" in result.stderr
    result = run_cli("compile", "model.py:layer", "--mode", "bogus", cwd=work)
    assert result.status == 2 and "invalid choice" in result.stderr
    result = run_cli("compile", "model.py:layer", "--mode", "hvp", "--target", "c", "-o", "x.c", cwd=work)
    assert result.status == 2 and "needs a scalar output" in result.stderr
    assert not (work / "x.c").exists()


@pytest.mark.skipif(find_compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("func,mode", CASES)
def test_every_mode_on_the_c_target(work, func, mode):
    result = run_cli("compile", f"model.py:{func}", "--mode", mode, "--target", "c", "--check", "-o", "out.c",
                     cwd=work)
    assert result.status == 0, result
    assert f"check: ok: {mode} agrees with finite differences" in result.stderr
    header = (work / "out.h").read_text()
    assert f"void gradc_fn_{func}_{mode}(" in header and "ABI:" in header


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_compile_with_a_mode_in_the_library(target):
    if target == "c" and find_compiler() is None:
        pytest.skip("no C compiler")

    def layer(x, W):
        return np.tanh(W @ x) * x

    x, W = np.array([0.2, -0.4, 0.9]), np.arange(9.0).reshape(3, 3) / 10
    t = np.tanh(W @ x)
    expected = (1 - t * t)[:, None] * W * x[:, None] + np.diag(t)
    unit = gradc.compile(layer, x, W, mode="jacobian", target=target)
    np.testing.assert_allclose(unit.jacobian(x, W), expected, rtol=1e-12)
    np.testing.assert_allclose(unit.forward(x, W), t * x, rtol=1e-15)
    v = np.array([1.0, -2.0, 0.5])
    value, dot = gradc.compile(layer, x, W, mode="jvp", target=target).jvp(x, W, v)
    np.testing.assert_allclose(dot, expected @ v, rtol=1e-12)
    value, x_bar = gradc.compile(layer, x, W, mode="vjp", target=target).vjp(x, W, v)
    np.testing.assert_allclose(x_bar, v @ expected, rtol=1e-12)
    loss = lambda w: np.sum(np.log1p(np.exp(w)))  # noqa: E731
    w = np.array([0.3, -1.0])
    s = 1 / (1 + np.exp(-w))
    np.testing.assert_allclose(gradc.compile(loss, w, mode="hessian", target=target).hessian(w), np.diag(s * (1 - s)),
                               rtol=1e-12)
    np.testing.assert_allclose(gradc.compile(loss, w, mode="hvp", target=target).hvp(w, v[:2]), s * (1 - s) * v[:2],
                               rtol=1e-12)
    with pytest.raises(gradc.ArgumentError, match="unknown mode"):
        gradc.compile(loss, w, mode="jacobians")
