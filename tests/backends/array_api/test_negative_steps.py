"""Negative-step slices re-spelled as ``xp.flip`` plus a positive-step slice, checked against NumPy.

The index identity is checked exhaustively on short axes (every start/stop in and out of range,
None, every step), then whole subscripts and stores, rewritten by the array-API ``Rewriter``, on
seeded random shapes and slices run under array-api-strict and torch (when installed).
"""
from __future__ import annotations

import ast
import itertools

import numpy as np
import pytest

from gradc.backends.array_api.negative_steps import flipped_slice
from gradc.backends.array_api.spellings import Rewriter
from gradc.ir.types import TensorType

xps = pytest.importorskip("array_api_strict")


@pytest.mark.parametrize("n", range(0, 7))
def test_flipped_slice_equals_numpy_for_every_bound(n):
    a = np.arange(n)
    bounds = [None] + list(range(-n - 3, n + 4))
    for start, stop, step in itertools.product(bounds, bounds, range(-n - 2, 0)):
        p_start, p_stop, p_step = flipped_slice(start, stop, step)
        assert p_step > 0
        np.testing.assert_array_equal(a[::-1][p_start:p_stop:p_step], a[start:stop:step],
                                      err_msg=f"{start}:{stop}:{step} on {n}")


def _random_index(rng, shape, wide):
    """A basic index of ``shape``: ints, slices (often negative steps), None, maybe an Ellipsis.

    Bounds lie in [-n, n) (the standard's valid indices), or out of range too when ``wide``.
    """
    items, ellipsis = [], rng.random() < 0.3
    for n in shape:
        kind = rng.random()
        if kind < 0.15 and n:
            items.append(int(rng.integers(-n, n)))
        else:
            low, high = (-n - 2, n + 3) if wide else (-n, n)
            start, stop = (None if rng.random() < 0.3 or low == high else int(rng.integers(low, high))
                           for _ in range(2))
            step = None if rng.random() < 0.15 else int(rng.choice([-3, -2, -1, -1, -1, 1, 2]))
            items.append(slice(start, stop, step))
        if rng.random() < 0.1:
            items.append(None)
    if ellipsis:
        k = int(rng.integers(0, len(items) + 1))
        drop = int(rng.integers(0, 2))
        items = items[:k] + [Ellipsis] + items[k + drop:]  # the ellipsis stands for `drop` axes
    return tuple(items)


def _source(index):
    def item(i):
        if isinstance(i, slice):
            return ":".join("" if v is None else str(v) for v in (i.start, i.stop, i.step))
        return "..." if i is Ellipsis else repr(i)
    return ", ".join(item(i) for i in index) or "()"


def _rewritten(text, shape=None):
    types = {} if shape is None else {"y": TensorType(tuple(shape), "f64"), "x": TensorType(tuple(shape), "f64")}
    tree = Rewriter("xp", "math", types=types).visit(ast.parse(text))
    code = ast.unparse(ast.fix_missing_locations(tree))
    return code


def _namespaces(wide):
    """Out-of-range bounds are not specified by the standard (array-api-strict refuses them); torch clips."""
    spaces = [] if wide else [("strict", xps, xps.asarray, np.asarray)]
    try:
        import torch
    except ImportError:
        return spaces
    import array_api_compat.torch as xpt
    return spaces + [("torch", xpt, torch.from_numpy, lambda t: t.numpy())]


@pytest.mark.parametrize("wide", [False, True], ids=["in_range", "out_of_range"])
@pytest.mark.parametrize("seed", range(4))
def test_rewritten_subscripts_and_stores_equal_numpy(seed, wide):
    rng = np.random.default_rng(seed)
    for _ in range(60):
        shape = tuple(int(n) for n in rng.integers(0, 5, size=rng.integers(1, 4)))
        index = _random_index(rng, shape, wide)
        a = rng.standard_normal(shape)
        expected = a[index]
        load = _rewritten(f"out = x[{_source(index)}]")  # an inlined expression: its length unknown
        known = _rewritten(f"out = x[{_source(index)}]", shape)  # a named value: bounds within [0, n]
        for code in (load, known):
            assert "-" not in "".join(ast.unparse(n.step) for n in ast.walk(ast.parse(code))
                                      if isinstance(n, ast.Slice) and n.step is not None), code
        if None not in index:  # a store writes a value of the indexed shape (new axes are the squeeze's)
            v = rng.standard_normal(expected.shape)
            stored = a.copy()
            stored[index] = v
            store = _rewritten(f"y[{_source(index)}] = v", shape)
            added = a.copy()
            added[index] += v
            augmented = _rewritten(f"y[{_source(index)}] += v", shape)
        for name, xp, to, back in _namespaces(wide):
            for code in (load, known):
                scope = {"xp": xp, "x": to(a)}
                exec(code, scope)
                np.testing.assert_array_equal(back(scope["out"]), expected, err_msg=f"{name}: {code}")
            if None not in index:
                for code, want in ((store, stored), (augmented, added)):
                    scope = {"xp": xp, "y": to(a.copy()), "v": to(v)}
                    exec(code, scope)
                    np.testing.assert_array_equal(back(scope["y"]), want, err_msg=f"{name}: {code}")


def test_a_scalar_store_is_not_flipped_and_an_array_is():
    assert _rewritten("y[::-1] = 0.0", (4,)) == "y[0:4] = 0.0"
    assert _rewritten("y[1, 3::-2] += v", (2, 5)) == "y[1, 1:4:2] += xp.flip(v, axis=0)"
    rewriter = Rewriter("xp", "math")
    rewriter.visit(ast.parse("y[::-1] = v"))  # no length known: reported, never spelled wrong
    assert rewriter.missing == {"a store through a negative step into an axis of unknown length"}
    assert _rewritten("out = x[..., ::-1, 2]") == "out = xp.flip(x, axis=-2)[..., :, 2]"
    assert _rewritten("out = x[9:-9:-2]", (5,)) == "out = xp.flip(x, axis=0)[::2]"  # clipped in range
