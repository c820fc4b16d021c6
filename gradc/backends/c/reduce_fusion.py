"""Sums of products read their factors: ``sum(x * w, axes)`` without the product in a work array.

A weighted sum (``np.sum(positions * weights[..., None], 1)``, a masked mean) is a product the size of
its broadcast operands, read once by a reduction. Materialised, that product is the largest array of
the function (ht's skinning: 26 sweeps x 10,000 vertices x 22 bones x 4, 183 MB). When a real ``mul``
(both factors and its result of one float dtype) is read by nothing but one ``sum`` or ``mean`` (not an
output, not a loop's operand) into an array (a sum to one number keeps its vectorised running sums), the
reduction's loop multiplies the factors where it would read the
product (``acc += a[...] * b[...]``): the same products in the same order of additions, so the same
results, without the array.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = trace(lambda x, w: np.sum(x * w, axis=1), np.ones((3, 4)), np.ones(4))
>>> [(e.op, fused_products(g)[id(e)].op) for e in g.eqns if id(e) in fused_products(g)]
[('sum', 'mul')]
"""
from __future__ import annotations

from gradc.ir.graph import Var

REDUCTIONS = frozenset({"sum", "mean"})
FLOATS = frozenset({"f32", "f64"})


def fused_products(graph) -> dict:
    """``id(reduction equation) -> the mul equation`` whose product it reads in place (see the module docstring)."""
    uses: dict = {}
    for e in graph.eqns:
        for a in e.inputs:
            if isinstance(a, Var):
                uses[id(a)] = uses.get(id(a), 0) + 1
    outputs = {id(o) for o in graph.outputs if isinstance(o, Var)}
    producer = {id(e.out): e for e in graph.eqns}
    found = {}
    for e in graph.eqns:
        if e.op not in REDUCTIONS or not isinstance(e.inputs[0], Var) or e.out.type.shape == ():
            continue  # (a sum to one number keeps its 8 running sums over the stored product: see reduce_all)
        product = producer.get(id(e.inputs[0]))
        if product is None or product.op != "mul" or uses.get(id(product.out)) != 1 or id(product.out) in outputs:
            continue
        types = [a.type for a in product.inputs] + [product.out.type]
        if any(t.dtype not in FLOATS or t.dtype != product.out.type.dtype or t.shape != product.out.type.shape
               for t in types):
            continue
        found[id(e)] = product
    return found


__all__ = ["fused_products"]
