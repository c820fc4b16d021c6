"""GradBench's own PyTorch tools (lse, gmm, kmeans, ba) run unchanged on the facade and agree with torch 2.13.0.

The tools are read from the GradBench mirror (``GRADBENCH_MIRROR``, default
/work/.mirror/gradbench+gradbench/repo, a bare git repository) into a temporary folder, never copied
into this repository; ``gradbench_tools.py`` runs them with ``torch`` bound to torch or to
``gradc.torch``. Skipped when the mirror or torch is absent.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
MIRROR = Path(os.environ.get("GRADBENCH_MIRROR", "/work/.mirror/gradbench+gradbench/repo"))
PACKAGE = "python/gradbench/gradbench"
NEEDED = ["__init__.py", "wrap.py", "adbench", "tools/__init__.py", "tools/pytorch"]


def _extract(dest: Path) -> Path:
    paths = [f"{PACKAGE}/{p}" for p in NEEDED]
    have = subprocess.run(["git", f"--git-dir={MIRROR}", "ls-tree", "-r", "--name-only", "HEAD", "--", *paths],
                          capture_output=True, text=True)
    if have.returncode != 0 or not have.stdout.strip():
        pytest.skip("the GradBench mirror has no python/gradbench sources")
    archive = subprocess.run(["git", f"--git-dir={MIRROR}", "archive", "--format=tar", "HEAD", "--",
                              *have.stdout.split()], capture_output=True)
    assert archive.returncode == 0, archive.stderr.decode()
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        if sys.version_info >= (3, 12):
            tar.extractall(dest, filter="data")
        else:  # the archive is git's own output of the mirror's files
            tar.extractall(dest)  # noqa: S202
    return dest / "python" / "gradbench"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    pytest.importorskip("torch")
    if not MIRROR.exists():
        pytest.skip(f"no GradBench mirror at {MIRROR}")
    root = _extract(tmp_path_factory.mktemp("gradbench"))
    runner = Path(__file__).with_name("gradbench_tools.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    results = {}
    for which in ("torch", "gradc"):
        proc = subprocess.run([sys.executable, str(runner), str(root), which], capture_output=True, text=True,
                              env=env, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[which] = json.loads(proc.stdout)
    return results


def _flat(value):
    if isinstance(value, dict):
        return np.concatenate([_flat(value[k]) for k in sorted(value)])
    return np.ravel(np.asarray(value, dtype=np.float64))


@pytest.mark.parametrize("function", ["lse.primal", "lse.gradient", "kmeans.cost", "kmeans.dir", "gmm.objective",
                                      "gmm.jacobian", "ba.objective", "ba.jacobian"])
def test_tool_matches_torch(outputs, function):
    expect, got = _flat(outputs["torch"][function]), _flat(outputs["gradc"][function])
    assert expect.shape == got.shape
    assert np.all(np.isfinite(expect))
    np.testing.assert_allclose(got, expect, rtol=1e-10, atol=1e-12)
