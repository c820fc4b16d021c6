"""The control-flow rules of ``gradc.transforms.sparsity``: ``cond``, ``scan`` and ``while_loop``.

A counted loop is unrolled by the analysis (exact, with each trip's values) while its trips times its body's
equations stay under ``UNROLL_LIMIT``; past it, and for ``while_loop``, the carried values' patterns grow
to a fixed point and each stacked output row gets the union over the trips. ``cond``: the union of both
branches. A loop of unknown trips with stacked outputs is refused with a clear error.
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError

UNROLL_LIMIT = 200_000  # trips x body equations of a scan unrolled by the analysis; past it, a fixed point


def size_of(t) -> int:
    size = t.size
    if not isinstance(size, int):
        raise ShapeError(f"a sparse Jacobian needs fixed sizes; {t} has a named size",
                         hint="pass arrays of fixed shapes")
    return size


def differentiable(t) -> bool:
    return getattr(t, "is_float", False) or getattr(t, "is_complex", False)



class ControlFlowRules:
    """Mixed into the analysis: needs ``run``, ``dense``, ``n`` and ``sp``."""

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
        if length is not None and not carry and length > 1:  # independent trips: the body batched, analysed once
            found = self._batched(body, params, length, consts, xs)
            if found is not None:
                return found
        if length is not None and length * max(len(body.eqns), 1) <= UNROLL_LIMIT:
            return self._unrolled(body, params, length, consts, carry, xs)
        return self._fixed_point(body, consts, carry, xs, trips, n_carry)

    def _batched(self, body, params, trips, consts, xs):
        """The stacked outputs' patterns of a scan that carries nothing (a comprehension's loop): its body batched
        over the trips (``vmap_graph``; the counter's values an array) and analysed once, as exact as unrolling when
        the first trip's rows are those the first trip alone gives (else None: a rule of the batched analysis was
        conservative across trips, and the caller unrolls)."""
        from gradc.errors import GradcError
        from gradc.transforms.batching import vmap_graph
        start, step = params.get("start", 0), params.get("step", 1)
        try:
            batched = vmap_graph(body, [0] + [None] * len(consts) + [0] * len(xs), trips)
        except GradcError:
            return None
        counter = np.arange(trips, dtype=np.int64) * step + start
        values = [counter] + [v for v, _ in consts] + [v for v, _ in xs]
        outs = self.run(batched, values, [None] + [p for _, p in consts] + [p for _, p in xs])
        first = self._unrolled_trip(body, params, trips, consts, xs, 0)
        for (_, together), alone in zip(outs, first):
            rows = self._stacked_rows(together, trips, 0)
            if (rows is None) != (alone is None) or rows is not None and not _same_pattern(rows, alone):
                return None
        return [p for _, p in outs]

    def _unrolled_trip(self, body, params, trips, consts, xs, j):
        """The outputs' patterns of trip ``j`` alone of a scan that carries nothing."""
        start, step = params.get("start", 0), params.get("step", 1)
        values = [np.int64(start + j * step)] + [v for v, _ in consts] + [None if v is None else v[j] for v, _ in xs]
        pats = [None] + [p for _, p in consts] + [self._stacked_rows(p, trips, j) for _, p in xs]
        return [p for _, p in self.run(body, values, pats)]

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
            size = size_of(o.type)
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
            if not differentiable(o.type):
                result.append(None)
            elif k < n_carry:
                result.append(self.dense(size_of(o.type), everything))
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
