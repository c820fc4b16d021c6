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

from gradc.errors import ShapeError
from gradc.ir.graph import Const, Graph
from gradc.ir.registry import OPS
from gradc.transforms.inline_calls import flatten_calls, has_calls
from gradc.transforms.sparsity_rules import REDUCTIONS, matmul_maps, reduction_map

UNROLL_LIMIT = 200_000  # trips x body equations of a scan unrolled by the analysis; past it, a fixed point
_SELECTION = {"index", "gather", "reshape", "transpose", "broadcast_to", "concatenate", "index_update", "index_grad",
              "stack", "squeeze", "expand_dims", "flip", "moveaxis"}
_IDENTITY = {"astype", "real", "imag", "conj", "recompute", "stop_gradient"}
_SETS = {"matmul", "dot", "einsum", "tensordot", "inner", "outer", "kron", "prod", "cumprod"}


def _sparse():
    import scipy.sparse as sp  # scipy: only for sparse Jacobians (gradc.jacobian(..., sparse=True))

    return sp


def _size(t) -> int:
    size = t.size
    if not isinstance(size, int):
        raise ShapeError(f"a sparse Jacobian needs fixed sizes; {t} has a named size",
                         hint="pass arrays of fixed shapes")
    return size


def _differentiable(t) -> bool:
    return getattr(t, "is_float", False) or getattr(t, "is_complex", False)


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


class _Analysis:
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

    # ------------------------------------------------------------ control flow
    def union(self, a, b):
        if a is None:
            return b
        if b is None:
            return a
        return (a + b).astype(bool).tocsr()

    def cond(self, eqn, ins):
        """The union of both branches' patterns (the pattern holds whichever branch runs)."""
        result = None
        for branch in eqn.params["branches"]:
            outs = self.run(branch, [v for v, _ in ins[1:]], [p for _, p in ins[1:]])
            pats = [p for _, p in outs]
            result = pats if result is None else [self.union(a, b) for a, b in zip(result, pats)]
        return result

    def _stacked_rows(self, pattern, trips, j):
        if pattern is None:
            return None
        item = pattern.shape[0] // trips
        return pattern[j * item:(j + 1) * item]

    def _any_trip(self, pattern, trips):
        """The union over the trips of a stacked value's rows: a row of one trip, for the fixed point."""
        if pattern is None:
            return None
        item = pattern.shape[0] // trips
        total = None
        for j in range(trips):
            total = self.union(total, pattern[j * item:(j + 1) * item])
        return total

    def scan(self, eqn, ins):
        params = eqn.params
        body, n_consts, n_carry = params["body"], params["n_consts"], params["n_carry"]
        ins = list(ins)
        length = params["length"]
        trips = length
        if length is None:
            count, _ = ins.pop(0)
            trips = None if count is None else int(count)
        consts, carry, xs = ins[:n_consts], ins[n_consts:n_consts + n_carry], ins[n_consts + n_carry:]
        if length is not None and length * max(len(body.eqns), 1) <= UNROLL_LIMIT:
            return self._unrolled(body, params, length, consts, carry, xs)
        return self._fixed_point(body, consts, carry, xs, trips, n_carry)

    def _unrolled(self, body, params, trips, consts, carry, xs):
        n_carry = len(carry)
        ys = [[] for _ in body.outputs[n_carry:]]
        order = range(trips - 1, -1, -1) if params.get("reverse") else range(trips)
        start, step = params.get("start", 0), params.get("step", 1)
        for j in order:
            values = [np.int64(start + j * step)] + [v for v, _ in consts] + [v for v, _ in carry]
            values += [None if v is None else v[j] for v, _ in xs]
            pats = [None] + [p for _, p in consts] + [p for _, p in carry]
            pats += [self._stacked_rows(p, trips, j) for _, p in xs]
            outs = self.run(body, values, pats)
            carry = outs[:n_carry]
            for y, (_, p) in zip(ys, outs[n_carry:]):
                y.append((j, p))
        result = [p for _, p in carry]
        for y, o in zip(ys, body.outputs[n_carry:]):
            rows = dict(y)
            size = _size(o.type)
            blocks = [rows[j] if rows[j] is not None else self.sp.csr_matrix((size, self.n), dtype=bool)
                      for j in range(trips)]
            result.append(self.sp.vstack(blocks, format="csr") if any(rows[j] is not None for j in range(trips))
                          else None)
        return result

    def _fixed_point(self, body, consts, carry, xs, trips, n_carry):
        """Carried patterns grow until stable; a stacked output's rows each get the union over the trips."""
        if trips is None:
            return self._dense_loop(body, consts, carry, xs, n_carry)
        item_pats = [self._any_trip(p, trips) for _, p in xs]
        carry_pats = [p for _, p in carry]
        while True:
            values = [None] + [v for v, _ in consts] + [None] * (len(carry) + len(xs))
            outs = self.run(body, values, [None] + [p for _, p in consts] + carry_pats + item_pats)
            grown = [self.union(a, p) for a, (_, p) in zip(carry_pats, outs[:n_carry])]
            if all(_same_pattern(a, b) for a, b in zip(grown, carry_pats)):
                break
            carry_pats = grown
        result = list(carry_pats)
        for _, p in outs[n_carry:]:
            result.append(None if p is None else self.sp.vstack([p] * trips, format="csr"))
        return result

    def _dense_loop(self, body, consts, carry, xs, n_carry):
        """A loop of unknown trips: every differentiable output depends on every input entry (conservative)."""
        everything = [p for _, p in consts + carry + xs]
        result = []
        for k, o in enumerate(body.outputs):
            if not _differentiable(o.type):
                result.append(None)
            elif k < n_carry:
                result.append(self.dense(_size(o.type), everything))
            else:
                raise ShapeError("a sparse Jacobian through a loop whose trip count is known only at run time "
                                 "and whose per-trip outputs are stacked is not supported",
                                 hint="use gradc.fori_loop with a fixed trip count, or the dense Jacobian")
        return result

    def while_loop(self, eqn, ins):
        """A fixed point over the body: the carried values' patterns grow until stable."""
        params = eqn.params
        a, b = params["n_cond_consts"], params["n_body_consts"]
        body = params["body"]
        consts, carry = ins[a:a + b], ins[a + b:]
        n_carry = len(carry)
        carry_pats = [p for _, p in carry]
        while True:
            values = [v for v, _ in consts] + [None] * n_carry
            outs = self.run(body, values, [p for _, p in consts] + carry_pats)
            grown = [self.union(x, p) for x, (_, p) in zip(carry_pats, outs[:n_carry])]
            if all(_same_pattern(x, y) for x, y in zip(grown, carry_pats)):
                break
            carry_pats = grown
        result = carry_pats + [None]
        for _, p in outs[n_carry:]:
            if p is not None:
                raise ShapeError("a sparse Jacobian through a while_loop's stacked per-trip outputs is not supported",
                                 hint="use the dense Jacobian (sparse=False)")
            result.append(None)
        return result


def _same_pattern(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a.nnz == b.nnz and (a != b).nnz == 0
