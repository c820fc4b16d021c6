"""Row separability: is a loss a sum (or mean) over the rows of some arguments, and its two parts.

A data-parallel gradient is exact only for a loss of the form

    loss(params, rows) = offset(params) + sum over rows of g(params, row)      (or a mean over rows)

The traced graph decides it, by following the row axis through every equation.
Each value is *free* (does not depend on the rows), *per-row* (axis ``k`` holds
the rows, and row ``i`` of it depends only on row ``i`` of the row arguments) or
*summed* (linear in sums over the rows). Per-row values come from the row
arguments and stay per-row through elementwise ops, broadcasts, reshapes and
transposes that keep the row axis, slices that keep every row, reductions over
other axes and matmuls that do not contract it; a ``sum``/``mean`` over the row
axis (or a matmul contracting it) makes a summed value; summed values may only be
added, negated, scaled by free values or reshaped on the way to the output. Anything else
(a mean over rows that then normalises the rows, a sort or max over rows, a
product of two sums) is reported with the op that breaks it.

:func:`split` then builds the two graphs: ``partial`` (the loss with the free
addends dropped and each row mean turned into a row sum: one chunk's share) and
``offset`` (the loss with every row sum set to zero: the free part, on the
parameters alone).

>>> import numpy as np
>>> from gradc.trace import trace
>>> def loss(w, X, y, lam):
...     return np.mean((X @ w - y) ** 2) + lam * np.sum(w * w)
>>> parts = split(trace(loss, np.ones(2), np.ones((3, 2)), np.ones(3), 0.1), ("X", "y"))
>>> parts.mean, [v.name for v in parts.offset.inputs]
(True, ['w', 'lam'])
>>> print(parts.partial)
def loss(w: f64[2], X: f64[3,2], y: f64[3], lam: f64[]) -> f64[]:
  t0: f64[3] = matmul X w
  t1: f64[3] = sub t0 y
  t2: f64[3] = broadcast_to 2.0 shape=(3,)
  t3: f64[3] = pow t1 t2
  t4_rows: f64[] = sum t3 axes=(0,) keepdims=False
  t5: f64[2] = mul w w
  t6: f64[] = sum t5 axes=(0,) keepdims=False
  t7: f64[] = mul lam t6
  return t4_rows
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gradc.ir.dims import as_dim
from gradc.ir.graph import Const, Eqn, Graph, Var
from gradc.ir.registry import OPS

FREE = None
SUMMED = "summed"
_LINEAR = {"add", "sub", "neg", "mul", "div", "sum", "mean", "reshape", "transpose", "broadcast_to", "index",
           "matmul"}


class NotSeparable(Exception):
    """The loss is not a sum or mean over the rows; the message says which op breaks it."""


@dataclass
class Split:
    """A row-separable loss in two parts (see the module docstring)."""

    partial: Graph  # one chunk's share: its rows' sum (row means as sums when ``mean``)
    offset: Graph  # the free part, on the non-row inputs only
    mean: bool  # the partials' total is divided by the number of rows


def _row(k):
    return ("row", k)


def _is_row(tag):
    return isinstance(tag, tuple)


def analyse(graph: Graph, rows) -> tuple:
    """``(tags, reductions)``: each Var's tag by id, and ``{id(eqn): "sum" | "mean"}`` for the row reductions.

    Raises :class:`NotSeparable` naming the op (and value) that breaks row separability.
    """
    tags: dict = {}
    for v in graph.inputs:
        if v.name in rows:
            if v.type.ndim == 0:
                raise NotSeparable(f"row argument {v.name!r} is a scalar: it has no rows")
            tags[id(v)] = _row(0)
    reductions: dict = {}
    for e in graph.eqns:
        ins = [tags.get(id(a), FREE) if isinstance(a, Var) else FREE for a in e.inputs]
        tags[id(e.out)] = _tag(e, ins, reductions)
    for out in graph.outputs:
        tag = tags.get(id(out), FREE) if isinstance(out, Var) else FREE
        if _is_row(tag):
            raise NotSeparable(f"the loss returns per-row values ({out.name}: {out.type}), not their sum or mean")
    return tags, reductions


def _where(e) -> str:
    return f"{e.op} ({e.out.name} = {e.op} {', '.join(getattr(a, 'name', 'const') for a in e.inputs)})"


def _tag(e, ins, reductions):
    if all(t is FREE for t in ins):
        return FREE
    op, rows = e.op, [t for t in ins if _is_row(t)]
    if SUMMED in ins:
        if rows:
            raise NotSeparable(f"{_where(e)} combines a sum or mean over all rows with per-row values "
                               "(it normalises rows by a statistic of every row)")
        return _summed(e, ins)
    if op in ("sum", "mean"):
        (k,) = {t[1] for t in rows}
        axes = e.params["axes"]
        if k in axes:
            reductions[id(e)] = op
            return SUMMED
        return _row(k if e.params["keepdims"] else k - sum(1 for a in axes if a < k))
    if op in ("max", "min", "prod"):  # per row over other axes (a softmax's max); over the rows: refused below
        (k,) = {t[1] for t in rows}
        axes = e.params["axes"]
        if k not in axes:
            return _row(k if e.params["keepdims"] else k - sum(1 for a in axes if a < k))
    if op in ("argmax", "argmin", "cumsum", "cumprod", "argsort") and e.params.get("axis") is not None:
        (k,) = {t[1] for t in rows}
        axis = e.params["axis"] % e.inputs[0].type.ndim
        if axis != k:
            return _row(k if op not in ("argmax", "argmin") or axis > k else k - 1)
    if op == "matmul":
        return _matmul(e, ins)
    if len({t[1] for t in rows}) > 1:
        raise NotSeparable(f"{_where(e)} pairs different axes of per-row values")
    (k,) = {t[1] for t in rows}
    if OPS[op].elementwise:
        return _row(k)
    if op == "broadcast_to":
        return _row(k + e.out.type.ndim - e.inputs[0].type.ndim)
    if op == "reshape":
        shape_in, shape_out = e.inputs[0].type.shape, e.out.type.shape
        if shape_in[:k + 1] == shape_out[:k + 1]:
            return _row(k)
        raise NotSeparable(f"{_where(e)} reshapes across the row axis")
    if op == "transpose":
        return _row(e.params["perm"].index(k))
    if op == "index":
        return _index(e, k)
    if op == "concatenate" and e.params["axis"] != k and all(t is not FREE for t in ins):
        return _row(k)
    raise NotSeparable(f"{_where(e)} on per-row values: gradc does not know it maps each row to its own row "
                       "(a sort, a max, a cumulative sum or a solve over the rows couples them)")


def _summed(e, ins):
    """A value linear in sums over the rows: only linear ops with free coefficients keep it so."""
    op = e.op
    free_elsewhere = all(t is FREE for i, t in enumerate(ins) if t is not SUMMED)
    if op in ("add", "sub") or (op in ("neg", "sum", "mean", "reshape", "transpose", "broadcast_to", "index")
                                and len(ins) == 1) or (op == "index" and all(t is FREE for t in ins[1:])):
        return SUMMED
    if op in ("mul", "matmul") and ins.count(SUMMED) == 1 and free_elsewhere:
        return SUMMED
    if op == "div" and ins[0] is SUMMED and ins[1] is FREE:
        return SUMMED
    raise NotSeparable(f"{_where(e)} is not linear in the sums over the rows (a nonlinear function of a sum or "
                       "mean over all rows: the loss of one chunk does not add up to the loss of all)")


def _matmul(e, ins):
    a, b = ins
    na, nb = e.inputs[0].type.ndim, e.inputs[1].type.ndim
    if na > 2 or nb > 2:
        raise NotSeparable(f"{_where(e)}: a batched matmul of per-row values")
    contract_a, contract_b = na - 1, 0
    if _is_row(a) and _is_row(b):
        if a[1] == contract_a and b[1] == contract_b:
            return SUMMED  # sum over rows of products: a row reduction, like X.T @ r
        raise NotSeparable(f"{_where(e)} multiplies per-row values with rows on different axes")
    if _is_row(a):
        if a[1] == contract_a:
            raise NotSeparable(f"{_where(e)} contracts the row axis with a free operand (mixes rows together)")
        return _row(0)
    if b[1] == contract_b:
        raise NotSeparable(f"{_where(e)} contracts the row axis with a free operand (mixes rows together)")
    return _row(e.out.type.ndim - 1)


def _index(e, k):
    if len(e.inputs) > 1:
        raise NotSeparable(f"{_where(e)} indexes per-row values with an array (it may pick or repeat rows)")
    axis, position = 0, 0
    for item in e.params["spec"]:
        if item[0] == "new":
            position += 1
            continue
        if axis == k:
            if item != ("slice", None, None, None):
                raise NotSeparable(f"{_where(e)} selects some rows (every row must be kept)")
            return _row(position)
        axis += 1
        position += item[0] == "slice"
    return _row(position + (k - axis))  # the axis is past the spec's items: a trailing full slice


def split(graph: Graph, rows) -> Split:
    """The ``partial`` and ``offset`` graphs of a row-separable ``graph``; raises :class:`NotSeparable`."""
    tags, reductions = analyse(graph, set(rows))
    kinds = set(reductions.values())
    mean = kinds == {"mean"}
    if len(kinds) > 1:
        raise NotSeparable("the loss mixes sums and means over the rows; write one of them "
                           "(a sum over rows divided by a constant, or the mean of the sum's terms)")
    n_rows = next(v.type.shape[0] for v in graph.inputs if v.name in rows)
    return Split(_partial(graph, tags, reductions, n_rows), _offset(graph, reductions, rows), mean)


def _partial(graph, tags, reductions, n_rows):
    subst: dict = {}
    eqns = []

    def atom(a):
        return subst.get(id(a), a)

    for e in graph.eqns:
        ins = tuple(atom(a) for a in e.inputs)
        tag_of = [tags.get(id(a), FREE) if isinstance(a, Var) else FREE for a in e.inputs]
        if id(e) in reductions and reductions[id(e)] == "mean":
            total = Var(e.out.name + "_rows", e.out.type)
            eqns.append(Eqn("sum", ins, {"axes": e.params["axes"], "keepdims": e.params["keepdims"]}, total))
            others = as_dim(e.params["count"] // n_rows)  # the mean over the other reduced axes stays a mean
            if others == 1:
                subst[id(e.out)] = total
            else:
                eqns.append(Eqn("div", (total, Const(np.asarray(others, e.out.type.np_dtype))), {}, e.out))
        elif tags.get(id(e.out)) is SUMMED and e.op in ("add", "sub") and FREE in tag_of:
            kept = next(i for i, t in enumerate(tag_of) if t is SUMMED)
            if e.op == "add" or kept == 0:
                subst[id(e.out)] = ins[kept]  # the free addend belongs to the offset
            else:
                eqns.append(Eqn("neg", (ins[1],), {}, e.out))
        else:
            eqns.append(Eqn(e.op, ins, e.params, e.out))
    outputs = [atom(o) for o in graph.outputs]
    return graph.replace(eqns=eqns, outputs=outputs)


def _offset(graph, reductions, rows):
    subst: dict = {}
    eqns = []
    for e in graph.eqns:
        if id(e) in reductions:
            zero = Const(np.zeros((), e.out.type.np_dtype))
            if e.out.type.shape == ():
                subst[id(e.out)] = zero
            else:
                eqns.append(Eqn("broadcast_to", (zero,), {"shape": e.out.type.shape}, e.out))
            continue
        eqns.append(Eqn(e.op, tuple(subst.get(id(a), a) for a in e.inputs), e.params, e.out))
    outputs = [subst.get(id(o), o) for o in graph.outputs]
    needed = {id(o) for o in outputs}
    kept = []
    for e in reversed(eqns):  # only what the outputs read: nothing that reads the rows is left
        if id(e.out) in needed:
            kept.append(e)
            needed.update(id(a) for a in e.inputs)
    inputs = [v for v in graph.inputs if v.name not in rows]
    params = [p for p in graph.params if p not in rows]
    return graph.replace(inputs=inputs, eqns=kept[::-1], outputs=outputs, params=params)
