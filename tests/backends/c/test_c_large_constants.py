"""Compile time is not a function of data size on the C target either: a constant array past ``BLOB_LIMIT``
elements is written as a string literal of its bytes (C compilers read it about 8x faster than decimal
literals), bit for bit the array the trace computed (NaN, infinities, signed zeros, every dtype); a smaller
one drops its trailing zeros (C fills them in), so an all-zero constant costs nothing to parse."""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.values import BLOB_LIMIT, BLOB_ROW

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _table(dtype, size, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind == "b":
        return rng.random(size) < 0.5
    if np.dtype(dtype).kind == "i":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size, dtype=dtype, endpoint=True)
    values = rng.standard_normal(size)
    values[:5] = [-0.0, np.nan, np.inf, -np.inf, 0.0]
    values[-3:] = 0.0  # trailing zeros: left to C's zero fill
    return values.astype(dtype)


def _compiled(fn, x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gradc.GradcWarning)  # the captured table is the point here
        return gradc.compile(fn, x, target="c", mode="jvp")


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.bool_])
@pytest.mark.parametrize("size", [BLOB_LIMIT - 1, BLOB_LIMIT + 1, 3 * BLOB_LIMIT + 7])
def test_a_constant_table_reaches_the_c_code_bit_for_bit(dtype, size):
    table = _table(dtype, size, seed=size)

    def f(x):
        return table * x[0]  # x[0] == 1: the table itself, in its own dtype's arithmetic

    x = np.ones(1, dtype=np.float64 if np.dtype(dtype).kind != "f" else dtype)
    got = np.asarray(_compiled(f, x).forward(x))
    want = f(x)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_large_constants_are_bytes_and_zeros_are_left_to_c():
    table = np.random.default_rng(5).standard_normal(5 * BLOB_LIMIT)  # no structure: its bytes (see constant_fills)
    mostly_zeros = np.zeros(BLOB_LIMIT)
    mostly_zeros[:3] = [1.0, 2.0, 3.0]

    def f(x):
        return np.sum(table * x[0]) + np.sum(np.sin(mostly_zeros * x[1]))

    compiled = _compiled(f, np.ones(3))
    source = compiled.c_source
    assert compiled.forward(np.full(3, 2.0)) == pytest.approx(f(np.full(3, 2.0)), rel=1e-13)
    rows = -(-table.nbytes // BLOB_ROW)  # string literals of at most BLOB_ROW bytes: within C99's 4095
    assert re.search(r"union \{ unsigned char bytes\[%d\]\[%d\]; double values\[%d\]; \}"
                     % (rows, BLOB_ROW, table.size), source)
    assert re.search(r"double C\d+\[%d\] = \{1\.0, 2\.0, 3\.0\};" % BLOB_LIMIT, source)  # no 2045 zeros
    assert "__ORDER_LITTLE_ENDIAN__" in source or "__ORDER_BIG_ENDIAN__" in source
