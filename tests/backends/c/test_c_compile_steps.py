"""How the C compiler is run: the optimisation level steps down with the source's length (GCC's passes are
superlinear in a function's length), and an extension's module and Python glue compile as two processes at
once, then link; a failure in any step is the compiler's message in an EmitError."""
from __future__ import annotations

import numpy as np
import pytest

import gradc
from gradc.backends.c import build as c_build
from gradc.backends.c import compiler_run
from gradc.errors import EmitError

pytestmark = pytest.mark.skipif(c_build.find_compiler() is None, reason="no C compiler found ($CC, cc or gcc)")


def _logging_compiler(tmp_path, monkeypatch, fail_on: str | None = None):
    """A ``$CC`` that writes each command line to a log, then runs the real compiler (or fails on ``fail_on``)."""
    real = c_build.find_compiler()
    log = tmp_path / "commands.log"
    wrapper = tmp_path / "cc"
    failing = "" if fail_on is None else \
        f"case \" $* \" in *{fail_on}*) echo '{fail_on}:1:1: error: no such thing' >&2; exit 1;; esac\n"
    wrapper.write_text(f"#!/bin/sh\necho \"$*\" >> {log}\n{failing}exec {real} \"$@\"\n")
    wrapper.chmod(0o755)
    monkeypatch.setenv("CC", str(wrapper))
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path / "cache"))
    return log


def test_the_level_steps_down_with_the_source_length():
    short = "int f(void);\n"
    assert "-O3" in compiler_run.optimisation(short)
    assert "-O2" in compiler_run.optimisation(short * (compiler_run.MEDIUM_SOURCE_LINES + 1))
    assert "-O1" in compiler_run.optimisation(short * (compiler_run.LONG_SOURCE_LINES + 1))
    for lines in (1, compiler_run.MEDIUM_SOURCE_LINES + 1, compiler_run.LONG_SOURCE_LINES + 1):
        flags = compiler_run.optimisation(short * lines)
        assert [f for f in flags if f.startswith("-O")] == [flags[1]]  # one level, in the same place
        assert set(flags) - {flags[1]} == set(compiler_run.FLAGS) - {"-O3"}  # -fwrapv and the rest kept


def test_module_and_glue_compile_apart_then_link(tmp_path, monkeypatch):
    log = _logging_compiler(tmp_path, monkeypatch)
    x = np.linspace(-1.0, 2.0, 7)
    compiled = gradc.compile(lambda x: np.sum(np.sin(x) * x), x, target="c")
    np.testing.assert_allclose(compiled.grad(x), np.cos(x) * x + np.sin(x), rtol=1e-13)
    commands = [line.split() for line in log.read_text().splitlines() if "-o" in line.split()]
    builds = [c for c in commands if any(a.endswith(("module.c", "glue.c", "module.o")) for a in c)]
    compiles = sorted(next(a for a in c if a.endswith(".c")).rsplit("/", 1)[-1] for c in builds if "-c" in c)
    links = [c for c in builds if "-c" not in c]
    assert compiles == ["glue.c", "module.c"]
    assert len(links) == 1 and "-shared" in links[0] and any(a.endswith("glue.o") for a in links[0])
    assert all("-fwrapv" in c and "-O3" in c for c in builds)


def test_a_long_source_builds_at_O2_and_computes_the_same(tmp_path, monkeypatch):
    log = _logging_compiler(tmp_path, monkeypatch)
    monkeypatch.setattr(compiler_run, "MEDIUM_SOURCE_LINES", 10)  # any emitted module is "long" now
    x = np.linspace(-1.0, 2.0, 7)
    compiled = gradc.compile(lambda x: np.sum(np.exp(x) * x), x, target="c")
    np.testing.assert_allclose(compiled.grad(x), np.exp(x) * (x + 1), rtol=1e-13)
    module = [line for line in log.read_text().splitlines() if "module.c" in line]
    assert module and all(" -O2 " in f" {line} " and " -O3 " not in f" {line} " for line in module)


@pytest.mark.parametrize("failing", ["glue.c", "module.c"])
def test_a_failing_step_is_the_compilers_message(tmp_path, monkeypatch, failing):
    _logging_compiler(tmp_path, monkeypatch, fail_on=failing)
    x = np.ones(3)
    with pytest.raises(EmitError, match=f"{failing}:1:1: error: no such thing"):
        gradc.compile(lambda x: np.sum(np.tanh(x)), x, target="c")
