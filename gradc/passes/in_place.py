"""In-place updates: which index updates may write into their operand instead of a copy.

The IR is functional: ``t10 = index_update out v i`` is a new array, ``out`` with ``v``
at ``i``. Emitted as written, a loop that fills an array copies the whole array every
iteration. This pass, run on an optimised graph just before emission (the emitters call
:func:`mark_in_place`; ``gradc show`` prints its result as the ``opt`` stage), marks
each update that may run in place instead, and rewrites accumulations of scattered
values into updates of the accumulator.

Marks (params, read by every emitter):

* ``in_place=True`` on an ``index_update`` or ``index_add`` equation: its array operand
  (``inputs[0]``) is the emitted code's own (made by an op that allocates: not a function
  input, not a constant, not a view such as ``index``/``reshape``/``broadcast_to``, not a
  value a loop or branch may hand through unchanged) and neither it nor anything that
  may alias it (a view of it, a loop result that may be it) is read after the equation
  (graph outputs count as read at the end; a loop body's outputs are its carried values
  and its tape rows). The emitter writes into the operand and binds the result to the
  same array: ``out[i] = v``, no copy.
* ``copied=(k, ...)`` on a ``scan`` or ``while_loop`` equation: the carried values ``k``
  (positions among the carried values) whose body updates them in place but whose start
  value is not the loop's to write (an input, a constant, a view, or read after the loop):
  the emitted code copies each of them once before the loop. Inside a body, a carried
  input counts as owned when the body's new value for it is (the previous iteration's
  own array), not shared with another carried value or, in a ``while_loop``, with a row
  of its stacked outputs (kept by reference).

Before marking, an update is moved down past later reads of its operand that do not
depend on it (a reverse sweep reads ``ct[i]`` after zeroing it in the IR order), so
that it comes after the operand's last read. With ``accumulate=True`` (the default), in
loop bodies (and the branches inside them), ``acc + s`` where ``s`` is a scatter into
zeros (``index_grad``, ``gather_grad``) or a sum of such scatters, each read only there,
becomes a chain of ``index_add`` on ``acc``: O(size of the scattered values) instead of
O(size of ``acc``) work per iteration once marked in place. ``index_add`` is an op of
its own (``gradc.ops.index_add``); a target without it passes ``accumulate=False``.

The NumPy emitter defers some reads (a value read once is written inline where read; a
sum of scatters into zeros is written into one buffer at the sum): :func:`read_positions`
counts the second where it happens, and the emitter computes pending inline expressions
before it writes in place.

Deterministic: the same graph gives the same marks and order.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.trace.control import fori_loop
>>> from gradc.ops.shape_extra import index_update
>>> def f(x):
...     return fori_loop(0, 3, lambda i, out: index_update(out, x[i] * 2.0, [i], [("array", 0)]), x * 0.0)
>>> g = mark_in_place(trace(f, np.ones(3)))
>>> [e.params.get("in_place") for e in g.eqns[-2].params["body"].eqns if e.op == "index_update"]
[True]
"""
from __future__ import annotations

from gradc.ir.graph import Const, Eqn, Graph, Var
from gradc.ir.registry import OPS
from gradc.ops.control import scan_parts, while_parts

UPDATE_OPS = frozenset({"index_update", "index_add"})
SCATTER_OPS = frozenset({"index_grad", "gather_grad"})
# ops whose NumPy (and C) result is a new array; any other op may return a view of, or its very, operand
# (``gather`` with 0-d index arrays is spelled as a basic index, ``Y[:, i]``: a view)
_NOT_FRESH_ELEMENTWISE = frozenset({"astype", "stop_gradient", "recompute"})
_FRESH = frozenset({"index_update", "index_add", "index_grad", "gather_grad", "matmul", "dot",
                    "concatenate", "stack", "sum", "prod", "mean", "max", "min", "cumsum", "cumprod", "outer",
                    "tensordot", "einsum", "contract", "where", "zeros", "ones", "full", "arange"})
_GRAPH_PARAMS = ("body", "cond", "branches")


