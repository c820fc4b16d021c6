"""A transform of a transform keeps its own choice of arguments.

``grad(grad(f, argnums=0), argnums=1)`` once returned d2f/da2 instead of d2f/da db: the
outer transform copied the inner one's attributes (its choice among them) when it took
its name and docstring. Every pair of transforms below, each with its own ``argnums``,
is compared with SymPy's derivatives of the same formula, and so are ``jit``,
``vmap`` and ``custom_vjp`` wrapped around a transform that chose another argument.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy

import gradc


def f(a, b, c):
    return np.sin(a) * b ** 2 + a * c ** 3 + np.exp(b * c) * a ** 2


POINT = (0.7, -0.4, 0.9)
SYMBOLS = sympy.symbols("a b c")
EXPR = sympy.sin(SYMBOLS[0]) * SYMBOLS[1] ** 2 + SYMBOLS[0] * SYMBOLS[2] ** 3 + \
    sympy.exp(SYMBOLS[1] * SYMBOLS[2]) * SYMBOLS[0] ** 2  # f, written again for SymPy: the reference


def derivative(*order):
    """d f / d arg order[0] d arg order[1] ..., by SymPy from the formula, at POINT."""
    expr = EXPR
    for k in order:
        expr = sympy.diff(expr, SYMBOLS[k])
    return float(expr.subs(dict(zip(SYMBOLS, POINT))))


def first(i):
    return lambda *args: float(sympy.diff(EXPR, SYMBOLS[i]).subs(dict(zip(SYMBOLS, args))))


def second(i, j):
    return lambda *args: float(sympy.diff(EXPR, SYMBOLS[i], SYMBOLS[j]).subs(dict(zip(SYMBOLS, args))))


def test_the_formula_is_f():
    """The SymPy reference is f itself (value and a central difference agree)."""
    assert abs(float(EXPR.subs(dict(zip(SYMBOLS, POINT)))) - f(*POINT)) < 1e-12
    h = 1e-6
    assert abs((f(POINT[0] + h, *POINT[1:]) - f(POINT[0] - h, *POINT[1:])) / (2 * h) - derivative(0)) < 1e-6


INNER = {
    "grad": lambda fn, i: gradc.grad(fn, argnums=i),
    "grad_wrt": lambda fn, i: gradc.grad(fn, wrt="abc"[i]),
    "value_and_grad": lambda fn, i: (lambda a, b, c: gradc.value_and_grad(fn, argnums=i)(a, b, c)[1]),
    "jacfwd": lambda fn, i: gradc.jacfwd(fn, argnums=i),
    "jacrev": lambda fn, i: gradc.jacrev(fn, argnums=i),
    "jacobian": lambda fn, i: gradc.jacobian(fn, wrt=i),
}
OUTER = {
    "grad": lambda fn, j: gradc.grad(fn, argnums=j),
    "jacfwd": lambda fn, j: gradc.jacfwd(fn, argnums=j),
    "jacrev": lambda fn, j: gradc.jacrev(fn, argnums=j),
    "jacobian": lambda fn, j: gradc.jacobian(fn, argnums=j),
}


@pytest.mark.parametrize("inner, outer", list(itertools.product(INNER, OUTER)))
def test_each_pair_of_transforms_keeps_its_own_argument(inner, outer):
    for i, j in itertools.product(range(3), range(3)):
        got = float(OUTER[outer](INNER[inner](f, i), j)(*POINT))
        want = second(i, j)(*POINT)
        assert abs(got - want) < 1e-9 * (1 + abs(want)), (inner, i, outer, j, got, want)


@pytest.mark.parametrize("seed", range(4))
def test_random_chains_of_choices(seed):
    """Three levels: a random transform per level, each with a random argument."""
    rng = np.random.default_rng(seed)
    for _ in range(4):
        i, j, k = (int(v) for v in rng.integers(0, 3, size=3))
        fn = gradc.grad(gradc.grad(gradc.grad(f, argnums=i), argnums=j), argnums=k)
        want = derivative(i, j, k)
        got = fn(*POINT)
        assert abs(got - want) < 1e-9 * (1 + abs(want)), (i, j, k, got, want)


@pytest.mark.parametrize("i", range(3))
def test_jit_vmap_and_hessian_around_a_choice(i):
    d = gradc.grad(f, argnums=i)
    assert abs(gradc.jit(d)(*POINT) - first(i)(*POINT)) < 1e-12
    batch = np.array([POINT[0], POINT[0] + 0.1])
    got = gradc.vmap(d, in_axes=(0, None, None))(batch, *POINT[1:])
    want = [first(i)(a, *POINT[1:]) for a in batch]
    np.testing.assert_allclose(got, want, rtol=1e-7)
    for j in range(3):
        want = second(i, j)(*POINT)
        got = gradc.grad(gradc.jit(d), argnums=j)(*POINT)
        assert abs(got - want) < 1e-9 * (1 + abs(want)), (i, j, got, want)
