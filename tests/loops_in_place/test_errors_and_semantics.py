"""Writes that would lose NumPy's meaning are refused at the user's line; the rest keep it exactly.

NumPy semantics checked against the function itself: the caller's array is never modified by the
compiled code, a write through a row view (``Y[i][j] = v``) reaches the array, a write through an
advanced-index copy (``y[[i]][0] = v``) does not, swaps through tuple targets read the old values.
"""
from __future__ import annotations

import numpy as np
import pytest
from finite_differences import central_gradient
from finite_differences import central_gradient as _central

import gradc
from gradc.errors import GradcWarning, TraceError

X = np.linspace(-1.0, 1.0, 12)


def writes_its_input(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
    return np.sum(x)


def writes_a_view_of_its_input(x):
    v = x[2:]
    for i in range(3):
        v[i] = np.sin(x[i])
    return np.sum(v)


def _put(out, x, i):  # writes into the caller's array and returns nothing
    out[i] = np.sin(x[i])


def helper_writes_the_callers_numpy_array(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        _put(out, x, i)
    return np.sum(out * x)


def _put_traced(out, x, i):
    out[i] = np.sin(x[i])


def helper_writes_a_traced_array_inside_a_loop(x):
    out = x * 0.0
    s = 0.0
    for i in range(x.shape[0]):
        s = s + x[i]  # a traced loop (it carries s), whose body writes through the helper's name
        _put_traced(out, x, i)
    return np.sum(out * x) + s


def helper_writes_a_traced_array(x):  # nothing carried: the loop runs in Python, NumPy's meaning kept
    out = x * 0.0
    for i in range(x.shape[0]):
        _put_traced(out, x, i)
    return np.sum(out * x)


def two_names_one_array(x):
    y = x * 1.0
    z = y
    for i in range(x.shape[0]):
        z[i] = np.sin(x[i])
        y[i] += 1.0
    return np.sum(y)


@pytest.mark.parametrize(("f", "line_text", "words"), [
    (writes_a_view_of_its_input, "v[i] = np.sin(x[i])", "the input 'x'"),
    (helper_writes_the_callers_numpy_array, "out[i] = np.sin(x[i])", "passed in as 'out'"),
    (helper_writes_a_traced_array_inside_a_loop, "out[i] = np.sin(x[i])", "returns it"),
    (two_names_one_array, "for i in range(x.shape[0]):", "one array"),
], ids=lambda v: getattr(v, "__name__", "") if callable(v) else None)
def test_refused_at_the_users_line(f, line_text, words):
    with pytest.raises(TraceError) as info:
        gradc.value_and_grad(f)(X.copy())
    message = str(info.value)
    assert words in message, message
    import inspect
    lines, start = inspect.getsourcelines(f if "helper" not in f.__name__ else
                                          {"helper_writes_the_callers_numpy_array": _put,
                                           "helper_writes_a_traced_array_inside_a_loop": _put_traced}[f.__name__])
    expected = start + next(k for k, line in enumerate(lines) if line_text in line)
    assert f"test_errors_and_semantics.py:{expected}" in message, message


def swap_neighbours(x):
    y = x * 1.0
    for i in range(x.shape[0] - 1):
        y[i], y[i + 1] = y[i + 1] * 2.0, y[i]
    return np.sum(y * np.arange(x.shape[0]))


def write_through_row(X):
    Y = np.zeros(X.shape)
    for i in range(X.shape[0]):
        Y[i][1] = X[i, 0] * X[i, 1]
        Y[i][2:] += np.sin(X[i, 2:])
    return np.sum(Y * Y)


def write_into_an_advanced_copy(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[[i]][0] = 5.0  # NumPy writes into a temporary copy: no effect
        y[i] = x[i] * 2.0
    return np.sum(y * x)


def chained_targets(x):
    a = np.zeros(x.shape[0])
    b = np.ones(x.shape[0])
    for i in range(x.shape[0]):
        a[i] = b[i] = np.tanh(x[i])
        (a[i], c), d = (a[i] * 2.0, x[i]), 3.0
        b[i] += c * d
    return np.sum(a * b)


def starred_target(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0] - 2):
        y[i], *rest = x[i] ** 2, x[i + 1], x[i + 2]
        y[i] += rest[0] * rest[1]
    return np.sum(y)


def annotated_target(x):
    y = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        y[i]: float = np.cos(x[i])
    return np.sum(y * x)



@pytest.mark.parametrize(("f", "x"), [
    (swap_neighbours, X), (write_through_row, np.cos(np.arange(24.0)).reshape(6, 4)),
    (write_into_an_advanced_copy, X), (chained_targets, X), (starred_target, X), (annotated_target, X),
    (helper_writes_a_traced_array, X),
], ids=lambda v: getattr(v, "__name__", ""))
def test_numpy_semantics_kept(f, x):
    before = x.copy()
    compiled = gradc.compile(f, x)
    value, grad = compiled.value_and_grad(x)
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, _central(f, x), rtol=1e-6, atol=1e-8)
    if f is not helper_writes_a_traced_array:
        assert "for " in compiled.source  # kept as a loop


def test_the_starting_array_stays_the_callers():
    """A loop starting from an array read after it copies it once before the loop (the ``copied`` mark)."""
    def f(x):
        start = x * 2.0
        out = start
        out = out.copy()
        for i in range(x.shape[0]):
            out[i] = out[i] * start[i]
        return np.sum(out) + np.sum(start)
    compiled = gradc.compile(f, X)
    np.testing.assert_allclose(compiled.value_and_grad(X)[0], f(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(compiled.grad(X), _central(f, X), rtol=1e-6, atol=1e-8)


def _doubles_in_place(a):
    b = a
    b += a  # Python: a new float when a is a float; NumPy: writes into the caller's array
    b *= a
    return np.sum(b)


@pytest.mark.parametrize("x", [0.7, np.float64(0.7), np.float32(0.7)])
def test_augmented_assignment_on_a_number_argument_rebinds(x):
    """`b = a; b += a` on a float leaves `a` as it was (Python's meaning): d/da (2a * a) = 4a, not 8a."""
    assert _doubles_in_place(x) == pytest.approx(2 * 0.49, rel=1e-6)
    g = gradc.grad(_doubles_in_place)(x)
    assert float(g) == pytest.approx(4 * float(x), rel=1e-6)
    assert float(gradc.hessian(_doubles_in_place)(x)) == pytest.approx(4.0, rel=1e-6)


@pytest.mark.parametrize("x", [np.array(0.7), np.array([0.7, 1.1])])
def test_augmented_assignment_on_an_array_argument_keeps_numpys_aliasing(x):
    """On an array NumPy writes into the caller's array, which ``b`` aliases: ``a`` doubles, then ``b *= a`` squares
    it, so the function of the entry value is 4 a^2 and its derivative 8a. gradc warns, works on a copy (the
    caller's array is untouched) and keeps the aliasing."""
    entry = x.copy()
    assert _doubles_in_place(x.copy()) == pytest.approx(np.sum(4 * entry ** 2))
    with pytest.warns(GradcWarning, match="changes the input 'a' in place"):
        g = gradc.grad(_doubles_in_place)(x)
    np.testing.assert_array_equal(x, entry)
    np.testing.assert_allclose(g, 8 * entry, rtol=1e-12)
    h = 1e-6  # on arrays: a 0-d array plus a step is a NumPy float, which `+=` rebinds instead of writing into
    for index in np.ndindex(entry.shape):
        step = np.zeros_like(entry)
        step[index] = h
        fd = (_doubles_in_place(np.array(entry + step)) - _doubles_in_place(np.array(entry - step))) / (2 * h)
        assert np.asarray(g)[index] == pytest.approx(fd, rel=1e-6)


def _writes_argument(A, b):
    A[1] = b
    return A


def test_writing_into_an_array_argument_warns_and_leaves_the_callers_array():
    """`A[1] = b` on an argument: NumPy's meaning on a copy (JAX and HIPS autograd raise TypeError; Tangent, like
    gradc, differentiates the function of the argument's value on entry)."""
    a = np.zeros(5)
    with pytest.warns(GradcWarning, match="changes the input 'A' in place"):
        out, pullback = gradc.vjp(_writes_argument, a, 3.0)
    np.testing.assert_array_equal(a, np.zeros(5))
    np.testing.assert_array_equal(out, [0.0, 3.0, 0.0, 0.0, 0.0])
    a_bar, b_bar = pullback(np.arange(1.0, 6.0))
    np.testing.assert_array_equal(a_bar, [1.0, 0.0, 3.0, 4.0, 5.0])  # row 1 is overwritten: no dependence
    assert float(b_bar) == 2.0


def test_writing_its_input_in_a_loop_is_numpys_loop_on_a_copy():
    x = X.copy()
    with pytest.warns(GradcWarning, match="changes the input 'x' in place"):
        value, grad = gradc.value_and_grad(writes_its_input)(x)
    np.testing.assert_array_equal(x, X)
    assert value == pytest.approx(writes_its_input(X.copy()))
    np.testing.assert_allclose(grad, central_gradient(writes_its_input, X.copy()), rtol=1e-6)


