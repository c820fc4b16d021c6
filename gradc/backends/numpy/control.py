"""Loops and branches in emitted NumPy: real ``for``, ``while`` and ``if`` statements.

A loop's carried values are Python variables named after the body's inputs (the
user's names where the capture knew them), assigned before the loop and updated at
the end of each iteration; per-iteration inputs are read as ``xs[j]``, per-iteration
outputs (a reverse-mode tape among them) written into a preallocated ``(trips, ...)``
array, or appended to a list when the trip count is known only at the end (a ``while``
loop). A ``cond`` is an ``if``/``else`` assigning the same names in both branches.

Names: every value of the function and of its nested graphs gets one Python name
(:class:`Scope`): its IR name, suffixed where two values share one.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.trace.control import fori_loop
>>> from gradc.backends.numpy.emit import Function, emit_module
>>> src = emit_module([Function("f", trace(lambda x: fori_loop(0, 3, lambda i, v: np.sin(v) * x, x), 0.5), "f.")])
>>> print(src[src.index("def f"):src.index("    return")])
def f(x):
    \"\"\"f.\"\"\"
    if type(x) is not float:
        x = _scalar_argument('f', 'x', x, None)
    c0 = x
    for i in range(3):
        c0 = np.sin(c0) * x
<BLANKLINE>
"""
from __future__ import annotations

import ast
import copy
import functools
import inspect
import re
import textwrap

import numpy as np

from gradc.backends.numpy.names import user
from gradc.ir.graph import Const, Graph
from gradc.ops import spell
from gradc.ops.control import scan_parts, while_parts

CONTROL_OPS = frozenset({"scan", "while_loop", "cond", "element", "call"})  # call: gradc.backends.numpy.calls
_TEMPORARY_ADJOINT = re.compile(r"t\d+_bar$")  # the adjoint of a value gradc named


class Scope:
    """One Python name per value of a function and of its nested graphs (IR names, made unique)."""

    def __init__(self, graph: Graph, reserved=()):
        self.names: dict = {}
        self.used: set = set(graph.params) | set(reserved)  # reserved: names the emitter adds (a keyword flag)
        self.keep: list = []  # the named Var objects stay alive, so their ids stay theirs
        for v in graph.inputs:
            self.names[id(v)] = v.name
            self.keep.append(v)
        for e in graph.eqns:
            self.name(e.out)

    def name(self, var) -> str:
        found = self.names.get(id(var))
        if found is None:
            found = self.fresh(var.name)
            self.names[id(var)] = found
            self.keep.append(var)
        return found

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            name = f"{base}_{k}"
            k += 1
        self.used.add(name)
        return name


def _elements(em) -> dict:
    """``{id(tuple value): {index: element equation}}`` of the emitter's graph (computed once)."""
    table = getattr(em, "_element_table", None)
    if table is None:
        table = {}
        for e in em.graph.eqns:
            if e.op == "element":
                table.setdefault(id(e.inputs[0]), {})[e.params["index"]] = e
        em._element_table = table
    return table


def _name(em, text: str) -> ast.Name:
    return ast.Name(text, ast.Load())


def _store(target: str) -> ast.Name:
    return ast.Name(target, ast.Store())


def _assign_many(targets: list, values: list) -> list:
    """``a = x`` or ``a, b = x, y`` (simultaneous: a loop's carried values may swap); unchanged names left out."""
    pairs = [(t, v) for t, v in zip(targets, values) if not (isinstance(v, ast.Name) and v.id == t)]
    if not pairs:
        return []
    if len(pairs) == 1:
        return [ast.Assign([_store(pairs[0][0])], pairs[0][1], lineno=0)]
    return [ast.Assign([ast.Tuple([_store(t) for t, _ in pairs], ast.Store())],
                       ast.Tuple([v for _, v in pairs], ast.Load()), lineno=0)]


def _operands(em, atoms) -> tuple:
    """Expressions of a control equation's inputs; a value pending inline is named first (``before``)."""
    before = []
    for a in atoms:
        if id(a) in em.sources and id(a) not in em.elided and not isinstance(em.sources[id(a)], (ast.Name,
                                                                                                 ast.Constant)):
            before.append(spell.assign(em.name_of(a), em.sources.pop(id(a))))
    return before, [em.atom(a) for a in atoms]


