"""Aliasing the way NumPy users write it: views written through, names bound to one array, arrays held
in lists, dicts and tuples, repeated indices in ``+=``, ``np.add.at``, writes from a closure; both
targets against NumPy running the program and central differences.

An array appended to a list inside a loop and written in a later iteration gave a snapshot (a silently
wrong value): it is refused now; ``parts[0][2] = v`` on a list of arrays failed inside gradc and now
writes through.
"""
import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler

W = np.arange(1.0, 5.0)


def repeated_index_add(x, y):
    z = x * 1.0
    z[np.array([0, 0, 2])] += y[:3]  # z[i] = z[i] + v: index 0 ends as x[0] + y[1], the last write
    return np.sum(z * W)


def repeated_index_set(x, y):
    z = x * 1.0
    z[np.array([1, 1])] = y[:2]  # the last write wins
    return np.sum(z * W)


def add_at(x, y):
    z = x * 1.0
    np.add.at(z, np.array([0, 0, 2]), y[:3])
    return np.sum(z * W)


def slice_view_written(x, y):
    z = x * 1.0
    v = z[1:]
    v *= y[1:]
    return np.sum(z * W)


def bound_twice(x, y):
    z = x * 1.0
    w = z
    w += y
    return np.sum(z * x)


def overlapping_views(x, y):
    z = x * 1.0
    z[1:] += z[:-1]
    return np.sum(z * W * y)


def reversed_write(x, y):
    z = x * 1.0
    z[::-1] = z * y
    return np.sum(z * W)


def strided_view_written(x, y):
    z = x * 1.0
    v = z[::2]
    v[:] = np.sin(v) * y[:2]
    return np.sum(z * W)


def row_view_then_overwritten(x, y):
    z = np.zeros((2, 4))
    z[0] = x
    r = z[0]
    z[0] = y
    return np.sum(r * W)


def held_in_containers(x, y):
    z = x * 1.0
    parts, d, t = [z], {"a": z}, (z, 1)
    z[0] = 5.0 * y[0]
    z[1] += y[1]
    return np.sum(parts[0] * W) + np.sum(d["a"] * x) + np.sum(t[0] * y)


def written_by_closure(x, y):
    z = x * 1.0

    def set0():
        z[0] = y[0]

    def update(a):
        a[1] = y[1] * 3

    set0()
    update(z)
    return np.sum(z * W)


def appended_in_loop_then_written(x, y):
    z = x * 1.0
    parts = []
    for i in range(2):
        parts.append(z)
        z[i] = z[i] * y[i]
    return np.sum(parts[0] * W)


def list_element_written(x, y):
    z = x * 1.0
    parts = [z, z]
    parts[0][2] = y[2]
    return np.sum(parts[1] * W)


PROGRAMS = [repeated_index_add, repeated_index_set, add_at, slice_view_written, bound_twice, overlapping_views,
            reversed_write, strided_view_written, row_view_then_overwritten, held_in_containers, written_by_closure,
            list_element_written]
TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(find_compiler() is None, reason="no C compiler"))]


def _differences(f, args, i, h=1e-6):
    g = np.zeros(4)
    for j in range(4):
        up, down = [a.copy() for a in args], [a.copy() for a in args]
        up[i][j] += h
        down[i][j] -= h
        g[j] = (f(*up) - f(*down)) / (2 * h)
    return g


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("f", PROGRAMS)
def test_aliasing_agrees_with_numpy(f, target):
    x, y = np.array([0.5, -1.2, 0.8, 0.3]), np.array([0.7, 0.2, -0.4, 1.1])
    compiled = gradc.compile(f, x, y, wrt=("x", "y"), target=target)
    value, grads = compiled.value_and_grad(x.copy(), y.copy())
    assert value == pytest.approx(f(x.copy(), y.copy()), rel=1e-12)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, _differences(f, (x, y), i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("target", TARGETS)
def test_a_list_holding_an_array_the_loop_writes_is_refused(target):
    """The list would hold ``z`` itself (NumPy sees every later write), a kept loop each iteration's value:
    refused at the user's line (tests/trace/test_list_aliasing.py has the cases that agree)."""
    x, y = np.array([0.5, -1.2, 0.8, 0.3]), np.array([0.7, 0.2, -0.4, 1.1])
    with pytest.raises(gradc.TraceError, match=r"parts holds the array z itself.*test_aliasing\.py:\d+"):
        gradc.compile(appended_in_loop_then_written, x, y, wrt=("x", "y"), target=target)


BREAK_THEN_WRITE = """def prog(x):
    h = x * 1.0
    for i in range(4):
        if np.max(h) > 0.715:
            break
        h = h * 1.25 + 0.813
    k = 0
    while np.sum(h * h) < 0.666 and k < 3:
        h = h * 1.3 + -0.192
        k += 1
    h = h.copy()
    h[1:] += h[:-1] * -0.623
    return np.sum(h * h) * 0.307 + np.sum(h)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_loops_handing_the_input_through_leave_it_unwritten(target):
    """Found by tests/fuzz/control.py: both loops may hand ``x`` through unchanged (a break at once, no trip),
    so the update after them must not write into it; the emitted forward wrote into the caller's ``x``."""
    import linecache

    linecache.cache["<break then write>"] = (len(BREAK_THEN_WRITE), None, BREAK_THEN_WRITE.splitlines(True),
                                             "<break then write>")
    namespace = {"np": np}
    exec(compile(BREAK_THEN_WRITE, "<break then write>", "exec"), namespace)
    f = namespace["prog"]
    x = np.array([0.8724629, -0.96161552])
    kept = x.copy()
    compiled = gradc.compile(f, x, target=target)
    for _ in range(2):
        assert compiled.forward(x) == pytest.approx(f(kept.copy()), rel=1e-12)
        assert compiled.value_and_grad(x)[0] == pytest.approx(f(kept.copy()), rel=1e-12)
        np.testing.assert_array_equal(x, kept)
