"""The sparsity pattern of a Jacobian, read off the graph: which output entries depend on which input entries.

``jacobian_pattern(graph, wrt, args)`` propagates, equation by equation, a boolean matrix per value
(one row per entry of the value, one column per entry of the inputs differentiated) and returns the
pattern of d outputs / d wrt: rows the outputs' entries (flattened, concatenated), columns the wrt
entries (flattened, concatenated), as a ``scipy.sparse`` CSR matrix of booleans. The values are
computed alongside (the op's own NumPy ``impl``), so integer index arrays and loop counters are known.

The pattern is **conservative**: it never misses an entry that can be nonzero at these integer inputs
(it may keep structural zeros such as ``x - x``). The rules, per kind of equation:

* elementwise ops: an entry depends on the same entry of each operand (a size-1 operand: on it);
* data movement (``index``, ``gather``, ``reshape``, ``transpose``, ``broadcast_to``, ``concatenate``,
  ``index_update``): the op's ``impl`` run on entry numbers says which entry each output entry copies;
* the other linear ops (``sum``, ``mean``, ``cumsum``, ``index_add``, ...) and ``matmul``: the ``impl``
  run on an object array of index sets (``+`` and ``*`` are unions) gives each output's dependencies,
  dense blocks for a matrix product;
* ``scan`` (a counted loop) is unrolled when its trips times its body's equations stay under
  ``UNROLL_LIMIT``; ``while_loop`` and longer scans take a fixed point over the body (the carried values'
  patterns grow until stable; every stacked output row gets the union over the trips);
* ``cond``: the union of the branches' patterns; ``call``: inlined first;
* any other op: every output entry depends on every entry of every operand (dense, conservative).

Integer and boolean values, and the results of ops without a derivative (``floor``, ``stop_gradient``), carry
no pattern. The pattern depends on the integer inputs'
values (``obs[j]`` picks the camera of observation j): callers recompute it when those change.

>>> import numpy as np
>>> from gradc.trace import trace
>>> g = trace(lambda x: np.sin(x[1:]) * x[:-1], np.ones(4))
>>> jacobian_pattern(g, ["x"], [np.ones(4)]).toarray().astype(int)
array([[1, 1, 0, 0],
       [0, 1, 1, 0],
       [0, 0, 1, 1]])
"""
from __future__ import annotations

import numpy as np

from gradc.ir.graph import Const, Graph
from gradc.ir.registry import OPS
from gradc.transforms.inline_calls import flatten_calls, has_calls
from gradc.transforms.sparsity_control import UNROLL_LIMIT, ControlFlowRules, differentiable, size_of
from gradc.transforms.sparsity_rules import REDUCTIONS, matmul_maps, reduction_map

_SELECTION = {"index", "gather", "reshape", "transpose", "broadcast_to", "concatenate", "index_update", "index_grad",
              "stack", "squeeze", "expand_dims", "flip", "moveaxis"}
_IDENTITY = {"astype", "real", "imag", "conj", "recompute", "stop_gradient"}
_SETS = {"matmul", "dot", "einsum", "tensordot", "inner", "outer", "kron", "prod", "cumprod"}


def _sparse():
    import scipy.sparse as sp  # scipy: only for sparse Jacobians (gradc.jacobian(..., sparse=True))

    return sp


_size, _differentiable = size_of, differentiable
__all__ = ["UNROLL_LIMIT", "jacobian_pattern"]


