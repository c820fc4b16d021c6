"""Loops and branches in C: ``scan`` is a ``for``, ``while_loop`` a ``while``, ``cond`` an ``if``/``else``.

A loop's carried values live in storage of the enclosing code (a scalar local, or a work array),
initialised before the loop; the body is emitted inside the loop by a nested emitter
(``FunctionEmitter.nested``) that reads them and computes the new values into its own
places; at the end of each iteration the new values are copied back, through temporaries
where one reads a carried value another has just overwritten (``x, y = y, x``); a carried array the
body updates in place (``out[i] = v``) is already there, and one whose initial value nothing reads
after the loop is carried in that value's own array (``in_place``: no copy in, none per iteration).
A branch computes a result by index assignments into an operand nothing reads after it in that
operand's array. Per-iteration
outputs (reverse mode's tape among them) are rows of a ``(trips, *shape)`` array, written
before the carried values change. A branch assigns the same places in both arms.

Tapes of loops whose trip count is known only when they run (a ``while`` loop's, or a
counted loop's of run-time length) are sized for ``max_trips`` rows: the op's own
``max_trips`` (``gradc.while_loop(..., max_trips=N)``), else the compile-level one
(``gradc.compile(..., target="c", max_trips=N)``, default ``DEFAULT_MAX_TRIPS``). A function
holding such a loop returns ``int``: 0, or the loop's number (``loop_limits``) when a run
would have gone past its bound, before any write past a buffer. Arrays stay in the work
areas of ``emit`` (the stack up to ``STACK_LIMIT`` bytes, else the caller's ``work`` buffer).

>>> import numpy as np, gradc
>>> from gradc.trace import trace
>>> from gradc.backends.c.emit import emit_function
>>> g = trace(lambda x: gradc.fori_loop(0, 100, lambda i, v: np.sin(v) * x, x), 0.5)
>>> print(emit_function(g, "f", ["value"])[1])  # doctest: +NORMALIZE_WHITESPACE
void f(const double *restrict x, double *restrict value)
{
    /* t2 = scan x x length=100 n_carry=1 n_consts=1 reverse=False start=0 step=1:
     * for loop of 100 trips, carrying c0 */
    double c0 = x[0];
    for (long j0 = 0; j0 < 100; ++j0) {
        /* t0 = sin c0
         * t1 = mul t0 x_1 */
        const double t1 = gradc_sin_scalar(c0)*x[0];
        c0 = t1;
    }
    /* value = t3, the loop's c0 */
    value[0] = c0;
}
"""
from __future__ import annotations

from dataclasses import dataclass

from gradc.backends.c.call_graph import call_limits
from gradc.backends.c.checks import check_limit
from gradc.backends.c.in_place import update_root
from gradc.backends.c.linalg import linalg_status
from gradc.backends.c.names import fresh
from gradc.backends.c.update import index_check
from gradc.backends.c.values import C_TYPES, Loc, lin, ptr
from gradc.backends.escape import c_comment
from gradc.ir.graph import Const, Graph, subgraphs
from gradc.ir.types import TensorType
from gradc.ops.checks import exception_class, is_always
from gradc.ops.control import scan_parts, while_parts
from gradc.passes.in_place import mark_in_place

DEFAULT_MAX_TRIPS = 10_000  # rows of a tape whose length is known only at run time (8 bytes each per element)


