"""A rough count of the work a graph does, to compare two graphs of one function.

Elementwise ops, reductions and reshapes count the elements they read and write;
a contraction (``matmul``, ``outer``, a convolution) its multiply-adds, which for
``a @ b`` are ``sqrt(|a| |b| |out|)``; a factorisation or solve ``n ** 1.5`` of
its ``n`` input elements (``m ** 3`` for an ``m x m`` matrix). A loop counts its
body times its trip count (one trip when the count is known only at run time);
a branch its dearer side. A named size counts as ``NAMED_SIZE`` elements.

It is a comparison, not a prediction: ``gradc.api`` asks whether computing a
function's value beside its gradient adds next to nothing.

>>> import numpy as np
>>> from gradc.trace import trace
>>> work(trace(lambda a, b: np.sum(a @ b), np.ones((20, 30)), np.ones((30, 40))))  # 20*30*40 + 800 + 1
24801.0
"""
from __future__ import annotations

import math

from gradc.ir import dims
from gradc.ir.graph import Graph, subgraphs
from gradc.ir.types import TensorType

NAMED_SIZE = 1000  # elements per named size (``n`` in ``f64[n,3]``) when counting
_CONTRACTIONS = frozenset({"matmul", "outer", "tri_matmul", "conv2d", "convolve"})
_FACTORISATIONS = frozenset({"cholesky", "cholesky_grad", "eigh", "eigvalsh", "svd", "svdvals", "qr", "solve",
                             "triangular_solve", "logabsdet", "det_sign", "expm"})


def work(graph: Graph, _memo: dict | None = None) -> float:
    """Elements read and written (multiply-adds for contractions) by ``graph``, loops times their trips."""
    memo = {} if _memo is None else _memo  # a helper's body, called from many places, is counted once
    found = memo.get(id(graph))
    if found is None:
        found = memo[id(graph)] = float(sum(_eqn_work(e, memo) for e in graph.eqns))
    return found


def _number(d) -> float:
    """A dimension as a number, each named size counted as ``NAMED_SIZE``."""
    if not dims.is_dim_expr(d):
        return float(d)
    return float(dims.substitute(d, {s.name: NAMED_SIZE for s in d.free_symbols}))


def _elements(t) -> float:
    return _number(t.size) if isinstance(t, TensorType) else 0.0


def _trips(eqn) -> float:
    length = eqn.params.get("length")
    return 1.0 if length is None else _number(length)  # None: known only at run time


def _eqn_work(eqn, memo) -> float:
    inner = subgraphs(eqn)
    if eqn.op == "cond":
        return max((work(g, memo) for g in inner), default=0.0)
    if inner:
        return (_trips(eqn) if eqn.op == "scan" else 1.0) * sum(work(g, memo) for g in inner)
    if eqn.op == "element":
        return 0.0
    sizes = [_elements(getattr(a, "type", None)) for a in eqn.inputs]
    out = _elements(eqn.out.type)
    if eqn.op in _CONTRACTIONS and len(sizes) >= 2:
        return math.sqrt(max(sizes[0], 1.0) * max(sizes[1], 1.0) * max(out, 1.0))
    if eqn.op in _FACTORISATIONS:
        return max(sizes, default=0.0) ** 1.5 + out
    return sum(sizes) + out


__all__ = ["NAMED_SIZE", "work"]
