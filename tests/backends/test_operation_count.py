"""The emitted mlp gradient has no more operations than the hand-written one (issue 27: 44 before the rewrites).

An operation is what computes on arrays in the function's body: a call (``np.exp``, ``e.sum``,
``np.add.at``, ``np.zeros``), an arithmetic or comparison operator, an augmented assignment, and
an index with an array in it (``p[rows, labels]``). Views cost nothing and are not counted: a
reshape, a transpose (``.T``) and a basic index (``m[:, 0]``); nor is the sign of a literal
(``-0.0078125``) or the emitted code's argument checks. The hand-written value and gradient is
``benchmarks/workloads.py``'s reference (29 NumPy operations written out, 27 by this count).
"""
from __future__ import annotations

import ast
import inspect
import textwrap

import numpy as np

import gradc
from benchmarks import workloads

_VIEWS = frozenset({"reshape", "transpose", "T"})


def _basic(index: ast.expr) -> bool:
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return all(isinstance(p, (ast.Slice, ast.Constant)) for p in parts)


def operations(statements) -> list[str]:
    """The operations of the statements, by the module docstring's count."""
    found = []
    for statement in statements:
        for n in ast.walk(statement):
            if isinstance(n, ast.UnaryOp) and isinstance(n.operand, ast.Constant):
                continue  # a negative literal
            if isinstance(n, (ast.BinOp, ast.UnaryOp, ast.AugAssign, ast.Compare)):
                found.append(type(n).__name__)
            elif isinstance(n, ast.Call) and ast.unparse(n.func).split(".")[-1] not in _VIEWS:
                found.append(ast.unparse(n.func))
            elif isinstance(n, ast.Subscript) and not _basic(n.slice):
                found.append("index")
    return found


def _body(function: ast.FunctionDef) -> list:
    """The statements that compute: no docstring, argument checks (``if``) or the ``return``."""
    return [s for s in function.body if not isinstance(s, (ast.If, ast.Return))
            and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]


def _function(tree, name, containing=""):
    return next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == name
                and containing in ast.unparse(n))


def test_operations_are_counted_as_documented():
    tree = ast.parse("def f(x, m, i):\n    '''doc'''\n    y = np.exp(x - m[:, 0]).reshape(2)\n"
                     "    y[i, 0] += -1.0\n    return y.T @ x\n")
    assert operations(_body(_function(tree, "f"))) == ["np.exp", "BinOp", "AugAssign", "index"]


def test_the_emitted_mlp_gradient_has_no_more_operations_than_the_hand_written_one():
    params, consts = workloads.make_data("mlp")
    f, lead, wrt = workloads.gradc_problem("mlp", params, consts)
    compiled = gradc.compile(f, *lead, *params, wrt=list(wrt))
    emitted = _function(ast.parse(compiled.source), "mlp_loss_grad")
    hand = _function(ast.parse(textwrap.dedent(inspect.getsource(workloads.reference))), "vg", "np.tanh")
    hand_ops = operations(_body(hand)) + operations([s for s in hand.body if isinstance(s, ast.Return)])
    assert len(hand_ops) == 27
    emitted_ops = operations(_body(emitted))
    assert len(emitted_ops) <= len(hand_ops), (emitted_ops, hand_ops)
    assert "np.where" not in compiled.source and "np.zeros" not in ast.unparse(emitted)
    loss, grads = workloads.reference("mlp", consts)(*params)
    value, got = compiled.grad(*lead, *params, with_value=True)
    assert np.isclose(value, loss, rtol=1e-12)
    for g, want in zip(got, grads):
        np.testing.assert_allclose(g, want, rtol=1e-10, atol=1e-13)
