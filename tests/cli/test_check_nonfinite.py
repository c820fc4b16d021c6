"""``gradc compile --check`` never passes a NaN or an inf (issue 11, must-have 3), and ``--check-range LO,HI``.

A non-finite value in the emitted gradient or in the finite differences is a failure
(exit 3) naming the entries and the likely cause; ``--check-range`` moves the sampling
interval (default [0.5, 1.5]) into the function's domain.
"""
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODEL = textwrap.dedent('''\
    import numpy as np


    def sqrt_of_zero(x: "f64[3]"):
        return np.sum(np.sqrt(np.abs(x - x)))


    def log_shifted(x: "f64[4]"):
        return np.sum(np.log(x - 2.0))


    def sqrt_shifted(x: "f64[6]"):
        return np.sum(np.sqrt(x - 1.0))


    def reciprocal_of_zero(x: "f64[2]"):
        return np.sum(1.0 / (x - x))


    def scalar_log(a: "f64[]", b: "f64[]"):
        return np.log(a - 3.0) * b


    def fine(x: "f64[5]", w: "f64[5]"):
        return np.sum(np.log(x) * w)


    def fine_f32(x: "f32[4]"):
        return np.sum(np.sqrt(x))


    def big(x: "f64[80]"):
        return np.sum(np.log(x - 1.0))


    def with_labels(x: "f64[3]", i: "i64[2]"):
        return np.sum(np.log(x[i] - 5.0))
    ''')


@pytest.fixture
def work(tmp_path):
    (tmp_path / "model.py").write_text(MODEL)
    return tmp_path


def run(work, *args):
    env = dict(os.environ, PYTHONPATH=REPO)
    return subprocess.run([sys.executable, "-m", "gradc", "compile", *args], cwd=work, env=env,
                          capture_output=True, text=True, timeout=180)


def check_line(proc):
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("gradc: check:")]
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr, proc.stderr
    return lines[0]


# name -> (target, extra options, words in the check line)
NON_FINITE = {
    "gradient-nan-function-finite": ("sqrt_of_zero", [], ["gradient", "NaN", "x[0]", "x[1]", "x[2]"]),
    "function-nan-outside-log-domain": ("log_shifted", [], ["NaN", "x[0]", "domain", "--check-range"]),
    "function-nan-on-some-entries": ("sqrt_shifted", [], ["NaN", "domain", "--check-range"]),
    "function-inf": ("reciprocal_of_zero", [], ["inf", "x[0]"]),
    "scalar-arguments": ("scalar_log", ["--wrt", "a,b"], ["a (", "b (", "domain", "--check-range"]),
    "float32": ("fine_f32", ["--check-range=-2,-1"], ["NaN", "x[0]"]),
    "many-entries-are-summarised": ("big", ["--check-range", "0.5,1.0"], ["NaN", "more"]),
    "integer-arguments-are-not-sampled": ("with_labels", [], ["NaN", "x[0]", "--check-range"]),
}


CASES = [pytest.param(name, target) for name in sorted(NON_FINITE) for target in ("numpy", "c")]


@pytest.mark.parametrize("name, target", CASES)
def test_a_non_finite_check_fails_with_exit_3(work, name, target):
    if target == "c" and not (shutil.which("cc") or shutil.which("gcc")):
        pytest.skip("no C compiler")
    func, extra, words = NON_FINITE[name]
    out = "out.c" if target == "c" else "out.py"
    proc = run(work, f"model.py:{func}", *extra, "--target", target, "-o", out, "--check")
    assert proc.returncode == 3, (proc.returncode, proc.stderr)
    line = check_line(proc)
    assert "ok" not in line.split(":")[2], line
    for word in words:
        assert word in line, f"{word!r} not in {line!r}"
    assert "--check-range" in line, line  # every non-finite failure says how to sample elsewhere


def test_entries_are_listed_only_once_and_counted(work):
    line = check_line(run(work, "model.py:sqrt_shifted", "-o", "out.py", "--check"))
    entries = re.findall(r"x\[(\d+)\]", line)
    assert entries and len(entries) == len(set(entries)), line
    assert re.search(r"\b\d+ of 6\b", line), line