def jacobian_pattern(graph: Graph, wrt: list, args: list):
    """The CSR boolean pattern of d outputs / d ``wrt`` (names of float inputs) at inputs ``args``.

    An argument given as None or as a type (``TensorType``) is unknown: indexing by it is taken as dense.
    """
    sp = _sparse()
    if has_calls(graph):
        graph = flatten_calls(graph)
    offsets, n = {}, 0
    for v in graph.inputs:
        if v.name in wrt:
            offsets[v.name] = n
            n += _size(v.type)
    patterns = []
    for v in graph.inputs:
        if v.name in offsets:
            k = _size(v.type)
            patterns.append(sp.csr_matrix((np.ones(k, bool), (np.arange(k), offsets[v.name] + np.arange(k))),
                                          shape=(k, n)))
        else:
            patterns.append(None)
    values = [None if a is None or hasattr(a, "np_dtype") else np.asarray(a) for a in args]  # types: unknown
    outs = _Analysis(n).run(graph, values, patterns)
    rows = [p if p is not None else sp.csr_matrix((_size(o.type), n), dtype=bool)
            for o, (_, p) in zip(graph.outputs, outs)]
    return sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, n), dtype=bool)


class _Dep(frozenset):
    """An entry's set of operand entries: arithmetic is union (a linear or bilinear op's dependence)."""

    def _union(self, other):
        return _Dep(self | other) if isinstance(other, frozenset) else self

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _union

    def __neg__(self):
        return self

    __pos__ = __neg__


_EMPTY = _Dep()


