"""An operand a selecting op did not take gets a cotangent of exactly 0, whatever the cotangent is.

``np.maximum(x, y)`` is locally constant in the operand it did not take, so that operand's derivative is 0
even where the incoming cotangent is infinite or NaN (``sqrt(maximum(x, 0))`` at ``x < 0``: sqrt's
derivative at 0 is inf). Multiplying the cotangent by a 0/1 share gives ``0 * inf = NaN`` there; torch
selects (``masked_fill``), and so does gradc. Ties split the cotangent evenly (``ct / 2`` each, also for an
infinite ``ct``). The generator draws operands from a small grid so that ties are common, cotangents with
inf, -inf and NaN entries, both dtypes, and checks both targets against the rule written out in NumPy.
"""
from __future__ import annotations

import numpy as np
import pytest

import gradc

SEEDS = range(6)


def _torch_rule(first_takes):
    """The reference: ``(x_bar, y_bar)`` with the cotangent selected, not multiplied (NaN operands: None)."""
    def rule(x, y, ct):
        take_x, tie = first_takes(x, y), x == y
        x_bar = np.where(tie, ct / 2, np.where(take_x, ct, 0.0))
        y_bar = np.where(tie, ct / 2, np.where(take_x, 0.0, ct))
        return x_bar, y_bar
    return rule


def _nan_skipping_rule(first_takes):
    """fmax/fmin: a NaN operand hands the whole cotangent to the other."""
    plain = _torch_rule(first_takes)

    def rule(x, y, ct):
        x_bar, y_bar = plain(x, y, ct)
        x_bar = np.where(np.isnan(y) & ~np.isnan(x), ct, np.where(np.isnan(x) & ~np.isnan(y), 0.0, x_bar))
        y_bar = np.where(np.isnan(x) & ~np.isnan(y), ct, np.where(np.isnan(y) & ~np.isnan(x), 0.0, y_bar))
        return x_bar, y_bar
    return rule


OPS = {
    "maximum": (np.maximum, _torch_rule(np.greater), False),
    "minimum": (np.minimum, _torch_rule(np.less), False),
    "fmax": (np.fmax, _nan_skipping_rule(np.greater), True),
    "fmin": (np.fmin, _nan_skipping_rule(np.less), True),
}


def _draw(rng, n, dtype, with_nan):
    grid = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0])
    x, y = rng.choice(grid, n), rng.choice(grid, n)
    if with_nan:
        x[rng.random(n) < 0.2] = np.nan
        y[rng.random(n) < 0.2] = np.nan
    ct = rng.choice(np.array([np.inf, -np.inf, np.nan, 1.5, -0.25]), n)
    return x.astype(dtype), y.astype(dtype), ct.astype(dtype)


@pytest.mark.parametrize("target", ["numpy", "c"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", sorted(OPS))
def test_the_operand_not_taken_gets_zero_and_ties_split(name, dtype, target):
    fn, rule, with_nan = OPS[name]
    n = 24
    compiled = gradc.compile(lambda x, y: fn(x, y), np.ones(n, dtype), np.ones(n, dtype), mode="vjp",
                             target=target, argnums=(0, 1))
    for seed in SEEDS:
        x, y, ct = _draw(np.random.default_rng(seed), n, dtype, with_nan)
        out, (x_bar, y_bar) = compiled.vjp(x, y, ct)
        np.testing.assert_array_equal(out, fn(x, y))
        want_x, want_y = rule(x, y, ct)
        judged = ~(np.isnan(x) & np.isnan(y)) if with_nan else ~(np.isnan(x) | np.isnan(y))
        np.testing.assert_array_equal(x_bar[judged], want_x[judged].astype(dtype), err_msg=f"{name} x_bar, seed {seed}")
        np.testing.assert_array_equal(y_bar[judged], want_y[judged].astype(dtype), err_msg=f"{name} y_bar, seed {seed}")


def _sqrt_of_relu(x):
    return np.sum(np.sqrt(np.maximum(x, 0.0)))


def _sqrt_of_clip(x, lo):
    return np.sum(np.sqrt(np.clip(x, lo, lo + 2.0) - lo))


@pytest.mark.parametrize("target", ["numpy", "c"])
def test_an_infinite_derivative_downstream_does_not_poison_a_clipped_input(target):
    """The user-level form: where the input was clipped away the gradient is 0 (the function is flat
    there; central differences agree), where it was kept it is sqrt's derivative."""
    x = np.array([-3.0, -0.5, 0.25, 4.0])
    grad = gradc.compile(_sqrt_of_relu, x, target=target).grad(x)
    np.testing.assert_array_equal(grad, [0.0, 0.0, 1.0, 0.25])
    lo = np.array([0.0, 0.0, 0.0, 0.0])
    grads = gradc.compile(_sqrt_of_clip, x, lo, target=target, argnums=(0, 1)).grad(x, lo)
    h = 1e-6
    for i in (0, 3):  # clipped away below and above: flat in x
        bumped = x.copy()
        bumped[i] += h
        assert _sqrt_of_clip(bumped, lo) == _sqrt_of_clip(x, lo)
        assert grads[0][i] == 0.0
    assert np.all(np.isfinite(grads[0])) and np.isfinite(grads[1][2:]).all()
