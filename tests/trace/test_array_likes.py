"""Lists and tuples of traced values where NumPy takes array-likes, and casts of traced values, written as users
write them (autograd's suite and GradBench's programs use these idioms); each checked against the function run by
NumPy and central finite differences."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import solve
from scipy.special import logsumexp

import gradc
from gradc.errors import GradcError, StaticValueNeeded
from tests.finite_differences import central_gradient


def mean_of_pair(x, y):
    return np.mean([x, y]) * np.std([x, 2.0 * y, 1.0]) + np.var((x, y))


def norm_of_list(x):
    return np.linalg.norm([x[0], x[1] * 2.0, 3.0]) + np.sum(np.append(x, [x[0] ** 2, 1.0]))


def array_of_rows(x):
    m = np.array([[x[0], x[1]], [2.0, x[0] * x[1]]])
    return np.sum(np.linalg.solve(m, [x[1], 1.0]))


def list_operands(x):
    return np.sum(x * [1.0, 2.0, 3.0] + [x[0], x[1], x[2]] * x - [1, 2, 3] / (x + [x[1], 1.0, 2.0]))


def dot_with_list(x):
    return np.dot(x, [x[1], x[0], 2.0]) + np.einsum("i,i->", [x[2], 1.0, x[0]], x)


def where_and_concatenate(x):
    picked = np.where([True, False, True], [x[0], x[1], x[2]], 0.5)
    joined = np.concatenate([[x[0], 1.0], x, (x[1],)])
    return np.sum(picked ** 2) + np.prod(joined)


def helper(a, b):  # a helper of the same module, given lists
    return np.max([a, b]) + np.min([a * b, 1.0])


def calls_helper(x):
    return helper(x[0], x[1]) * np.sum(np.stack([x, [1.0, 2.0, 3.0]]))


def ufunc_of_list(x):
    return np.sum(np.exp([x[0], x[1]])) + np.add.reduce(x) + np.sum(np.maximum([x[0], 0.5], [0.25, x[2]]))


def nested_tuples(x):
    rows = ((x[0], x[1]), (x[2], x[0] * x[2]))
    return np.sum(np.asarray(rows) @ np.array([1.0, 2.0])) + np.trace(np.array(rows))


def casts(x):
    k = np.int64(x[0] * 3.0)  # a traced integer: flows into indexing and arithmetic
    scale = float(np.sum(x)) + np.float64(x[1])
    return x[k] * scale + int(x[2] * 2.0) * x[1] + x.item(1)


def tolist_sum(x):
    rows = x.tolist()
    return np.sum(np.array(rows[::-1]) * np.arange(1.0, 4.0)) + sum(rows)


FUNCTIONS = [mean_of_pair, norm_of_list, array_of_rows, list_operands, dot_with_list, where_and_concatenate,
             calls_helper, ufunc_of_list, nested_tuples, casts, tolist_sum]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_against_numpy_and_finite_differences(fn):
    x = np.array([0.3, 0.7, 1.3])
    args = (x[0], x[1]) if fn is mean_of_pair else (x,)
    np.testing.assert_allclose(gradc.jit(fn)(*args), fn(*args), rtol=1e-12)
    for i in range(len(args)):
        got = gradc.grad(fn, argnums=i)(*args)

        def at(v, i=i):
            call = list(args)
            call[i] = v
            return fn(*call)
        np.testing.assert_allclose(got, central_gradient(at, args[i]), rtol=1e-6, atol=1e-8)


def test_casts_are_traced_and_truncate_as_python():
    def f(x):
        return np.int64(x) + int(-x) * 10  # int(-1.7) is -1, np.int64(1.7) is 1
    assert gradc.jit(f)(np.float64(1.7)) == f(1.7) == -9
    g = gradc.jit(lambda x: np.int32(x) * 2)
    assert g(np.array([1.5, -2.5])).tolist() == [2, -4]
    h = gradc.jit(lambda x: np.float32(x))
    assert h(np.array([1.1])).dtype == np.float32 and h(np.array([1.1]))[0] == np.float32(1.1)


def test_cast_types_stay_types():
    def f(x):
        assert isinstance(3, int) and isinstance(np.float64(1.0), np.float64) and not isinstance(1.0, int)
        return x.astype(np.float32).astype(float) + np.zeros(3, dtype=np.int64) + np.zeros(3, dtype=int)
    np.testing.assert_allclose(gradc.jit(f)(np.ones(3)), np.ones(3))


def range_of_traced(x):
    n = int(np.sum(x))
    return sum(range(n)) * x  # MARK range


def index_list_by_traced(x, ks):
    tables = [x, x[:2]]  # unequal shapes: not one array
    return tables[ks[0]]  # MARK list


def _line(fn, mark):
    import inspect
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, line in enumerate(lines) if f"MARK {mark}" in line)


@pytest.mark.parametrize("fn, args, mark", [(range_of_traced, (np.ones(2),), "range"),
                                            (index_list_by_traced, (np.ones(3), np.array([0, 1])), "list")])
def test_where_python_needs_a_number_the_error_names_static_arguments(fn, args, mark):
    with pytest.raises(StaticValueNeeded) as info:
        gradc.jit(fn)(*args)
    text = str(info.value)
    assert "static_argnames" in text, text
    if fn is index_list_by_traced:  # the integer argument is named when the transform knows it
        assert "static_argnames=('ks',)" in text, text
    assert f"test_array_likes.py:{_line(fn, mark)}" in text, text


def test_lists_of_unequal_shapes_are_refused_clearly():
    with pytest.raises(GradcError, match="different shapes"):
        gradc.jit(lambda x: np.mean([x, x[:2]]))(np.ones(3))


def chain_of_transforms(x, parents):
    """GradBench ht's idiom: ``absolutes[parents[i]]``, a list indexed by an integer table (an argument)."""
    relatives = [np.array([[np.cos(x[i]), -np.sin(x[i])], [np.sin(x[i]), np.cos(x[i])]]) for i in range(3)]
    absolutes = [relatives[0]]
    for i in range(1, 3):
        absolutes.append(absolutes[parents[i]] @ relatives[i])
    return np.sum(np.stack(absolutes) * np.arange(12.0).reshape(3, 2, 2))


