"""Helper functions in C: each distinct ``call`` body is one ``static`` function, each call equation a call.

A ``call`` equation (``gradc.ops.call``) holds the sub-graph of a helper the user's function calls,
traced once per (helper, signature); derivative rules make further call equations whose bodies are
the derived graphs. The C target writes each distinct body once, before the functions that call it,
as a ``static`` function of the unit (no linkage: the unit's only symbols stay ``gradc_fn_NAME``):

* its name is ``gradc_call_`` and the helper's name (its ASCII words, as ``names.symbol`` writes them),
  ``gradc_callK_`` for the K-th distinct body of the same name (K = 2, 3, ...: another signature,
  or a derivative): names the user's (``names.fresh`` gives none starting with ``gradc_``), libc's
  and gradc's own helpers never take;
* arrays are passed as pointers (row-major, contiguous: a view of the caller is copied first),
  scalars as pointers to one element, outputs written through pointers, named sizes first as
  ``long`` (as the unit's entry points take theirs);
* its work arrays are its own, per invocation: on its stack up to ``BODY_STACK_LIMIT`` bytes, else
  in a ``work`` buffer its caller lends from its own (``double *work``: the caller's first words,
  which the caller keeps for the largest work of the bodies it calls); no static scratch, so a
  body may run inside a loop of its caller, or while another call of it is on the stack;
* a body holding a run-time check, an index check or a bounded loop returns ``int``: 0, or its own
  status (numbered as ``control.loop_limits`` numbers a function's); its caller returns that status
  moved into the range it keeps for the body (``call_limits``), so the entry point's status names
  the check wherever it stands, and Python raises the user's exception.

>>> from gradc.ir.graph import Graph
>>> body_names(["det", "det", "λ"])
['gradc_call_det', 'gradc_call2_det', 'gradc_call_h6bb5604c']
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import sympy as sp

from gradc.backends.c.names import SYMBOL_PREFIX, symbol
from gradc.backends.c.values import C_TYPES, Loc, dim_c, ptr
from gradc.backends.escape import c_comment
from gradc.errors import EmitError
from gradc.ir.dims import is_dim_expr
from gradc.ir.graph import Const, subgraphs
from gradc.ir.types import TupleType

CALL_PREFIX = "gradc_call"
BODY_STACK_LIMIT = 16384  # bytes of a body's work arrays on its stack (bodies nest: a chain of calls adds them up)


def call_body(eqn):
    """The sub-graph a ``call`` equation runs (its only graph param)."""
    body = eqn.params.get("body")
    if body is None:
        (body,) = subgraphs(eqn)
    return body


def call_name(eqn) -> str:
    """The helper's name (the equation's ``helper`` param, else its body's)."""
    return eqn.params.get("helper") or call_body(eqn).name


def calls_in(graph) -> list:
    """The call equations of ``graph`` and of its loop bodies and branches (not inside other calls' bodies),
    in program order (no recursion: sub-graphs nest as deep as the user's loops).

    >>> from gradc.ir.graph import Graph
    >>> calls_in(Graph("f", [], [], []))
    []
    """
    found, pending = [], [iter(graph.eqns)]
    while pending:
        eqn = next(pending[-1], None)
        if eqn is None:
            pending.pop()
            continue
        if eqn.op == "call":
            found.append(eqn)
            continue
        pending.extend(iter(sub.eqns) for sub in reversed(subgraphs(eqn)))
    return found


def callees(graph) -> list:
    """The distinct bodies ``graph`` calls (``calls_in``), in order of first call."""
    return [body for body, _ in _callees(graph)]


def _callees(graph) -> list:
    """``(body, helper's name)`` of each distinct body ``graph`` calls, in order of first call."""
    known = _remembered(_CALLEES, graph, None)
    if known is not None:
        return known
    seen, out = set(), []
    for eqn in calls_in(graph):
        body = call_body(eqn)
        if id(body) not in seen:
            seen.add(id(body))
            out.append((body, call_name(eqn)))
    return _remember(_CALLEES, graph, None, out)


# what was found of a graph, by id (the graph kept in the entry, so an id is never reused while there): each
# body is looked at once however many calls and callers it has (a recursion by shapes calls each body n times)
_CALLEES: dict = {}
_LIMITS: dict = {}
_MEMO_SIZE = 4096


def _remembered(memo: dict, graph, key):
    entry = memo.get((id(graph), key))
    return entry[1] if entry is not None and entry[0] is graph else None


def _remember(memo: dict, graph, key, value):
    if len(memo) >= _MEMO_SIZE:
        memo.clear()
    memo[(id(graph), key)] = (graph, value)
    return value


