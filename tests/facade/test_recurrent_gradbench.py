"""GradBench's own PyTorch lstm tool runs unchanged on the facade and validates against torch 2.13.0.

The tool is read from the GradBench mirror (``GRADBENCH_MIRROR``, default
/work/.mirror/gradbench+gradbench/repo, a bare git repository) into a temporary folder, never copied
into this repository; ``recurrent_gradbench_runner.py`` runs it with ``torch`` bound to torch or to
``gradc.torch`` (its objective, its jacobian, and the jacobian along a direction beside the central
difference of its objective). Skipped when the mirror or torch is absent.
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
NEEDED = ["__init__.py", "wrap.py", "adbench", "tools/pytorch"]
SIZES = ["l=1 c=6", "l=2 c=12", "l=3 c=20"]


def _extract(dest: Path) -> Path:
    git = ["git", f"--git-dir={MIRROR}"]
    have = subprocess.run([*git, "ls-tree", "-r", "--name-only", "HEAD", "--", *(f"{PACKAGE}/{p}" for p in NEEDED)],
                          capture_output=True, text=True)
    if have.returncode != 0 or f"{PACKAGE}/tools/pytorch/lstm.py" not in have.stdout.split():
        pytest.skip("the GradBench mirror has no PyTorch lstm tool")
    archive = subprocess.run([*git, "archive", "--format=tar", "HEAD", "--", *have.stdout.split()],
                             capture_output=True)
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
    root = _extract(tmp_path_factory.mktemp("gradbench_lstm"))
    runner = Path(__file__).with_name("recurrent_gradbench_runner.py")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    results = {}
    for which in ("torch", "gradc"):
        proc = subprocess.run([sys.executable, str(runner), str(root), which], capture_output=True, text=True,
                              env=env, cwd=ROOT)
        assert proc.returncode == 0, proc.stderr[-3000:]
        results[which] = json.loads(proc.stdout)
    return results


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("function", ["objective", "jacobian"])
def test_lstm_tool_matches_torch(outputs, function, size):
    key = f"{function} {size}"
    expect, got = np.ravel(outputs["torch"][key]), np.ravel(outputs["gradc"][key])
    assert expect.shape == got.shape and np.all(np.isfinite(expect))
    if function == "jacobian":  # main_params (2l x 4b) and extra_params (3 x b) flattened, b = 7 bits a character
        layers = int(size.split()[0][2:])
        assert got.size == 2 * layers * 4 * 7 + 3 * 7
    np.testing.assert_allclose(got, expect, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("size", SIZES)
def test_lstm_tool_jacobian_matches_central_differences(outputs, size):
    along, difference = outputs["gradc"][f"directional {size}"]
    assert along == pytest.approx(difference, rel=1e-6, abs=1e-9)