def mark_in_place(graph: Graph, *, accumulate: bool = True) -> Graph:
    """``graph`` with the marks of the module docstring (earlier marks recomputed); nested graphs too."""
    _MEMO.clear()
    try:
        # outside loops the rewrite saves no order of growth, and it would keep a -0.0 that ``acc + zeros`` makes 0.0
        return _mark(graph, owned_inputs=frozenset(), accumulate="in loops" if accumulate else False)
    finally:
        _MEMO.clear()


_MEMO: dict = {}  # (id(graph), owned inputs, accumulate) -> (graph, its marked copy), during one mark_in_place


def _fresh(op: str) -> bool:
    o = OPS.get(op)
    return op in _FRESH or (o is not None and o.elementwise and op not in _NOT_FRESH_ELEMENTWISE)


# ---------------------------------------------------------------- one graph
def _mark(graph: Graph, owned_inputs: frozenset, accumulate: bool) -> Graph:
    key = (id(graph), owned_inputs, accumulate)
    if key not in _MEMO:  # a body is marked again while its loop's carried values are settled
        _MEMO[key] = (graph, _mark_graph(graph, owned_inputs, accumulate))
    return _MEMO[key][1]


def _mark_graph(graph: Graph, owned_inputs: frozenset, accumulate: bool) -> Graph:
    eqns = [Eqn(e.op, e.inputs, _without_marks(e.params), e.out) for e in graph.eqns]
    if accumulate is True:
        eqns = _accumulations(eqns, graph.outputs)
    eqns = _sink_updates(eqns, graph.outputs)
    loops = {id(e.out): _loop_body(e, accumulate) for e in eqns if e.op in ("scan", "while_loop")}
    analysis = _Aliases(graph, eqns, owned_inputs, loops)
    direct = _Aliases(graph, eqns, owned_inputs, loops, control_fresh=True)
    out = []
    for p, e in enumerate(eqns):
        if e.op in ("scan", "while_loop"):
            e = _mark_loop(e, p, loops[id(e.out)], analysis, direct)
        elif e.op == "cond":
            e = _mark_cond(e, p, direct, accumulate)
        elif e.op == "element" and e.params["index"] in analysis.loop_owned.get(id(e.inputs[0]), ()):
            analysis.owned.add(id(e.out))
        elif e.op in UPDATE_OPS and e.out.type.shape != () and analysis.writable(e, p):
            e = Eqn(e.op, e.inputs, {**e.params, "in_place": True}, e.out)
        out.append(e)
    return graph.replace(eqns=out)


def _without_marks(params: dict) -> dict:
    return {k: v for k, v in params.items() if k not in ("in_place", "copied")}