class _Analysis(ControlFlowRules):
    """Patterns (CSR, rows x ``n``) and values (arrays, or None where unknown) of a graph's values."""

    def __init__(self, n: int):
        self.n = n
        self.sp = _sparse()

    # ------------------------------------------------------------ graphs
    def run(self, graph, values, patterns):
        env = {id(v): (a, p) for v, a, p in zip(graph.inputs, values, patterns)}

        def read(atom):
            return (atom.value, None) if isinstance(atom, Const) else env[id(atom)]

        for eqn in graph.eqns:
            ins = [read(a) for a in eqn.inputs]
            env[id(eqn.out)] = self.eqn(eqn, ins)
        return [read(o) for o in graph.outputs]

    def eqn(self, eqn, ins):
        values = [v for v, _ in ins]
        value = None
        if all(v is not None for v in values) and eqn.op not in ("while_loop",):
            try:
                with np.errstate(all="ignore"):
                    value = OPS[eqn.op].impl(*values, **eqn.params)
            except Exception:  # noqa: BLE001 - an untaken branch's values may not compute: unknown, not wrong
                value = None
        if eqn.op == "element":
            part = ins[0][1]
            return (value, None if part is None else part[eqn.params["index"]])
        if all(p is None for _, p in ins) and eqn.op not in ("scan", "while_loop", "cond"):
            return (value, None)
        if eqn.op in ("scan", "while_loop", "cond"):
            return (value, getattr(self, eqn.op)(eqn, ins))
        if not _differentiable(eqn.out.type) or OPS[eqn.op].nondiff:  # floor, stop_gradient: a zero derivative
            return (value, None)
        return (value, self.local(eqn, ins))

    # ------------------------------------------------------------ one op
    def local(self, eqn, ins):
        op = OPS[eqn.op]
        size = _size(eqn.out.type)
        if op.elementwise or eqn.op in _IDENTITY:
            return self.elementwise(size, ins)
        if eqn.op == "matmul":
            maps = matmul_maps(eqn.inputs[0].type.shape, eqn.inputs[1].type.shape)
            return self.mapped(ins, maps)
        if eqn.op in REDUCTIONS and len(ins) == 1:
            return self.mapped(ins, [reduction_map(eqn.inputs[0].type.shape, eqn.params["axes"],
                                                   eqn.params["keepdims"])])
        if eqn.op in _SELECTION:
            found = self.traced(eqn, ins, size, self._ids)
            if found is not None:
                return found
        if op.linear or eqn.op in _SETS:
            found = self.traced(eqn, ins, size, self._sets)
            if found is not None:
                return found
        return self.dense(size, [p for _, p in ins])

    def elementwise(self, size, ins):
        total = None
        for _, p in ins:
            if p is None:
                continue
            if p.shape[0] != size:  # a size-1 operand (or one of another size: conservatively, all of it)
                p = self.dense(size, [p])
            total = p if total is None else total + p
        return total

    def dense(self, size, patterns):
        """Every one of ``size`` entries depending on every entry of every pattern (the conservative rule)."""
        cols = set()
        for p in patterns:
            if p is not None:
                cols.update(p.indices.tolist())
        row = np.array(sorted(cols), dtype=np.int64)
        data = np.ones(size * len(row), bool)
        indices = np.tile(row, size)
        indptr = np.arange(size + 1, dtype=np.int64) * len(row)
        return self.sp.csr_matrix((data, indices, indptr), shape=(size, self.n))

    def mapped(self, ins, maps):
        """The output pattern from each operand's local map (output entries x operand entries)."""
        total = None
        for (_, p), local in zip(ins, maps):
            if p is not None:
                total = self.union(total, (local @ p).astype(bool))
        return total

    def traced(self, eqn, ins, size, probe):
        """Run the op's impl per operand with a pattern: ``probe`` gives the local map (out x operand) or None."""
        total = None
        for k, (_, p) in enumerate(ins):
            if p is None:
                continue
            local = probe(eqn, ins, k, size)
            if local is None:
                return None
            part = (local @ p).astype(bool)
            total = part if total is None else total + part
        return total.tocsr() if total is not None else None

    def _operands(self, eqn, ins, k, fill):
        """The impl's operands with operand ``k`` replaced by ``fill``, the other float ones by neutral values."""
        args = []
        for j, (atom, (value, _)) in enumerate(zip(eqn.inputs, ins)):
            if j == k:
                args.append(fill)
            elif _differentiable(atom.type):
                args.append(None)  # filled by the probe
            else:
                if value is None:
                    return None
                args.append(value)
        return args

    def _ids(self, eqn, ins, k, size):
        """Selection ops: the impl on entry numbers 1..n (0 elsewhere) says which entry each output copies."""
        shape = eqn.inputs[k].type.shape
        ids = np.arange(1, _size(eqn.inputs[k].type) + 1, dtype=np.float64).reshape(shape)
        args = self._operands(eqn, ins, k, ids)
        if args is None:
            return None
        args = [np.zeros(a.type.shape) if v is None and j != k else v
                for j, (a, v) in enumerate(zip(eqn.inputs, args))]
        try:
            out = np.asarray(OPS[eqn.op].impl(*args, **eqn.params)).ravel()
        except Exception:  # noqa: BLE001 - the probe did not compute: the caller falls back
            return None
        if out.size != size:
            return None
        rows = np.nonzero(out)[0]
        cols = out[rows].astype(np.int64) - 1
        return self.sp.csr_matrix((np.ones(len(rows), bool), (rows, cols)), shape=(size, len(ids.ravel())))

    def _sets(self, eqn, ins, k, size):
        """Linear and bilinear ops: the impl on object arrays of index sets (union arithmetic)."""
        shape = eqn.inputs[k].type.shape
        m = _size(eqn.inputs[k].type)
        singles = np.empty(m, dtype=object)
        for i in range(m):
            singles[i] = _Dep((i,))
        args = self._operands(eqn, ins, k, singles.reshape(shape))
        if args is None:
            return None
        filled = []
        for j, (a, v) in enumerate(zip(eqn.inputs, args)):
            if v is None and j != k:
                empty = np.empty(a.type.shape, dtype=object)
                empty.fill(_EMPTY)
                v = empty
            filled.append(v)
        try:
            out = np.asarray(OPS[eqn.op].impl(*filled, **eqn.params), dtype=object).ravel()
        except Exception:  # noqa: BLE001 - the probe did not compute: the caller falls back
            return None
        if out.size != size:
            return None
        out = [d if isinstance(d, frozenset) else _EMPTY for d in out]  # zeros the impl made: no dependence
        lengths = np.fromiter((len(d) for d in out), np.int64, size)
        cols = np.fromiter((i for d in out for i in sorted(d)), np.int64, int(lengths.sum()))
        rows = np.repeat(np.arange(size), lengths)
        return self.sp.csr_matrix((np.ones(len(rows), bool), (rows, cols)), shape=(size, m))
