"""Tangent-style cases: lists collected in loops, loops over arrays, reversed and stepped ranges, longer loops."""
from __future__ import annotations

import numpy as np
from transform_checks import Case


def append_then_array(x):
    ys = []
    for i in range(4):
        ys.append(x[i % 3] * (i + 1.0))
    return np.sum(np.array(ys) ** 2)


def append_then_concatenate(x):
    parts = []
    for i in range(3):
        parts.append(x[i:] * 2.0)
    return np.sum(np.concatenate(parts) ** 2)


def append_then_index(x):
    ys = [x[0]]
    for i in range(1, 3):
        ys.append(ys[-1] * x[i])
    return ys[-1] + ys[0] * ys[1]


def append_then_builtin_sum(x):
    terms = []
    for i in range(3):
        terms.append(np.sin(x * i))
    return np.sum(sum(terms))


def reversed_reading_coefficients(c):
    """Horner's rule from the top coefficient down: c[i] read at the counter of a reversed range."""
    acc = 0.0
    for i in reversed(range(c.shape[0])):
        acc = acc * 0.7 + c[i]
    return acc


def negative_step_reading(c):
    acc = 1.0
    for i in range(c.shape[0] - 1, -1, -2):
        acc = acc * c[i] + 1.0
    return acc


def loop_over_rows(x):
    acc = np.zeros(x.shape[1])
    for row in x:
        acc = acc + np.sin(row) * row
    return np.sum(acc)


def loop_enumerate_rows(x):
    total = 0.0
    for i, row in enumerate(x):
        total = total + (i + 1.0) * np.sum(row ** 2)
    return total


def loop_zip_rows(x):
    total = 0.0
    for a, b in zip(x[:-1], x[1:]):
        total = total + np.dot(a, b)
    return total


def long_fill_loop(x):
    out = np.zeros(x.shape[0])
    for i in range(x.shape[0]):
        out[i] = x[i] * x[(i + 1) % x.shape[0]]
    return np.sum(out)


def long_recurrence(x):
    y = np.zeros(x.shape[0])
    y[0] = x[0]
    for i in range(1, x.shape[0]):
        y[i] = 0.5 * y[i - 1] + x[i] * x[i]
    return y[-1] + np.sum(y)


def prefix_sums_in_place(x):
    s = x.copy()
    for i in range(1, s.shape[0]):
        s[i] += s[i - 1]
    return np.sum(s * s)


def matrix_rows_in_loop(x):
    m = np.zeros((3, 3))
    for i in range(3):
        m[i] = x * (i + 1.0)
    return np.sum(m @ m)


def while_traced_collect(a):
    ys = []
    while a < 4.0:
        a = a * 1.5
        ys.append(a)
    return a + ys[0] if ys else a


def rnn_collect_states(x):
    h = np.zeros(x.shape[1])
    states = []
    for t in range(x.shape[0]):
        h = np.tanh(0.5 * h + x[t])
        states.append(h)
    return np.sum(np.stack(states) * np.arange(1.0, x.shape[0] + 1)[:, None])


rs = np.random.RandomState(4)
X3 = np.array([0.4, -0.9, 1.3])
X12 = rs.randn(12) * 0.5
M = rs.randn(4, 3) * 0.5
CASES: list[Case] = [
    Case("append_then_array", append_then_array, (X3,), order=2),
    Case("append_then_concatenate", append_then_concatenate, (X3,), order=2),
    Case("append_then_index", append_then_index, (X3,), order=2),
    Case("append_then_builtin_sum", append_then_builtin_sum, (X3,), order=2),
    Case("reversed_reading_coefficients", reversed_reading_coefficients, (X12,), order=2),
    Case("negative_step_reading", negative_step_reading, (X12,), order=2),
    Case("loop_over_rows", loop_over_rows, (M,), order=2),
    Case("loop_enumerate_rows", loop_enumerate_rows, (M,), order=2),
    Case("loop_zip_rows", loop_zip_rows, (M,), order=2),
    Case("long_fill_loop", long_fill_loop, (X12,), order=2),
    Case("long_recurrence", long_recurrence, (X12,), order=2),
    Case("prefix_sums_in_place", prefix_sums_in_place, (X12,), order=2),
    Case("matrix_rows_in_loop", matrix_rows_in_loop, (X3,), order=2),
    Case("while_traced_collect_0", while_traced_collect, (0.7,)),
    Case("while_traced_collect_1", while_traced_collect, (5.0,)),
    Case("rnn_collect_states", rnn_collect_states, (M,), order=2),
]
