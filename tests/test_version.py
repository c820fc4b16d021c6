"""``gradc.__version__`` and ``gradc --version``: the package metadata's, with a fallback for a bare checkout."""
from __future__ import annotations

import importlib.metadata
import pathlib
import re
import subprocess
import sys

import pytest

import gradc
import gradc.version as gradc_version
from gradc.cli import main

ROOT = pathlib.Path(__file__).resolve().parents[1]
PEP440 = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[a-z0-9.]+)?")


def declared_version() -> str:
    text = (ROOT / "pyproject.toml").read_text()
    return re.search(r'^version = "([^"]+)"', text, re.M).group(1)


def test_version_is_the_metadata_or_the_checkout():
    assert PEP440.fullmatch(gradc.__version__)
    try:
        installed = importlib.metadata.version("gradc")
    except importlib.metadata.PackageNotFoundError:
        installed = None
    assert gradc.__version__ in {installed, declared_version()}
    if installed is not None and gradc_version._is_this_checkout():
        assert gradc.__version__ == installed  # the metadata first


def test_cli_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"gradc {gradc.__version__}\n"


def test_cli_version_in_a_fresh_process():
    proc = subprocess.run([sys.executable, "-m", "gradc", "--version"], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout == f"gradc {gradc.__version__}\n" and proc.stderr == ""


def test_without_metadata_the_checkout_says(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    assert gradc_version.installed_version() is None
    assert gradc_version.package_version() == declared_version()
    monkeypatch.setattr(gradc_version, "checkout_version", lambda pyproject=None: None)
    assert gradc_version.package_version() == "0+unknown" and PEP440.fullmatch("0+unknown")


def test_metadata_wins_when_it_is_this_checkout(monkeypatch):
    monkeypatch.setattr(gradc_version, "installed_version", lambda distribution="gradc": "9.8.7")
    monkeypatch.setattr(gradc_version, "_is_this_checkout", lambda: True)
    assert gradc_version.package_version() == "9.8.7"
    monkeypatch.setattr(gradc_version, "_is_this_checkout", lambda: False)  # another gradc installed elsewhere
    assert gradc_version.package_version() == declared_version()


@pytest.mark.parametrize("text, expected", [
    ('[project]\nname = "gradc"\nversion = "2.0.1"\n', "2.0.1"),
    ('[tool.other]\nversion = "5"\n[project]\nversion = "1.1"\nname = "gradc"\n', "1.1"),
    ('[project]\nname = "other"\nversion = "3.0"\n', None),  # another project's file
    ('[project]\nname = "gradc"\ndynamic = ["version"]\n', None),
    ("not toml at all [", None),
])
def test_checkout_version_reads_the_project_table(tmp_path, text, expected):
    path = tmp_path / "pyproject.toml"
    path.write_text(text)
    assert gradc_version.checkout_version(path) == expected
    assert gradc_version.checkout_version(tmp_path / "missing.toml") is None
