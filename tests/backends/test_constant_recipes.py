"""Compile time is not a function of data size: a large constant table with a short NumPy recipe (a grid, a
step function, an identity, a power table, a row repeated) is computed when the emitted module loads, bit for
bit the table the trace computed; any other large table is still written as its bytes."""
from __future__ import annotations

import ast

import numpy as np
import pytest

import gradc
from gradc.backends.numpy.constant_recipes import RECIPE_LIMIT
from gradc.backends.numpy.literals import array_constant_expr
from gradc.ir.graph import Const


def _grid(n, dtype=np.float64):
    return (-1 + np.arange(n) * 2 / (n - 1)).astype(dtype)


def _powers(t, m):
    return np.cumprod(np.concatenate([np.ones((t.size, 1), t.dtype), np.repeat(t[:, None], m - 1, axis=1)], axis=1),
                      axis=1)


def _structured_tables(seed):
    """Seeded tables of each structure, with sizes around and past RECIPE_LIMIT."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(RECIPE_LIMIT + 1, 4 * RECIPE_LIMIT))
    m = int(rng.integers(3, 12))
    row = rng.standard_normal(m)
    row[0] = -0.0
    steps = np.repeat(rng.standard_normal(5), rng.integers(n // 5, n // 2, 5))
    yield "grid", _grid(n)
    yield "linspace", np.linspace(rng.standard_normal(), 10.0, n)
    yield "linspace f32", np.linspace(0.0, 1.0, n, dtype=np.float32)
    yield "step function", np.sign(_grid(n))
    yield "runs", steps
    yield "int runs", np.repeat(np.arange(3, dtype=np.int32), n)
    yield "bool runs", np.arange(n) < n // 3
    yield "identity", np.eye(n // 40 + 40)
    yield "cumprod powers", _powers(_grid(n // m + 200), m)
    yield "cumprod powers, transposed", np.ascontiguousarray(_powers(_grid(n // m + 200), m).T)
    yield "power table", _grid(n // m + 200)[:, None] ** np.arange(m)
    yield "repeated row", np.ascontiguousarray(np.broadcast_to(row, (n, m)))
    yield "repeated column with NaN", np.ascontiguousarray(np.broadcast_to(np.append(row, np.nan)[:, None], (m + 1, n)))


def _evaluate(text):
    return eval(text, {"np": np})  # noqa: S307 - our own emitted expression


@pytest.mark.parametrize("seed", range(4))
def test_structured_tables_are_recipes_computing_the_same_bits(seed):
    for label, table in _structured_tables(seed):
        assert table.size > RECIPE_LIMIT, label
        text = ast.unparse(array_constant_expr(Const(table)))
        assert "frombuffer" not in text and len(text) < 30 * RECIPE_LIMIT, (label, text[:200])
        back = _evaluate(text)
        assert back.dtype == table.dtype and back.shape == table.shape, label
        assert back.tobytes() == table.tobytes(), label
        assert back.flags.c_contiguous and back.flags.writeable, label


def test_tables_without_a_recipe_are_still_their_bytes():
    rng = np.random.default_rng(5)
    for table in (rng.standard_normal(RECIPE_LIMIT + 1), _grid(3000) + rng.standard_normal(3000) * 1e-17,
                  np.repeat(rng.standard_normal(200), 20)):  # 200 runs: more than a recipe of runs holds
        text = ast.unparse(array_constant_expr(Const(table)))
        assert text.startswith("np.frombuffer(bytes.fromhex(")
        assert _evaluate(text).tobytes() == table.tobytes()


def llsq_vectorised(x, n):
    """GradBench llsq as its JAX tool writes it: the n x m power table is built from np.arange(n)."""
    m = x.shape[0]
    ts = -1 + np.arange(n) * 2 / (n - 1)
    powers = np.cumprod(np.concatenate([np.ones((n, 1)), np.repeat(ts[:, None], m - 1, axis=1)], axis=1), axis=1)
    return np.sum((np.sign(ts) - powers @ x) ** 2) / 2


def test_the_emitted_module_does_not_grow_with_the_data_size():
    x = np.random.default_rng(0).random(32)
    lengths = []
    for n in (2000, 9000):
        compiled = gradc.compile(llsq_vectorised, x, n)
        ts = _grid(n)
        table = ts[:, None] ** np.arange(32)
        np.testing.assert_allclose(compiled.grad(x, n), -table.T @ (np.sign(ts) - table @ x), rtol=1e-9)
        assert gradc.compile(llsq_vectorised, x, n).source == compiled.source  # deterministic
        lengths.append(len(compiled.source))
    assert abs(lengths[0] - lengths[1]) < 100 and lengths[1] < 10_000
