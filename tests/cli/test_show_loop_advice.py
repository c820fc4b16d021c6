"""``gradc show`` says when a loop's body is small enough that Python's per-iteration cost dominates on the
NumPy target, and recommends the C target; a loop whose operations work on large arrays gets no advice."""
from __future__ import annotations

from gradc.passes.loops import SMALL_BODY_WORK
from tests.cli.cli_harness import run_cli

MODEL = '''import numpy as np


def fill(x):
    z = np.zeros(x.shape[0])
    z[0] = x[0]
    for i in range(1, x.shape[0]):
        z[i] = x[i] * z[i - 1] + 1.0
    return np.sum(z)


def wide(x):
    s = 0.0
    for i in range(20):
        s = s + np.sum(np.sin(x * i))
    return s


def short(x):
    z = np.zeros(x.shape[0])
    for i in range(4):
        z[i] = x[i] * 2.0
    return np.sum(z)
'''

ADVICE = "Python's per-iteration cost dominates on the NumPy target; compile with --target c"


def _show(tmp_path, func, arg):
    (tmp_path / "model.py").write_text(MODEL)
    result = run_cli("show", f"model.py:{func}", "--arg", arg, cwd=tmp_path)
    assert result.status == 0, result.stderr
    return result.stdout.split("# loops and branches")[-1]


def test_a_loop_of_scalar_steps_is_told_to_use_the_c_target(tmp_path):
    report = _show(tmp_path, "fill", "x=f64[1000]")
    advised = [line for line in report.splitlines() if ADVICE in line]
    assert len(advised) == 2, report  # the loop and its adjoint
    assert "loop of 999 trips" in advised[0] and "small body" in advised[0]


def test_a_loop_over_large_arrays_or_of_few_trips_is_not(tmp_path):
    assert SMALL_BODY_WORK < 100000
    assert ADVICE not in _show(tmp_path, "wide", "x=f64[100000]")
    assert ADVICE not in _show(tmp_path, "short", "x=f64[8]")