class _Aliases:
    """Which arrays each value may share storage with (its *roots*), which values the emitted code owns, and the
    last position reading each root (graph outputs: at the end).

    An update is a new array here (the IR's meaning): the last reads are those of the functional program. A view
    shares its operand's roots; a loop's carried result those of its start value (of all its operands when the
    body may hand an operand through); a branch's results those of all its operands; stacked rows are new.
    ``control_fresh``: loop and branch results count as new arrays, for the question whether anything but the
    loop or branch itself reads its operands afterwards."""

    def __init__(self, graph: Graph, eqns: list, owned_inputs: frozenset, loops: dict, control_fresh=False):
        self.roots: dict = {}
        self.owned: set = set()
        self.loop_owned: dict = {}  # id(loop result) -> carried positions whose results the code owns
        self.loops, self.control_fresh = loops, control_fresh
        self.loop_eqns: dict = {}
        for k, v in enumerate(graph.inputs):
            self.roots[id(v)] = frozenset({id(v)})
            if k in owned_inputs:
                self.owned.add(id(v))
        self.last_read: dict = {}
        at = read_positions(eqns, graph.outputs)
        for p, e in enumerate(eqns):
            for a in e.inputs:
                for r in self.roots_of(a):
                    self.last_read[r] = max(self.last_read.get(r, -1), at[p])
            self.define(e)
        for o in graph.outputs:
            for r in self.roots_of(o):
                self.last_read[r] = len(eqns)

    def roots_of(self, atom) -> frozenset:
        return self.roots.get(id(atom), frozenset({id(atom)}))

    def define(self, e: Eqn) -> None:
        mine = frozenset({id(e.out)})
        if e.op in ("scan", "while_loop"):
            self.loop_eqns[id(e.out)] = e
        if _fresh(e.op) or (self.control_fresh and e.op in ("scan", "while_loop", "cond", "element")):
            self.roots[id(e.out)] = mine
            self.owned.add(id(e.out))
            return
        loop = self.loop_eqns.get(id(e.inputs[0])) if e.op == "element" else None
        if loop is not None:
            _, owned, _, offset, n_carry = self.loops[id(loop.out)]
            k = e.params["index"]
            if k >= n_carry:  # a stacked output: rows written into a new array
                self.roots[id(e.out)] = mine
                self.owned.add(id(e.out))
                return
            if k in owned:  # the start value's storage, or arrays the body made
                self.roots[id(e.out)] = mine | self.roots_of(loop.inputs[offset + k])
                return
        arrays = [a for a in e.inputs if isinstance(a, (Var, Const))]
        self.roots[id(e.out)] = mine.union(*(self.roots_of(a) for a in arrays))

    def dead_after(self, atom, p: int) -> bool:
        """``atom`` is owned and neither it nor anything sharing its storage is read after position ``p``."""
        return isinstance(atom, Var) and id(atom) in self.owned and \
            all(self.last_read.get(r, -1) <= p for r in self.roots_of(atom))

    def writable(self, e: Eqn, p: int) -> bool:
        target = e.inputs[0]
        roots = self.roots_of(target)
        if any(roots & self.roots_of(a) for a in e.inputs[1:]):
            return False  # the value or an index reads the array being written
        return self.dead_after(target, p)


def _loop_body(e: Eqn, accumulate: bool) -> tuple:
    """``(marked body, owned carried positions, first carried body input, first carried operand, n_carry)``."""
    params = e.params
    if e.op == "scan":
        _, consts, carry, _ = scan_parts(e.inputs, params)
        first, offset = 1 + len(consts), (1 if params["length"] is None else 0) + len(consts)
    else:
        cond_consts, body_consts, carry = while_parts(e.inputs, params)
        first, offset = len(body_consts), len(cond_consts) + len(body_consts)
    body, owned = _mark_loop_body(params["body"], first, len(carry), bool(accumulate),
                                  tape_by_reference=e.op == "while_loop")
    return body, owned, first, offset, len(carry)


def _mark_loop(e: Eqn, p: int, loop: tuple, analysis: _Aliases, direct: _Aliases) -> Eqn:
    """A loop with its marked body and ``copied``: the carried values its body writes into whose start value is
    not the loop's (not owned, or read by anything but the loop afterwards)."""
    body, owned, first, offset, _ = loop
    params = dict(e.params)
    params["body"] = body
    if e.op == "while_loop":
        params["cond"] = _mark(params["cond"], frozenset(), False)
    written = {k for k in owned if _writes_into(body, body.inputs[first + k])}
    mine = {k for k in owned if _operand_dead(e, offset + k, p, direct)}
    copied = tuple(sorted(written - mine))
    if copied:
        params["copied"] = copied
    # a carried result is the code's own when the body's values are and the start value was the loop's or copied
    analysis.loop_owned[id(e.out)] = set(copied) | mine
    return Eqn(e.op, e.inputs, params, e.out)


def _operand_dead(e: Eqn, position: int, p: int, direct: _Aliases) -> bool:
    a = e.inputs[position]
    return direct.dead_after(a, p) and not any(
        direct.roots_of(a) & direct.roots_of(b) for j, b in enumerate(e.inputs) if j != position)


def _mark_cond(e: Eqn, p: int, direct: _Aliases, accumulate: bool) -> Eqn:
    """A branch may write into an operand that nothing but the branch reads afterwards."""
    owned_inputs = frozenset(k for k in range(len(e.inputs) - 1) if _operand_dead(e, k + 1, p, direct))
    params = dict(e.params)
    params["branches"] = tuple(_mark(b, owned_inputs, accumulate) for b in params["branches"])
    return Eqn(e.op, e.inputs, params, e.out)