def _run(sub, graph: Graph) -> tuple:
    """Statements computing ``graph``'s equations in ``sub`` and its output expressions."""
    stmts = []
    for eqn in graph.eqns:
        stmts.extend(sub.statements(eqn))
    return stmts, [sub.atom(o) for o in graph.outputs]


def _bind_inputs(sub, variables, exprs) -> None:
    for v, expr in zip(variables, exprs):
        sub.sources[id(v)] = expr


def emit_control(em, eqn) -> list:
    if eqn.op == "element":
        return []  # the loop or branch assigned it
    if eqn.op == "call":
        from gradc.backends.numpy.calls import emit_call
        return emit_call(em, eqn)
    return {"scan": _scan, "while_loop": _while, "cond": _cond}[eqn.op](em, eqn)


def _element_names(em, eqn) -> dict:
    return {k: em.name_of(e.out) for k, e in _elements(em).get(id(eqn.out), {}).items()}


def _alloc(shape_expr, item_type) -> ast.expr:
    kwargs = {} if item_type.dtype == "f64" else {"dtype": spell.dotted(f"np.{item_type.np_dtype.name}")}
    return spell.call("np.empty", shape_expr, **kwargs)


def _scan(em, eqn) -> list:
    p = eqn.params
    body = p["body"]
    n_k, n_c = p["n_consts"], p["n_carry"]
    length_in, consts, carry, xs = scan_parts(eqn.inputs, p)
    schedule = _revolve_rows(eqn)  # a binomial schedule: its generator drives the loop, not a table constant
    if schedule is not None:
        xs = []
    stmts, exprs = _operands(em, ([length_in] if length_in is not None else []) + consts + xs)
    if length_in is not None:
        trips, exprs = exprs[0], exprs[1:]
    else:
        trips = ast.Constant(p["length"])
    e_consts, e_xs = exprs[:n_k], exprs[n_k:]
    b_i, b_consts = body.inputs[0], body.inputs[1:1 + n_k]
    b_carry, b_xs = body.inputs[1 + n_k:1 + n_k + n_c], body.inputs[1 + n_k + n_c:]
    sub = em.sub(body)
    _bind_inputs(sub, b_consts, e_consts)
    carry_names = [sub.name_of(v) for v in b_carry]
    stmts += _init_carry(em, carry, carry_names)
    _branch_assigns_carry(em, body, b_carry)
    outs = _element_names(em, eqn)
    start, step = p.get("start", 0), p.get("step", 1)
    read = {id(a) for e in body.eqns for a in e.inputs} | {id(o) for o in body.outputs}
    counter = sub.name_of(b_i)
    simple = start == 0 and step == 1
    j = counter if simple else em.scope.fresh("j")
    inner = []
    if not simple and id(b_i) in read:
        inner.append(spell.assign(counter, _affine(start, step, _name(em, j))))
    for v, expr in zip(b_xs, e_xs):
        if id(v) in read:
            inner.append(spell.assign(sub.name_of(v), ast.Subscript(expr, _name(em, j), ast.Load())))
    body_stmts, results = _run(sub, body)
    tape_writes = []  # rows that copy a carried value as it came in (a tape): written first, before it changes
    for k, item in enumerate(body.outputs[n_c:]):
        target = outs.get(n_c + k)
        if target is None:
            continue  # an output nobody reads is not written
        t = item.type
        shape = ast.Tuple([trips] + [spell.literal(d) for d in t.shape], ast.Load())
        stmts.append(spell.assign(target, _alloc(shape, t)))
        store = ast.Subscript(ast.Name(target, ast.Load()), _name(em, j), ast.Store())
        write = ast.Assign([store], results[n_c + k], lineno=0)
        if item in body.inputs:
            tape_writes.append(write)
        else:
            body_stmts.append(write)
    inner += tape_writes + body_stmts
    inner += _assign_many(carry_names, results[:n_c])
    _fold_tuple_update(inner)
    _fold_last_update(inner)
    rng = spell.call("range", trips) if not p.get("reverse") else spell.call(
        "range", _minus_one(trips), ast.Constant(-1), ast.Constant(-1))
    target = _store(j)
    if schedule is not None:
        helper, rng = _schedule_call(em, *p["revolve"])
        stmts.extend(helper)
        target = ast.Tuple([_store(sub.name_of(v)) for v in b_xs], ast.Store())
    stmts.append(ast.For(target, rng, inner or [ast.Pass()], [], lineno=0))
    return stmts + _results_as_carry(em, eqn, carry_names)


