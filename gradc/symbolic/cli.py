"""``gradc show FILE.py:FUNC --stage math [--latex]``: the function and its gradient as formulas."""
from __future__ import annotations

from gradc.symbolic.view import Symbolic


def show_math(job, args) -> str:
    """The text ``gradc show --stage math`` prints for a traced ``job`` (``gradc.cli.load.Job``)."""
    graph = job.graph
    wrt = tuple(job.wrt)
    S = Symbolic(graph, wrt, len(wrt) > 1, where=graph.origin)
    if args.latex:
        return "\\begin{aligned}\n" + S.latex() + "\n\\end{aligned}\n"
    return str(S) + "\n"
