"""The public API's type check: ``make typecheck`` (mypy, the ``dev`` extra), run by CI after ``make test``.

mypy itself runs here only where it is installed (``pip install -e ".[dev]"``, as ``make typecheck`` does).
"""
from __future__ import annotations

import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
needs_mypy = pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy not installed (dev extra)")


def typed_modules() -> list:
    """The files of the Makefile's TYPED list (its globs expanded, as make expands them)."""
    text = (ROOT / "Makefile").read_text().replace("\\\n", " ")
    line = re.search(r"^TYPED := (.*)$", text, re.M).group(1)
    files = []
    for word in line.split():
        files += sorted(str(p.relative_to(ROOT)) for p in ROOT.glob(word)) if "*" in word else [word]
    return [f for f in files if (ROOT / f).exists()]


def test_the_typecheck_target_covers_the_public_api():
    files = typed_modules()
    assert {"gradc/__init__.py", "gradc/api.py", "gradc/derivatives/__init__.py", "gradc/tree_util/__init__.py",
            "gradc/derivatives/jit.py", "gradc/derivatives/vectorize.py"} <= set(files)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^typecheck: \$\(VENV\)/\.dev", makefile, re.M) and '-e ".[dev]"' in makefile


def test_ci_runs_the_typecheck_after_the_suite():
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert lines.index("make typecheck") == lines.index("make test") + 1


def test_dev_extra_has_mypy():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert any(req.startswith("mypy") for req in project["project"]["optional-dependencies"]["dev"])
    assert project["tool"]["mypy"]["check_untyped_defs"] is True


@needs_mypy
def test_the_public_api_passes_mypy():
    proc = subprocess.run([sys.executable, "-m", "mypy", *typed_modules()], capture_output=True, text=True,
                          cwd=ROOT, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@needs_mypy
def test_the_configuration_refuses_an_unannotated_public_function(tmp_path):
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "gradc").mkdir()
    (tmp_path / "gradc" / "__init__.py").write_text("")
    (tmp_path / "gradc" / "version.py").write_text("def version(x):\n    return x\n")
    (tmp_path / "gradc" / "api.py").write_text("def f(x: int) -> str:\n    return x + 1\n")
    proc = subprocess.run([sys.executable, "-m", "mypy", "gradc/version.py", "gradc/api.py"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=900)
    assert proc.returncode == 1
    assert "version.py:1: error: Function is missing a type annotation" in proc.stdout, proc.stdout
    assert "api.py:2: error: Incompatible return value type" in proc.stdout, proc.stdout


def test_scan_with_nothing_to_scan_is_refused_clearly():
    """Found by the type check: ``range(None)`` when neither xs nor length was given."""
    import numpy as np

    import gradc

    with pytest.raises(gradc.ArgumentError, match="nothing to scan over") as info:
        gradc.scan(lambda c, x: (c, c), 0.0, None)
    assert "test_typecheck.py:" in str(info.value) and "length=N" in str(info.value)
    carry, ys = gradc.scan(lambda c, x: (c + 1.0, c), 0.0, None, length=3)
    assert carry == 3.0 and np.array_equal(ys, [0.0, 1.0, 2.0])
