"""Graphviz DOT text of a graph: values as boxes, ops as ellipses, adjoint ops in their own cluster.

The text is deterministic (names and order come from the graph). ``render``
needs Graphviz's ``dot`` program; ``to_dot`` never does.

>>> import numpy as np
>>> from gradc.trace import trace
>>> print(to_dot(trace(lambda x: np.sin(x), np.ones(2))))
digraph "lambda_" {
  rankdir=TB;
  node [fontname="Helvetica", fontsize=10];
  "x" [label="x\\nf64[2]", shape=box, style=filled, fillcolor="#dbe9f6"];
  subgraph "cluster_forward" {
    label="forward"; color="#999999";
    "t0" [label="t0 = sin\\nf64[2]", shape=box, style="rounded,filled", fillcolor="#ffffff"];
  }
  "x" -> "t0";
  "out0" [label="return", shape=plaintext];
  "t0" -> "out0";
}
"""
from __future__ import annotations

import shutil
import subprocess

from gradc.ir.atoms import Const, Var
from gradc.ir.printer import format_atom, format_param

_INPUT_COLOR = "#dbe9f6"
_FORWARD_COLOR = "#ffffff"
_ADJOINT_COLOR = "#fde2c8"


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _eqn_label(eqn) -> str:
    params = " ".join(f"{k}={format_param(eqn.params[k])}" for k in sorted(eqn.params))
    consts = [format_atom(a) for a in eqn.inputs if isinstance(a, Const)]
    head = f"{eqn.out.name} = {eqn.op}"
    if consts:
        head += " " + " ".join(consts)
    lines = [head]
    if params:
        lines.append(params)
    lines.append(str(eqn.out.type))
    return "\n".join(lines)


def to_dot(graph) -> str:
    """The DOT text of ``graph``; equations reverse mode added (``graph.adjoint``) form a second cluster."""
    lines = [f"digraph {_quote(graph.name)} {{", "  rankdir=TB;", '  node [fontname="Helvetica", fontsize=10];']
    for v in graph.inputs:
        lines.append(f"  {_quote(v.name)} [label={_quote(f'{v.name}{chr(10)}{v.type}')}, shape=box, style=filled, "
                     f'fillcolor="{_INPUT_COLOR}"];')
    forward = [e for e in graph.eqns if e.out.name not in graph.adjoint]
    backward = [e for e in graph.eqns if e.out.name in graph.adjoint]
    for title, eqns, color in (("forward", forward, _FORWARD_COLOR), ("adjoint", backward, _ADJOINT_COLOR)):
        if not eqns:
            continue
        lines.append(f"  subgraph {_quote('cluster_' + title)} {{")
        lines.append(f'    label="{title}"; color="#999999";')
        for e in eqns:
            lines.append(f"    {_quote(e.out.name)} [label={_quote(_eqn_label(e))}, shape=box, "
                         f'style="rounded,filled", fillcolor="{color}"];')
        lines.append("  }")
    for e in graph.eqns:
        seen = []
        for a in e.inputs:
            if isinstance(a, Var) and a.name not in seen:
                seen.append(a.name)
                lines.append(f"  {_quote(a.name)} -> {_quote(e.out.name)};")
    for i, out in enumerate(graph.outputs):
        node = f"out{i}"
        label = "return" if len(graph.outputs) == 1 else f"return[{i}]"
        lines.append(f"  {_quote(node)} [label={_quote(label)}, shape=plaintext];")
        if isinstance(out, Var):
            lines.append(f"  {_quote(out.name)} -> {_quote(node)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_available() -> bool:
    """Whether Graphviz's ``dot`` program is on PATH."""
    return shutil.which("dot") is not None


def render(graph, fmt: str = "svg") -> bytes:
    """The graph drawn by Graphviz (``fmt`` svg, png, pdf); RuntimeError when ``dot`` is missing."""
    exe = shutil.which("dot")
    if exe is None:
        raise RuntimeError("Graphviz's `dot` program is not installed (apt-get install graphviz)")
    result = subprocess.run([exe, f"-T{fmt}"], input=to_dot(graph).encode(), capture_output=True, check=True)
    return result.stdout


# a notebook draws a graph up to this many equations; beyond, Graphviz takes long and the drawing is unreadable,
# and the notebook shows the text (``repr``) instead
SVG_MAX_EQUATIONS = 500
SVG_TIMEOUT = 30.0  # seconds Graphviz may take before the notebook shows the text instead


def render_svg(graph) -> str | None:
    """SVG text for Jupyter's ``_repr_svg_``, or None (the notebook then shows ``repr``) when Graphviz's ``dot``
    is not on PATH, fails, takes longer than ``SVG_TIMEOUT`` or the graph has more than ``SVG_MAX_EQUATIONS``.

    >>> from gradc.ir.graph import Graph
    >>> import os; path = os.environ.get("PATH"); os.environ["PATH"] = ""
    >>> render_svg(Graph("f", [], [], [])) is None
    True
    >>> os.environ["PATH"] = path
    """
    exe = shutil.which("dot")
    if exe is None or len(graph.eqns) > SVG_MAX_EQUATIONS:
        return None
    try:
        result = subprocess.run([exe, "-Tsvg"], input=to_dot(graph).encode(), capture_output=True, check=True,
                                timeout=SVG_TIMEOUT)
        return result.stdout.decode("utf-8")
    except (OSError, subprocess.CalledProcessError, subprocess.TimeoutExpired, UnicodeDecodeError):
        return None
