"""The IR's text form: one equation per line, Python-shaped, params sorted.

Grammar::

    graph  := "def " NAME "(" param ("," param)* ")" " -> " types ":" NL eqn* return
    param  := NAME ":" type | NAME "=" static-value
    type   := DTYPE "[" dims "]"              e.g. f64[5,3], f32[]
    eqn    := "  " NAME ":" type " = " OP (" " atom)* (" " KEY "=" VALUE)* NL
    atom   := NAME | literal                  (array constants print as const(f64[2,3]))
    return := "  return " atom ("," atom)*

>>> from gradc.ir.graph import Graph
>>> print(Graph("f", [], [], []))
def f() -> ():
  return
"""
from __future__ import annotations

from gradc.ir.atoms import Var


def format_atom(atom) -> str:
    if isinstance(atom, Var):
        return atom.name
    if atom.is_scalar:
        return _scalar_text(atom.value.item())
    return f"const({atom.type})"


def _scalar_text(value) -> str:
    return repr(value)


def format_param(value) -> str:
    """Params print as Python literals; index specs in subscript form."""
    if isinstance(value, tuple) and value and all(isinstance(v, tuple) and v and isinstance(v[0], str)
                                                  for v in value):
        return "(" + ", ".join(_format_index_item(v) for v in value) + ("," if len(value) == 1 else "") + ")"
    return repr(value)


def _format_index_item(item) -> str:
    kind = item[0]
    if kind == "int":
        return str(item[1])
    if kind == "new":
        return "None"
    if kind == "array":
        return f"<array {item[1]}>"
    start, stop, step = item[1:]
    text = f"{'' if start is None else start}:{'' if stop is None else stop}"
    return text + (f":{step}" if step is not None else "")


def _is_graph(value) -> bool:
    return hasattr(value, "eqns") and hasattr(value, "outputs")


def _holds_graphs(value) -> bool:
    return _is_graph(value) or isinstance(value, tuple) and bool(value) and all(_is_graph(v) for v in value)


def format_eqn(eqn, seen: set | None = None) -> str:
    """One equation; the sub-graphs it holds (a loop's body) follow, indented, one ``def`` each.

    A helper's body (``call``) is printed under the first equation calling it; a later call
    names it (``body=det_1``) and says it was printed above. ``seen`` holds the bodies printed.
    """
    seen = set() if seen is None else seen
    if eqn.op == "call" and id(eqn.params["body"]) in seen:
        parts = [eqn.op] + [format_atom(a) for a in eqn.inputs] + [f"helper={eqn.params['helper']!r}"]
        return f"{eqn.out.name}: {eqn.out.type} = {' '.join(parts)}  # body above"
    if eqn.op == "call":
        seen.add(id(eqn.params["body"]))
    parts = [eqn.op] + [format_atom(a) for a in eqn.inputs]
    parts += [f"{k}={format_param(eqn.params[k])}" for k in sorted(eqn.params) if not _holds_graphs(eqn.params[k])]
    lines = [f"{eqn.out.name}: {eqn.out.type} = {' '.join(parts)}"]
    for k in sorted(eqn.params):
        value = eqn.params[k]
        if _holds_graphs(value):
            for g in (value if isinstance(value, tuple) else (value,)):
                lines += ["  " + line for line in format_graph(g, seen).split("\n")]
    return "\n".join(lines)


def format_graph(graph, seen: set | None = None) -> str:
    inputs = {v.name: v for v in graph.inputs}
    params = []
    for name in graph.params:
        if name in inputs:
            params.append(f"{name}: {inputs[name].type}")
        else:
            params.append(f"{name}={graph.static[name]!r}")
    out_types = [o.type for o in graph.outputs]
    ret = str(out_types[0]) if len(out_types) == 1 else "(" + ", ".join(map(str, out_types)) + ")"
    lines = [f"def {graph.name}({', '.join(params)}) -> {ret}:"]
    seen = set() if seen is None else seen
    for e in graph.eqns:
        lines += ["  " + line for line in format_eqn(e, seen).split("\n")]
    lines.append("  return " + ", ".join(format_atom(o) for o in graph.outputs) if graph.outputs else "  return")
    return "\n".join(lines)


SHORT_LINES = 40  # a graph's repr shows at most about this many lines of its text


def shortened(text: str, lines: int = SHORT_LINES) -> str:
    """``text``, or for one of more than ``lines`` lines: its first lines, a line saying how many were left out,
    and its last two (the return), ``lines`` lines in all.

    >>> print(shortened("\\n".join(f"line {k}" for k in range(10)), lines=6))
    line 0
    line 1
    line 2
      ... 5 more lines: print(graph) shows them all ...
    line 8
    line 9
    """
    rows = text.split("\n")
    if len(rows) <= lines:
        return text
    head, tail = rows[: lines - 3], rows[-2:]
    left_out = len(rows) - len(head) - len(tail)
    return "\n".join(head + [f"  ... {left_out} more lines: print(graph) shows them all ..."] + tail)
