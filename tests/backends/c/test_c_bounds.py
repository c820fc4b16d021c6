"""Bounds of the C target (issue 22, item 7): ``max_trips`` validated, no size computation wraps around.

``max_trips=2**61`` once wrapped ``size_t`` (a zero-byte work buffer, then memory corruption), ``2**63``
emitted a one-row tape, ``10**30`` was a raw ``OverflowError``. Sizes now stay Python ints at compile
time and are checked against ``2**62`` bytes; a size of named sizes is checked when the function runs.
"""
from __future__ import annotations

import ctypes
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c.bounds import MAX_BYTES
from gradc.errors import ArgumentError, EmitError
from gradc.trace import trace
from gradc.transforms import reverse as ad
from tests.cli.cli_harness import assert_one_line_error, run_cli

needs_cc = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


@pytest.fixture(autouse=True)
def _cache(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "gradc_c_cache"))


def newton_sqrt(a):
    x = a
    while abs(x * x - a) > 1e-12 * a:
        x = 0.5 * (x + a / x)
    return x


def newton_rows(a):
    x = a
    while np.sum(np.abs(x * x - a)) > 1e-12:
        x = 0.5 * (x + a / x)
    return np.sum(x)


@pytest.mark.parametrize("bad", [0, -3, True, 2.5, "10", 2 ** 63, 10 ** 30, MAX_BYTES + 1])
def test_a_bad_max_trips_is_refused_by_the_api(bad):
    with pytest.raises(ArgumentError, match="max_trips"):
        gradc.compile(newton_sqrt, 2.0, target="c", max_trips=bad)
    with pytest.raises(ArgumentError, match="max_trips"):
        gradc.compile(newton_sqrt, 2.0, target="c", mode="jvp", max_trips=bad)


def test_max_trips_without_target_c_is_refused():
    with pytest.raises(ArgumentError, match="target='c' only"):
        gradc.compile(newton_sqrt, 2.0, max_trips=50)


def _sources(f, arg, max_trips):
    graph = trace(f, arg)
    vg = ad.value_and_grad_graph(graph, ["a"], name=f"{graph.name}_value_and_grad")
    return c_build.emit_sources(graph, vg, ["a"], max_trips=max_trips)[0]


@pytest.mark.parametrize("trips", [2 ** 61, 2 ** 62])
def test_a_tape_past_2_to_the_62_bytes_is_a_compile_error(trips):
    with pytest.raises(EmitError, match=r"more than 2\*\*62"):
        _sources(newton_sqrt, 2.0, trips)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, MAX_BYTES), st.integers(1, 64))
def test_any_max_trips_emits_checked_sizes_or_refuses(trips, width):
    """Every work size the source states is at most 2**62 bytes and at least the tape's; stack arrays are
    small; or the emission is refused with the clear error."""
    try:
        source = _sources(newton_rows, np.full(width, 2.0), trips)
    except EmitError as exc:
        assert "more than 2**62" in str(exc) and 8 * trips * width > MAX_BYTES
        return
    sizes = [int(n) for n in re.findall(r"_work_size\(void\)\n\{\n    return (\d+);", source)]
    assert all(n <= MAX_BYTES for n in sizes)
    if 8 * trips * width > 65536:  # a large tape is never on the stack
        assert max(sizes) >= 8 * trips * width
    stack = [int(n) for n in re.findall(r"^    double \w+\[(\d+)\];", source, re.M)]
    assert sum(stack) * 8 <= 65536 * 2  # (one function's arrays each; the forward has no tape)


@needs_cc
def test_a_large_valid_max_trips_runs():
    c = gradc.compile(newton_sqrt, 2.0, target="c", max_trips=2 ** 20)
    assert c.grad(2.0) == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-9)
    assert c._slow_grad(2.0) == pytest.approx(0.5 / np.sqrt(2.0), rel=1e-9)


def cube(x):
    return np.sum(x[:, None, None] * x[None, :, None] * x[None, None, :])


@needs_cc
def test_named_sizes_past_2_to_the_62_bytes_raise_when_called():
    c = gradc.compile(cube, gradc.spec("f64[n]"), target="c")
    x = np.arange(3.0)
    np.testing.assert_allclose(c.value_and_grad(x)[0], cube(x))
    np.testing.assert_allclose(c.grad(x), 3 * np.sum(x) ** 2 * np.ones(3))
    big = np.ones(2 ** 21)  # n**3 doubles: 2**66 bytes of work
    for call, arg in ((c.grad, big), (c.grad, np.ones(2 ** 22)[::2]), (c.forward, big)):
        with pytest.raises(ValueError, match=r"n=2097152 need a work buffer of more than 2\*\*62 bytes"):
            call(arg)
    lib = ctypes.CDLL(c.library_path)
    work_size = lib[c_build.function_names(c.name)[1] + "_work_size"]
    work_size.restype, work_size.argtypes = ctypes.c_size_t, [ctypes.c_long]
    size_max = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1
    assert work_size(2 ** 21) == size_max and work_size(0) == size_max and work_size(-5) == size_max
    assert 0 < work_size(1000) < size_max
    assert "SIZE_MAX" in c.header


def test_cli_max_trips_needs_target_c_and_a_bound(tmp_path):
    (tmp_path / "model.py").write_text("def newton_sqrt(a):\n    x = a\n    while abs(x * x - a) > 1e-12 * a:\n"
                                       "        x = 0.5 * (x + a / x)\n    return x\n")
    base = ["compile", "model.py:newton_sqrt", "--arg", "a=f64[]"]
    result = run_cli(*base, "--max-trips", "50", "-o", "out.py", cwd=tmp_path)
    assert_one_line_error(result, "--max-trips bounds the tapes of --target c only")
    assert not (tmp_path / "out.py").exists()
    result = run_cli(*base, "--target", "c", "--max-trips", str(2 ** 63), "-o", "out.c", cwd=tmp_path)
    assert_one_line_error(result, "is too large (at most 2**62")
    result = run_cli(*base, "--target", "c", "--max-trips", str(2 ** 61), "-o", "out.c", cwd=tmp_path)
    assert result.status != 0 and "more than 2**62" in result.stderr and "Traceback" not in result.stderr