def _revolve_rows(eqn):
    """``(T, s)`` when ``eqn`` is a binomial checkpointing schedule loop (``gradc.transforms.binomial``) over the
    rows its generator yields, in order, with nothing else per row: the loop can iterate the generator."""
    p = eqn.params
    if "revolve" not in p or p.get("reverse") or (p.get("start", 0), p.get("step", 1)) != (0, 1):
        return None
    body, n_c = p["body"], p["n_carry"]
    _, _, _, xs = scan_parts(eqn.inputs, p)
    read = {id(a) for e in body.eqns for a in e.inputs} | {id(o) for o in body.outputs}
    if len(xs) != 3 or len(body.outputs) != n_c or id(body.inputs[0]) in read or p["length"] is None:
        return None
    from gradc.transforms.revolve import schedule_table
    table = schedule_table(*p["revolve"])
    if not all(isinstance(x, Const) and np.array_equal(x.value, table[:, k]) for k, x in enumerate(xs)):
        return None
    return p["revolve"]


@functools.lru_cache(maxsize=1)
def _schedule_def() -> ast.FunctionDef:
    from gradc.transforms.revolve import revolve_schedule
    return ast.parse(textwrap.dedent(inspect.getsource(revolve_schedule))).body[0]


def _schedule_call(em, steps: int, snapshots: int) -> tuple:
    """The schedule's generator as a local function (names its own: never renamed) and the call that iterates it."""
    fn = copy.deepcopy(_schedule_def())
    for node in ast.walk(fn):
        if isinstance(node, ast.Name):
            node.id = user(node.id)
        elif isinstance(node, ast.arg):
            node.arg = user(node.arg)
    name = em.scope.fresh("revolve_schedule")
    fn.name = user(name)
    notes = [_comment(f"reverse sweep: binomial checkpointing (Revolve) of {steps} steps with {snapshots} snapshots,"),
             _comment("rows (action, step, target): 0 advance from step up to target, 1 store the state"),
             _comment("of step in slot target, 2 restore the state of step from slot target, 3 reverse step")]
    call = spell.call(user(name), ast.Constant(steps), ast.Constant(snapshots))
    return notes + [fn], call


def _init_carry(em, atoms, names) -> list:
    """``x = x0`` before the loop, a line per carried value; a value computed only to start the loop is computed
    into it (``x_bar = 2.0 * x``, not ``t20 = 2.0 * x`` and ``x_bar = t20``). The names are the loop's own, read
    by no start value, so one line after another is the same as one simultaneous assignment."""
    stmts = []
    for name, a in zip(names, atoms):
        pending = em.sources.get(id(a))
        if pending is not None and id(a) not in em.elided and not isinstance(pending, (ast.Name, ast.Constant)):
            expr = em.sources.pop(id(a))
        else:
            expr = em.atom(a)
        if not (isinstance(expr, ast.Name) and expr.id == name):
            stmts.append(spell.assign(name, expr))
    return stmts


def _branch_assigns_carry(em, body: Graph, carried_vars) -> None:
    """A body ending in an ``if`` whose results are the new carried values: the ``if`` assigns the carried names
    itself (each branch at its end, all at once), instead of temporaries copied after it."""
    tail = [e for e in body.eqns if e.op != "element"]
    if not tail or tail[-1].op != "cond":
        return
    branch = tail[-1]
    rest = body.eqns[body.eqns.index(branch) + 1:]
    items = {id(e.out): e for e in rest if e.op == "element" and e.inputs[0] is branch.out}
    if len(items) != len(rest):
        return
    outputs = body.outputs[:len(carried_vars)]
    if len({id(o) for o in outputs}) != len(outputs):
        return
    for out, carried in zip(outputs, carried_vars):
        if id(out) in items and id(out) not in em.scope.names:
            em.scope.names[id(out)] = em.scope.name(carried)
            em.scope.keep.append(out)


def _results_as_carry(em, eqn, names) -> list:
    """After the loop each result is its carried variable, read by that name (no ``t11 = x``); the adjoint of a
    named value keeps its line (``x0_bar = x_bar``): it is what a reader looks for (``t3_bar`` is not)."""
    stmts = []
    for k, e in _elements(em).get(id(eqn.out), {}).items():
        if k >= len(names):
            continue
        if (e.out.name.endswith("_bar") and not _TEMPORARY_ADJOINT.match(e.out.name)) or em.state.math_mode:
            stmts.append(spell.assign(em.name_of(e.out), _name(em, names[k])))
        else:
            em.sources[id(e.out)] = _name(em, names[k])
    return stmts


