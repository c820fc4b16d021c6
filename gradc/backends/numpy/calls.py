"""Helpers in emitted NumPy: each distinct ``call`` body is a module-level function, called by name.

``t3, t4 = det_1(A)`` calls the function written once for the body; the bodies reachable from
the module's functions (through loops, branches and other bodies, derivative bodies among them:
``det_adjoint``) are written before the module's public functions, in the order they are first
met, so the module mirrors the source's helpers. Bodies printing the same IR text (the same
helper optimised for the value and for the gradient) are written once. Their names are
generated ones (``det``, ``det_1``): a user's name that equals one renames the helper
(``det_``, see ``names.finish``), never the user's.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.backends.numpy.emit import Function, emit_module
>>> def norm2(v):
...     s = 0.0
...     for k in range(v.shape[0]):
...         s = s + v[k] * v[k]
...     return s
>>> src = emit_module([Function("f", trace(lambda x: norm2(x) + norm2(2.0 * x), np.ones(3)), "f.")])
>>> src.count("def norm2("), src.count("norm2(")
(1, 3)
"""
from __future__ import annotations

import ast

from gradc.ir.dims import is_symbolic
from gradc.ir.graph import Graph, subgraphs


def helper_bodies(graphs) -> list:
    """The distinct ``call`` bodies reachable from ``graphs``, in the order first met (deterministic)."""
    found: list = []
    seen: set = set()
    pending = list(reversed(list(graphs)))
    while pending:
        g = pending.pop()
        inner = []
        for e in g.eqns:
            for sub in subgraphs(e):
                if id(sub) in seen:
                    continue
                seen.add(id(sub))
                if e.op == "call":
                    found.append(sub)
                inner.append(sub)
        pending.extend(reversed(inner))
    return found


class HelperNames:
    """One function name per distinct body: its name, suffixed where two different bodies share one."""

    def __init__(self, bodies, taken=()):
        self.by_id: dict = {}
        self.by_text: dict = {}
        self.unique: list = []  # (name, body) to write
        used = set(taken)
        for body in bodies:
            text = str(body)
            name = self.by_text.get(text)
            if name is None:
                name, k = body.name, 1
                while name in used:
                    name = f"{body.name}_{k}"
                    k += 1
                used.add(name)
                self.by_text[text] = name
                self.unique.append((name, body))
            self.by_id[id(body)] = name

    def __getitem__(self, body: Graph) -> str:
        return self.by_id[id(body)]


def needs_checks(body: Graph) -> bool:
    """A helper reads the named sizes of its inputs (``n = x.shape[0]``) through the argument checks."""
    return any(is_symbolic(v.type.shape) for v in body.inputs if getattr(v.type, "shape", None) is not None)


def emit_call(em, eqn) -> list:
    """``t3 = f(a, b)`` or ``t3, _, t5 = f(a, b)``: the results the graph reads, by their element's name."""
    from gradc.backends.numpy.control import _element_names, _operands
    before, args = _operands(em, eqn.inputs)
    call = ast.Call(ast.Name(em.state.helper_names[eqn.params["body"]], ast.Load()), args, [])
    names = _element_names(em, eqn)
    n_out = len(eqn.params["body"].outputs)
    if not names:
        return before + [ast.Expr(call)]
    if n_out == 1:
        return before + [ast.Assign([ast.Name(names[0], ast.Store())], call, lineno=0)]
    targets = [ast.Name(names.get(k, "_"), ast.Store()) for k in range(n_out)]
    return before + [ast.Assign([ast.Tuple(targets, ast.Store())], call, lineno=0)]