def choose_row(x, ks):
    rows = [x[0] * 2.0, np.array([1.0, 2.0]), x[1]]
    return np.sum(rows[ks[0]] * rows[ks[1]]) + [x[0, 0], 3.0, x[1, 1]][ks[2]]


@pytest.mark.parametrize("parents", [np.array([-1, 0, 1]), np.array([-1, 0, 0])])
def test_a_list_indexed_by_a_traced_integer_is_a_traced_choice(parents):
    x = np.array([0.3, 0.7, 1.3])
    g = gradc.jit(chain_of_transforms)
    np.testing.assert_allclose(g(x, parents), chain_of_transforms(x, parents), rtol=1e-12)
    other = np.array([-1, 0, 0]) if parents[2] else np.array([-1, 0, 1])  # the same compiled code, other table
    np.testing.assert_allclose(g(x, other), chain_of_transforms(x, other), rtol=1e-12)
    got = gradc.grad(chain_of_transforms)(x, parents)
    np.testing.assert_allclose(got, central_gradient(lambda v: chain_of_transforms(v, parents), x), rtol=1e-6)


def test_a_list_of_mixed_rows_indexed_by_a_traced_integer():
    x = np.array([[0.3, 0.7], [1.3, -0.4]])
    for ks in (np.array([0, 2, 1]), np.array([1, 1, 0]), np.array([-1, 0, 2])):
        np.testing.assert_allclose(gradc.jit(choose_row)(x, ks), choose_row(x, ks), rtol=1e-12)
        got = gradc.grad(choose_row)(x, ks)
        np.testing.assert_allclose(got, central_gradient(lambda v, ks=ks: choose_row(v, ks), x), rtol=1e-6,
                                   atol=1e-9)


def scipy_of_lists(x):
    return logsumexp([x[0], 2.0 * x[1], 0.5]) + np.sum(solve(np.diag(x) + 3.0, [x[0], 1.0, x[2]]))


def test_scipy_functions_take_lists_of_traced_values():
    x = np.array([0.3, 0.7, 1.3])
    np.testing.assert_allclose(gradc.jit(scipy_of_lists)(x), scipy_of_lists(x), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(scipy_of_lists)(x), central_gradient(scipy_of_lists, x), rtol=1e-6)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_row_stack_takes_arrays_of_different_row_counts_as_vstack_does():
    """np.row_stack (NumPy's alias of vstack, a plain function): a tuple of arrays, not one array-like."""
    def f(x, y):
        return np.sum(np.row_stack((x, y)) ** 2)
    if not hasattr(np, "row_stack"):
        pytest.skip("this NumPy has no row_stack")
    a, b = np.array([[0.5, -1.0]]), np.array([[2.0, 1.5], [0.25, -0.75]])
    gx, gy = gradc.grad(f, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(gx, 2 * a)
    np.testing.assert_allclose(gy, 2 * b)
