"""gradc.symbolic's gradient and Hessian against SymPy's own diff of the same mathematics written in SymPy:
symbolically (simplify(a - b) == 0) and numerically at seeded random points, on a table of functions."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import gradc

x, y, z = sp.symbols("x y z", real=True)
x0, x1, x2 = sp.symbols("x_0 x_1 x_2", real=True)
X = [x0, x1, x2]


def _loop(v):
    s = 0.0
    for i in range(3):
        s = s * v[i] + np.sin(v[i])
    return s


def _loop_ref():
    s = 0
    for i in range(3):
        s = s * X[i] + sp.sin(X[i])
    return s


def _fori(v):
    return gradc.fori_loop(0, 3, lambda i, s: s * v[i] + 1.0, 0.0)


def _fori_ref():
    s = 0
    for i in range(3):
        s = s * X[i] + 1
    return s


# (name, f, example args, SymPy expression of the same mathematics, its variables in wrt order, domain)
SCALAR = [  # f(x, y) of two scalars; wrt x
    ("poly", lambda a, b: a ** 3 * b - 2 * a * b ** 2, x ** 3 * y - 2 * x * y ** 2),
    ("exp_sin", lambda a, b: np.exp(a) * np.sin(b * a), sp.exp(x) * sp.sin(y * x)),
    ("log_pos", lambda a, b: np.log(a * a + b * b + 1.0), sp.log(x ** 2 + y ** 2 + 1)),
    ("tanh", lambda a, b: np.tanh(a * b), sp.tanh(x * y)),
    ("quotient", lambda a, b: a / (1.0 + b * b), x / (1 + y ** 2)),
    ("sqrt", lambda a, b: np.sqrt(a * a + b * b + 1.0), sp.sqrt(x ** 2 + y ** 2 + 1)),
    ("arctan", lambda a, b: np.arctan(a / (1.0 + b * b)), sp.atan(x / (1 + y ** 2))),
    ("cosh", lambda a, b: np.cosh(a) - np.sinh(b * a), sp.cosh(x) - sp.sinh(y * x)),
    ("pow_real", lambda a, b: (a * a + 1.0) ** 2.5, (x ** 2 + 1) ** sp.Rational(5, 2)),
    ("sigmoid", lambda a, b: 1.0 / (1.0 + np.exp(-a * b)), 1 / (1 + sp.exp(-x * y))),
    ("log1p", lambda a, b: np.log1p(a * a) * b, sp.log(1 + x ** 2) * y),
    ("expm1", lambda a, b: np.expm1(a) / (b * b + 1.0), (sp.exp(x) - 1) / (y ** 2 + 1)),
    ("cos_cos", lambda a, b: np.cos(np.cos(a) + b), sp.cos(sp.cos(x) + y)),
    ("arcsinh", lambda a, b: np.arcsinh(a * b), sp.asinh(x * y)),
    ("hypot", lambda a, b: np.hypot(a, b), sp.sqrt(x ** 2 + y ** 2)),
    ("arctan2", lambda a, b: np.arctan2(a, b), sp.atan2(x, y)),
    ("logaddexp", lambda a, b: np.logaddexp(a, b), sp.log(sp.exp(x) + sp.exp(y))),
    ("erf", lambda a, b: __import__("scipy.special").special.erf(a * b), sp.erf(x * y)),
    ("tan", lambda a, b: np.tan(a / 4.0) + b, sp.tan(x / 4) + y),
    ("log10", lambda a, b: np.log10(a * a + 2.0) * b, sp.log(x ** 2 + 2, 10) * y),
    ("exp2", lambda a, b: np.exp2(a) * b, 2 ** x * y),
    ("pow_var", lambda a, b: (a * a + 1.0) ** b, (x ** 2 + 1) ** y),
    ("abs", lambda a, b: np.abs(a) * b, sp.Piecewise((x, x >= 0), (-x, True)) * y),
    ("maximum", lambda a, b: np.maximum(a, b) * a, sp.Piecewise((x, x >= y), (y, True)) * x),
    ("minimum", lambda a, b: np.minimum(a * a, b), sp.Piecewise((x ** 2, x ** 2 <= y), (y, True))),
    ("where", lambda a, b: np.where(a > b, a * b, a + b), sp.Piecewise((x * y, x > y), (x + y, True))),
    ("clip", lambda a, b: np.clip(a, -0.5, 0.5) * b, sp.Piecewise((-sp.Rational(1, 2), x < -sp.Rational(1, 2)),
                                                                  (sp.Rational(1, 2), x > sp.Rational(1, 2)),
                                                                  (x, True)) * y),
    ("nested", lambda a, b: np.exp(np.sin(a) ** 2) / (1.0 + np.cos(b) ** 2),
     sp.exp(sp.sin(x) ** 2) / (1 + sp.cos(y) ** 2)),
]
VECTOR = [  # f(v) of a 3-vector; wrt v
    ("sum_sq", lambda v: np.sum(v ** 2), sum(e ** 2 for e in X)),
    ("dot_self", lambda v: v @ v + np.sum(np.sin(v)), sum(e ** 2 + sp.sin(e) for e in X)),
    ("prod", lambda v: np.prod(v), x0 * x1 * x2),
    ("mean_exp", lambda v: np.mean(np.exp(v)), sum(sp.exp(e) for e in X) / 3),
    ("logsumexp", lambda v: np.log(np.sum(np.exp(v))), sp.log(sum(sp.exp(e) for e in X))),
    ("index", lambda v: v[0] * v[2] - v[1] ** 2, x0 * x2 - x1 ** 2),
    ("slice", lambda v: np.sum(v[1:] * v[:-1]), x1 * x0 + x2 * x1),
    ("reverse", lambda v: np.sum(v[::-1] * np.arange(3.0)), 2 * x0 + x1),
    ("matvec", lambda v: np.sum((np.array([[1.0, 2.0, 0.0], [0.0, 1.0, -1.0]]) @ v - 1.0) ** 2),
     (x0 + 2 * x1 - 1) ** 2 + (x1 - x2 - 1) ** 2),
    ("outer", lambda v: np.sum(np.outer(v, v) * np.eye(3)), sum(e ** 2 for e in X)),
    ("reshape", lambda v: np.sum(np.concatenate([v, v * 2.0]).reshape(2, 3)[1] * v), sum(2 * e ** 2 for e in X)),
    ("softplus", lambda v: np.sum(np.log(1.0 + np.exp(v))), sum(sp.log(1 + sp.exp(e)) for e in X)),
    ("norm", lambda v: np.sqrt(np.sum(v * v) + 1.0), sp.sqrt(sum(e ** 2 for e in X) + 1)),
    ("softmax_0", lambda v: np.exp(v[0]) / np.sum(np.exp(v)), sp.exp(x0) / sum(sp.exp(e) for e in X)),
    ("loop", _loop, _loop_ref()),
    ("fori_loop", _fori, _fori_ref()),
    ("cumsum", lambda v: np.sum(np.cumsum(v) ** 2), x0 ** 2 + (x0 + x1) ** 2 + (x0 + x1 + x2) ** 2),
    ("rosenbrock", lambda v: np.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2),
     100 * (x1 - x0 ** 2) ** 2 + (1 - x0) ** 2 + 100 * (x2 - x1 ** 2) ** 2 + (1 - x1) ** 2),
    ("transpose", lambda v: np.sum(np.outer(v, np.arange(1.0, 3.0)).T[1] * v), sum(2 * e ** 2 for e in X)),
    ("tanh_layer", lambda v: np.sum(np.tanh(np.array([[0.5, -1.0, 2.0]]) @ v)), sp.tanh(x0 / 2 - x1 + 2 * x2)),
    ("where_vec", lambda v: np.sum(np.where(v > 0, v, 0.1 * v) ** 2),
     sum(sp.Piecewise((e, e > 0), (e / 10, True)) ** 2 for e in X)),
    ("abs_vec", lambda v: np.sum(np.abs(v) * v), sum(sp.Piecewise((e, e >= 0), (-e, True)) * e for e in X)),
]


def _numeric_close(a, b, symbols, rng):
    fa, fb = sp.lambdify(symbols, a, "numpy"), sp.lambdify(symbols, b, "numpy")
    for _ in range(4):
        point = rng.uniform(-1.5, 1.5, len(symbols)) + 0.05  # away from the kinks at 0
        va, vb = np.asarray(fa(*point), dtype=float), np.asarray(fb(*point), dtype=float)
        np.testing.assert_allclose(va, vb, rtol=1e-9, atol=1e-9)


def _zero(entry) -> bool:
    """simplify(entry) == 0, trying the rewrites SymPy needs for hyperbolic and piecewise forms."""
    for form in (entry, entry.rewrite(sp.exp), sp.piecewise_fold(entry.rewrite(sp.Piecewise))):
        if sp.simplify(form) == 0:
            return True
    return False


def _same(a, b, symbols, rng):
    _numeric_close(a, b, symbols, rng)
    if isinstance(a, sp.MatrixBase):
        return all(_zero(entry) for entry in sp.Matrix(a) - sp.Matrix(b))
    return _zero(a - b)


@pytest.mark.parametrize("name,f,expr", SCALAR, ids=[row[0] for row in SCALAR])
def test_scalar_functions(name, f, expr):
    rng = np.random.default_rng(len(name))
    S = gradc.symbolic(f, 0.3, 0.7)
    rename = dict(zip(S.symbols.values(), [x, y]))  # the lambda's parameter names to the table's
    _numeric_close(S.value.subs(rename), expr, [x, y], rng)
    expected = sp.diff(expr, x)
    assert _same(S.grad.subs(rename), expected, [x, y], rng) or name in _NUMERIC_ONLY
    hessian = sp.hessian(expr, [x])
    assert _same(S.hessian.subs(rename), hessian, [x, y], rng) or name in _NUMERIC_ONLY


@pytest.mark.parametrize("name,f,expr", VECTOR, ids=[row[0] for row in VECTOR])
def test_vector_functions(name, f, expr):
    rng = np.random.default_rng(len(name))
    S = gradc.symbolic(f, np.array([0.3, 0.7, 1.1]))
    rename = dict(zip(list(S.symbols.values())[0], X))
    _numeric_close(S.value.subs(rename), expr, X, rng)
    expected = sp.Matrix([sp.diff(expr, e) for e in X])
    assert _same(S.grad.subs(rename), expected, X, rng) or name in _NUMERIC_ONLY
    assert _same(S.hessian.subs(rename), sp.hessian(expr, X), X, rng) or name in _NUMERIC_ONLY


# gradc's derivative at a kink (abs'(0) = 0, a tie of maximum/minimum split in half) differs from SymPy's diff
# of the Piecewise on that measure-zero set, so simplify(a - b) is not 0 there: these are compared numerically,
# at random points away from the kinks
_NUMERIC_ONLY: set = {"abs", "maximum", "minimum", "abs_vec"}


def test_table_size():
    assert len(SCALAR) + len(VECTOR) >= 40