@dataclass(frozen=True)
class Limit:
    """A bounded loop: its status ``code`` (1, 2, ...), ``trips`` (its max_trips), what it is and how to raise it."""

    eqn_id: int
    code: int
    trips: int
    what: str
    hint: str
    kind: str = "loop"  # or "index": an index_update whose index, read at run time, was out of range
    exception: str = ""  # kind "check": the user's raise or assert (gradc.backends.c.checks)
    args: tuple = ()

    def error(self, fname: str) -> BaseException:
        """The exception a nonzero status raises in Python: the user's for a check, else a ``ValueError``."""
        if self.kind == "check":
            return exception_class(self.exception)(*self.args)
        return ValueError(self.message(fname))

    def message(self, fname: str) -> str:
        """The error a run past the bound (or an index out of range) raises (``ValueError`` in Python)."""
        if self.kind == "check":
            return f"{fname}: {self.what}"
        if self.kind == "index":
            return f"{fname}: {self.what} was out of range (C status {self.code}); {self.hint}"
        return f"{fname}: {self.what} ran past max_trips={self.trips} trips (C status {self.code}); {self.hint}"

    def doc(self, fname: str) -> str:
        """The header's line on this status."""
        if self.kind == "check":
            return f"  {fname} returns {self.code}: {self.what}"
        if self.kind == "index":
            return f"  {fname} returns {self.code}: {self.what} was out of range"
        return f"  {fname} returns {self.code}: {self.what} ran past max_trips={self.trips}"


def _read_items(graph) -> dict:
    """``{id(tuple value): indices its element equations read}`` for the equations of ``graph``."""
    table: dict = {}
    for e in graph.eqns:
        if e.op == "element":
            table.setdefault(id(e.inputs[0]), set()).add(e.params["index"])
    return table


def _carry_names(graph, first) -> str:
    return ", ".join(v.name for v in graph.inputs[first:]) or "nothing"


_RAISE = "its tape has that many rows in the work buffer; raise it with gradc.compile(..., target='c', max_trips=N)"


def _bound(eqn, reads: set, default: int):
    """``(trips, what, hint)`` of a loop that is bounded in C, else None."""
    p = eqn.params
    if eqn.op == "while_loop":
        what = f"the while loop carrying {_carry_names(p['body'], p['n_body_consts'])}"
        if p.get("max_trips") is not None:
            return p["max_trips"], what, "raise it with gradc.while_loop(..., max_trips=N)"
        n_carry = len(p["body"].inputs) - p["n_body_consts"]
        if any(k > n_carry for k in reads):  # a tape (the items after the carry and the trip count)
            return default, what, _RAISE + " or gradc.while_loop(..., max_trips=N)"
    if eqn.op == "scan" and p["length"] is None and any(k >= p["n_carry"] for k in reads):
        return default, f"the for loop of run-time length carrying {_carry_names(p['body'], 1 + p['n_consts'])}", \
            _RAISE
    return None


def loop_limits(graph, max_trips=None, *, marked=False) -> list:
    """The loops of ``graph`` (and its sub-graphs) whose runs are bounded in C, numbered in program order.

    Numbered in the graph the C is emitted from: ``graph`` with the in-place pass's marks and order
    (``gradc.passes.in_place``, which ``emit.emit_c`` applies), unless ``marked`` says it has them.

    A ``while_loop`` is bounded when its tape is read (reverse mode) or it has its own
    ``max_trips``; a ``scan`` of run-time length when its per-iteration outputs are read.
    An ``index_update`` whose index arrays are read at run time (a loop counter, a traced
    index) takes a status too (``kind="index"``): the function returns it, writing nothing
    there, when an index is out of range.

    >>> import numpy as np, gradc
    >>> from gradc.trace import trace
    >>> from gradc.transforms.reverse import value_and_grad_graph
    >>> g = trace(lambda a: gradc.while_loop(lambda x: x * x > a, lambda x: 0.5 * (x + a / x), a), 2.0)
    >>> [lim.trips for lim in loop_limits(g)], [lim.trips for lim in loop_limits(value_and_grad_graph(g, ["a"]), 50)]
    ([], [50])
    """
    if not marked:
        graph = mark_in_place(graph)
    default = DEFAULT_MAX_TRIPS if max_trips is None else int(max_trips)
    where = f" of {graph.name}" + (f" ({graph.origin})" if graph.origin else "")
    found: list = []
    # depth-first, a loop before the loops of its body, without recursion
    pending = [(iter(graph.eqns), _read_items(graph))]
    while pending:
        rest, reads = pending[-1]
        eqn = next(rest, None)
        if eqn is None:
            pending.pop()
            continue
        if eqn.op != "call":  # a helper's body is a function of its own: its statuses follow (call_limits)
            pending.extend((iter(sub.eqns), _read_items(sub)) for sub in reversed(subgraphs(eqn)))
        bound = _bound(eqn, reads.get(id(eqn.out), set()), default)
        if bound is not None:
            trips, what, hint = bound
            code = len(found) + 1
            found.append(Limit(id(eqn), code, int(trips), f"{what} (loop {code}{where})", hint))
        check = index_check(eqn)
        if check is not None:
            code = len(found) + 1
            found.append(Limit(id(eqn), code, 0, f"{check[0]} (check {code}{where})", check[1], "index"))
        raising = check_limit(eqn)
        if raising is not None:
            found.append(Limit(id(eqn), len(found) + 1, 0, raising[0], raising[1], "check", eqn.params["exception"],
                               eqn.params["args"]))
        failing = linalg_status(eqn)
        if failing is not None:
            found.append(Limit(id(eqn), len(found) + 1, 0, failing[0], "NumPy's LinAlgError", "check", "LinAlgError",
                               (failing[1],)))
    return call_limits(graph, max_trips, found, loop_limits)


