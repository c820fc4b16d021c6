"""Running ``gradc.cli.main`` in this process, and snapshots of a directory, for the CLI hardening tests.

A subprocess per case costs about a second; ``run_cli`` calls ``main(argv)`` with stdout,
stderr, the working directory, ``sys.path`` and ``sys.modules`` restored afterwards.
"""
from __future__ import annotations

import contextlib
import io
import os
import stat
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODEL = '''\
import numpy as np


def loss(x: "f64[3]", w: "f64[3]"):
    return np.sum(np.sin(x) * w)
'''


class Result:
    """Exit status and the bytes written to stdout and stderr by one gradc run."""

    def __init__(self, status, out: bytes, err: bytes):
        self.status, self.out, self.err = status, out, err

    @property
    def stdout(self) -> str:
        return self.out.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.err.decode("utf-8", "replace")

    def __repr__(self):
        return f"<exit {self.status}: stdout {self.out[:200]!r} stderr {self.err[:400]!r}>"


def _stream():
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace", write_through=True)


def run_cli(*argv, cwd) -> Result:
    """``gradc ARGV`` in-process, in directory ``cwd``."""
    from gradc.cli import main

    out, err = _stream(), _stream()
    old_cwd, old_path, old_modules = os.getcwd(), list(sys.path), set(sys.modules)
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main([os.fsdecode(a) for a in argv])
    finally:
        os.chdir(old_cwd)
        sys.path[:] = old_path
        for name in set(sys.modules) - old_modules:
            if name.startswith("gradc_user_"):
                del sys.modules[name]
    return Result(status, out.buffer.getvalue(), err.buffer.getvalue())


def run_subprocess(*argv, cwd, env=None, **kwargs) -> Result:
    """``python -m gradc ARGV`` in a fresh process (for what needs one: file descriptors, other users)."""
    env = dict(os.environ, PYTHONPATH=REPO, **(env or {}))
    proc = subprocess.run([sys.executable, "-m", "gradc", *argv], cwd=cwd, env=env, capture_output=True,
                          timeout=120, **kwargs)
    return Result(proc.returncode, proc.stdout, proc.stderr)


def snapshot(directory) -> dict:
    """Every entry below ``directory``: kind, permission bits and content (or link target)."""
    out = {}
    for root, dirs, files in os.walk(directory):
        for name in sorted(dirs + files):
            path = os.path.join(root, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, directory)
            if stat.S_ISREG(st.st_mode):
                with open(path, "rb") as f:
                    out[rel] = ("file", stat.S_IMODE(st.st_mode), f.read())
            elif stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(path))
            else:
                out[rel] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode))
    return out


def assert_one_line_error(result: Result, *fragments, status=2):
    """Exit ``status``, nothing on stdout, one line on stderr starting ``gradc: error:`` and naming ``fragments``."""
    assert result.status == status, result
    assert result.out == b"", result
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and len(result.stderr.split("\n")) == 2, result
    line = lines[0]
    assert line.startswith("gradc: error: "), result
    assert "Traceback" not in line and "bug in gradc" not in line and "internal error" not in line, result
    for fragment in fragments:
        assert fragment in line, (fragment, line)
    return line


def need_root():
    if os.geteuid() != 0:
        pytest.skip("making a character device needs root")


def make_char_device(path):
    """A character device like /dev/null (major 1, minor 3), inside the test's own directory."""
    need_root()
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except OSError as e:  # a container without CAP_MKNOD
        pytest.skip(f"cannot make a character device here: {e}")
