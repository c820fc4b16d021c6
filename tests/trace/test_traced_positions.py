"""``np.delete``/``np.insert``/``np.roll``/``np.take``/``np.take_along_axis`` and indexing at traced positions
(a loop's counter, an integer argument), each against the user's function run by NumPy and central finite
differences; out-of-range positions raise NumPy's IndexError when the compiled code runs."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.errors import GradcError
from tests.finite_differences import central_gradient


def det(A):
    """GradBench det as written: cofactor expansion along the first row, by recursion."""
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    for j in range(n):
        total = total + (-1.0) ** j * A[0, j] * det(np.delete(np.delete(A, 0, axis=0), j, axis=1))
    return total


def loop_deletes(x):
    out = 0.0
    for j in range(x.shape[0]):  # the counter is traced when the loop stays a loop
        out = out + np.sum(np.delete(x, j) ** 2) * x[j]
    return out


def positions_from_argument(x, ks):
    a = np.delete(x, ks[0], axis=1)
    b = np.insert(x, ks[1], [[10.0], [x[0, 0]]], axis=1)
    c = np.insert(x.ravel(), ks[2], x[1, 1] * 2.0)
    d = np.roll(x, ks[3], axis=1) + np.roll(x, ks[3], axis=(0, 1))
    e = np.take(x, ks[:2] % 3, axis=1) * np.take(x, ks, mode="wrap").sum() + np.take(x, ks, mode="clip").sum()
    f = np.take_along_axis(x, np.stack([ks[:3], ks[1:4]]) % 3, axis=1)
    g = x[:, ks[0]][:, None] * x[ks[1] % 2] + x[-1, ks[2] % 3]
    weights = [np.arange(a.size), np.arange(b.size), np.arange(c.size), np.arange(d.size), np.arange(e.size),
               np.arange(f.size), np.arange(g.size)]
    return sum(np.sum(np.sin(v).ravel() * w) for v, w in zip((a, b, c, d, e, f, g), weights))


@pytest.mark.parametrize("n", [2, 3, 4])
def test_det_as_written(n):
    A = np.random.default_rng(n).normal(size=(n, n))
    np.testing.assert_allclose(gradc.jit(det)(A), np.linalg.det(A), rtol=1e-10)
    np.testing.assert_allclose(gradc.grad(det)(A), central_gradient(det, A), rtol=1e-6, atol=1e-8)


def test_a_loop_counter_as_the_position():
    x = np.array([0.3, -0.7, 1.1, 0.5])
    np.testing.assert_allclose(gradc.jit(loop_deletes)(x), loop_deletes(x), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(loop_deletes)(x), central_gradient(loop_deletes, x), rtol=1e-6)


def _random_positions(rng):
    """Positions NumPy accepts for every call of positions_from_argument (x is 2 x 3), negative ones included."""
    return np.array([rng.integers(-3, 3), rng.integers(-3, 4), rng.integers(-6, 7), rng.integers(-9, 9)])


@pytest.mark.parametrize("seed", range(8))
def test_positions_from_an_argument(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(2, 3))
    ks = _random_positions(rng)
    compiled = gradc.jit(positions_from_argument)
    np.testing.assert_allclose(compiled(x, ks), positions_from_argument(x, ks), rtol=1e-12)
    other = _random_positions(rng)  # the same compiled function at other positions
    np.testing.assert_allclose(compiled(x, other), positions_from_argument(x, other), rtol=1e-12)
    got = gradc.grad(positions_from_argument)(x, ks)
    np.testing.assert_allclose(got, central_gradient(lambda v: positions_from_argument(v, ks), x), rtol=1e-6,
                               atol=1e-8)


@pytest.mark.parametrize("call, ks", [
    (lambda x, ks: np.delete(x, ks[0]), np.array([3])),
    (lambda x, ks: np.delete(x, ks[0]), np.array([-4])),
    (lambda x, ks: np.insert(x, ks[0], 1.0), np.array([4])),
    (lambda x, ks: np.take(x, ks), np.array([0, 3])),
], ids=["delete-past-end", "delete-before-start", "insert-past-end", "take"])
def test_out_of_range_positions_raise_as_numpy_does(call, ks):
    x = np.ones(3)
    with pytest.raises(IndexError):
        call(x, ks)  # NumPy itself
    compiled = gradc.jit(call)
    with pytest.raises(IndexError):
        compiled(x, ks)


def test_several_traced_positions_are_refused_clearly():
    with pytest.raises(GradcError, match="distinct") as info:
        gradc.jit(lambda x, ks: np.delete(x, ks))(np.ones(4), np.array([0, 1]))
    assert "test_traced_positions.py" in str(info.value)


def test_the_c_target_agrees_and_checks_the_range():
    x = np.random.default_rng(2).normal(size=(2, 3))
    ks = np.array([1, -2, 5, -7])
    value, grad = gradc.compile(positions_from_argument, x, ks, target="c")(x, ks)
    np.testing.assert_allclose(value, positions_from_argument(x, ks), rtol=1e-12)
    np.testing.assert_allclose(grad, central_gradient(lambda v: positions_from_argument(v, ks), x), rtol=1e-6,
                               atol=1e-8)
    with pytest.raises(IndexError, match="np.delete"):
        gradc.compile(positions_from_argument, x, ks, target="c")(x, np.array([3, 0, 0, 0]))


def windows(x, ks):
    a = x[ks[0]:ks[0] + 2]
    b = x[ks[1] - 1:ks[1] + 1, ks[0]:ks[0] + 1]  # ks[1] read twice: the same value
    c = x[:, ks[2]:3 + ks[2]]
    return np.sum(np.sin(a) * np.arange(a.size).reshape(a.shape)) + np.sum(b ** 3) + np.sum(np.cos(c) * c[0])


@pytest.mark.parametrize("ks", [[0, 1, 0], [2, 3, 1], [-4, -2, -4], [-3, 3, -4], [1, 2, -5]])
def test_windows_at_traced_starts(ks):
    x = np.random.default_rng(5).normal(size=(4, 5))
    ks = np.array(ks)
    np.testing.assert_allclose(gradc.jit(windows)(x, ks), windows(x, ks), rtol=1e-12)
    np.testing.assert_allclose(gradc.grad(windows)(x, ks), central_gradient(lambda v: windows(v, ks), x),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("ks", [[3, 1, 0], [-1, 1, 0], [0, 1, 3], [0, 0, 0]])
def test_a_window_past_the_axis_raises_where_numpy_would_shorten_it(ks):
    """NumPy returns fewer elements there (x[3:5] of 4 rows has 1; x[-1:1] and x[-1:0] are empty): gradc's
    windows have a fixed length, so it raises IndexError rather than return another shape."""
    x = np.ones((4, 5))
    ks = np.array(ks)
    compiled = gradc.jit(windows)
    with pytest.raises(IndexError, match="slice of length"):
        compiled(x, ks)


def test_a_slice_of_traced_length_is_refused_with_the_fix():
    with pytest.raises(GradcError, match="not a constant") as info:
        gradc.jit(lambda x, ks: np.sum(x[:ks[0]]))(np.ones(4), np.array([2]))
    assert "np.where" in str(info.value) and "test_traced_positions.py" in str(info.value)