def _fold_tuple_update(stmts: list) -> None:
    """``t38 = f(x, ...)`` ... ``x, a = t38, t39`` becomes ``x = f(x, ...)`` where it stands, for each pair whose
    temporary and old value nothing after it reads: the tuple keeps only the values that must swap at once."""
    update = stmts[-1] if stmts else None
    if not (isinstance(update, ast.Assign) and isinstance(update.targets[0], ast.Tuple)
            and isinstance(update.value, ast.Tuple)):
        return
    pairs = list(zip([t.id for t in update.targets[0].elts], update.value.elts))
    kept = []
    for target, value in pairs:
        others = {v.id for t, v in pairs if t != target and isinstance(v, ast.Name)}
        k = _defining(stmts, value.id) if isinstance(value, ast.Name) and value.id not in others else None
        if k is None or target in others or _reads(stmts[k + 1:-1], (value.id, target)):
            kept.append((target, value))
            continue
        stmts[k] = ast.Assign([_store(target)], stmts[k].value, lineno=0)
    stmts[-1:] = _assign_many([t for t, _ in kept], [v for _, v in kept])


def _defining(stmts: list, name: str):
    """The index of the top-level ``name = ...`` among ``stmts`` (all but the last), if exactly one."""
    found = [k for k, s in enumerate(stmts[:-1]) if isinstance(s, ast.Assign) and len(s.targets) == 1
             and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    return found[0] if len(found) == 1 else None


def _reads(stmts: list, names) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for s in stmts for n in ast.walk(s))


def _comment(text: str) -> ast.stmt:
    """A ``# text`` line: the marker ``emit._format`` turns into a comment (``emit._comment``'s; emit imports this
    module, so it is spelled here too)."""
    return ast.Expr(ast.Constant(f"__gradc_comment__ {text}"))


def _fold_last_update(stmts: list) -> None:
    """``t1 = f(v)`` ... ``v = t1`` (the value's only use) becomes ``v = f(v)`` at the end of the iteration."""
    if len(stmts) < 2:
        return
    update = stmts[-1]
    if not (isinstance(update, ast.Assign) and len(update.targets) == 1 and isinstance(update.targets[0], ast.Name)
            and isinstance(update.value, ast.Name)):
        return
    temp = update.value.id
    for k in range(len(stmts) - 2, -1, -1):
        stmt = stmts[k]
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and stmt.targets[0].id == temp:
            between = stmts[k + 1:-1]
            if any(isinstance(n, ast.Name) and n.id in (temp, update.targets[0].id)
                   for b in between for n in ast.walk(b)):
                return  # read in between: the temporary stays
            del stmts[k]
            stmts[-1] = ast.Assign(update.targets, stmt.value, lineno=0)
            return


def _affine(start, step, j) -> ast.expr:
    expr = j if step == 1 else ast.BinOp(ast.Constant(step), ast.Mult(), j)
    return expr if start == 0 else ast.BinOp(ast.Constant(start), ast.Add(), expr)


def _minus_one(trips: ast.expr) -> ast.expr:
    if isinstance(trips, ast.Constant):
        return ast.Constant(trips.value - 1)
    return ast.BinOp(trips, ast.Sub(), ast.Constant(1))