def ordered_bodies(graphs) -> list:
    """``(body, helper's name)`` of every body ``graphs`` reach through calls, each once: callees before their
    callers (depth first, in order of first call). A body reaching itself is refused (its work and statuses
    would have no bound)."""
    order, state = [], {}  # id(body) -> "open" (on the path) or "done"
    for top in graphs:
        stack = [(top, "", iter(_callees(top)))]
        while stack:
            node, helper, rest = stack[-1]
            child, child_helper = next(rest, (None, ""))
            if child is None:
                stack.pop()
                if node is not top:
                    state[id(node)] = "done"
                    order.append((node, helper))
                continue
            seen = state.get(id(child))
            if seen is None:
                state[id(child)] = "open"
                stack.append((child, child_helper, iter(_callees(child))))
            elif seen == "open":
                path = " -> ".join(h for _, h, _ in stack[1:]) + f" -> {child_helper}"
                raise EmitError(f"target c cannot emit the helper {child_helper} calling itself with the same "
                                f"argument types ({path})", where=child.origin or None,
                                hint="recursion whose depth depends on traced values: use target='numpy', or "
                                     "recurse on shapes (each level a new signature)")
    return order


def body_names(helpers) -> list:
    """C names of bodies of ``helpers`` (in order): ``gradc_call_NAME``, then ``gradc_call2_NAME``, ... for
    another body of the same helper (another signature, or a derivative)."""
    count: dict = {}
    return [_next_name(helper, count) for helper in helpers]


def _next_name(helper: str, count: dict) -> str:
    """The C name of a body of ``helper``, the next of that name (``count``: helper words -> bodies named so far)."""
    words = symbol(helper)[len(SYMBOL_PREFIX):]
    k = count[words] = count.get(words, 0) + 1
    return f"{CALL_PREFIX}{k if k > 1 else ''}_{words}"


@dataclass
class Body:
    """A body emitted as a function: its C ``name``, named ``sizes`` (name -> C parameter, in order), output
    parameters, ``work`` bytes it needs from its caller (an int, or a SymPy expression of its sizes) and
    whether it returns a status."""

    name: str
    sizes: dict
    out_params: list
    work: object
    status: bool


class CallTable:
    """The bodies of one unit: emitted once each (``prepare``), callees first, into the unit's statics."""

    def __init__(self):
        self.bodies: dict = {}  # id(body) -> Body
        self.graphs: list = []  # kept alive while their ids are keys
        self.names: dict = {}  # helper words -> bodies of that name so far

    def prepare(self, graph, module, max_trips, emit_function):
        """Emit every body ``graph`` reaches and the table does not have yet (``emit_function``: emit's)."""
        for body, helper in ordered_bodies([graph]):
            if id(body) in self.bodies:
                continue
            cname = _next_name(helper, self.names)
            out_params = ["out"] if len(body.outputs) == 1 else [f"out{j}" for j in range(len(body.outputs))]
            from gradc.backends.c.emit import size_params

            sizes = size_params([body], out_params)
            proto, text, work = emit_function(body, cname, out_params, module, max_trips, sizes=sizes, static=True)
            doc = f"Helper {helper}" + (f" ({body.origin})" if body.origin else "") + ": " + \
                  ", ".join(f"{v.name}: {v.type}" for v in body.inputs) + " -> " + \
                  ", ".join(str(o.type) for o in body.outputs)
            definition = f"/* {c_comment(doc)} */\n{text}\n"
            module.helper(("call", id(body)), cname, lambda definition=definition: definition)
            self.graphs.append(body)
            self.bodies[id(body)] = Body(cname, sizes, out_params, work, proto.startswith("static int"))

    def info(self, body) -> Body:
        return self.bodies[id(body)]


def call_table(module) -> CallTable:
    """The unit's table of bodies (made on first use)."""
    table = getattr(module, "calls", None)
    if table is None:
        table = module.calls = CallTable()
    return table


def size_arguments(body, operands) -> dict:
    """``{size name of body: the operand's dimension}``: what each named size of ``body`` is at a call."""
    found: dict = {}
    for v, a in zip(body.inputs, operands):
        for d, actual in zip(getattr(v.type, "shape", ()) or (), getattr(a.type, "shape", ()) or ()):
            if is_dim_expr(d) and d.is_Symbol:
                found.setdefault(d.name, actual)
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


def call_limits(graph, max_trips, own) -> list:
    """``own`` (the limits of ``graph`` itself, ``control.loop_limits``) and then, for each distinct body it calls,
    that body's limits renumbered after them (``eqn_id`` the body's id: the calls find their range by it)."""
    from gradc.backends.c.control import loop_limits

    found = list(own)
    bodies = callees(graph)
    if bodies:
        ordered_bodies([graph])  # a helper calling itself is refused before its statuses are counted
    for body in bodies:
        limits = _remembered(_LIMITS, body, max_trips)
        if limits is None:
            limits = _remember(_LIMITS, body, max_trips, loop_limits(body, max_trips))
        for lim in limits:
            found.append(replace(lim, eqn_id=id(body), code=len(found) + 1))
    return found


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


__all__ = ["BODY_STACK_LIMIT", "CALL_PREFIX", "CallLowerings", "CallTable", "body_names", "call_body", "call_limits",
           "call_table", "calls_in", "callees", "lent_work", "ordered_bodies"]
