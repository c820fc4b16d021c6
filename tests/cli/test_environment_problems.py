"""Problems of the machine are exit 2 with one line naming the place and what to do (issue 22, item 10).

A full or read-only C build cache was a chained raw traceback or "a bug in gradc" (the crash
reporter wrote into the same full cache). Real file systems where the test can mount them
(root: a 64 KiB tmpfs, a read-only bind mount), monkeypatched OSErrors everywhere.
"""
from __future__ import annotations

import contextlib
import errno
import io
import os
import shutil
import subprocess
import tempfile

import numpy as np
import pytest
from cli_harness import MODEL, run_cli

import gradc
from gradc.backends.c import cache
from gradc.cli import failures, output
from gradc.cli.load import CliError

needs_cc = pytest.mark.skipif(not (shutil.which("cc") or shutil.which("gcc")), reason="no C compiler")
C_COMMAND = ["compile", "m.py:loss", "--target", "c", "--check", "-o", "out.c"]


@pytest.fixture
def work(tmp_path):
    (tmp_path / "m.py").write_text(MODEL)
    return tmp_path


def one_line(result, *words):
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result
    assert "Traceback" not in result.stderr, result
    for word in words:
        assert word in lines[0], (word, lines[0])
    return lines[0]


def _mount(*argv):
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a file system needs root")
    proc = subprocess.run(["mount", *argv], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount here: {proc.stderr.strip()}")


@contextlib.contextmanager
def full_directory(where):
    """A private directory on a 64 KiB tmpfs that is (almost) full."""
    where.mkdir()
    _mount("-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where))
    try:
        private = where / "cache"
        private.mkdir(mode=0o700)
        fd = os.open(where / "filler", os.O_WRONLY | os.O_CREAT, 0o600)
        try:
            while True:
                os.write(fd, b"\0" * 512)
        except OSError:
            pass
        finally:
            os.close(fd)
        yield private
    finally:
        subprocess.run(["umount", str(where)], check=False)


@contextlib.contextmanager
def read_only_directory(where):
    """A private directory that nobody, root included, can write: a read-only bind mount."""
    source = where.parent / (where.name + "-source")
    source.mkdir(mode=0o700)
    where.mkdir(mode=0o700)
    _mount("--bind", str(source), str(where))
    try:
        _mount("-o", "remount,bind,ro", str(where))
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=False)


# ---------------------------------------------------------------- real file systems
@needs_cc
def test_a_full_cache_is_exit_2_naming_it(work, tmp_path, monkeypatch):
    with full_directory(tmp_path / "full") as full:
        monkeypatch.setenv("GRADC_CACHE_DIR", str(full))
        result = run_cli(*C_COMMAND, cwd=work)
        assert result.status == 2, result
        one_line(result, str(full), "full", "free some space", "GRADC_CACHE_DIR")
        with pytest.raises(gradc.EnvironmentProblem, match="full"):
            gradc.compile(lambda x: np.sum(x * x), np.ones(3), target="c")


@needs_cc
def test_a_crash_report_that_cannot_be_written_is_one_more_line(work, tmp_path, monkeypatch):
    """An internal error while the cache and the temporary directory are both full: exit 1, one line."""
    with full_directory(tmp_path / "full") as full:
        monkeypatch.setenv("GRADC_CACHE_DIR", str(full))
        monkeypatch.setattr(tempfile, "tempdir", str(full))
        monkeypatch.setattr("gradc.cli.commands.cmd_compile", lambda args: 1 / 0)
        result = run_cli(*C_COMMAND, cwd=work)
        assert result.status == 1, result
        one_line(result, "ZeroDivisionError", "bug in gradc", "could not be saved", "--debug")


def test_a_read_only_cache_is_exit_2_not_a_bug(work, tmp_path, monkeypatch):
    if shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("no C compiler")
    with read_only_directory(tmp_path / "ro") as ro:
        monkeypatch.setenv("GRADC_CACHE_DIR", str(ro))
        result = run_cli(*C_COMMAND, cwd=work)
        assert result.status == 2, result
        line = one_line(result, str(ro), "read-only", "GRADC_CACHE_DIR")
        assert "bug" not in line


def test_o_into_a_full_directory_names_the_output_and_leaves_nothing(work, tmp_path):
    with full_directory(tmp_path / "full") as full:
        target = full / "out.py"
        result = run_cli("compile", "m.py:loss", "-o", str(target), cwd=work)
        assert result.status == 2, result
        one_line(result, str(target), "no space left")
        assert os.listdir(full) == []  # no temporary file left behind


# ---------------------------------------------------------------- the same, with OSErrors raised on purpose
@needs_cc
@pytest.mark.parametrize("code, words", [
    (errno.ENOSPC, ["full", "free some space"]),
    (errno.EROFS, ["read-only"]),
    (errno.EACCES, ["not writable"]),
    (getattr(errno, "EDQUOT", errno.ENOSPC), ["full"]),
])
def test_cache_write_errors_are_environment_problems(work, tmp_path, monkeypatch, code, words):
    private = tmp_path / "cache"
    private.mkdir(mode=0o700)
    monkeypatch.setenv("GRADC_CACHE_DIR", str(private))

    def refuse(*args, **kwargs):
        raise OSError(code, os.strerror(code), str(private / "tmpabc"))
    monkeypatch.setattr(tempfile, "TemporaryDirectory", refuse)
    result = run_cli(*C_COMMAND, cwd=work)
    assert result.status == 2, result
    one_line(result, str(private), "GRADC_CACHE_DIR", *words)


def test_an_unwritable_cache_directory_cannot_be_created(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path / "a" / "cache"))

    def refuse(path, *args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system", path)
    monkeypatch.setattr(os, "makedirs", refuse)
    with pytest.raises(gradc.EnvironmentProblem) as info:
        cache.cache_dir()
    assert info.value.directory == str(tmp_path / "a" / "cache")
    assert "read-only" in str(info.value) and "GRADC_CACHE_DIR" in str(info.value)


def test_other_os_errors_stay_bugs():
    problem = cache.environment_problem(OSError(errno.EBADF, "Bad file descriptor"), "/c")
    assert isinstance(problem, OSError) and not isinstance(problem, gradc.GradcError)


def test_the_crash_reporter_never_raises(monkeypatch, capsys):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(tempfile, "mkstemp", full)
    path, why = cache.save_crash_report("trace")
    assert path is None and "No space left" in why
    assert failures.exit_status(RuntimeError("boom"), debug=False) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "could not be saved" in err[0] and "RuntimeError: boom" in err[0]


def test_a_failing_crash_reporter_still_exits_1(monkeypatch, capsys):
    def broken(text):
        raise RuntimeError("the reporter itself")
    monkeypatch.setattr(cache, "save_crash_report", broken)
    assert failures.exit_status(ValueError("first"), debug=False) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ValueError" in err[0] and "--debug" in err[0]


@pytest.mark.parametrize("exc, status, words", [
    (OSError(errno.ENOSPC, "No space left on device", "/data/x"), 2, ["no space left", "/data/x", "free some"]),
    (OSError(errno.EROFS, "Read-only file system", "/ro"), 2, ["read-only", "/ro"]),
    (OSError(errno.EMFILE, "Too many open files"), 2, ["ulimit"]),
    (MemoryError(), 2, ["out of memory"]),
    (OSError(errno.EBADF, "Bad file descriptor"), 1, ["bug in gradc"]),
    (KeyError("k"), 1, ["bug in gradc"]),
])
def test_exit_status_of_every_kind_of_failure(exc, status, words, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("GRADC_CACHE_DIR", str(tmp_path / "cache"))
    assert failures.exit_status(exc, debug=False) == status
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    for word in words:
        assert word in err[0], (word, err[0])


def test_stdout_on_a_full_disk_is_a_user_error():
    class Full(io.StringIO):
        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")
    with pytest.raises(CliError, match="cannot write to stdout: no space left"):
        output.write(output.Destination("stdout"), b"data", Full())


# ---------------------------------------------------------------- a generator: the machine fails anywhere gradc writes
SITES = [(os, "replace"), (os, "makedirs"), (os, "chmod"), (tempfile, "TemporaryDirectory"), (tempfile, "mkstemp")]
ERRNOS = [errno.ENOSPC, errno.EROFS, errno.EACCES, errno.EPERM, getattr(errno, "EDQUOT", errno.ENOSPC)]


@needs_cc
@pytest.mark.parametrize("seed", range(200 if os.environ.get("GRADC_FUZZ_LONG") == "1" else 16))
def test_a_failing_write_anywhere_is_one_line_never_a_traceback(work, tmp_path, monkeypatch, seed):
    """An OSError of the machine injected at the n-th call of a random write primitive, during a C compile
    with --check into a fresh cache: exit 2 with one line (or 0 when the call is never reached), never 1."""
    rng = np.random.default_rng(seed)
    module, name = SITES[int(rng.integers(len(SITES)))]
    code, after = ERRNOS[int(rng.integers(len(ERRNOS)))], int(rng.integers(0, 3))
    private = tmp_path / f"cache{seed}"
    monkeypatch.setenv("GRADC_CACHE_DIR", str(private))
    real, calls = getattr(module, name), []

    def failing(*args, **kwargs):
        calls.append(args)
        if len(calls) > after:
            raise OSError(code, os.strerror(code), str(args[0]) if args else None)
        return real(*args, **kwargs)
    monkeypatch.setattr(module, name, failing)
    result = run_cli(*C_COMMAND, cwd=work)
    monkeypatch.undo()
    assert "Traceback" not in result.stderr, result
    if len(calls) <= after:
        assert result.status == 0, result
        return
    assert result.status == 2, (module.__name__, name, errno.errorcode[code], after, result)
    lines = [ln for ln in result.stderr.strip().splitlines() if not ln.startswith("gradc: check: ")]
    assert len(lines) == 1 and lines[0].startswith("gradc: error: "), result  # the check's verdict may come first