def _while(em, eqn) -> list:
    p = eqn.params
    cond, body = p["cond"], p["body"]
    cond_consts, body_consts, carry = while_parts(eqn.inputs, p)
    stmts, exprs = _operands(em, cond_consts + body_consts)
    a, b = len(cond_consts), len(body_consts)
    sub, csub = em.sub(body), em.sub(cond)
    b_carry = body.inputs[b:]
    carry_names = [sub.name_of(v) for v in b_carry]
    _bind_inputs(sub, body.inputs[:b], exprs[a:a + b])
    _bind_inputs(csub, cond.inputs[:a], exprs[:a])
    _bind_inputs(csub, cond.inputs[a:], [_name(em, n) for n in carry_names])
    stmts += _init_carry(em, carry, carry_names)
    _branch_assigns_carry(em, body, b_carry)
    outs = _element_names(em, eqn)
    n_c = len(b_carry)
    trips = outs.get(n_c) or (em.scope.fresh("trips") if "max_trips" in p else None)
    if trips is not None:
        stmts.append(spell.assign(trips, ast.Constant(0)))
    cond_stmts, (test,) = _run(csub, cond)
    inner = []
    if p.get("max_trips") is not None:
        message = ast.Constant(f"while loop ran more than max_trips={p['max_trips']} times")
        inner.append(ast.If(ast.Compare(_name(em, trips), [ast.GtE()], [ast.Constant(p["max_trips"])]),
                            [ast.Raise(spell.call("RuntimeError", message), None)], []))
    body_stmts, results = _run(sub, body)
    for k in range(len(body.outputs) - n_c):
        target = outs.get(n_c + 1 + k)
        if target is None:
            continue
        stmts.append(spell.assign(target, ast.List([], ast.Load())))
        append = ast.Expr(spell.method_call(_name(em, target), "append", results[n_c + k]))
        if body.outputs[n_c + k] in body.inputs:
            inner.append(append)  # a tape of a carried value as it came in: before it changes
        else:
            body_stmts.append(append)
    inner += body_stmts
    inner += _assign_many(carry_names, results[:n_c])
    _fold_tuple_update(inner)
    _fold_last_update(inner)
    if trips is not None:
        inner.append(ast.AugAssign(_store(trips), ast.Add(), ast.Constant(1)))
    if len(cond_stmts) == 1 and isinstance(cond_stmts[0], ast.Assign) and isinstance(test, ast.Name) and \
            len(cond_stmts[0].targets) == 1 and getattr(cond_stmts[0].targets[0], "id", None) == test.id:
        test, cond_stmts = cond_stmts[0].value, []  # one expression: ``while <test>:``
    if cond_stmts:  # a condition that needs statements: test it at the top of an endless loop
        inner = cond_stmts + [ast.If(ast.UnaryOp(ast.Not(), test), [ast.Break()], [])] + inner
        test = ast.Constant(True)
    stmts.append(ast.While(test, inner, []))
    return stmts + _results_as_carry(em, eqn, carry_names)


def _cond(em, eqn) -> list:
    branches = eqn.params["branches"]
    stmts, exprs = _operands(em, list(eqn.inputs))
    pred, operand_exprs = exprs[0], exprs[1:]
    outs = _element_names(em, eqn)
    arms = []
    for g in branches:
        sub = em.sub(g)
        _bind_inputs(sub, g.inputs, operand_exprs)
        _share_targets(em, g, eqn)
        body_stmts, results = _run(sub, g)
        targets = sorted(outs)
        arm = body_stmts + _assign_many([outs[k] for k in targets], [results[k] for k in targets])
        _fold_tuple_update(arm)
        _fold_last_update(arm)
        arms.append(_until_raise(arm) or [ast.Pass()])
    orelse = [] if len(arms[0]) == 1 and isinstance(arms[0][0], ast.Pass) else arms[0]
    stmts.append(ast.If(pred, arms[1], orelse))
    return stmts


def _until_raise(stmts: list) -> list:
    """``stmts`` up to a ``raise`` (a branch ending in the user's raise: its results are never read)."""
    for k, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Raise):
            return stmts[:k + 1]
    return stmts


def _share_targets(em, branch: Graph, eqn) -> None:
    """A branch that is one inner ``if`` whose results it returns as they are: the inner ``if`` assigns the outer
    one's names itself, so the branch reads ``elif`` (no copies between the two)."""
    inner = [e for e in branch.eqns if e.op != "element"]
    if len(inner) != 1 or inner[0].op != "cond" or branch.eqns[0] is not inner[0]:
        return
    items = {id(e.out): e.params["index"] for e in branch.eqns[1:] if e.inputs[0] is inner[0].out}
    if len(items) != len(branch.eqns) - 1 or [items.get(id(o)) for o in branch.outputs] != list(
            range(len(inner[0].out.type.items))):
        return
    outer = {k: e.out for k, e in _elements(em).get(id(eqn.out), {}).items()}
    for k, out in enumerate(branch.outputs):
        if k in outer and id(out) not in em.scope.names:
            em.scope.names[id(out)] = em.scope.name(outer[k])
            em.scope.keep.append(out)


__all__ = ["CONTROL_OPS", "Scope", "emit_control"]
