"""How graphs show: ``str`` the whole IR text, ``repr`` the same (shortened when long), ``_repr_svg_`` via Graphviz."""
from __future__ import annotations

import os
import stat

import numpy as np
import pytest

import gradc
from gradc.ir import dot as gradc_dot
from gradc.ir.printer import SHORT_LINES


def small(x, w):
    return np.sum(np.tanh(x @ w))


def long_function(n=60):
    """``x = np.sin(x) * k`` written out ``n`` times: a graph of 2n + 1 equations."""
    lines = [f"    x = np.sin(x) * {k + 1}.0" for k in range(n)]
    namespace = {"np": np}
    exec("def long(x):\n" + "\n".join(lines) + "\n    return np.sum(x)\n", namespace)
    return namespace["long"]


def test_repr_of_a_small_graph_is_its_text():
    g = gradc.trace(small, np.ones((2, 3)), np.ones(3))
    assert repr(g) == str(g)
    assert repr(g).startswith("def small(x: f64[2,3], w: f64[3]) -> f64[]:")
    assert "Graph(" not in repr(g) and "Var" not in repr(g)
    assert repr(g.eqns[0]) == str(g).split("\n")[1].strip()


def test_repr_of_a_long_graph_is_shortened_str_is_whole():
    g = gradc.trace(long_function(), np.ones(2))
    text, shown = str(g), repr(g)
    assert len(text.split("\n")) > 100
    lines = shown.split("\n")
    assert len(lines) == SHORT_LINES
    assert lines[0] == text.split("\n")[0] and lines[-1] == text.split("\n")[-1] == "  return " + g.outputs[0].name
    left_out = len(text.split("\n")) - (SHORT_LINES - 1)  # every line but the shown ones; one says how many
    assert f"... {left_out} more lines: print(graph) shows them all ..." in shown


def test_repr_of_nested_graphs_indents_the_bodies():
    def f(x):
        return np.sum(gradc.fori_loop(0, 3, lambda i, c: np.sin(c), x))

    g = gradc.trace(f, np.ones(2))
    assert repr(g) == str(g) and "\n    def " in repr(g)


def fake_dot(directory, body):
    path = directory / "dot"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return directory


@pytest.fixture
def no_dot(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty directory: no Graphviz


def test_svg_is_none_without_graphviz(no_dot):
    g = gradc.trace(small, np.ones((2, 3)), np.ones(3))
    assert g._repr_svg_() is None


def test_svg_comes_from_dot(tmp_path, monkeypatch):
    # a stand-in for Graphviz that wraps the DOT text it is given in an SVG element
    bin_dir = fake_dot(tmp_path, 'echo "<svg>"; cat; echo "</svg>"\n')
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    g = gradc.trace(small, np.ones((2, 3)), np.ones(3))
    svg = g._repr_svg_()
    assert svg.startswith("<svg>") and gradc_dot.to_dot(g) in svg


def test_svg_is_none_when_dot_fails_or_the_graph_is_too_large(tmp_path, monkeypatch):
    bin_dir = fake_dot(tmp_path, "echo broken >&2; exit 1\n")
    monkeypatch.setenv("PATH", str(bin_dir))
    g = gradc.trace(small, np.ones((2, 3)), np.ones(3))
    assert g._repr_svg_() is None
    fake_dot(tmp_path, 'echo "<svg/>"\n')
    assert g._repr_svg_() == "<svg/>\n"
    monkeypatch.setattr(gradc_dot, "SVG_MAX_EQUATIONS", len(g.eqns) - 1)
    assert g._repr_svg_() is None  # the notebook shows the text instead


def test_svg_is_none_when_dot_hangs(tmp_path, monkeypatch):
    bin_dir = fake_dot(tmp_path, "sleep 30\n")
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(gradc_dot, "SVG_TIMEOUT", 0.2)
    assert gradc.trace(small, np.ones((2, 3)), np.ones(3))._repr_svg_() is None
