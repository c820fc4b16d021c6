"""Helper functions in C: each distinct ``call`` body is one ``static`` function, each call equation a call.

A ``call`` equation (``gradc.ops.call``) holds the sub-graph of a helper the user's function calls,
traced once per (helper, signature); derivative rules make further call equations whose bodies are
the derived graphs. The C target writes each distinct body once, before the functions that call it,
as a ``static`` function of the unit (no linkage: the unit's only symbols stay ``gradc_fn_NAME``):

* bodies computing the same (``call_graph.fingerprint``: equal but for names, as when one helper is
  traced twice for arguments of equal types) are one function;
* its name is ``gradc_call_`` and the helper's name (its ASCII words, as ``names.symbol`` writes them),
  ``gradc_callK_`` for the K-th distinct body of the same name (K = 2, 3, ...: another signature,
  or a derivative): names the user's (``names.fresh`` gives none starting with ``gradc_``), libc's
  and gradc's own helpers never take;
* arrays are passed as pointers (row-major, contiguous: a view of the caller is copied first),
  scalars as pointers to one element, outputs written through pointers, named sizes first as
  ``long`` (as the unit's entry points take theirs);
* its work arrays are its own, per invocation: on its stack up to ``BODY_STACK_LIMIT`` bytes (less
  where the chain of calls below it keeps ``CHAIN_STACK_LIMIT`` on the stack already), else in a
  ``work`` buffer its caller lends from its own (``double *work``: the caller's first words,
  which the caller keeps for the largest work of the bodies it calls); no static scratch, so a
  body may run inside a loop of its caller, or while another call of it is on the stack;
* a body holding a run-time check, an index check or a bounded loop returns ``int``: 0, or its own
  status (numbered as ``control.loop_limits`` numbers a function's); its caller returns that status
  moved into the range it keeps for the body (``call_graph.call_limits``), so the entry point's status
  names the check wherever it stands, and Python raises the user's exception.

No heap allocation: a body's work lives in its caller's, so nothing is left to free on any path (the
early ``return`` of a check included), and the entry point's ``NAME_work_size`` covers the deepest
chain of calls. A body reaching itself with the same signature (a recursion on traced values, whose
depth no bound covers) is refused (``call_graph.ordered_bodies``); a recursion on shapes is a chain
of distinct bodies (GradBench's det of size n: n - 1 of them, and their adjoints).

>>> BODY_STACK_LIMIT
16384
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from gradc.backends.c.call_graph import call_body, call_name, callees, calls_in, fingerprint, next_name, ordered_bodies
from gradc.backends.c.values import C_TYPES, Loc, dim_c, ptr
from gradc.backends.escape import c_comment
from gradc.ir.dims import is_dim_expr, symbols_of
from gradc.ir.graph import Const
from gradc.ir.types import TupleType
from gradc.passes.in_place import mark_in_place

BODY_STACK_LIMIT = 16384  # bytes of a body's work arrays on its stack (bodies nest: a chain of calls adds them up)
CHAIN_STACK_LIMIT = 1 << 20  # bytes of work arrays on the stack along the deepest chain of bodies (below, in work)


@dataclass
class Body:
    """A body emitted as a function: its C ``name``, named ``sizes`` (name -> C parameter, in order), output
    parameters, ``work`` bytes it needs from its caller (an int, or a SymPy expression of its sizes),
    whether it returns a status, and at most how many bytes of work arrays it and the bodies it calls keep
    on the stack (``chain``)."""

    name: str
    sizes: dict
    out_params: list
    work: object
    status: bool
    chain: int


class CallTable:
    """The bodies of one unit: emitted once each (``prepare``), callees first, into the unit's statics."""

    def __init__(self):
        self.bodies: dict = {}  # id(body) -> Body
        self.graphs: list = []  # kept alive while their ids are keys
        self.names: dict = {}  # helper words -> bodies of that name so far
        self.keys: dict = {}  # id(body) -> what it computes (call_graph.fingerprint), or its own key
        self.by_key: dict = {}  # fingerprint -> the Body emitted for it

    def prepare(self, graph, module, max_trips, emit_function, size_params):
        """Emit every body ``graph`` reaches and the table does not have yet (``emit_function`` and
        ``size_params``: the emitter's, passed in so that this module does not import it)."""
        for body, helper in ordered_bodies([graph]):
            if id(body) in self.bodies:
                continue
            self.graphs.append(body)
            key = fingerprint(body, lambda callee: self.keys[id(callee)])
            self.keys[id(body)] = key or f"body {len(self.keys)}"
            if key in self.by_key:  # the same computation traced twice (another signature of equal types)
                self.bodies[id(body)] = self.by_key[key]
                continue
            cname = next_name(helper, self.names)
            out_params = ["out"] if len(body.outputs) == 1 else [f"out{j}" for j in range(len(body.outputs))]
            sizes = size_params([body], out_params)
            below = max((self.bodies[id(c)].chain for c in callees(body)), default=0)
            stack = max(min(BODY_STACK_LIMIT, CHAIN_STACK_LIMIT - below), 0)  # deep chains: arrays in work
            # marked as the unit's functions are: updates in place, scatters accumulated into their loop's sum
            proto, text, work = emit_function(mark_in_place(body), cname, out_params, module, max_trips, sizes=sizes,
                                              static=True, stack=stack)
            doc = f"Helper {helper}" + (f" ({body.origin})" if body.origin else "") + ": " + \
                  ", ".join(f"{v.name}: {v.type}" for v in body.inputs) + " -> " + \
                  ", ".join(str(o.type) for o in body.outputs)
            definition = f"/* {c_comment(doc)} */\n{text}\n"
            module.helper(("call", id(body)), cname, lambda definition=definition: definition)
            self.bodies[id(body)] = Body(cname, sizes, out_params, work, proto.startswith("static int"), below + stack)
            if key is not None:
                self.by_key[key] = self.bodies[id(body)]

    def info(self, body) -> Body:
        return self.bodies[id(body)]