def _mark_loop_body(body: Graph, first: int, n_carry: int, accumulate: bool, tape_by_reference: bool):
    """The body marked, with its carried inputs owned where the body's new value for each is an array of its own
    (not an input, a constant, a view, another carried value or, when rows are kept by reference, a stacked row):
    the owned set shrinks until consistent. Returns ``(body, owned carried positions)``."""
    owned = set(range(n_carry))
    while True:
        inputs = frozenset(first + k for k in owned)
        marked = _mark(body, inputs, accumulate)
        loops = {id(e.out): _loop_body(e, accumulate) for e in marked.eqns if e.op in ("scan", "while_loop")}
        analysis = _Aliases(marked, marked.eqns, inputs, loops)
        outs = marked.outputs
        bad = set()
        for k in sorted(owned):
            o = outs[k]
            roots = analysis.roots_of(o)
            foreign = frozenset().union(*(analysis.roots_of(v) for j, v in enumerate(marked.inputs)
                                          if j != first + k))
            others = frozenset().union(*(analysis.roots_of(outs[j]) for j in range(len(outs))
                                         if j != k and (j < n_carry or tape_by_reference)))
            if not isinstance(o, Var) or id(o) not in analysis.owned or roots & foreign or roots & others:
                bad.add(k)
        if not bad:
            return marked, owned
        owned -= bad


def _writes_into(graph: Graph, v) -> bool:
    """Whether an in-place update in ``graph`` (or a nested graph it hands the array to) may write into ``v``'s
    array: storage is followed through updates marked in place and through views."""
    storage = {id(v): True}

    def shares(a):
        return storage.get(id(a), False)

    for e in graph.eqns:
        if e.op in UPDATE_OPS and e.params.get("in_place") and shares(e.inputs[0]):
            return True
        if e.op == "cond":
            if any(shares(a) and any(_writes_into(b, b.inputs[k]) for b in e.params["branches"])
                   for k, a in enumerate(e.inputs[1:])):
                return True
        elif e.op in ("scan", "while_loop"):
            if any(shares(a) for a in e.inputs) and _loop_writes_start(e, shares):
                return True
        if (e.op in UPDATE_OPS and e.params.get("in_place")) or not _fresh(e.op):
            if any(shares(a) for a in e.inputs):
                storage[id(e.out)] = True
    return False


def _loop_writes_start(e: Eqn, shares) -> bool:
    """Whether loop ``e`` may write in place into a start value that ``shares`` says holds the array."""
    p = e.params
    if e.op == "scan":
        _, consts, carry, _ = scan_parts(e.inputs, p)
        first = 1 + len(consts)
    else:
        _, consts, carry = while_parts(e.inputs, p)
        first = len(consts)
    copied = set(p.get("copied", ()))
    body = p["body"]
    return any(shares(a) and k not in copied and _writes_into(body, body.inputs[first + k])
               for k, a in enumerate(carry))


# ---------------------------------------------------------------- moving updates after their operand's reads
def _sink_updates(eqns: list, outputs) -> list:
    """Each update moved to just after the last later read of its operand (or of a view of it) when nothing in
    between depends on the update's result (a reverse sweep zeroes ``ct[i]`` before reading ``ct[i]``)."""
    eqns = list(eqns)
    p = 0
    while p < len(eqns):
        e = eqns[p]
        if e.op in UPDATE_OPS and isinstance(e.inputs[0], Var):
            q = _last_read_of(eqns, p, e.inputs[0], read_positions(eqns, outputs))
            if q > p and not _depends_between(eqns, p, q, e.out):
                eqns.insert(q, eqns.pop(p))
                continue  # the equation now at p is a new one
        p += 1
    return eqns


