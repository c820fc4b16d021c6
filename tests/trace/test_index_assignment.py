"""Index assignment into arrays the function creates: functional updates with NumPy's exact semantics.

Gradients are checked against central differences of the same function run by NumPy; the runtime
functions of ``gradc.trace.inplace`` are also called directly, on concrete and on traced values.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.errors import GradcWarning, ShapeError, TraceError
from gradc.trace import inplace


def numeric_grad(f, args, k, h=1e-6):
    """The gradient of scalar ``f`` in argument ``k`` by central differences (NumPy, float64)."""
    x = np.asarray(args[k], dtype=np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        up = list(args)
        up[k] = x + e
        down = list(args)
        down[k] = x - e
        g[i] = (f(*up) - f(*down)) / (2 * h)
    return g


def check(f, *args, wrt=(0,)):
    """gradc's value and gradient of ``f`` agree with NumPy's value and central differences."""
    names = tuple(f.__code__.co_varnames[k] for k in wrt)
    value, grads = gradc.value_and_grad(f, wrt=names)(*args)
    grads = grads if isinstance(grads, tuple) else (grads,)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    for k, g in zip(wrt, grads):
        np.testing.assert_allclose(g, numeric_grad(f, args, k), rtol=1e-6, atol=1e-8)


rng = np.random.default_rng(7)
X = rng.standard_normal(4)
M = rng.standard_normal((3, 4))


# ---------------------------------------------------------------- the patterns, through plain NumPy syntax
def element_into_zeros(x):
    out = np.zeros(4)
    out[1] = x[0] * x[2]
    out[3] = np.sin(x[1])
    return np.sum(out * np.arange(1.0, 5.0))


def column_into_zeros(m):
    out = np.zeros((3, 3))
    out[:, 0] = m[:, 1]
    out[1] = m[0, :3] ** 2  # a row, over the column just written
    return np.sum(np.tanh(out) * np.arange(9.0).reshape(3, 3))


def rows_cols_pairs(m, v):
    a = np.zeros((3, 4))
    a[np.array([0, 2, 1]), np.array([3, 0, 0])] = v[:3]
    return np.sum(np.exp(a) * m)


def repeated_positions_last_write(v):
    out = np.zeros(3)
    out[np.array([0, 2, 0, 0])] = v  # NumPy keeps v[3] at position 0
    return np.sum(out ** 3)


def augmented_repeated_buffered(x, v):
    y = x.copy()
    y[np.array([1, 1, 3])] += v[:3]  # buffered: position 1 gets v[1] only
    y[::2] *= 2.0
    y[-1] -= x[0]
    y[0] /= 1.5 + x[1] ** 2
    return np.sum(y ** 2)


def add_at_accumulates(x, v):
    out = np.zeros(4)
    np.add.at(out, np.array([1, 1, 3, 1]), v)  # unbuffered: position 1 gets v[0] + v[1] + v[3]
    np.subtract.at(out, np.array([0, 0]), x[:2])
    return np.sum(out ** 2 * x)


def add_at_pairs(m, v):
    out = np.zeros((3, 4))
    np.add.at(out, (np.array([0, 0, 2]), np.array([1, 1, 3])), v[:3])
    return np.sum((out + m) ** 2)


def copy_then_assign(x):
    y = x.copy()
    y[...] = x[::-1] * 2.0
    y[1:3] = 0.5
    return np.sum(y * x)


def zeros_like_then_assign(x):
    out = np.zeros_like(x)
    out[0] = x[1]
    out[2:] = x[:2] * x[3]
    return np.sum(out ** 2)


def static_mask_assign(m):
    y = m * 1.0
    y[m.shape[0] * np.eye(3, 4, dtype=bool) > 0] = 0.0
    y[np.array([True, False, True])] *= m[1]
    return np.sum(y ** 2)


def view_writes_through(m):
    y = m + 0.0
    row = y[1]
    row[:2] = m[0, :2] * 3.0  # writes into y, as in NumPy
    y[1, 3] = row[0] - 1.0  # and row sees this
    return np.sum(y * row)


def views_see_later_writes(m):
    y = m + 0.0
    first, second, column = y[0], y[1], y[:, 0]
    y[0, 0] = 5.0 * m[1, 1]  # first and column see it, second does not
    return np.sum(first * second) + np.sum(column ** 2)


def matrix_in_static_loop(x):
    n = x.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        out[i, i] = x[i] ** 2
        out[i, 0] += x[i]
    return np.sum(out * np.arange(16.0).reshape(4, 4))


def triangle_by_rows(m):
    out = np.zeros((3, 3))
    out[0, 0] = m[0, 0]
    out[1, :2] = m[1, :2] * out[0, 0]
    out[2, :3] = m[2, :3] - out[1, 0]
    return np.sum(out ** 2)


@pytest.mark.parametrize(("f", "args", "wrt"), [
    (element_into_zeros, (X,), (0,)),
    (column_into_zeros, (M,), (0,)),
    (rows_cols_pairs, (M, X), (0, 1)),
    (repeated_positions_last_write, (X,), (0,)),
    (augmented_repeated_buffered, (X, X[::-1].copy()), (0, 1)),
    (add_at_accumulates, (X, X * 0.5), (0, 1)),
    (add_at_pairs, (M, X), (0, 1)),
    (copy_then_assign, (X,), (0,)),
    (zeros_like_then_assign, (X,), (0,)),
    (static_mask_assign, (M,), (0,)),
    (view_writes_through, (M,), (0,)),
    (views_see_later_writes, (M,), (0,)),
    (matrix_in_static_loop, (X,), (0,)),
    (triangle_by_rows, (M,), (0,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_pattern_matches_numpy_and_finite_differences(f, args, wrt):
    check(f, *args, wrt=wrt)


def test_inputs_are_never_modified():
    x = X.copy()
    gradc.grad(copy_then_assign)(x)
    gradc.grad(augmented_repeated_buffered)(x, X.copy())
    np.testing.assert_array_equal(x, X)


def test_emitted_code_assigns_into_a_copy():
    source = gradc.compile(zeros_like_then_assign, X).source
    # a fresh array (np.zeros, not a read-only broadcast view) written in place, never the input x
    assert "t2 = np.zeros((4,))" in source and "t2[0] = x[1]" in source and "x[" not in source.replace("= x[", "")


def test_second_order_through_index_update():
    def f(x):
        y = x * 1.0
        y[1] = x[0] ** 3
        return np.sum(y ** 2)

    h = gradc.hessian(f)(X)
    expected = np.diag(np.full(4, 2.0))
    expected[1, 1] = 0.0
    expected[0, 0] = 2.0 + 30.0 * X[0] ** 4
    np.testing.assert_allclose(h, expected, rtol=1e-10)


# ---------------------------------------------------------------- refusals, at the user's line
def _line_of(f, text):
    import inspect
    lines, start = inspect.getsourcelines(f)
    return start + next(i for i, line in enumerate(lines) if text in line)


def write_into_input(x):
    x[0] = 1.0
    return np.sum(x)


def augmented_into_input(x):
    x[1:] += 1.0
    return np.sum(x)


def add_at_into_input(x):
    np.add.at(x, np.array([0]), 1.0)
    return np.sum(x)


def write_into_transpose_of_input(m):
    t = m.T
    t[0] = 1.0
    return np.sum(t)


@pytest.mark.parametrize(("f", "text"), [
    (write_into_input, "x[0] = 1.0"),
    (augmented_into_input, "x[1:] += 1.0"),
    (add_at_into_input, "np.add.at"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_assignment_into_an_input_warns_at_the_users_line_and_works_on_a_copy(f, text):
    arg = X.copy()
    with pytest.warns(GradcWarning, match="'x'") as caught:
        grad = gradc.grad(f)(arg)
    assert any(w.filename.endswith("test_index_assignment.py") and w.lineno == _line_of(f, text) for w in caught)
    np.testing.assert_array_equal(arg, X)  # the caller's array is untouched
    np.testing.assert_allclose(grad, numeric_grad(f, (X.copy(),), 0), rtol=1e-6, atol=1e-8)


def test_assignment_into_a_transpose_of_an_input_is_refused_at_the_users_line():
    with pytest.raises(TraceError, match="'m'") as info:
        gradc.grad(write_into_transpose_of_input)(M.copy())
    line = _line_of(write_into_transpose_of_input, "t[0] = 1.0")
    assert info.value.where.endswith(f"test_index_assignment.py:{line}")


def traced_mask(x):
    y = x * 1.0
    y[x > 0] = 0.0
    return np.sum(y * y)


def traced_mask_augmented(x):
    y = x * 2.0
    y[y > 1.0] += x[0]
    return np.sum(y ** 2)


@pytest.mark.parametrize("fn", [traced_mask, traced_mask_augmented])
def test_traced_mask_assignment_is_np_where(fn):
    x = np.array([1.0, -2.0, 3.0, 0.25])
    expected = [(fn(x + 1e-6 * e) - fn(x - 1e-6 * e)) / 2e-6 for e in np.eye(4)]
    np.testing.assert_allclose(gradc.grad(fn)(x), expected, rtol=1e-6, atol=1e-8)
    assert "np.where(" in gradc.compile(fn, x).source


def test_traced_mask_with_selected_values_suggests_where():
    def f(x):
        y = x * 1.0
        y[x > 0] = x[:2]  # NumPy: one value per selected entry, a count known only at run time
        return np.sum(y)

    with pytest.raises(TraceError, match="np.where"):
        gradc.grad(f)(np.array([1.0, -2.0, 3.0, 0.25]))


def test_bad_value_shape_is_a_shape_error():
    def f(x):
        y = x * 1.0
        y[:2] = x[:3]
        return np.sum(y)

    with pytest.raises(ShapeError, match="shape"):
        gradc.grad(f)(X)


def test_float_into_int_augmented_is_refused():
    def f(x):
        k = np.arange(4)
        k[np.array([0, 1])] += x[:2]
        return np.sum(k * x)

    with pytest.raises(TraceError):
        gradc.grad(f)(X)


# ---------------------------------------------------------------- the runtime functions, called directly
def test_runtime_functions_on_concrete_values_are_numpys():
    a = np.zeros((2, 3))
    view = a[0]
    assert inplace.setitem(view, slice(1, None), 2.0) is view
    assert a[0, 1] == 2.0  # NumPy's own in-place write, through the view
    b = np.zeros(3)
    assert inplace.setitem_op(b, [0, 0, 2], "+", 1.0) is b
    np.testing.assert_array_equal(b, [1.0, 0.0, 1.0])  # buffered
    c = np.zeros(3)
    assert inplace.ufunc_at(np.add, c, [0, 0, 2], 1.0) is c
    np.testing.assert_array_equal(c, [2.0, 0.0, 1.0])  # unbuffered
    d = {"k": 1}
    assert inplace.setitem(d, "k", 2) is d and d["k"] == 2  # not arrays: Python's own
    e = [1.0, 2.0]
    assert inplace.setitem_op(e, 1, "*", 3.0) is e and e == [1.0, 6.0]


def direct_calls(x, v):
    out = np.zeros((3, 2))
    out = inplace.setitem(out, (np.array([0, 2, 0]), 1), v[:3])
    out = inplace.setitem_op(out, 1, "+", x[:2])
    out = inplace.ufunc_at(np.add, out, (np.array([1, 1]), 0), v[2:4])
    out = inplace.setitem(out, 2, x[2] * x[3])
    return np.sum(np.sin(out))


def test_runtime_functions_on_traced_values_match_numpy():
    def numpy_version(x, v):
        out = np.zeros((3, 2))
        out[np.array([0, 2, 0]), 1] = v[:3]
        out[1] += x[:2]
        np.add.at(out, (np.array([1, 1]), 0), v[2:4])
        out[2] = x[2] * x[3]
        return np.sum(np.sin(out))

    v = rng.standard_normal(4)
    assert direct_calls(X, v) == pytest.approx(numpy_version(X, v), rel=1e-14)
    gx, gv = gradc.grad(direct_calls, wrt=("x", "v"))(X, v)
    np.testing.assert_allclose(gx, numeric_grad(numpy_version, (X, v), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gv, numeric_grad(numpy_version, (X, v), 1), rtol=1e-6, atol=1e-8)


def test_runtime_functions_warn_about_an_input_at_where():
    def f(x):
        return np.sum(inplace.setitem(x, 0, 1.0, "user.py:12"))

    with pytest.warns(GradcWarning, match="'x'") as caught:
        grad = gradc.grad(f)(X)
    assert any(w.filename == "user.py" and w.lineno == 12 for w in caught)
    np.testing.assert_array_equal(grad, np.r_[0.0, np.ones(X.size - 1)])  # x[0] is overwritten


def test_traced_value_into_a_numpy_view_is_refused():
    base = np.zeros((2, 4))

    def f(x):
        return np.sum(inplace.setitem(base[0], slice(None), x, "user.py:3"))

    with pytest.raises(TraceError, match="view of a NumPy array"):
        gradc.grad(f)(X)


def test_unsupported_ufunc_at_is_refused():
    def f(x):
        out = x * 1.0
        np.nextafter.at(out, np.array([0]), 1.0)
        return np.sum(out)

    with pytest.raises(TraceError, match="nextafter"):
        gradc.grad(f)(X)


def other_ufuncs_at(x, v):
    out = np.ones(4) * 0.5
    np.multiply.at(out, np.array([1, 3, 1, 1]), v)  # position 1: three factors
    np.maximum.at(out, np.array([0, 0, 2]), x[:3])
    np.minimum.at(out, (np.array([3, 3]),), x[1:3] * 0.1)
    return np.sum(out * x)


def test_other_ufuncs_at_apply_each_repeat():
    v = np.array([1.5, -0.7, 2.0, 0.9])
    x = np.array([0.3, -1.1, 0.8, 2.5])
    check(other_ufuncs_at, x, v, wrt=(0, 1))


def test_write_from_a_traced_loop_body_into_an_outer_array_is_refused():
    def f(x):
        out = x * 1.0

        def body(i, acc):
            out[i] = acc  # out belongs to the code around the loop
            return acc + 1.0

        return np.sum(out) + gradc.fori_loop(0, 3, body, x[0])

    with pytest.raises(TraceError, match="carry the array") as info:
        gradc.grad(f)(X)
    assert info.value.where.endswith(f"test_index_assignment.py:{_line_of(f, 'out[i] = acc')}")


def whole_of_a_scalar(x):
    y = np.array(x[0] * 2.0)  # a 0-d array, as NumPy needs for item assignment
    y[...] = x[1] ** 2  # a 0-d value written whole: the emitted code holds it as a scalar
    y += 1.0
    return y * x[2]


def copyto_traced(x):
    y = x * 2.0
    np.copyto(y, x[::-1])
    np.copyto(y, 0.5, where=np.array([True, False, False, True]))
    return np.sum(y ** 2 * x)


@pytest.mark.parametrize("f", [whole_of_a_scalar, copyto_traced], ids=lambda f: f.__name__)
def test_more_patterns(f):
    check(f, X)
    gradc.compile(f, X).grad(X)  # the emitted code runs


def empty_and_full_like(x):
    a = np.empty_like(x)
    a[:] = x ** 2
    b = np.full_like(x, 0.5)
    b[1] = x[0]
    c = np.full_like(x, x[2])  # a traced fill value
    c[0] = 1.0
    return np.sum(a * b * c)


def test_empty_and_full_like_are_writable():
    check(empty_and_full_like, X)


def cholesky_by_columns(a):
    # the textbook loop; the counters are traced (the loops carry traced values), so L[j, :j] is a mask
    n = a.shape[0]
    lower = np.zeros_like(a)
    idx = np.arange(n)
    for j in range(n):
        row_j = np.where(idx < j, lower[j], 0.0)
        lower[j, j] = np.sqrt(a[j, j] - np.sum(row_j ** 2))
        for i in range(j + 1, n):
            lower[i, j] = (a[i, j] - np.sum(np.where(idx < j, lower[i], 0.0) * row_j)) / lower[j, j]
    return np.sum(lower * np.arange(9.0).reshape(3, 3))


def test_triangular_factor_assembled_in_loops():
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    assert cholesky_by_columns(a) == pytest.approx(np.sum(np.linalg.cholesky(a) * np.arange(9.0).reshape(3, 3)))
    check(cholesky_by_columns, a)


def test_a_slice_bound_from_a_static_loop_counter_runs_the_loop_in_python():
    def f(x):
        out = x * 0.0
        for i in range(3):
            out[i] = np.sum(x[:i])
        return np.sum(out)

    # out = [0, x0, x0 + x1]: d/dx0 = 2, d/dx1 = 1, d/dx2 = 0 (the loop needs i as an int: it unrolls)
    np.testing.assert_allclose(gradc.grad(f)(np.array([0.5, -1.0, 2.0])), [2.0, 1.0, 0.0])


def test_traced_slice_bound_suggests_a_mask():
    def f(x, n):
        total = 0.0
        for i in range(n):  # n is traced: the loop stays a loop, and x[:i] has no static length
            total = total + np.sum(x[:i])
        return total

    with pytest.raises(TraceError, match="np.where"):
        gradc.grad(f)(np.array([0.5, -1.0, 2.0]), np.array(3))


def any_all(x):
    m = (x > 0).all() | np.any(x > 2.0, axis=0)
    return np.sum(np.heaviside(x, 0.5) * x) + np.sum(np.where(m, x, 0.0))


def test_any_all_and_heaviside():
    x = np.array([1.0, 3.0])
    expected = [(any_all(x + 1e-6 * e) - any_all(x - 1e-6 * e)) / 2e-6 for e in np.eye(2)]
    np.testing.assert_allclose(gradc.grad(any_all)(x), expected, rtol=1e-6)
