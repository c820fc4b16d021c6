"""gradc.symbolic's object (symbols, str, latex, wrt, refusals), the matrix notation and the CLI's --stage math."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import sympy as sp

import gradc
from gradc.symbolic import Symbolic, SymbolicError


def test_symbols_named_after_parameters():
    S = gradc.symbolic(lambda x, A: A[0, 1] * np.sum(x), np.ones(2), np.ones((2, 2)))
    assert [str(s) for s in S.symbols["x"]] == ["x_0", "x_1"]
    assert str(S.symbols["A"][0, 1]) == "A_0_1"
    assert isinstance(S, Symbolic) and S.wrt == ("x",)


def test_wrt_tuple_and_index():
    S = gradc.symbolic(lambda x, y: x * y ** 2, 1.0, 2.0, wrt=("x", 1))
    x, y = S.symbols["x"], S.symbols["y"]
    assert S.grad == (y ** 2, 2 * x * y)
    assert S.hessian == sp.Matrix([[0, 2 * y], [2 * y, 2 * x]])


def test_str_latex_and_repr_latex():
    S = gradc.symbolic(lambda x: np.exp(x) * x, 1.0)
    assert str(S).splitlines()[1].startswith("dlambda_/dx = ")
    assert r"\frac{\partial" in S.latex() and S._repr_latex_().startswith("$$")
    x = S.symbols["x"]
    assert sp.simplify(S.grad - (x + 1) * sp.exp(x)) == 0


def test_piecewise_for_where():
    S = gradc.symbolic(lambda x: np.where(x > 1.0, x ** 2, -x), 0.5)
    assert S.value.has(sp.Piecewise) and S.grad.has(sp.Piecewise)


def test_refusals():
    def with_while(x):
        return gradc.while_loop(lambda s: s < 10.0, lambda s: s * x, 1.0)
    with pytest.raises(SymbolicError, match="while loop"):
        gradc.symbolic(with_while, 2.0)
    with pytest.raises(SymbolicError, match="not a parameter"):
        gradc.symbolic(lambda x: x, 1.0, wrt="z")
    with pytest.raises(SymbolicError, match="scalar result"):
        gradc.symbolic(lambda x: x * 2.0, np.ones(2))
    with pytest.raises(SymbolicError, match="no SymPy formula"):
        gradc.symbolic(lambda x: np.sum(np.sort(x)), np.ones(3))


def test_matrix_least_squares():
    S = gradc.symbolic(lambda x, A, b: np.sum((A @ x - b) ** 2), np.ones(2), np.ones((3, 2)), np.ones(3))
    assert S.latex(matrix=True) == r"\nabla_{x} = 2 A^T \left(A x - b\right)"


def test_matrix_shared_subexpression_named_once():
    def f(w, X):
        z = np.exp(X @ w)
        return np.sum(z * z)
    text = gradc.symbolic(f, np.ones(2), np.ones((3, 2))).matrix_latex()
    assert text.startswith(r"\nabla_{w} = X^T") and r"\text{where } t_{1} = " in text


def test_matrix_logistic_regression_in_textbook_form():
    # the softplus form of the logistic loss (log(1 + e^z) - y z): the gradient reads X^T (sigma(X w) - y) / n
    def loss(w, X, y):
        z = X @ w
        return np.mean(np.log1p(np.exp(z)) - y * z)
    S = gradc.symbolic(loss, np.ones(2), np.ones((4, 2)), np.ones(4))
    assert S.matrix_latex() == r"\nabla_{w} = \frac{1}{4} X^T \left(\sigma\left(X w\right) - y\right)"

    def probabilities(w, X):  # 1 / (1 + exp(-X w)) is the logistic function too
        return np.sum(1.0 / (1.0 + np.exp(-(X @ w))))
    text = gradc.symbolic(probabilities, np.ones(2), np.ones((3, 2))).matrix_latex()
    assert r"\sigma\left(X w\right)" in text


def test_matrix_refuses_clearly():
    with pytest.raises(SymbolicError, match="no matrix notation"):
        gradc.symbolic(lambda x: np.sum(np.cumsum(x) ** 2), np.ones(3)).matrix_latex()


def test_cli_stage_math(tmp_path):
    source = tmp_path / "loss.py"
    source.write_text(textwrap.dedent('''
        import numpy as np

        def loss(x: "f64[2]", y: "f64[]"):
            return np.sum(np.sin(x)) * y
    '''))
    run = [sys.executable, "-m", "gradc", "show", f"{source}:loss", "--stage", "math"]
    text = subprocess.run(run, capture_output=True, text=True, check=True).stdout
    assert "dloss/dx = Matrix([" in text and "y*cos(x_0)" in text
    latex = subprocess.run(run + ["--latex"], capture_output=True, text=True, check=True).stdout
    assert latex.startswith(r"\begin{aligned}") and r"\cos{\left(x_{0} \right)}" in latex
    refused = subprocess.run([sys.executable, "-m", "gradc", "compile", f"{source}:loss", "--target", "js"],
                             capture_output=True, text=True)
    assert refused.returncode != 0 and "scalars only" in refused.stderr and "Traceback" not in refused.stderr
