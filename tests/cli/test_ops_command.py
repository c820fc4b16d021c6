"""``gradc ops``: each op's targets as the registry says them, the C coverage line, and the README's table.

The targets column is checked against the registry's ``c=`` facets (not against itself), the coverage
line against a count made here, and the README's supported-ops table against the Markdown output
(it is generated from it: ``python -m gradc ops --markdown``).
"""
from __future__ import annotations

import os
import re

from cli_harness import run_cli

from gradc.cli.ops_table import coverage_line, ops_table, targets
from gradc.ir.registry import OPS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _rows(text):
    """``{op: targets}`` of the plain-text table (the header and the coverage line left out)."""
    lines = text.splitlines()
    start = lines[0].index("targets")
    end = lines[0].index("derivative")
    return {line.split()[0]: line[start:end].split() for line in lines[1:-1]}


def test_every_op_has_a_row_with_its_targets(tmp_path):
    out = run_cli("ops", cwd=tmp_path).stdout
    rows = _rows(out)
    assert list(rows) == list(OPS)
    for name, op in OPS.items():
        assert rows[name] == (["NumPy", "C"] if op.c not in (None, "missing") else ["NumPy"]), name


def test_the_coverage_line_counts_the_c_lowerings(tmp_path):
    out = run_cli("ops", cwd=tmp_path).stdout
    without = [name for name, op in OPS.items() if op.c in (None, "missing")]
    last = out.splitlines()[-1]
    assert last.startswith(f"C: {len(OPS) - len(without)} of {len(OPS)} ops")
    assert all(name in last for name in without)
    assert last == coverage_line()


def test_the_sorts_searches_convolutions_and_special_functions_show_c():
    for name in ("argsort", "searchsorted", "convolve", "conv2d", "max_pool2d", "max_pool2d_index", "polygamma",
                 "beta", "betaln"):
        assert targets(name) == ["NumPy", "C"], name


def test_an_op_without_c_shows_numpy_only_and_is_counted():
    from gradc.ir.registry import Op
    OPS["no_c_probe"] = Op("no_c_probe", infer=lambda t, p: t[0], impl=lambda x: x, c=None, doc="probe",
                           nondiff=True)
    try:
        assert targets("no_c_probe") == ["NumPy"]
        assert "no_c_probe" in coverage_line()
        assert re.search(r"\| `no_c_probe` \| NumPy \| not differentiable", ops_table(markdown=True))
    finally:
        del OPS["no_c_probe"]


def test_markdown_has_the_targets_column_and_the_coverage(tmp_path):
    md = run_cli("ops", "--markdown", cwd=tmp_path).stdout
    lines = md.splitlines()
    assert lines[0].startswith("| op | targets | derivative")
    assert "| `argsort` | NumPy, C | not differentiable" in md
    assert lines[-1] == coverage_line() + "."


def test_the_readme_table_is_the_generated_one():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    generated = ops_table(markdown=True)
    assert generated in text, "README.md's supported-ops table is stale: regenerate it with gradc ops --markdown"


def test_the_output_is_deterministic(tmp_path):
    assert run_cli("ops", cwd=tmp_path).stdout == run_cli("ops", cwd=tmp_path).stdout
