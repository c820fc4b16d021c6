"""The gradient in matrix notation, read off gradc's optimised adjoint graph.

Each value of the graph becomes a matrix expression: ``matmul`` is juxtaposition, ``transpose`` is ``^T``,
elementwise products and quotients of arrays are ``\\odot`` and ``\\oslash``, a constant broadcast to an array
is its scalar (so ``2 \\odot r`` reads ``2 r``), elementwise functions apply to each entry (``\\exp``,
``\\sigma`` for the logistic function), ``sum`` of a vector is ``\\mathbf{1}^T v``. A value the graph uses
more than once is named once (``t_1 = ...``) and referred to by name. An op outside this vocabulary
(indexing, reshapes, loops...) is refused with a :class:`SymbolicError` naming it.

>>> import numpy as np, gradc
>>> S = gradc.symbolic(lambda x, A, b: np.sum((A @ x - b) ** 2), np.ones(2), np.ones((3, 2)), np.ones(3))
>>> S.matrix_latex()
'\\\\nabla_{x} = 2 A^T \\\\left(A x - b\\\\right)'
>>> def logistic_loss(w, X, y):
...     z = X @ w
...     return np.mean(np.log1p(np.exp(z)) - y * z)
>>> print(gradc.symbolic(logistic_loss, np.ones(2), np.ones((3, 2)), np.ones(3)).matrix_latex())
\\nabla_{w} = \\frac{1}{3} X^T \\left(\\sigma\\left(X w\\right) - y\\right)
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import sympy

from gradc.ir.graph import Const
from gradc.symbolic.graph_to_sympy import SymbolicError, number

_FUNCTIONS = {"exp": r"\exp", "log": r"\log", "sin": r"\sin", "cos": r"\cos", "tanh": r"\tanh", "tan": r"\tan",
              "sinh": r"\sinh", "cosh": r"\cosh", "expit": r"\sigma", "sqrt": r"\sqrt",
              "log1p": r"\operatorname{log1p}", "abs": r"\operatorname{abs}", "sign": r"\operatorname{sign}",
              "arctan": r"\arctan"}


@dataclass
class Term:
    """A matrix expression: its LaTeX, a scalar coefficient kept apart, and how tightly it binds."""

    text: str
    coefficient: object = 1
    kind: str = "atom"  # atom (a name, a call), product (juxtaposed), hadamard (odot, oslash), sum, scalar
    rank: int = 1
    negated: str | None = None  # a difference's text the other way round (b - a for a - b): -(a - b) reads b - a

    def latex(self, inside: str = "sum") -> str:
        text = self.text
        if self.kind in ("sum", "hadamard") and inside in ("product", "atom"):
            text = rf"\left({text}\right)"
        if self.kind == "product" and inside == "atom":
            text = rf"\left({text}\right)"
        if self.coefficient == 1:
            return text
        if self.coefficient == -1:
            return "-" + text
        return sympy.latex(self.coefficient) + " " + text


def _scalar_of(atom, env):
    if isinstance(atom, Const) and np.ndim(atom.value) == 0:
        return number(np.asarray(atom.value).item())
    term = env.get(id(atom))
    if term is not None and term.kind == "scalar":
        return term.coefficient
    return None


def _combine(term: Term, coefficient) -> Term:
    coefficient = sympy.nsimplify(term.coefficient * coefficient)
    if term.negated is not None and coefficient.is_negative:  # -c (a - b) reads c (b - a)
        return Term(term.negated, -coefficient, term.kind, term.rank, term.text)
    return Term(term.text, coefficient, term.kind, term.rank, term.negated)


def _term(eqn, env) -> Term:
    op, ins = eqn.op, eqn.inputs
    rank = len(getattr(eqn.out.type, "shape", ()))

    def get(atom):
        if isinstance(atom, Const):
            return Term(sympy.latex(number(np.asarray(atom.value).item())), kind="atom", rank=0)
        return env[id(atom)]

    if op == "broadcast_to":
        c = _scalar_of(ins[0], env)
        if c is not None:
            return Term("", c, "scalar", rank)
        inner = get(ins[0])
        return Term(inner.latex("atom") + r" \mathbf{1}", kind="product", rank=rank)
    if op == "matmul":
        a, b = get(ins[0]), get(ins[1])
        coefficient = sympy.nsimplify(a.coefficient * b.coefficient)
        a1, b1 = Term(a.text, 1, a.kind, a.rank), Term(b.text, 1, b.kind, b.rank)
        text = a1.latex("product") + " " + b1.latex("product")
        return Term(text, coefficient, "product", rank)
    if op == "transpose":
        a = get(ins[0])
        return Term(Term(a.text, 1, a.kind).latex("atom") + "^T", a.coefficient, "atom", rank)
    if op == "neg":
        a = get(ins[0])
        return _combine(a, -1)
    if op in ("mul", "div"):
        for k, other in ((0, 1), (1, 0)):
            c = _scalar_of(ins[k], env)
            if c is not None and not (op == "div" and k == 0):
                return _combine(get(ins[other]), c if op == "mul" else 1 / c)
        a, b = get(ins[0]), get(ins[1])
        sign = r"\odot" if op == "mul" else r"\oslash"
        return Term(f"{a.latex('atom')} {sign} {b.latex('atom')}", kind="hadamard", rank=rank)
    if op in ("add", "sub"):
        a, b = get(ins[0]), get(ins[1])
        for term in (a, b):
            if term.kind == "scalar":
                term.text, term.kind, term.coefficient = sympy.latex(term.coefficient), "atom", 1
        right = b.latex("sum")
        joiner = " + " if op == "add" else " - "
        if op == "sub" and b.kind == "sum":
            right = rf"\left({right}\right)"
        if right.startswith("-"):  # a + -b, a - -b
            joiner, right = (" - " if op == "add" else " + "), right[1:].lstrip()
        negated = None
        if joiner == " - " and a.kind != "sum" and b.kind != "sum":  # a - b, both single terms
            negated = b.latex("sum") + " - " + a.latex("sum")
        return Term(a.latex("sum") + joiner + right, kind="sum", rank=rank, negated=negated)
    if op in _FUNCTIONS:
        a = get(ins[0])
        return Term(rf"{_FUNCTIONS[op]}\left({a.latex('sum')}\right)", kind="atom", rank=rank)
    if op == "pow":
        c = _scalar_of(ins[1], env)
        if c is not None:
            return Term(rf"{get(ins[0]).latex('atom')}^{{\circ {sympy.latex(c)}}}", kind="atom", rank=rank)
    if op == "sum" and len(getattr(ins[0].type, "shape", ())) == 1:
        return Term(r"\mathbf{1}^T " + get(ins[0]).latex("product"), kind="product", rank=0)
    raise SymbolicError(f"the op {op!r} has no matrix notation here", where="",
                        hint="use S.latex() for the gradient entry by entry")


def _is_one(atom, producers) -> bool:
    if isinstance(atom, Const):
        return bool(np.all(np.asarray(atom.value) == 1))
    eqn = producers.get(id(atom))
    return eqn is not None and eqn.op == "broadcast_to" and _is_one(eqn.inputs[0], producers)


def _logistic(graph, uses):
    """The logistic function where the graph computes it from ``exp``: ``e / (e + 1)`` with ``e = exp(a)``, and
    ``1 / (1 + exp(-a))``: ``{id(div eqn): a}``, and the values used only inside such a pattern."""
    producers = {id(e.out): e for e in graph.eqns}
    found, absorbed = {}, set()
    for eqn in graph.eqns:
        if eqn.op != "div":
            continue
        num, den = eqn.inputs
        den_eqn = producers.get(id(den))
        if den_eqn is None or den_eqn.op != "add":
            continue
        exp_side = [a for a in den_eqn.inputs if not _is_one(a, producers)]
        if len(exp_side) != 1 or len(den_eqn.inputs) != 2:
            continue
        exp_eqn = producers.get(id(exp_side[0]))
        if exp_eqn is None or exp_eqn.op != "exp":
            continue
        argument = exp_eqn.inputs[0]
        if num is exp_side[0]:  # exp(a) / (exp(a) + 1)
            found[id(eqn)] = argument
            if uses[id(num)] == 2 and uses[id(den)] == 1:
                absorbed |= {id(num), id(den)}
        elif _is_one(num, producers):  # 1 / (1 + exp(-a))
            neg = producers.get(id(argument))
            if neg is not None and neg.op == "neg":
                found[id(eqn)] = neg.inputs[0]
                if uses[id(den)] == 1 and uses[id(exp_side[0])] == 1:
                    absorbed |= {id(den), id(exp_side[0])}
    return found, absorbed


def matrix_latex(S) -> str:
    """``\\nabla_{x} = ...`` for each ``wrt`` parameter of the :class:`~gradc.symbolic.view.Symbolic` ``S``."""
    graph = S.grad_graph
    uses = Counter(id(a) for eqn in graph.eqns for a in eqn.inputs if not isinstance(a, Const))
    outputs = {id(o) for o in graph.outputs}
    env = {id(v): Term(sympy.latex(sympy.Symbol(v.name)), rank=len(v.type.shape)) for v in graph.inputs}
    logistic, absorbed = _logistic(graph, uses)
    for key in absorbed:
        uses[key] = 1  # read inside a logistic function only: never named on its own
    named = []
    for eqn in graph.eqns:
        if id(eqn) in logistic:
            argument = env.get(id(logistic[id(eqn)]))
            if argument is not None:
                env[id(eqn.out)] = Term(rf"\sigma\left({argument.latex('sum')}\right)", kind="atom",
                                        rank=len(getattr(eqn.out.type, "shape", ())))
                continue
        term = _term(eqn, env)
        plain = term.kind == "scalar" or (term.kind == "atom" and len(term.text) <= 8)  # a name, X^T
        if uses[id(eqn.out)] > 1 and not plain and id(eqn.out) not in outputs:
            name = f"t_{{{len(named) + 1}}}"
            named.append(f"{name} = {term.latex()}")
            term = Term(name)
        env[id(eqn.out)] = term
    lines = [rf"\nabla_{{{sympy.latex(sympy.Symbol(w))}}} = {env[id(o)].latex()}"
             for w, o in zip(S.wrt, graph.outputs)]
    if named:
        lines.append(r"\text{where } " + r",\; ".join(named))
    return " \\\\\n".join(lines)
