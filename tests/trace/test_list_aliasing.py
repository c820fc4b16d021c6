"""A list holds arrays, not values: NumPy's ``parts.append(z)`` keeps the array ``z`` itself, and a later write
into ``z`` shows in the list. A kept loop's stacked outputs hold each iteration's value, so where the two would
differ (the loop appends an array it carries on and writes in place, or one from outside that is written after the
loop) gradc refuses at the user's line with a hint; everywhere else it gives NumPy's value. Writes through a
container (``parts[0][2] = v``) reach the array it holds, and every name for it sees them."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from finite_differences import central_gradient

import gradc

WEIGHTS = np.arange(12.0).reshape(3, 4)


def written_after_append(x, y):
    z = x * 1.0
    parts = []
    for i in range(3):
        parts.append(z)
        z[i] = z[i] * y[i]
    return np.sum(np.stack(parts) * WEIGHTS)


def written_before_append(x, y):
    z = x * 1.0
    parts = []
    for i in range(3):
        z[i] = z[i] * y[i]
        parts.append(z)
    return np.sum(np.stack(parts) * WEIGHTS)


def augmented_after_append(x, y):
    z = x * 1.0
    parts = []
    for _ in range(3):
        parts.append(z)
        z += y
    return np.sum(np.stack(parts) * WEIGHTS)


def outer_written_after_loop(x, y):
    z = x * y
    parts = []
    for _ in range(3):
        parts.append(z)
    z[0] = 5.0
    return np.sum(np.stack(parts) * WEIGHTS)


def outer_view_written_after_loop(x, y):
    z = x * y
    parts = []
    for _ in range(3):
        parts.append(z[1:])
    z[2] = 7.0
    return np.sum(np.stack(parts) * WEIGHTS[:, 1:])


REFUSED = [written_after_append, written_before_append, augmented_after_append, outer_written_after_loop,
           outer_view_written_after_loop]


def appended_copy(x, y):
    z = x * 1.0
    parts = []
    for i in range(3):
        parts.append(z.copy())
        z[i] = z[i] * y[i]
    return np.sum(np.stack(parts) * WEIGHTS)


def fresh_array_written_after_append(x, y):
    z = x * 1.0
    parts = []
    for i in range(3):
        w = z * 1.0
        parts.append(w)
        w[i] = w[i] * y[i]
        z = w
    return np.sum(np.stack(parts) * WEIGHTS)


def rebound_after_append(x, y):
    z = x * 1.0
    parts = []
    for _ in range(3):
        parts.append(z)
        z = z * y
    return np.sum(np.stack(parts) * WEIGHTS)


def outer_rebound_after_loop(x, y):
    z = x * y
    parts = []
    for i in range(3):
        parts.append(z * y[i])
    z = z + 1.0
    return np.sum(np.stack(parts) * WEIGHTS) + np.sum(z)


def written_through_list(x, y):
    z = x * 1.0
    parts = [z, z]
    parts[0][2] = y[2]
    parts[1][1:3] *= y[:2]
    return np.sum(parts[1] * WEIGHTS[0]) + np.sum(z * WEIGHTS[1])


def written_through_dict(x, y):
    held = {"a": x * 2.0}
    same = held["a"]
    held["a"][0] = y[0] ** 2
    return np.sum(same * WEIGHTS[2])


ACCEPTED = [appended_copy, fresh_array_written_after_append, rebound_after_append, outer_rebound_after_loop,
            written_through_list, written_through_dict]


def _inputs(seed):
    rng = np.random.default_rng(seed)
    return rng.uniform(0.5, 1.5, 4), rng.uniform(0.5, 1.5, 4)


@pytest.mark.parametrize("fn", REFUSED, ids=lambda f: f.__name__)
def test_a_list_that_would_alias_a_later_write_is_refused_at_the_users_line(fn):
    x, y = _inputs(0)
    with pytest.raises(gradc.TraceError) as err:
        gradc.jit(fn)(x, y)
    message = str(err.value)
    assert "parts" in message and "test_list_aliasing.py:" in message and ".copy()" in message


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("fn", ACCEPTED, ids=lambda f: f.__name__)
def test_lists_of_arrays_give_numpys_values_and_gradients(fn, target):
    for seed in range(3):
        x, y = _inputs(seed)
        want = fn(x.copy(), y.copy())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", gradc.GradcWarning)
            compiled = gradc.compile(fn, x, y, target=target, argnums=(0, 1))
            value, grads = compiled.value_and_grad(x, y)
        assert value == pytest.approx(want, rel=1e-12)
        fd_x = central_gradient(lambda v, y=y: fn(v, y.copy()), x.copy())
        fd_y = central_gradient(lambda v, x=x: fn(x.copy(), v), y.copy())
        np.testing.assert_allclose(grads[0], fd_x, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(grads[1], fd_y, rtol=1e-6, atol=1e-8)
