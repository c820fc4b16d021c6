"""Golden files for the tutorial loss: IR text and emitted NumPy source.

Run ``pytest tests/test_golden.py --update-golden`` to rewrite them after an
intended change to the output; the diff of tests/golden/ is then part of review.
"""
import ast
import os

import numpy as np
import pytest

import gradc
from gradc.transforms import reverse as ad

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")


def loss(x, y, w, b):
    z = x @ w + b
    return np.mean(np.maximum(z, 0) - z * y + np.log1p(np.exp(-np.abs(z))))


def example_args():
    return np.ones((4, 3)), np.zeros(4), np.ones(3), 0.5


def compiled_loss():
    return gradc.compile(loss, *example_args(), wrt=("w", "b"))


def outputs():
    raw = gradc.trace(loss, *example_args())
    compiled = compiled_loss()
    return {
        "tutorial_loss.ir.txt": str(raw),
        "tutorial_loss_grad_raw.ir.txt": str(ad.grad_graph(raw, ["w", "b"], name="loss_grad")),
        "tutorial_loss_grad.ir.txt": str(compiled.grad_graph),
        "tutorial_loss.numpy.py.txt": compiled.source,
    }


@pytest.mark.parametrize("name", sorted(outputs()))
def test_golden(name, update_golden):
    text = outputs()[name]
    path = os.path.join(GOLDEN, name)
    if update_golden:
        os.makedirs(GOLDEN, exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
        return
    assert os.path.exists(path), f"missing golden file {path}; run pytest --update-golden"
    with open(path, encoding="utf-8") as fh:
        expected = fh.read()
    assert text == expected, f"{name} differs from tests/golden/{name}; review, then run pytest --update-golden"


def function_def(source, name):
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise AssertionError(f"no function {name} in the emitted source")


def body_statements(fn):
    """Statements after the argument checks: the computation itself."""
    return [s for s in fn.body if not isinstance(s, ast.If) and not (
        isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]


@pytest.mark.parametrize("function", ["loss_grad", "loss_value_and_grad", "loss"])
def test_emitted_gradient_has_no_dead_or_repeated_statement(function):
    fn = function_def(compiled_loss().source, function)
    statements = body_statements(fn)
    assigned, rhs_seen = {}, {}
    used = {n.id for s in statements for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for s in statements:
        if isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name):
            name = s.targets[0].id
            assert name not in assigned, f"{name} assigned twice"
            assigned[name] = s
            rhs = ast.unparse(s.value)
            assert rhs not in rhs_seen, f"{name} = {rhs} repeats {rhs_seen[rhs]} = {rhs}"
            rhs_seen[rhs] = name
    dead = sorted(set(assigned) - used)
    assert not dead, f"dead statements in {function}: {dead}"
    assert isinstance(statements[-1], ast.Return)


def test_golden_source_is_what_runs():
    # the emitted gradient is correct, so the golden file records working code
    compiled = compiled_loss()
    args = example_args()
    w_bar, b_bar = compiled.grad(*args)
    h = 1e-6
    e = np.zeros(3)
    e[1] = h
    fd = (loss(args[0], args[1], args[2] + e, args[3]) - loss(args[0], args[1], args[2] - e, args[3])) / (2 * h)
    assert abs(w_bar[1] - fd) < 1e-8
    fd_b = (loss(args[0], args[1], args[2], args[3] + h) - loss(args[0], args[1], args[2], args[3] - h)) / (2 * h)
    assert abs(b_bar - fd_b) < 1e-8
