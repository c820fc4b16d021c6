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

Before marking, updates and reads are reordered so that each update comes after its
operand's last read (``gradc.passes.update_order``: a reverse sweep reads ``ct[i]`` after
zeroing it in the IR order), and a part of an array read after the array is updated, or
carried beside it by a loop (``x2 = s2[i]``), becomes a copy of the part (an ``astype`` to
its own dtype): a row is copied per iteration rather than the array. With ``accumulate=True`` (the default), in
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
from gradc.ops.control import scan_parts, while_parts
from gradc.passes.accumulate import accumulations, into_branches, into_loops
from gradc.passes.update_order import UPDATE_OPS, read_positions
from gradc.passes.update_order import fresh as _fresh
from gradc.passes.update_order import sink_updates as _sink_updates

_GRAPH_PARAMS = ("body", "cond", "branches")
# outside loops too, ``acc + scatter`` of a gather at distinct positions (``x[np.arange(n), labels]``) is written
# ``acc[rows, labels] += v`` (no zero array, no addition of the whole array); a -0.0 of ``acc`` at a position
# not written then stays -0.0
TOP_LEVEL_ACCUMULATION = True


def mark_in_place(graph: Graph, *, accumulate: bool = True) -> Graph:
    """``graph`` with the marks of the module docstring (earlier marks recomputed); nested graphs too."""
    _MEMO.clear()
    try:
        # outside loops the rewrite saves no order of growth, and it would keep a -0.0 that ``acc + zeros`` makes 0.0
        return _mark(graph, owned_inputs=frozenset(), accumulate="in loops" if accumulate else False)
    finally:
        _MEMO.clear()


_MEMO: dict = {}  # (id(graph), owned inputs, accumulate) -> (graph, its marked copy), during one mark_in_place


# ---------------------------------------------------------------- one graph
def _mark(graph: Graph, owned_inputs: frozenset, accumulate: bool) -> Graph:
    key = (id(graph), owned_inputs, accumulate)
    if key not in _MEMO:  # a body is marked again while its loop's carried values are settled
        _MEMO[key] = (graph, _mark_graph(graph, owned_inputs, accumulate))
    return _MEMO[key][1]


