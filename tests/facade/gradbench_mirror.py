"""GradBench's PyTorch tools read from the GradBench mirror into a temporary folder (never copied into this
repository) and run by a runner script under torch and under ``gradc.torch``, for the tests that compare them.

``GRADBENCH_MIRROR`` (default /work/.mirror/gradbench+gradbench/repo) is a bare git repository; a test is
skipped when the mirror, the tools it needs or torch are absent.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("GRADBENCH_MIRROR", "/work/.mirror/gradbench+gradbench/repo"))
PACKAGE = "python/gradbench/gradbench"


def extract(dest: Path, needed: list, required: str) -> Path:
    """The mirror's files under ``PACKAGE``/``needed`` written to ``dest``; skips unless ``required`` is among
    them. Returns the folder to put on ``sys.path`` (it holds the ``gradbench`` package)."""
    git = ["git", f"--git-dir={MIRROR}"]
    have = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", "--", *(f"{PACKAGE}/{p}" for p in needed)],
                          capture_output=True, text=True)
    if have.returncode != 0 or f"{PACKAGE}/{required}" not in have.stdout.split():
        pytest.skip(f"the GradBench mirror has no {required}")
    archive = subprocess.run([*git, "archive", "--format=tar", "HEAD", "--", *have.stdout.split()],
                             capture_output=True)
    assert archive.returncode == 0, archive.stderr.decode()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if sys.version_info >= (3, 12):
            tar.extractall(dest, filter="data")
        else:  # the archive is git's own output of the mirror's files
            tar.extractall(dest)  # noqa: S202
    return dest / "python" / "gradbench"


def run_both(dest: Path, needed: list, required: str, runner: str) -> dict:
    """``{"torch": outputs, "gradc": outputs}`` of the runner script (next to this file) under each torch."""
    pytest.importorskip("torch")
    if not MIRROR.exists():
        pytest.skip(f"no GradBench mirror at {MIRROR}")
    root = extract(dest, needed, required)
    script = Path(__file__).with_name(runner)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    results = {}
    for which in ("torch", "gradc"):
        proc = subprocess.run([sys.executable, str(script), str(root), which], capture_output=True, text=True,
                              env=env, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[which] = json.loads(proc.stdout)
    return results
