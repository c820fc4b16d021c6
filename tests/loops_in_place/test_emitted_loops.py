"""The emitted NumPy of arrays written in loops: no whole-array copy or allocation per iteration, in either sweep.

Each program is written as users write it (GradBench's lstm helper, a fill loop, a recurrence,
columns, ``+=`` on slots, branches, nested loops, a helper). The emitted source is read (no
timing): the loops stay loops, their bodies copy or allocate no array of the program's size, the
reverse sweep tapes a number or a row per iteration (not the array), and the module agrees with
the function run by NumPy and with central differences.
"""
from __future__ import annotations

import numpy as np
import pytest
from emitted_structure import per_iteration_copies
from finite_differences import central_gradient as _central

import gradc
from gradc.passes import optimize
from gradc.passes.in_place import mark_in_place
from gradc.passes.loops import loop_report
from gradc.passes.vectorise_loops import loops_kept
from gradc.transforms import reverse as ad


def fill(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sin(x[i]) * x[i]
    return np.sum(out)


def recurrence(x):
    n = x.shape[0]
    out = np.zeros(n)
    out[0] = x[0]
    for i in range(1, n):
        out[i] = out[i - 1] * 0.5 + np.sin(x[i])
    return np.sum(out * out)


def _lstm_like(s, w):
    s2 = s.copy()
    for i in range(0, len(s), 2):
        s2[i], s2[i + 1] = np.tanh(s[i] * w[i]), np.sin(s[i + 1]) * s[i]
    return s2


def pairs_in_a_helper(x):
    return np.sum(_lstm_like(x * 0.5, x) ** 2)


def columns(X):
    Y = np.zeros(X.shape)
    for j in range(X.shape[1]):
        Y[:, j] = np.sin(X[:, j]) * (j + 1.0)
    return np.sum(Y * Y)


def augmented(x):
    out = np.ones(x.shape[0])
    for i in range(x.shape[0]):
        out[i] += x[i] ** 2
        out[i] *= x[i]
    return np.sum(out * out)


def branchy(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        if x[i] > 0.0:
            out[i] = x[i] ** 2
        else:
            out[i] = -np.sin(x[i])
    return np.sum(out * x)


def nested(X):
    Y = np.zeros(X.shape)
    for i in range(X.shape[0]):
        for j in range(X.shape[1]):
            Y[i, j] = X[i, j] * X[j % X.shape[0], i % X.shape[1]]
    return np.sum(np.sin(Y))


def through_a_row(X):
    Y = X * 1.0
    for i in range(X.shape[0]):
        Y[i][0] = np.sin(X[i, 1]) * Y[i][0]
    return np.sum(Y * Y)


VECTOR = np.linspace(-0.9, 1.1, 40)
MATRIX = np.cos(np.arange(48.0)).reshape(8, 6)
PROGRAMS = [(fill, VECTOR), (recurrence, VECTOR), (pairs_in_a_helper, VECTOR), (columns, MATRIX),
            (augmented, VECTOR), (branchy, VECTOR), (nested, MATRIX), (through_a_row, MATRIX)]



@pytest.mark.parametrize(("f", "x"), PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_no_whole_array_work_per_iteration(f, x):
    compiled = gradc.compile(f, x)
    assert "for " in compiled.source
    assert per_iteration_copies(compiled.source, x.size) == [], compiled.source
    value, grad = compiled.value_and_grad(x)
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(grad, _central(f, x), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("f", "x"), PROGRAMS, ids=lambda v: getattr(v, "__name__", ""))
def test_the_tape_holds_parts_not_the_array(f, x):
    """Per iteration, the reverse sweep tapes less than the array it fills (``gradc show``'s loop report)."""
    graph = gradc.trace(f, x)
    vg = optimize(ad.value_and_grad_graph(graph, [graph.inputs[0].name], name="vg"))
    for line in loop_report(vg):
        if "tapes" in line:
            per_iteration = int(line.split("tapes")[1].split(":")[1].split("bytes")[0])
            assert per_iteration < x.nbytes, line


def test_the_fill_loop_writes_in_place():
    with loops_kept():  # else the NumPy target writes this loop of independent iterations as whole-array operations
        src = gradc.compile(fill, VECTOR).source
    assert "out[i] = np.sin(" in src
    assert "out_bar[" in src and "] = 0.0" in src  # the slot's cotangent read, then zeroed, in place
    assert "x_bar_acc[" in src and "] +=" in src  # scattered contributions added into the accumulator


def test_marks_are_visible_and_deterministic():
    graph = gradc.trace(fill, VECTOR)
    vg = optimize(ad.value_and_grad_graph(graph, ["x"], name="vg"))
    first, second = str(mark_in_place(vg)), str(mark_in_place(vg))
    assert first == second
    assert "in_place=True" in first and "index_add" in first
    assert "in_place" not in str(vg)  # the pass returns a new graph; its input is unchanged
