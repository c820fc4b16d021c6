"""A loop that reads a row of its state, keeps it for the reverse sweep and writes the state (an LSTM's
``states[t + 1] = cell(states[t])``) updates the state in place: the row is copied, not the whole state
each iteration (``gradc.passes.in_place._materialized_views``). Gradients against central differences
of the user's function, both targets, and against the user's function itself for the value.
"""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import gradc
from gradc.backends.c.build import find_compiler

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "loops_in_place"))
from emitted_structure import per_iteration_copies  # noqa: E402
from finite_differences import central_gradient as _central


def recurrent(x, s0):
    states = np.concatenate((s0[None], np.zeros((x.shape[0], s0.shape[0]))), axis=0)
    total = 0.0
    for i in range(x.shape[0]):
        h = states[i]
        new = np.tanh(h * x[i] + 0.1)
        states[i + 1] = new
        total = total + np.sum(new * new)
    return total + np.sum(states[-1])


def cell(w, h):
    return np.tanh(h * w) + 0.5 * h


def through_a_helper(w, s0):
    # the row goes through a helper called many times (kept as a function): the result must not alias the state
    states = np.concatenate((s0[None], np.zeros((6, s0.shape[0]))), axis=0)
    for i in range(6):
        states[i + 1] = cell(w, states[i])
    return np.sum(states ** 2)



TARGETS = ["numpy", pytest.param("c", marks=pytest.mark.skipif(find_compiler() is None, reason="no C compiler"))]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_state_rows_taped_and_written_give_the_right_gradient(target, seed):
    rng = np.random.default_rng(seed)
    x, s0 = rng.normal(size=int(rng.integers(3, 9))), rng.normal(size=int(rng.integers(2, 5)))
    c = gradc.compile(recurrent, x, s0, argnums=(0, 1), target=target)
    value, (gx, gs) = c.value_and_grad(x, s0)
    assert np.isclose(value, recurrent(x.copy(), s0.copy()), rtol=1e-12)
    np.testing.assert_allclose(gx, _central(lambda v: recurrent(v, s0), x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gs, _central(lambda v: recurrent(x, v), s0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("target", TARGETS)
def test_a_row_through_a_helper(target):
    w, s0 = np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2, 0.9])
    c = gradc.compile(through_a_helper, w, s0, argnums=(0, 1), target=target)
    value, (gw, gs) = c.value_and_grad(w, s0)
    assert np.isclose(value, through_a_helper(w, s0), rtol=1e-12)
    np.testing.assert_allclose(gw, _central(lambda v: through_a_helper(v, s0), w), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gs, _central(lambda v: through_a_helper(w, v), s0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f,n", [(recurrent, 40), (through_a_helper, 21)])
def test_no_whole_state_copy_per_iteration(f, n):
    x = np.linspace(0.1, 1.0, n // 7 * 7 if f is through_a_helper else n)
    args = (np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2, 0.9])) if f is through_a_helper else (x, np.ones(3))
    c = gradc.compile(f, *args)
    assert "for " in c.source
    forward = c.source[c.source.index(f"def {f.__name__}_grad"):].split("# backward")[0]
    assert per_iteration_copies(forward, args[1].size * 2) == [], forward
