"""Compile time is not a function of data size: an array constant past ``LITERAL_LIMIT`` elements is written as
the hex of its bytes (``np.frombuffer``), bit for bit the array the trace computed, on every dtype."""
from __future__ import annotations

import ast
import subprocess
import sys

import numpy as np
import pytest

import gradc
from gradc.backends.numpy.literals import LITERAL_LIMIT, array_constant_expr
from gradc.ir.graph import Const


def _values(dtype, size, rng):
    if np.dtype(dtype).kind == "b":
        return rng.random(size) < 0.5
    if np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    real = rng.standard_normal(size)
    real[:4] = [-0.0, np.nan, np.inf, -np.inf]
    if np.dtype(dtype).kind == "c":
        return (real + 1j * rng.standard_normal(size)).astype(dtype)
    return real.astype(dtype)


@pytest.mark.parametrize("dtype", ["f64", "f32", "c128", "c64", "i64", "i32", "bool"])
@pytest.mark.parametrize("shape", [(LITERAL_LIMIT + 1,), (40, 30), (3, 20, 20)])
def test_large_constants_round_trip_bit_for_bit(dtype, shape):
    np_dtype = {"f64": np.float64, "f32": np.float32, "c128": np.complex128, "c64": np.complex64, "i64": np.int64,
                "i32": np.int32, "bool": np.bool_}[dtype]
    value = _values(np_dtype, int(np.prod(shape)), np.random.default_rng(len(shape))).reshape(shape)
    text = ast.unparse(array_constant_expr(Const(value)))
    assert text.startswith("np.frombuffer(bytes.fromhex(")
    back = eval(text, {"np": np})  # noqa: S307 - our own emitted expression
    assert back.dtype == value.dtype and back.shape == value.shape
    assert back.tobytes() == np.ascontiguousarray(value).tobytes()


def test_small_constants_stay_readable_lists():
    text = ast.unparse(array_constant_expr(Const(np.arange(LITERAL_LIMIT, dtype=np.float64))))
    assert text.startswith("np.array([0.0, 1.0")


def vandermonde_loss(x, n):
    """GradBench llsq as the JAX tool writes it: a data-independent n x m table built from np.arange(n)."""
    ts = -1 + np.arange(n) * 2 / (n - 1)
    powers = ts[:, None] ** np.arange(x.shape[0])[None, :]
    return np.sum((np.sign(ts) - powers @ x) ** 2) / 2


def test_a_large_traced_table_compiles_to_the_same_gradient_and_module_runs_standalone(tmp_path):
    x = np.random.default_rng(0).random(16)
    n = 300  # a 300 x 16 table: past the limit
    compiled = gradc.compile(vandermonde_loss, x, n)
    # the table is a power table of a grid: computed when the module loads (gradc.backends.numpy.constant_recipes)
    assert "np.frombuffer(bytes.fromhex(" not in compiled.source and "gradc-blob" not in compiled.source
    ts = -1 + np.arange(n) * 2 / (n - 1)
    table = ts[:, None] ** np.arange(16)[None, :]
    np.testing.assert_allclose(compiled.grad(x, n), -table.T @ (np.sign(ts) - table @ x), rtol=1e-12)
    assert gradc.compile(vandermonde_loss, x, n).source == compiled.source  # deterministic
    module = tmp_path / "module.py"
    module.write_text(compiled.source + "\nimport numpy\nprint(repr(float(vandermonde_loss_grad(numpy.array("
                      f"{x.tolist()!r}), {n})[0])))\n")
    out = subprocess.run([sys.executable, str(module)], capture_output=True, text=True, check=True).stdout
    assert float(out) == compiled.grad(x, n)[0]
