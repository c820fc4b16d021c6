"""``gradc compile --target array_api``: the module on disk runs under array-api-strict and NumPy alike."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import gradc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "cli"))
from cli_harness import run_cli  # noqa: E402

xps = pytest.importorskip("array_api_strict")

LOSS = """import numpy as np


def loss(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, z) - y * z)
"""


def test_compile_target_array_api_writes_a_module_any_namespace_runs(tmp_path):
    (tmp_path / "model.py").write_text(LOSS)
    result = run_cli("compile", "model.py:loss", "--wrt", "w", "--arg", "w=f64[3]", "--arg", "X=f64[6,3]",
                     "--arg", "y=f64[6]", "--target", "array_api", "-o", "loss_grad.py", "--check", cwd=tmp_path)
    assert result.status == 0, result
    source = (tmp_path / "loss_grad.py").read_text()
    assert "--target array_api" in source and "from array_api_compat import array_namespace" in source
    assert "import numpy" not in source
    namespace: dict = {}
    exec(compile(source, "loss_grad.py", "exec"), namespace)
    rng = np.random.default_rng(2)
    w, X, y = rng.standard_normal(3), rng.standard_normal((6, 3)), (rng.random(6) < 0.5) * 1.0
    expected = gradc.compile(lambda w, X, y: np.mean(np.logaddexp(0.0, X @ w) - y * (X @ w)), w, X, y).grad(w, X, y)
    strict = namespace["loss_grad"](xps.asarray(w), xps.asarray(X), xps.asarray(y))
    np.testing.assert_allclose(np.asarray(strict), expected, rtol=1e-12)
    np.testing.assert_allclose(namespace["loss_grad"](w, X, y), expected, rtol=1e-12)


def test_compile_target_array_api_refuses_other_modes(tmp_path):
    (tmp_path / "model.py").write_text(LOSS)
    result = run_cli("compile", "model.py:loss", "--wrt", "w", "--arg", "w=f64[3]", "--arg", "X=f64[6,3]",
                     "--arg", "y=f64[6]", "--target", "array_api", "--mode", "hessian", cwd=tmp_path)
    assert result.status != 0 and "--target array_api emits --mode grad only" in result.stderr
