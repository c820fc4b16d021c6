"""Large constants on the C target are not written out: a repeating array is read at stride 0 from its first
slice, a grid / power table / mostly-zero table is computed by a loop at the function's top. The C source
stays small whatever the data size, the values are the trace's bit for bit, and the module is deterministic."""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.constant_fills import FILL_LIMIT, broadcast_parts, fill_plan

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "corpus", "gradbench"))
import gb_llsq  # noqa: E402

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def _compiled(fn, x, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gradc.GradcWarning)  # the captured table is the point here
        return gradc.compile(fn, x, target="c", **kw)


def _powers(n, m, dtype=np.float64, by_rows=False):
    ts = (-1 + np.arange(n) * 2 / (n - 1)).astype(dtype)
    table = np.cumprod(np.concatenate([np.ones((n, 1), dtype), np.repeat(ts[:, None], m - 1, axis=1)], axis=1),
                       axis=1)
    return np.ascontiguousarray(table.T) if by_rows else table


def _tables(seed):
    """Structured tables of every kind (and a few that must fall back to bytes), with awkward values."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(FILL_LIMIT + 1, 3 * FILL_LIMIT))
    rows = int(rng.integers(40, 90))
    special = [-0.0, np.nan, np.inf, -np.inf, 0.0, 1.5, -2.25][int(rng.integers(7))]
    sparse = np.zeros(n)
    sparse[rng.choice(n, n // 20, replace=False)] = rng.standard_normal(n // 20)
    sparse[0] = -0.0  # a signed zero is a non-zero bit pattern: it must be scattered too
    row = rng.standard_normal(rows)
    row[0] = np.nan
    return {
        "zeros": np.zeros((rows, n // rows + 1)),
        "filled": np.full(n, special, dtype=[np.float64, np.float32][seed % 2]),
        "rows repeated": np.tile(row, (n // rows + 1, 1)),
        "columns repeated": np.repeat(row[:, None], n // rows + 1, axis=1),
        "ints filled": np.full(n, -7, dtype=[np.int64, np.int32][seed % 2]),
        "bools repeated": np.tile(rng.random(rows) < 0.5, (n // rows + 1, 1)),
        "arange": np.arange(n) * rng.standard_normal() + rng.standard_normal(),
        "arange ints": np.arange(3, 3 + 5 * n, 5, dtype=np.int64),
        "linspace": np.linspace(rng.standard_normal(), 10 * rng.standard_normal(), n),
        "linspace f32": np.linspace(-1, 3, n, dtype=np.float32),
        "spanned": -1 + np.arange(n) * 2 / (n - 1),
        "eye": np.eye(rows + 10),
        "powers": _powers(n // 16, 16),
        "powers by rows f32": _powers(n // 16, 16, np.float32, by_rows=True),
        "sparse": sparse,
        "random": rng.standard_normal(n),  # no plan: its bytes
    }


def _times_first(table):
    def f(x):
        return table * x[0]  # x[0] == 1: the table itself, in its own dtype's arithmetic
    return f


def _llsq(n):
    def f(x):
        return gb_llsq.llsq_vectorised(x, n)
    return f


def _source(fn, x):
    from gradc.backends.c.build import emit_sources_for
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", gradc.GradcWarning)
        return emit_sources_for(fn, x)[0]


@pytest.mark.parametrize("seed", range(4))
def test_every_kind_is_planned_or_left_to_bytes(seed):
    for kind, table in _tables(seed).items():
        planned = broadcast_parts(table) is not None or fill_plan(table) is not None
        assert planned == (kind != "random"), kind


@needs_cc
@pytest.mark.parametrize("seed", range(3))
def test_filled_constants_reach_the_c_code_bit_for_bit_in_a_small_source(seed):
    for kind, table in _tables(seed).items():
        f = _times_first(table)

        x = np.ones(1, dtype=table.dtype if table.dtype.kind == "f" else np.float64)
        compiled = _compiled(f, x, mode="jvp")
        got, want = np.asarray(compiled.forward(x)), f(x)
        assert got.dtype == want.dtype and got.shape == want.shape, kind
        assert got.tobytes() == want.tobytes(), kind
        if kind != "random":  # the old code wrote every table past FILL_LIMIT elements as a blob of its bytes
            assert "_blob" not in compiled.c_source and len(compiled.c_source) < 2 * table.nbytes, kind


@needs_cc
def test_llsq_module_size_does_not_grow_with_n_and_its_gradient_is_right():
    m = 32
    x = np.random.default_rng(0).random(m)
    sizes = {}
    for n in (512, 4096):
        f = _llsq(n)

        compiled = _compiled(f, x)
        sizes[n] = len(compiled.c_source)
        value, grad = compiled.value_and_grad(x)
        assert value == pytest.approx(gb_llsq.llsq(x, n), rel=1e-10)
        np.testing.assert_allclose(grad, gb_llsq.closed_form_gradient(x, n), rtol=1e-9, atol=1e-9)
        h = 1e-6
        for j in (0, 1, m - 1):  # central differences of the user's own function
            e = np.zeros(m)
            e[j] = h
            fd = (gb_llsq.llsq_vectorised(x + e, n) - gb_llsq.llsq_vectorised(x - e, n)) / (2 * h)
            assert grad[j] == pytest.approx(fd, rel=1e-5, abs=1e-6)
    # the old code wrote the n x m power table's bytes: 4 MB of source at n = 4096
    assert sizes[4096] < 100_000 and sizes[4096] < 4 * sizes[512]


@needs_cc
def test_zero_and_grid_constants_in_a_gradient():
    n = 3000
    grid = np.linspace(0.0, 2.0, n)
    zeros = np.zeros((n, 2))

    def f(x):
        return np.sum(np.sin(grid * x[0]) + (zeros + x[1]) @ np.ones(2)) + np.sum(np.eye(60) @ x[2:62] ** 2)

    x = np.random.default_rng(1).random(62)
    compiled = _compiled(f, x)
    value, grad = compiled.value_and_grad(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    h = 1e-6
    for j in (0, 1, 2, 61):
        e = np.zeros_like(x)
        e[j] = h
        assert grad[j] == pytest.approx((f(x + e) - f(x - e)) / (2 * h), rel=1e-6, abs=1e-6)
    assert len(compiled.c_source) < 60_000


def test_the_source_is_byte_identical_from_run_to_run():
    n = 2500
    table = _powers(n // 10, 10)

    def f(x):
        return np.sum(table @ x) + np.sum(np.linspace(0, 1, n) * x[0]) + np.sum(np.zeros(n) + x[1])

    x = np.arange(10.0)
    first = _source(f, x)
    assert _source(f, x) == first
    assert "computed by a loop (powers)" in first and "(affine)" in first and "_blob" not in first


def _row_table(rows, cols, seed):
    return np.tile(np.random.default_rng(seed).standard_normal(cols), (rows, 1))  # repeats along axis 0


PROGRAMS = {  # a repeated (stride-0) or filled table in every kind of consumer
    "matmul": lambda t: lambda x: np.sum(np.tanh(t @ x[: t.shape[1]])),
    "matmul transposed": lambda t: lambda x: np.sum((t.T @ np.cos(x[: t.shape[0]])) ** 2),
    "reshape": lambda t: lambda x: np.sum(t.reshape(-1)[: x.size] * x) + np.sum(t.reshape(t.shape[1], -1)[0]),
    "slice": lambda t: lambda x: np.sum(t[3:, 1::2] * x[0]) + np.sum(t[::-1, 0] * x[1]),
    "concatenate": lambda t: lambda x: np.sum(np.concatenate([t, t * x[0]]) ** 2),
    "index": lambda t: lambda x: np.sum(t[np.array([0, 5, 7])] @ np.sin(x[: t.shape[1]])),
    "reduce": lambda t: lambda x: np.sum(np.max(t * x[0], axis=1)) + np.sum(np.mean(t, axis=0) * x[: t.shape[1]]),
}


@needs_cc
@pytest.mark.parametrize("program", sorted(PROGRAMS))
@pytest.mark.parametrize("kind", ["rows repeated", "zeros", "powers", "eye"])
def test_planned_tables_in_every_consumer_match_numpy_and_differences(program, kind):
    rows, cols = 300, 24
    table = {"rows repeated": _row_table(rows, cols, 7), "zeros": np.zeros((rows, cols)),
             "powers": _powers(rows, cols), "eye": np.eye(rows, cols)}[kind]
    assert broadcast_parts(table) is not None or fill_plan(table) is not None
    f = PROGRAMS[program](table)
    x = np.random.default_rng(3).random(rows)
    value, grad = _compiled(f, x).value_and_grad(x)
    assert value == pytest.approx(f(x), rel=1e-12, abs=1e-12)
    h = 1e-6
    for j in (0, 1, cols - 1, rows - 1):
        e = np.zeros(rows)
        e[j] = h
        assert grad[j] == pytest.approx((f(x + e) - f(x - e)) / (2 * h), rel=1e-5, abs=1e-6), j


@needs_cc
@pytest.mark.parametrize("kind", ["rows repeated", "powers", "linspace"])
def test_planned_tables_inside_loop_bodies_and_branches(kind):
    n = 2400
    table = {"rows repeated": _row_table(100, 24, 9).reshape(-1), "powers": _powers(100, 24).reshape(-1),
             "linspace": np.linspace(-2.0, 2.0, n)}[kind]

    def f(x):
        acc = gradc.fori_loop(0, 3, lambda i, a: a + np.mean(np.sin(table * x[0] + a)), 0.0)
        return gradc.cond(x[1] > 0.5, lambda: acc + np.sum(table * x[1]), lambda: acc - np.sum(table ** 2 * x[1]))

    def reference(x):
        acc = 0.0
        for _ in range(3):
            acc = acc + np.mean(np.sin(table * x[0] + acc))
        return acc + np.sum(table * x[1]) if x[1] > 0.5 else acc - np.sum(table ** 2 * x[1])

    for x in (np.array([0.3, 0.7]), np.array([0.2, 0.1])):
        value, grad = _compiled(f, x).value_and_grad(x)
        assert value == pytest.approx(reference(x), rel=1e-11)
        h = 1e-6
        for j in range(2):
            e = np.zeros(2)
            e[j] = h
            assert grad[j] == pytest.approx((reference(x + e) - reference(x - e)) / (2 * h), rel=1e-5, abs=1e-6)


@needs_cc
def test_planned_tables_with_named_sizes():
    table = np.linspace(0.0, 1.0, 3000)
    rows = np.tile(np.arange(5.0), (600, 1))

    def f(x):
        return np.sum(np.sin(table * x[0])) + np.sum(rows @ np.ones(5)) * np.sum(x ** 2)

    compiled = _compiled(f, gradc.spec("f64[n]"))
    assert "_blob" not in compiled.c_source and "(affine)" in compiled.c_source
    for n in (3, 7):
        x = np.random.default_rng(n).random(n)
        value, grad = compiled.value_and_grad(x)
        want = 2 * x * np.sum(rows)
        want[0] += np.sum(table * np.cos(table * x[0]))
        assert value == pytest.approx(f(x), rel=1e-12)
        np.testing.assert_allclose(grad, want, rtol=1e-11)