def limits_doc(functions, max_trips=None) -> list:
    """Header lines for the bounded loops of ``functions`` (``(graph, c_name)`` pairs, graphs marked by the in-place
    pass); empty when none.

    >>> limits_doc([(Graph("f", [], [], []), "f")])
    []
    """
    found = [(fname, lim) for graph, fname in functions for lim in loop_limits(graph, max_trips, marked=True)]
    checks = [(fname, lim) for fname, lim in found if lim.kind == "check"]
    found = [(fname, lim) for fname, lim in found if lim.kind != "check"]
    return _bounds_doc(found) + ([""] + _CHECKS_DOC + [lim.doc(fname) for fname, lim in checks] if checks else [])


_CHECKS_DOC = ["The function's raise and assert statements on traced values are checks: a function holding",
               "one returns int, 0 when it ran to the end, or the check's status below when its condition",
               "held (Python raises that exception; the outputs are then unspecified):"]


def _bounds_doc(found) -> list:
    if not found:
        return []
    if all(lim.kind == "loop" for _, lim in found):
        lines = ["", "Loops whose trip count is known only when they run keep a tape of max_trips rows:",
                 "a function holding one returns int, 0 when it ran to the end, or the loop's number",
                 "when a run would go past its bound (its outputs are then unspecified):"]
    else:
        lines = ["", "Loops whose trip count is known only when they run keep a tape of max_trips rows, and",
                 "index assignments check indices read at run time: a function holding either returns",
                 "int, 0 when it ran to the end, or the status below when a run would go past a loop's",
                 "bound or write at an index out of range (its outputs are then unspecified):"]
    lines.extend(lim.doc(fname) for fname, lim in found)
    return lines


class _Holder:
    """A value with no IR variable (a carried value's storage, a tape), for the work-array planner."""

    def __init__(self, type_):
        self.type = type_


def _text(eqn) -> str:
    """``eqn`` for a comment, without its sub-graphs (they are the code below it)."""
    args = " ".join(a.name if not isinstance(a, Const) else
                    (repr(a.value.item()) if a.value.ndim == 0 else "<array>") for a in eqn.inputs)
    params = "".join(f" {k}={v}" for k, v in sorted(eqn.params.items())
                     if not isinstance(v, (Graph, tuple)) and k not in ("names", "where"))
    return c_comment(f"{eqn.out.name} = {eqn.op} {args}{params}")


def _name(atom, default: str) -> str:
    return default if isinstance(atom, Const) else atom.name


def _same_place(a: Loc, b: Loc) -> bool:
    return (a.name, a.offset, a.strides, a.local) == (b.name, b.offset, b.strides, b.local) and b.value is None


def _reads(loc: Loc) -> set:
    """Names of the storage ``loc`` reads."""
    if loc.value is not None:
        return {str(s) for s in getattr(loc.value, "free_symbols", ())}
    return {loc.name}


