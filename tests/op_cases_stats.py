"""Per-op table entries for the stats family (merged into ``op_cases``; see its docstring for the checks)."""
from __future__ import annotations

DIFF_CASES: list = []
NONDIFF_CASES: list = []
