"""gradc's version, read from the installed package's metadata (``importlib.metadata``).

A source checkout that was never installed has no metadata: then the version is
read from ``pyproject.toml`` beside the package, and failing that it is
``"0+unknown"`` (a valid PEP 440 version that sorts before every release).

>>> import re
>>> bool(re.fullmatch(r"\\d+(\\.\\d+)*.*|0\\+unknown", __version__))
True
"""
from __future__ import annotations

import importlib.metadata
import pathlib
import re

UNKNOWN = "0+unknown"


def installed_version(distribution: str = "gradc") -> str | None:
    """The version of ``distribution`` as installed (pip, ``pip install -e``), or None when it is not.

    >>> installed_version("surely-not-a-distribution-name") is None
    True
    """
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def checkout_version(pyproject: pathlib.Path | None = None) -> str | None:
    """The ``version = "..."`` of the ``[project]`` table of the checkout's ``pyproject.toml``, or None.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = pathlib.Path(tmp) / "pyproject.toml"
    ...     _ = path.write_text('[project]\\nname = "gradc"\\nversion = "1.2.3"\\n')
    ...     checkout_version(path)
    '1.2.3'
    """
    path = pyproject or pathlib.Path(__file__).resolve().parent.parent / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return None
    # the [project] table up to the next table; tomllib is 3.11+, and one key needs no parser
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if not table or not re.search(r'^name\s*=\s*"gradc"', table.group(1), re.M):
        return None  # not gradc's checkout (the package was copied beside another project's file)
    found = re.search(r'^version\s*=\s*"([^"]+)"', table.group(1), re.M)
    return found.group(1) if found else None


def _is_this_checkout() -> bool:
    """Whether the installed metadata describes this copy of the package (not another gradc elsewhere)."""
    try:
        files = importlib.metadata.distribution("gradc").files or []
    except importlib.metadata.PackageNotFoundError:
        return False
    here = pathlib.Path(__file__).resolve()
    for file in files:
        if file.name == "version.py" and file.parent.name == "gradc":
            return pathlib.Path(str(file.locate())).resolve() == here
    return True  # an editable install lists no package files: its metadata is this checkout's


def package_version() -> str:
    """gradc's version: the installed metadata's, else the checkout's ``pyproject.toml``, else ``0+unknown``."""
    checkout = checkout_version()
    if checkout is not None and not _is_this_checkout():
        return checkout  # running from a source tree while another gradc is installed: this tree's version
    return installed_version() or checkout or UNKNOWN


__version__ = package_version()