def _mark_graph(graph: Graph, owned_inputs: frozenset, accumulate: bool) -> Graph:
    eqns = [Eqn(e.op, e.inputs, _without_marks(e.params), e.out) for e in graph.eqns]
    if accumulate is True:
        eqns = accumulations(into_loops(into_branches(eqns, graph.outputs), graph.outputs), graph.outputs)
    elif accumulate == "in loops" and TOP_LEVEL_ACCUMULATION:  # a scatter at distinct positions: acc[i] += v
        eqns = accumulations(eqns, graph.outputs, only_distinct=True)
    eqns = _sink_updates(eqns, graph.outputs)
    loops = {id(e.out): _loop_body(e, accumulate) for e in eqns if e.op in ("scan", "while_loop")}
    analysis = _Aliases(graph, eqns, owned_inputs, loops)
    direct = _Aliases(graph, eqns, owned_inputs, loops, control_fresh=True)
    out = []
    for p, e in enumerate(eqns):
        if e.op in ("scan", "while_loop"):
            e = _mark_loop(e, p, loops[id(e.out)], analysis, direct)
        elif e.op == "cond":
            e = _mark_cond(e, p, direct, analysis, accumulate)
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
        self.conds: dict = {}
        for k, v in enumerate(graph.inputs):
            self.roots[id(v)] = frozenset({id(v)})
            if k in owned_inputs:
                self.owned.add(id(v))
        self.last_read: dict = {}
        self.defining: dict = {}  # id(value) -> its equation
        at = read_positions(eqns, graph.outputs)
        for p, e in enumerate(eqns):
            self.defining[id(e.out)] = e
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
        if _fresh(e.op, e.out) or (self.control_fresh and e.op in ("scan", "while_loop", "cond", "element")):
            self.roots[id(e.out)] = mine
            self.owned.add(id(e.out))
            return
        if e.op == "cond":
            self.conds[id(e.out)] = e
        branch = self.conds.get(id(e.inputs[0])) if e.op == "element" else None
        if branch is not None:  # the operands some branch may return (or a view of) for this result
            k = e.params["index"]
            sources = _branch_sources(branch)
            aliased = set().union(*(s[k][0] for s in sources))
            operands = branch.inputs[1:]
            self.roots[id(e.out)] = mine.union(*(self.roots_of(operands[j]) for j in aliased))
            # a branch result neither new nor an operand's (a broadcast constant, a read-only view) is not owned
            if all(fresh or (held and all(id(operands[j]) in self.owned for j in held)) for held, fresh in
                   (s[k] for s in sources)):
                self.owned.add(id(e.out))
            return
        loop = self.loop_eqns.get(id(e.inputs[0])) if e.op == "element" else None
        if loop is not None and id(loop.out) in self.loops:  # (a branch's own analysis knows no loop bodies)
            _, owned, _, offset, n_carry = self.loops[id(loop.out)]
            k = e.params["index"]
            if k >= n_carry:  # a stacked output: rows written into a new array
                self.roots[id(e.out)] = mine
                self.owned.add(id(e.out))
                return
            if k in owned:  # the start value's storage (or its copy), or arrays the body made
                start = loop.inputs[offset + k]
                self.roots[id(e.out)] = mine | self.roots_of(start)
                if id(start) in self.owned or k in loop.params.get("copied", ()):
                    self.owned.add(id(e.out))
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
        if any(roots & self.roots_of(a) for a in e.inputs[2:]):
            return False  # an index array read from the array being written
        if roots & self.roots_of(e.inputs[1]) and not (e.op == "index_update" or e.params.get("unique")):
            return False  # np.add.at with a view of its target (NumPy's assignment and += handle the overlap)
        return self.dead_after(target, p)


def _branch_sources(e: Eqn) -> list:
    """Per branch of ``cond`` equation ``e``, per result: ``(positions of the operands it may share storage with,
    whether it is a new array)`` (an update inside the branch counts as new: it runs in place only on an operand
    that is dead after the branch, see ``_mark_cond``)."""
    key = ("branch sources", id(e))
    if key in _MEMO:  # each result of the branch asks (and nested branches ask again): computed once
        return _MEMO[key][1]
    found: list = []
    _MEMO[key] = (e, found)
    for b in e.params["branches"]:
        analysis = _Aliases(b, b.eqns, frozenset(), {})
        position = {id(v): j for j, v in enumerate(b.inputs)}
        per_output = []
        for o in b.outputs:
            roots = analysis.roots_of(o)
            held = frozenset(position[r] for r in roots if r in position)
            per_output.append((held, not held and id(o) in analysis.owned))
        found.append(per_output)
    return found


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
    written = {k for k in owned if body.inputs[first + k].type.shape != () and  # a 0-d value: a scalar
               _writes_into(body, body.inputs[first + k])}
    # a branch's result may be a read-only broadcast constant in NumPy: a loop writing into it copies it once
    mine = {k for k in owned if _operand_dead(e, offset + k, p, direct, analysis)
            and not _from_branch(e.inputs[offset + k], direct)}
    copied = tuple(sorted(written - mine))
    if copied:
        params["copied"] = copied
    # a carried result is the code's own when the body's values are and the start value was the loop's or copied
    analysis.loop_owned[id(e.out)] = set(copied) | mine
    return Eqn(e.op, e.inputs, params, e.out)


def _from_branch(atom, direct: _Aliases) -> bool:
    d = direct.defining.get(id(atom))
    source = direct.defining.get(id(d.inputs[0])) if d is not None and d.op == "element" else None
    return source is not None and source.op == "cond"


def _operand_dead(e: Eqn, position: int, p: int, direct: _Aliases, analysis: _Aliases) -> bool:
    a = e.inputs[position]
    # owned by the code in fact: ``direct`` counts every loop or branch result as new, but one that may hand an
    # input through unchanged (a loop that breaks at once, runs no trip) is that input (its writes reached the caller)
    return id(a) in analysis.owned and direct.dead_after(a, p) and not any(
        direct.roots_of(a) & direct.roots_of(b) for j, b in enumerate(e.inputs) if j != position)