def call_table(module) -> CallTable:
    """The unit's table of bodies (made on first use)."""
    table = getattr(module, "calls", None)
    if table is None:
        table = module.calls = CallTable()
    return table


def size_arguments(body, operands) -> dict:
    """``{size name of body: its value at a call}``: the operand's dimension where a body input has that name as
    an axis, else the caller's size of that name (a body's types are its operands' types, ``f64[n-1]`` included,
    so its names are the caller's)."""
    found: dict = {}
    for v, a in zip(body.inputs, operands):
        for d, actual in zip(getattr(v.type, "shape", ()) or (), getattr(a.type, "shape", ()) or ()):
            if is_dim_expr(d) and d.is_Symbol:
                found.setdefault(d.name, actual)
    for v in body.inputs:
        for s in symbols_of(getattr(v.type, "shape", ()) or ()):
            found.setdefault(s.name, s)
    return found


def work_at_call(info: Body, body, operands):
    """Bytes of work the callee needs at this call, in the caller's terms (an int or an expression)."""
    if not is_dim_expr(info.work):
        return info.work
    sizes = size_arguments(body, operands)
    value = sp.sympify(info.work).subs({s: sizes[s.name] for s in sp.sympify(info.work).free_symbols})
    return int(value) if value.is_Integer else value


def lent_work(graph, module) -> object:
    """Bytes the caller ``graph`` keeps at the start of its ``work`` for the bodies it calls: the largest work
    of a call (fixed sizes), or their sum when some depend on named sizes (a bound without ``max``)."""
    table = call_table(module)
    needs, seen = [], set()
    for eqn in calls_in(graph):
        body = call_body(eqn)
        w = work_at_call(table.info(body), body, eqn.inputs)
        key = str(w)
        if w != 0 and key not in seen:
            seen.add(key)
            needs.append(w)
    if not needs:
        return 0
    if all(not is_dim_expr(w) for w in needs):
        return max(needs)
    return sp.Add(*needs)


class CallLowerings:
    """``op_call``, mixed into ``FunctionEmitter``."""

    def op_call(self, e):
        body = call_body(e)
        info = call_table(self.module).info(body)
        self.emit(f"/* {c_comment(_call_text(e, info.name))} */")
        args = [dim_c(size_arguments(body, e.inputs)[name], paren=True) for name in info.sizes]
        args += [self.argument(a) for a in e.inputs]
        places = []
        out_types = list(e.out.type.items) if isinstance(e.out.type, TupleType) else [e.out.type]
        if isinstance(e.out.type, TupleType):
            for k, (t, o) in enumerate(zip(out_types, body.outputs)):
                place = self.output_place(e, k)
                if place is None:
                    place = self.place_of(e, k, t, f"{call_name(e)}_out" if isinstance(o, Const) else o.name)
                places.append(place)
            self.tuple_locs[id(e.out)] = places
        else:
            places.append(self.storage(e.out))
        for loc in places:
            if loc.local:
                self.emit(f"{C_TYPES[loc.dtype]} {loc.name};")
            args.append(f"&{loc.name}" if loc.local else ptr(loc.name, loc.offset, []))
        if info.work != 0:
            args.append("work")
        text = f"{info.name}({', '.join(args)})"
        if not info.status:
            self.emit(text + ";")
            return
        codes = [lim.code for lim in self.limits if lim.eqn_id == id(body)]
        status = f"q{self.temps}"
        self.temps += 1
        moved = f"{status} + {codes[0] - 1}" if codes[0] > 1 else status
        self.emit(f"const int {status} = {text};")
        self.emit(f"if ({status}) return {moved};  /* the status of {c_comment(call_name(e))}, see the header */")

    def output_place(self, e, k):
        """The output parameter result ``k`` of the call ``e`` is copied to at the end, if any (and not a scalar
        local): the callee writes it there directly, and the copy is dropped."""
        readers = self.elements.get(id(e.out), {}).get(k, [])
        for n, (param, out) in enumerate(self.copies):
            if param is not None and any(out is r.out for r in readers) and out.type.shape != ():
                del self.copies[n]
                return Loc(param, out.type.shape, dtype=out.type.dtype)
        return None

    def argument(self, atom) -> str:
        """A pointer to ``atom``'s elements in row-major order (a view or a constant copied first)."""
        loc = self.atom_loc(atom)
        if loc.shape == () and (loc.local or loc.value is not None):
            if loc.local and loc.dtype in ("f64", "f32"):
                return f"&{loc.name}"
            name = f"q{self.temps}"  # a constant, or a counter declared `long`: an element of the right type
            self.temps += 1
            self.emit(f"const {C_TYPES[loc.dtype]} {name} = {loc.at(())};")
            return f"&{name}"
        if not loc.standard or loc.local:
            loc = self.contiguous_copy(loc)
        return ptr(loc.name, loc.offset, [])


def _call_text(eqn, cname) -> str:
    args = " ".join(a.name if not isinstance(a, Const) else "<constant>" for a in eqn.inputs)
    return f"{eqn.out.name} = call {call_name(eqn)} {args}: {cname}"


__all__ = ["BODY_STACK_LIMIT", "CHAIN_STACK_LIMIT", "Body", "CallLowerings", "CallTable", "call_table", "lent_work",
           "size_arguments", "work_at_call"]