class ControlLowerings:
    """``op_scan``, ``op_while_loop``, ``op_cond`` and ``op_element``, mixed into ``FunctionEmitter``."""

    # ---------------------------------------------------------------- places
    def place_of(self, eqn, index, type_, name, named=False) -> Loc | None:
        """Storage for item ``index`` of ``eqn``'s result, alive while its ``element`` readers are.

        Called ``name`` when ``named`` (a carried value keeps the loop's name for it), else after its reader.
        """
        readers = self.elements.get(id(eqn.out), {}).get(index, [])
        cname = fresh(readers[0].out.name if readers and not named else name, self.taken)
        self.taken.add(cname)
        if type_.shape == ():
            return Loc(cname, (), local=True, dtype=type_.dtype)
        holder = _Holder(type_)
        self.copy_holders.append(holder)  # alive while the emitter is: place() knows values by id
        self.last[id(holder)] = max([self.segment] + [self.last.get(id(r.out), -1) for r in readers])
        loc = Loc(cname, type_.shape, dtype=type_.dtype)
        self.place(holder, loc)
        return loc

    def carried_places(self, e, b_carry, carry, first) -> list:
        """The storage of a loop's carried values, set to their initial values: the initial value's own array
        where nothing reads it after the loop (and no other operand of the loop, ``e.inputs[first + k]`` being
        carried value ``k``'s, reads that array: the same value passed as a constant too), else new."""
        others = [self.atom_loc(a) for a in e.inputs]
        places, claimed = [], set()
        for k, (v, init) in enumerate(zip(b_carry, carry)):
            loc = self.atom_loc(init)
            rest = [o for n, o in enumerate(others) if n != first + k]
            slot = None if v.type.shape == () or loc.name in claimed else self.writable_slot(loc, init, rest)
            if slot is not None:
                claimed.add(loc.name)
                self.emit(f"/* {v.name}: carried in {loc.name}, which nothing reads after the loop */")
                places.append(self.result_in(e, k, v.type, loc, slot))
                continue
            places.append(self.place_of(e, k, v.type, v.name, named=True))
            self.declare(places[-1], loc)
        return places

    def result_in(self, e, index, type_, loc: Loc, slot=None) -> Loc:
        """Item ``index`` of ``e``'s result kept in ``loc``'s array (written in place), alive while its readers are."""
        if slot is None:
            slot = self.pool.find(loc.name) or self.bound.get(loc.name)
        holder = _Holder(type_)
        self.copy_holders.append(holder)  # alive while the emitter is: the pool knows values by id
        readers = self.elements.get(id(e.out), {}).get(index, [])
        self.last[id(holder)] = max([self.segment] + [self.last.get(id(r.out), -1) for r in readers])
        return self.reuse(slot, loc, id(holder), type_.shape, type_.dtype)

    def dead_operands(self, e, pred: Loc, operands) -> list:
        """Positions of ``cond`` operands whose arrays the branches may overwrite: dead after the branch, this
        emitter's to write, and read by no other operand (nor the predicate)."""
        found = []
        for m, (a, loc) in enumerate(zip(e.inputs[1:], operands)):
            rest = [pred] + [o for n, o in enumerate(operands) if n != m]
            if self.writable_slot(loc, a, rest) is not None:
                found.append(m)
        return found

    def branch_results_in_place(self, e, writable, operands) -> dict:
        """``{result position: operand position}``: results that a branch computes by index assignments into a
        writable operand, kept in that operand's array (each operand's array for one result at most)."""
        false_g, true_g = e.params["branches"]
        shared: dict = {}
        for k in range(len(true_g.outputs)):
            if true_g.outputs[k].type.shape == ():
                continue
            for g in (true_g, false_g):
                m = update_root(g, g.outputs[k])
                if m is not None and m in writable and m not in shared.values():
                    shared[k] = m
                    break
        return shared

    def declare(self, loc: Loc, init: Loc | None = None):
        """Declare a scalar local (set to ``init``) or fill an array from ``init``."""
        if loc.local:
            value = f" = {init.at(())}" if init is not None else ""
            self.emit(f"{C_TYPES[loc.dtype]} {loc.name}{value};")
        elif init is not None:
            self.copy(loc, init, f"{loc.name} = {init.name or 'a constant'}")

    def assign(self, dst: Loc, src: Loc):
        if _same_place(dst, src):
            return
        if dst.shape == ():
            self.emit(f"{dst.at(())} = {src.at(())};")
        else:
            self.copy(dst, src, f"{dst.name} = {src.name or 'a constant'}")

    def update(self, dsts, srcs):
        """``dsts = srcs`` all at once: a new value reading a carried one goes through a temporary first."""
        pairs = [(d, s) for d, s in zip(dsts, srcs) if not _same_place(d, s)]
        staged, written = [], set()
        for d, s in pairs:
            # read after an earlier write would see the new value (a swap), and an array copied onto
            # itself in another order (a reversal) would read elements already written: copy it out first
            overlap = _reads(s) & written or (s.shape != () and d.name in _reads(s))
            written.add(d.name)
            if overlap:
                tmp = fresh(d.name + "_next", self.taken)
                self.taken.add(tmp)
                if s.shape == ():
                    self.emit(f"const {C_TYPES[s.dtype]} {tmp} = {s.at(())};")
                    s = Loc(tmp, (), local=True, dtype=s.dtype)
                else:
                    holder = _Holder(TensorType(s.shape, s.dtype))
                    self.copy_holders.append(holder)
                    self.last[id(holder)] = self.segment
                    loc = Loc(tmp, s.shape, dtype=s.dtype)
                    self.place(holder, loc)
                    self.copy(loc, s, f"{tmp} = {s.name}: the old value, read after it is overwritten")
                    s = loc
            staged.append((d, s))
        for d, s in staged:
            self.assign(d, s)

    def row(self, tape: Loc, j: str, item_shape, dtype) -> Loc:
        """Row ``j`` (a C expression) of a stacked value, to write."""
        offset = lin(0, [(tape.strides[0], j)])
        if tape.offset:
            offset = f"{tape.offset} + {offset}"
        return Loc(tape.name, item_shape, offset, tape.strides[1:], dtype=dtype)

    def read_row(self, xs: Loc, j: str, var) -> Loc:
        """Row ``j`` of the stacked ``xs``, for the body input ``var``: a local, or a pointer to the row."""
        t = var.type
        if xs.value is not None:  # a broadcast constant: every row is the same value
            return Loc(xs.name, t.shape, 0, xs.strides[1:], xs.value, False, t.dtype)
        name = fresh(var.name, self.taken)
        self.taken.add(name)
        if t.shape == ():
            self.emit(f"const {C_TYPES[t.dtype]} {name} = {xs.at([j])};")
            return Loc(name, (), local=True, dtype=t.dtype)
        self.emit(f"const {C_TYPES[t.dtype]} *{name} = {ptr(xs.name, xs.offset, [(xs.strides[0], j)])};")
        return Loc(name, t.shape, 0, xs.strides[1:], dtype=t.dtype)

    def limit_of(self, eqn):
        return next((lim for lim in self.limits if lim.eqn_id == id(eqn)), None)

    # ---------------------------------------------------------------- ops
    def op_element(self, e):
        self.loc[id(e.out)] = self.tuple_locs[id(e.inputs[0])][e.params["index"]]

    @property
    def tuple_locs(self) -> dict:
        if "_tuple_locs" not in self.__dict__:
            self._tuple_locs = {}
        return self._tuple_locs

    @property
    def counter_ranges(self) -> dict:
        """``id(var) -> (lo, hi)``: integer scalars of loop bodies whose range is known at compile time (a counter
        of a loop with a static length, and sums and differences of those with integer constants)."""
        if "_counter_ranges" not in self.__dict__:
            self._counter_ranges = {}
        return self._counter_ranges

    def int_range(self, atom):
        """``(lo, hi)`` bounding the integer scalar ``atom`` at run time, or None when not known."""
        if isinstance(atom, Const):
            if atom.is_scalar and atom.value.dtype.kind in "iu":
                return int(atom.value), int(atom.value)
            return None
        return self.counter_ranges.get(id(atom))

    def note_counter_range(self, body, p):
        """Record the range of ``body``'s counter and of the integer offsets computed from it (``i - 1``)."""
        first, last = p.get("start", 0), p.get("start", 0) + p.get("step", 1) * (p["length"] - 1)
        ranges = self.counter_ranges
        ranges[id(body.inputs[0])] = (min(first, last), max(first, last))
        for eq in body.eqns:
            if eq.op not in ("add", "sub") or getattr(eq.out.type, "shape", None) != () or \
                    getattr(eq.out.type, "dtype", "") not in ("i64", "i32"):
                continue
            a, b = (self.int_range(x) for x in eq.inputs)
            if a is None or b is None:
                continue
            lo, hi = (a[0] + b[0], a[1] + b[1]) if eq.op == "add" else (a[0] - b[1], a[1] - b[0])
            if -2 ** 31 < lo and hi < 2 ** 31:  # far from any wrap-around of the integer type
                ranges[id(eq.out)] = (lo, hi)

    def op_scan(self, e):
        p = e.params
        body, n_k, n_c = p["body"], p["n_consts"], p["n_carry"]
        length_in, consts, carry, xs = scan_parts(e.inputs, p)
        limit = self.limit_of(e)
        trips = str(p["length"]) if length_in is None else self.atom_loc(length_in).at(())
        rows = p["length"] if length_in is None else (limit.trips if limit else 0)
        b_i, b_carry = body.inputs[0], body.inputs[1 + n_k:1 + n_k + n_c]
        if length_in is None and p["length"] > 0:
            self.note_counter_range(body, p)
        count = f"{p['length']} trips" if length_in is None else f"run-time length {trips}"
        self.emit(f"/* {_text(e)}:")
        self.emit(" * " + c_comment(f"for loop of {count}{' backwards' if p.get('reverse') else ''}, carrying "
                                    f"{', '.join(v.name for v in b_carry) or 'nothing'}") + " */")
        places = self.carried_places(e, b_carry, carry, (length_in is not None) + n_k)
        reads = set(self.elements.get(id(e.out), {}))
        for k, out in enumerate(body.outputs[n_c:], n_c):
            t = out.type
            places.append(self.place_of(e, k, t.with_shape((rows,) + tuple(t.shape)), _name(out, "y") + "_rows")
                          if k in reads else None)
        self.tuple_locs[id(e.out)] = places
        if limit is not None:
            self.emit(f"if ({trips} > {limit.trips}) return {limit.code};  /* the tape holds {limit.trips} rows */")
        j = f"j{self.depth}"
        if p.get("reverse"):
            last = str(p["length"] - 1) if length_in is None else f"{trips} - 1"
            self.open([f"for (long {j} = {last}; {j} >= 0; --{j}) {{"])
        else:
            self.open([f"for (long {j} = 0; {j} < {trips}; ++{j}) {{"])
        start, step = p.get("start", 0), p.get("step", 1)
        if start == 0 and step == 1:
            counter = Loc(j, (), local=True, dtype="i64")
        else:
            counter = Loc(fresh(b_i.name, self.taken), (), local=True, dtype="i64")
            self.taken.add(counter.name)
            self.emit(f"const int64_t {counter.name} = {start} + {step}*{j};")
        used = {id(a) for eq in body.eqns for a in eq.inputs} | {id(o) for o in body.outputs}
        rows_in = [self.read_row(self.atom_loc(x), j, v) if id(v) in used else Loc("", v.type.shape, value=0)
                   for x, v in zip(xs, body.inputs[1 + n_k + n_c:])]
        outs = self.nested(body, [counter] + [self.atom_loc(c) for c in consts] + places[:n_c] + rows_in,
                           self.depth + 1, writable=range(1 + n_k, 1 + n_k + n_c))
        for k in range(n_c, len(outs)):
            if places[k] is not None:  # a tape row: written before the carried values change
                self.assign(self.row(places[k], j, outs[k].shape, outs[k].dtype), outs[k])
        self.update(places[:n_c], outs[:n_c])
        self.close(1)

    def op_while_loop(self, e):
        p = e.params
        cond, body = p["cond"], p["body"]
        cond_consts, body_consts, carry = while_parts(e.inputs, p)
        n_c, limit = len(carry), self.limit_of(e)
        b_carry = body.inputs[len(body_consts):]
        reads = set(self.elements.get(id(e.out), {}))
        self.emit(f"/* {_text(e)}:")
        bound = f", at most {limit.trips} trips (else return {limit.code})" if limit else ""
        self.emit(" * " + c_comment(f"while loop carrying {', '.join(v.name for v in b_carry) or 'nothing'}{bound}")
                  + " */")
        places = self.carried_places(e, b_carry, carry, len(cond_consts) + len(body_consts))
        counter = None
        if limit is not None or n_c in reads:
            counter = self.place_of(e, n_c, TensorType((), "i64"), "trips")
            self.declare(counter, Loc("", (), value=0, dtype="i64"))
        places.append(counter)
        for k, out in enumerate(body.outputs[n_c:], n_c + 1):
            t = out.type
            places.append(self.place_of(e, k, t.with_shape((limit.trips,) + tuple(t.shape)), _name(out, "y") + "_rows")
                          if k in reads else None)
        self.tuple_locs[id(e.out)] = places
        self.open(["while (1) {"])
        (test,) = self.nested(cond, [self.atom_loc(c) for c in cond_consts] + places[:n_c], self.depth)
        self.emit(f"if (!{test.at(())}) break;")
        if limit is not None:
            self.emit(f"if ({counter.name} >= {limit.trips}) return {limit.code};  /* see the header */")
        outs = self.nested(body, [self.atom_loc(c) for c in body_consts] + places[:n_c], self.depth,
                           writable=range(len(body_consts), len(body_consts) + n_c))
        for k in range(n_c, len(outs)):
            tape = places[k + 1]
            if tape is not None:  # a tape row: written before the carried values change
                self.assign(self.row(tape, counter.name, outs[k].shape, outs[k].dtype), outs[k])
        self.update(places[:n_c], outs[:n_c])
        if counter is not None:
            self.emit(f"++{counter.name};")
        self.close(1)

    def op_cond(self, e):
        false_g, true_g = e.params["branches"]
        pred, operands = self.atom_loc(e.inputs[0]), [self.atom_loc(a) for a in e.inputs[1:]]
        reads = set(self.elements.get(id(e.out), {}))
        self.emit(f"/* {_text(e)}: if/else */")
        writable = self.dead_operands(e, pred, operands)  # operand positions the branches may write in place
        shared = self.branch_results_in_place(e, writable, operands)  # result k -> the operand whose array it takes
        places = []
        for k, out in enumerate(true_g.outputs):
            if k in reads and k in shared:
                places.append(self.result_in(e, k, out.type, operands[shared[k]]))
            else:
                places.append(self.place_of(e, k, out.type, _name(out, "out")) if k in reads else None)
                if places[-1] is not None:
                    self.declare(places[-1])
        self.tuple_locs[id(e.out)] = places
        self.open([f"if ({pred.at(())}) {{"])
        for n, g in enumerate((true_g, false_g)):
            if n:
                self.indent -= 1
                self.emit("} else {")
                self.indent += 1
            outs = self.nested(g, operands, self.depth, writable=writable)
            if any(is_always(x) for x in g.eqns):  # a branch ending in the user's raise: its results are never read
                continue
            kept = [(dst, src) for dst, src in zip(places, outs) if dst is not None]
            self.update([d for d, _ in kept], [s for _, s in kept])  # all at once: a result may read an operand
        self.close(1)


__all__ = ["ControlLowerings", "DEFAULT_MAX_TRIPS", "Limit", "limits_doc", "loop_limits"]