def read_positions(eqns: list, outputs) -> list:
    """Where each equation's operands are read in the emitted code: its own position, except for the scatters
    into zeros that the NumPy emitter writes into one buffer at the sum that adds them (``x_bar[s1] = a``,
    ``x_bar[s2] += b``, see ``gradc.backends.numpy.analysis.accumulations``): that sum's position."""
    uses: dict = {}
    for atom in [a for e in eqns for a in e.inputs] + list(outputs):
        uses[id(atom)] = uses.get(id(atom), 0) + 1
    pieces: dict = {}  # id(value) -> positions of the scatters it sums
    inner: set = set()
    for p, e in enumerate(eqns):
        if e.op == "index_grad":
            pieces[id(e.out)] = [p]
        elif e.op == "add" and e.inputs[0] is not e.inputs[1] and all(
                isinstance(a, Var) and id(a) in pieces and uses[id(a)] == 1 for a in e.inputs):
            pieces[id(e.out)] = pieces[id(e.inputs[0])] + pieces[id(e.inputs[1])]
            inner.update(id(a) for a in e.inputs)
    at = list(range(len(eqns)))
    for p, e in enumerate(eqns):
        if id(e.out) in pieces and id(e.out) not in inner and len(pieces[id(e.out)]) > 1:
            for q in pieces[id(e.out)]:
                at[q] = p
    return at


def _last_read_of(eqns: list, p: int, target, at: list) -> int:
    """The last position after ``p`` of an equation reading ``target`` or a value viewing it (program order;
    a read the emitter defers counts where it happens)."""
    family = {id(target)}
    last = p
    for q in range(p + 1, len(eqns)):
        e = eqns[q]
        if any(id(a) in family for a in e.inputs):
            last = max(last, at[q])
            if not _fresh(e.op):
                family.add(id(e.out))  # a view (or a loop result that may be it): its reads count too
    return last


def _depends_between(eqns: list, p: int, q: int, value) -> bool:
    seen = {id(value)}
    for e in eqns[p + 1:q + 1]:
        if any(id(a) in seen for a in e.inputs):
            return True
    return False


# ---------------------------------------------------------------- acc + scatter -> index_add
def _accumulations(eqns: list, outputs) -> list:
    """``add(acc, s)`` with ``s`` a scatter into zeros or a sum of them (each read once) as ``index_add`` chains."""
    from gradc.ops.index_add import index_add_eqn
    uses: dict = {}
    for e in eqns:
        for a in e.inputs:
            uses[id(a)] = uses.get(id(a), 0) + 1
    for o in outputs:
        uses[id(o)] = uses.get(id(o), 0) + 2
    # id(value) -> the scatters it is the sum of, for values read once (built forwards: long chains are cheap)
    sums: dict = {}
    members: dict = {}  # id(value) -> ids of the values of its sum tree
    for e in eqns:
        if uses.get(id(e.out), 0) != 1 or e.out.type.shape == ():
            continue
        if e.op in SCATTER_OPS:
            sums[id(e.out)], members[id(e.out)] = [e], {id(e.out)}
        elif e.op == "add" and e.inputs[0] is not e.inputs[1] and all(
                id(a) in sums and a.type == e.out.type for a in e.inputs):
            sums[id(e.out)] = sums[id(e.inputs[0])] + sums[id(e.inputs[1])]
            members[id(e.out)] = {id(e.out)} | members[id(e.inputs[0])] | members[id(e.inputs[1])]

    replaced: dict = {}  # id(add equation) -> the equations standing for it
    dropped: set = set()
    for e in eqns:
        if e.op != "add" or e.out.type.shape == () or id(e.out) in sums or not all(
                isinstance(a, (Var, Const)) and a.type == e.out.type for a in e.inputs):
            continue
        for acc_side in (0, 1):
            acc, other = e.inputs[acc_side], e.inputs[1 - acc_side]
            if id(other) not in sums or id(acc) in sums or not isinstance(acc, Var):
                continue
            found = sums[id(other)]
            chain, current = [], acc
            for k, piece in enumerate(found):
                chain.append(index_add_eqn(current, piece, e.out if k == len(found) - 1 else None))
                current = chain[-1].out
            replaced[id(e)] = chain
            dropped |= members[id(other)]
            break
    if not replaced:
        return eqns
    out = []
    for e in eqns:
        if id(e.out) in dropped:
            continue
        out.extend(replaced.get(id(e), [e]))
    return out
