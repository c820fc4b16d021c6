"""The corpora import their shared checker and their own modules by plain name (as their authors' suites do):
this directory and each corpus's are on ``sys.path`` before pytest imports any of them (tests or doctests)."""
import pathlib
import sys

_HERE = pathlib.Path(__file__).resolve().parent
for _path in [_HERE] + sorted(p for p in _HERE.iterdir() if p.is_dir() and not p.name.startswith(("_", "."))):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))