@pytest.mark.parametrize("func, interval", [
    ("log_shifted", "2.5,3.5"),
    ("sqrt_shifted", "1.5,2.5"),
    ("scalar_log", "3.5,4"),
    ("fine", "0.5,1.5"),
    ("fine", "10,20"),
    ("fine_f32", "2,3"),
    ("with_labels", "6,7"),
    ("big", "1e3,2e3"),
])
def test_check_range_moves_the_samples_into_the_domain(work, func, interval):
    extra = ["--wrt", "a,b"] if func == "scalar_log" else []
    proc = run(work, f"model.py:{func}", *extra, "-o", "out.py", "--check", "--check-range", interval)
    assert proc.returncode == 0, proc.stderr
    line = check_line(proc)
    assert ": ok:" in line, line
    lo, hi = (float(v) for v in interval.split(","))
    assert f"[{lo:g}, {hi:g}]" in line, line  # the interval used is reported


def test_check_range_does_not_change_the_emitted_code(work):
    run(work, "model.py:fine", "-o", "out.py", "--check")
    first = (work / "out.py").read_bytes()
    run(work, "model.py:fine", "-o", "out.py", "--check", "--check-range", "3,4")
    assert (work / "out.py").read_bytes() == first


@pytest.mark.parametrize("text", ["abc", "1", "2,1", "1,1", "nan,2", "0,inf", "1,2,3", ",", "1,", "-inf,0"])
def test_a_malformed_check_range_is_an_input_error(work, text):
    proc = run(work, "model.py:fine", "-o", "out.py", "--check", f"--check-range={text}")
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gradc: error: "), proc.stderr
    assert "--check-range" in lines[0] and "LO,HI" in lines[0], lines[0]
    assert not (work / "out.py").exists()


def test_check_range_without_check_is_an_input_error(work):
    proc = run(work, "model.py:fine", "-o", "out.py", "--check-range", "1,2")
    assert proc.returncode == 2, proc.stderr
    assert "--check" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


class FakeJob:
    """What run_check reads from a Job: the user's function, argument types, wrt names and the function's name."""

    def __init__(self, func, **types):
        from gradc.ir.types import parse_type

        self.func = func
        self.types = {n: parse_type(t) for n, t in types.items()}
        self.wrt = list(types)
        self.func_name = "f"


class FakeCompiled:
    """A compiled function whose value is ``forward`` and whose gradient is ``gradient``."""

    def __init__(self, forward, gradient):
        self.name, self.wrt, self.forward = "f", ("x",), forward
        self.value_and_grad = lambda x: (forward(x), gradient(x))


def _run_check(forward, gradient, capsys, **kw):
    """--check of a compiled pair (forward, gradient) against the user's function ``forward``."""
    from gradc.cli.check import run_check

    def f(x):
        return forward(x)
    status = run_check(FakeJob(f, x="f64[3]"), FakeCompiled(forward, gradient), **kw)
    return status, capsys.readouterr().err


def test_run_check_finite_mismatch_is_still_exit_3(capsys):
    import numpy as np

    status, err = _run_check(lambda x: float(np.sum(x * x)), lambda x: 2 * x + 1.0, capsys)
    assert status == 3 and "MISMATCH" in err, err


def test_run_check_correct_gradient_passes(capsys):
    import numpy as np

    status, err = _run_check(lambda x: float(np.sum(np.sin(x))), np.cos, capsys)
    assert status == 0 and ": ok:" in err, err


def test_run_check_an_inf_in_one_gradient_entry_is_named(capsys):
    import numpy as np

    def gradient(x):
        g = 2 * x
        g[1] = np.inf
        return g

    status, err = _run_check(lambda x: float(np.sum(x * x)), gradient, capsys)
    assert status == 3 and "inf" in err and "x[1]" in err and "x[0]" not in err, err


def test_run_check_nan_in_both_is_not_ok(capsys):
    import numpy as np

    status, err = _run_check(lambda x: float("nan"), lambda x: np.full(3, np.nan), capsys)
    assert status == 3 and "NaN" in err and ": ok:" not in err, err
