"""Idioms of loops and branches found by an outside probe: a branch's work runs only when it is taken,
``max``/``min`` of traced scalars, tables read at a loop's counter, second order through a loop of constants.
Values and gradients against plain Python and central finite differences.
"""
from __future__ import annotations

import ast
import warnings

import numpy as np
import pytest
from finite_differences import central_gradient as central

import gradc
from gradc.errors import TraceError
from gradc.passes.vectorise_loops import loops_kept

TABLE = np.linspace(0.0, 1.0, 500)
A3 = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, 3.0]])


def check(f, x, rtol=1e-6, atol=1e-8):
    c = gradc.compile(f, x)
    np.testing.assert_allclose(c.forward(x), f(x), rtol=1e-12)
    np.testing.assert_allclose(c.grad(x), central(f, x), rtol=rtol, atol=atol)
    value, grad = c.value_and_grad(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(grad, c.grad(x), rtol=1e-14)
    return c


def loops(source):
    return sum(isinstance(n, (ast.For, ast.While)) for n in ast.walk(ast.parse(source)))


# ---------------------------------------------------------------- a branch runs only when taken
def guarded_sqrt(x):
    if x > 0.0:
        y = np.sqrt(x)
    else:
        y = 0.5 * x
    return y


def sinc(x):
    if x != 0.0:
        return np.sin(x) / x
    return 1.0 + 0.0 * x


@pytest.mark.parametrize("x", [-2.0, 0.7])
def test_the_branch_not_taken_computes_nothing(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # sqrt of a negative number would warn (and its derivative be NaN)
        c = check(guarded_sqrt, x)
    grad_src = c.source[c.source.index("def guarded_sqrt_grad"):]
    sqrt_line = next(line for line in grad_src.splitlines() if "np.sqrt" in line)
    assert sqrt_line.startswith("        ")  # inside the `if`, not before it


def test_sinc_at_its_removable_singularity():
    c = gradc.compile(sinc, 0.0)
    assert c.forward(0.0) == 1.0 and c.grad(0.0) == 0.0  # no division by zero in the branch not taken
    np.testing.assert_allclose(c.grad(0.5), central(sinc, 0.5), rtol=1e-6)
    assert gradc.grad(gradc.grad(sinc))(0.0) == 0.0


def test_a_branch_in_a_loop_reading_an_outside_value():
    def f(a):
        s = 0.0
        for _ in range(6):
            if s < 1.0:
                s = s + np.log(a) * 0.3
            else:
                s = s - np.sqrt(a - 2.0)  # NaN for a < 2, where this branch is never taken
        return s
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check(f, 1.5)


# ---------------------------------------------------------------- max and min of traced scalars
def max_min(x):
    return max(x * x, 0.5 * x) + min(np.sin(x), 0.2)


@pytest.mark.parametrize("x", [0.3, 1.7, -0.4])
def test_max_and_min_of_traced_scalars(x):
    check(max_min, x)


def test_max_of_a_list_and_min_in_a_while_loop():
    def of_list(x):
        return max([x, 2.0 * x, x * x]) - min((x, 0.5))

    def adaptive(k):  # steps grow, the last one clipped to land on t = 1
        t, y, h = 0.0, 1.0, 0.1
        while t < 1.0:
            h = min(h, 1.0 - t)
            y = y + h * (-k * y)
            t = t + h
            h = h * 1.3
        return y
    for x in (1.1, 3.0):
        check(of_list, x)
    c = check(adaptive, 1.5)
    assert loops(c.source) >= 2  # the while loop and its adjoint


def test_max_keeps_the_first_of_equal_values():
    def f(x):
        return max(x, x * 1.0) * 3.0 + max(2.0 * x, 2.0 * x)
    c = gradc.compile(f, 0.5)
    assert c.grad(0.5) == pytest.approx(5.0)  # a tie still gives the one derivative


def test_max_of_arrays_is_a_clear_error():
    def f(x):
        return np.sum(max(x, 0.5 * x))
    with pytest.raises(TraceError, match=r"max\(\) of a traced array of shape \(3,\).*test_capture_idioms.py:\d+.*"
                                         r"np.maximum\(a, b\)"):
        gradc.compile(f, np.ones(3))


def test_a_function_of_its_own_named_max_is_left_alone():
    def f(x):
        def max(a, b):  # noqa: A001  (shadows the builtin on purpose)
            return a + b
        return max(x, x * x)
    c = gradc.compile(f, 0.5)
    assert c.grad(0.5) == pytest.approx(2.0)


# ---------------------------------------------------------------- tables read at a loop's counter
def test_a_table_read_at_the_counter_keeps_the_loop():
    def f(x):
        s = x
        for i in range(500):
            s = s + 0.01 * TABLE[i] * np.sin(s)
        return s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the global table is baked in (warned, as designed)
        c = check(f, 0.3)
    assert loops(c.source) >= 3 and len(c.source.splitlines()) < 120


def test_a_matrix_and_its_row_slices_read_at_two_counters():
    def quadform(x):
        s = 0.0
        for i in range(3):
            for j in range(3):
                s = s + A3[i, j] * x[i] * x[j]
        return s

    def rows(x):
        s = 0.0
        for i in range(3):
            s = s + np.sum(A3[i, 1:] * x[1:]) * x[i]
        return s
    x = np.array([0.3, -0.2, 0.5])
    with warnings.catch_warnings(), loops_kept():  # (the loops as captured; by default NumPy batches them)
        warnings.simplefilter("ignore")
        for f in (quadform, rows):
            assert loops(check(f, x).source) >= 2


def test_local_tables_and_a_python_list():
    def huber(w):
        X = np.array([[1.0, 2.0], [0.5, -1.0], [-1.5, 0.3], [2.0, 1.0]])
        y = np.array([0.3, 2.0, -0.5, 0.1])
        coef = [1.0, 0.5, 2.0, 1.5]  # a list of numbers read at the counter: a table too
        total = 0.0
        for i in range(4):
            r = X[i] @ w - y[i]
            if abs(r) < 0.8:
                total = total + coef[i] * 0.5 * r * r
            else:
                total = total + coef[i] * 0.8 * (abs(r) - 0.4)
        return total
    assert loops(check(huber, np.array([0.2, -0.1])).source) >= 2

    def labels(x):  # a list of strings is no table: that loop runs in Python
        names = ["a", "bb", "ccc"]
        s = x
        for i in range(3):
            s = s * len(names[i]) + 0.1
        return s
    check(labels, 0.5)


def test_a_long_unrolled_chain_compiles_to_c():
    # each step reads s twice; fused into one C expression the tree doubled per step (SymPy took minutes at 14)
    steps = [0.1 * k for k in range(40)]

    def chain(x):
        s = x
        for c in steps:  # a Python list iterated: runs in Python, 40 steps of straight-line code
            s = s + 0.01 * c * np.sin(s)
        return s
    from gradc.backends.c import build
    if build.find_compiler() is None:
        pytest.skip("no C compiler")
    in_c = gradc.compile(chain, 0.3, target="c")
    in_numpy = gradc.compile(chain, 0.3)
    np.testing.assert_allclose(in_c.grad(0.3), in_numpy.grad(0.3), rtol=1e-12)
    np.testing.assert_allclose(in_c.grad(0.3), central(chain, 0.3), rtol=1e-6)


# ---------------------------------------------------------------- second order through a loop of constants
def test_second_order_through_a_loop_started_from_an_int():
    def f(x):
        s = 0
        for i in range(6):
            s = s + x * i
        return s * s
    assert gradc.grad(gradc.grad(f))(0.4) == pytest.approx(2 * 15 * 15)
    assert float(gradc.compile(f, 0.4, mode="hessian").hessian(0.4)) == pytest.approx(450.0)


# ---------------------------------------------------------------- the loop variable read after the loop
def test_the_loop_variable_after_the_loop_is_its_last_value():
    def after(x):
        s = x
        for i in range(7):  # noqa: B007  (read after the loop)
            s = s * 0.9 + 0.05 * x
        return s * i

    def after_break(x):
        s = x
        for i in range(50):  # noqa: B007  (read after the loop)
            s = s * 1.1
            if s > 3.0:
                break
        return s + i * x

    def last_row(X):
        for row in X:  # noqa: B007  (read after the loop)
            pass
        return np.sum(row * np.sin(row))
    check(after, 0.7)
    for x in (0.5, 2.0):  # stops at i = 19 and at i = 3
        assert "for " in check(after_break, x).source
    check(last_row, np.arange(6.0).reshape(3, 2) * 0.3)


def test_the_loop_variable_after_a_loop_of_run_time_length():
    def f(x, n):
        s = x
        for i in range(n):  # noqa: B007  (read after the loop)
            s = s * 0.9
        return s * i
    c = gradc.compile(f, 0.5, np.array(4))
    for n in (1, 4, 9):
        np.testing.assert_allclose(c.forward(0.5, np.array(n)), f(0.5, n), rtol=1e-14)
        np.testing.assert_allclose(c.grad(0.5, np.array(n)), central(lambda z, n=n: f(float(z), n), 0.5),
                                   rtol=1e-6)