def _mark_cond(e: Eqn, p: int, direct: _Aliases, analysis: _Aliases, accumulate: bool) -> Eqn:
    """A branch may write into an operand that nothing but the branch reads afterwards."""
    owned_inputs = frozenset(k for k in range(len(e.inputs) - 1) if _operand_dead(e, k + 1, p, direct, analysis))
    params = dict(e.params)
    params["branches"] = tuple(_mark(b, owned_inputs, accumulate) for b in params["branches"])
    return Eqn(e.op, e.inputs, params, e.out)


def _mark_loop_body(body: Graph, first: int, n_carry: int, accumulate: bool, tape_by_reference: bool):
    """The body marked, with its carried inputs owned where the body's new value for each is an array of its own
    (not an input, a constant, a view, another carried value or, when rows are kept by reference, a stacked row):
    the owned set shrinks until consistent. Returns ``(body, owned carried positions)``."""
    body = _materialized_views(body, first, n_carry)
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


def _materialized_views(body: Graph, first: int, n_carry: int) -> Graph:
    """The body with each carried value that is a part read from another carried array (``x2 = s2[i]`` carried
    beside ``s2``) copied (an ``astype`` to its own dtype): a copy of the part per iteration, rather than the
    whole array copied because a carried view of it would see the next iteration's writes. So with a tape row (a
    stacked output) that is a part of a carried array the body updates (an LSTM's ``states[t]`` kept for the
    reverse sweep while ``states`` is written): the row is copied, not the whole array every iteration."""
    producer = {id(e.out): e for e in body.eqns}
    carried = {id(v) for v in body.inputs[first:first + n_carry]}
    made = {id(e.out) for e in body.eqns if e.op in UPDATE_OPS}
    updated = {id(e.inputs[0]) for e in body.eqns if e.op in UPDATE_OPS}
    outputs, extra, eqns = list(body.outputs), [], list(body.eqns)
    for k in range(len(outputs)):
        e = producer.get(id(outputs[k]))
        if e is None or e.op not in ("index", "gather") or e.out.type.shape == ():
            continue
        source = e.inputs[0]
        if id(source) not in carried and id(source) not in made:
            continue
        copy = Var(f"{e.out.name}_copy", e.out.type)
        if k < n_carry:
            extra.append(Eqn("astype", (e.out,), {"dtype": e.out.type.dtype}, copy))
            outputs[k] = copy
            continue
        if id(source) not in made and id(source) not in updated:
            continue  # a tape row (a stacked output) of an array the body does not update: a view is safe
        # a tape row: copied where it is read, and every later reader takes the copy (a helper called with the
        # view could hand it back, tying what it returns to the array about to be written)
        r = next(q for q, x in enumerate(eqns) if x is e)
        eqns = eqns[:r + 1] + [Eqn("astype", (e.out,), {"dtype": e.out.type.dtype}, copy)] + [
            Eqn(x.op, tuple(copy if a is e.out else a for a in x.inputs), x.params, x.out) for x in eqns[r + 1:]]
        outputs = [copy if o is e.out else o for o in outputs]
    if not extra and eqns == list(body.eqns):
        return body
    return body.replace(eqns=eqns + extra, outputs=outputs)


def _writes_into(graph: Graph, v) -> bool:
    """Whether an in-place update in ``graph`` (or a nested graph it hands the array to) may write into ``v``'s
    array: storage is followed through updates marked in place and through views."""
    key = ("writes into", id(graph), id(v))
    if key not in _MEMO:
        _MEMO[key] = ((graph, v), _writes_into_uncached(graph, v))
    return _MEMO[key][1]


def _writes_into_uncached(graph: Graph, v) -> bool:
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
        if (e.op in UPDATE_OPS and e.params.get("in_place")) or not _fresh(e.op, e.out):
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
