"""The test tree's own layout: pytest imports test modules by basename (rootdir mode, no packages), so
two files with the same name in different folders break collection of the whole suite, and only when
both are collected. This catches it when the second file is added, not when CI is run in full."""

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def modules_by_basename() -> dict[str, list[str]]:
    found: dict[str, list[str]] = defaultdict(list)
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "conftest.py" or "__pycache__" in path.parts:
            continue
        # a folder with __init__.py is a package: its modules are imported by dotted name
        if (path.parent / "__init__.py").exists():
            continue
        found[path.name].append(str(path.relative_to(TESTS)))
    return found


def test_module_basenames_are_unique():
    clashes = {name: paths for name, paths in modules_by_basename().items() if len(paths) > 1}
    assert not clashes, f"test modules sharing a basename break collection; rename one of each: {clashes}"


def test_the_check_sees_the_tree():
    found = modules_by_basename()
    assert "test_layers.py" in found and len(found) > 100
