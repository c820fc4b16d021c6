"""Loops of the capture rewriter: each ``for``/``while`` as a run-time choice between the Python loop and its
functional form (``rt.for_stmt`` / ``rt.while_stmt`` with a body function over a tuple carry), ``break``,
``continue`` and ``return`` as flags. A mixin of :class:`gradc.trace.capture_convert.Converter`.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import replace

from gradc.trace import capture_analysis as an
from gradc.trace.capture_nodes import (
    LEAVE_ALONE,
    RETURN_IN_LOOP,
    Ctx,
    guard,
    indexed_names,
    make_def,
    names_tuple,
    not_flag,
    returns_to_flags,
    strings,
    var,
)


class LoopRewriter:
    """``for`` and ``while`` statements (needs the Converter's ``block``, ``expr``, ``call``, ``fresh``, ...)."""

    def _iterable(self, node):
        """``range(...)``, ``enumerate(...)`` and ``zip(...)`` (the builtins) through the run-time helpers that
        keep them Python's on concrete values and loopable on traced ones."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.builtins and \
                not any(isinstance(a, ast.Starred) for a in node.args) and \
                all(k.arg == "start" for k in node.keywords) and (not node.keywords or node.func.id == "enumerate"):
            nested = node.func.id == "reversed"  # reversed(range(...)): the range a loopable one too
            args = [self._iterable(a) if nested else self.expr(a) for a in node.args]
            keywords = {k.arg: self.expr(k.value) for k in node.keywords}
            if node.func.id == "range":
                keywords["where"] = self.where(node)
            return self.call(node.func.id + "_", *args, **keywords)
        return self.expr(node)

    def loop(self, s, live, ctx, rest=None, live_out=None):
        """``s`` as a run-time choice between the Python loop and its functional form; with ``rest`` (the statements
        after a loop holding `return`s, in tail position), each version continues with its own copy of them."""
        original = s
        s, self.collected = self.collecting(s)
        collected = self.collected
        is_for = isinstance(s, ast.For)
        head = an.loop_head_live(s, live)
        body_ctx = Ctx(loop=True, brk=frozenset(live), cont=frozenset(head))
        after_ctx = replace(ctx, tail=False)
        reads = an.loads(s.body) | set(an.stores(s.body))
        out = []
        if is_for:
            it = self.fresh("it")
            out.append(ast.Assign(targets=[var(it, True)], value=self._iterable(s.iter)))
            concrete = ast.For(target=s.target, iter=var(it), body=self.block(s.body, head, body_ctx),
                               orelse=self.block(s.orelse, live, after_ctx), type_comment=None)
            reads |= set(an.stores(s.target))
        else:
            it = None
            test = self.call("static_test", self.expr(s.test), ast.Constant("while"), self.where(s))
            concrete = ast.While(test=test, body=self.block(s.body, head, body_ctx),
                                 orelse=self.block(s.orelse, live, after_ctx))
            reads |= an.loads(s.test)
        # a `for` collecting lists may run in functional form; a `while` appending to a Python list stays Python's
        # (its trip count, so the list's length, is known only when it runs)
        kept_lists = set(collected) if isinstance(s, ast.For) else set()
        containers, tables = (names & self.locals - kept_lists for names in indexed_names(original))
        indexed = sorted(containers - tables)
        decide = self.call("loop_traced", var(it) if it else ast.Constant(None),
                           self.values(sorted(reads & self.locals)), self.values(indexed),
                           self.values(sorted(tables)))
        concrete = [ast.copy_location(concrete, s)]
        if rest is None:
            functional = self.functional_loop(s, live, ctx, it, head, collected=collected)
        else:
            concrete += self.block(rest, live_out, ctx)
            functional = self.functional_loop(s, live, ctx, it, head, rest=rest, live_out=live_out,
                                              collected=collected)
        out.append(ast.If(test=decide, body=functional, orelse=concrete))
        return [ast.copy_location(x, s) for x in out]

    def collecting(self, s):
        """``(s, names)``: the local lists loop ``s`` appends to and otherwise only reads items and the length of
        (``ys.append(y)``, ``ys.extend([...])``, ``ys += [...]``, ``ys[-1]``, ``len(ys)``), with ``s``'s appends
        made ``ys = rt.append_(ys, y)`` (``extend_``) and ``len(ys)`` ``rt.len_(ys)``: in the functional form the
        list's items become the loop's per-step outputs (``gradc.trace.capture_lists``)."""
        names = [n for n in _appended_names(s.body, self.rt) if n in self.locals and n not in self.declared]
        names = [n for n in names if _only_collected(s.body, n, self.rt)]
        if not names:
            return s, []
        s = copy.deepcopy(s)
        _Appends(set(names), self).visit(s)
        return s, names

    def functional_loop(self, s, live, ctx, it, head, rest=None, live_out=None, collected=()):
        """The functional form of loop ``s``. Its `return`s (only with ``rest``) become a flag each plus a
        `break`; after the loop, ``if flag: return <value>`` (the loop stopped at that `return`, so the carried
        variables hold what the value reads), then ``rest``."""
        is_for = isinstance(s, ast.For)
        returns = [n for n in an.walk_scope(s.body, into_loops=False) if isinstance(n, ast.Return)]
        if an.contains(s.body, ast.Return) and rest is None:
            return self.refuse(s, *RETURN_IN_LOOP)
        ret_flags = {id(r): self.fresh("ret") for r in returns}
        post = list(rest or [])
        if returns and _exits_only_by_return(s):  # `while True:` left by `return`s only: the last one is certain
            value = returns[-1].value if returns[-1].value is not None else ast.Constant(None)
            post = [ast.copy_location(ast.Return(value=copy.deepcopy(value)), returns[-1])]
            returns_checked = returns[:-1]
        else:
            returns_checked = returns
        for r in reversed(returns_checked):
            value = r.value if r.value is not None else ast.Constant(None)
            post = [ast.copy_location(ast.If(test=var(ret_flags[id(r)]), body=[
                ast.copy_location(ast.Return(value=copy.deepcopy(value)), r)], orelse=post), r)]
        plain_head = an.loop_head_live(_without_return_values(s), live) if returns else head
        if returns:
            live = an.block_live(post, live_out)
            head = an.loop_head_live(s, live)
        assigned = (an.stores(s.target) if is_for else []) + an.stores(s.body)
        assigned = list(dict.fromkeys(assigned))
        if set(assigned) & self.declared:
            return self.refuse(s, "a loop on traced values assigns a global or nonlocal variable",
                               "assign a local variable in the loop and the global after it")
        for n in an.walk_scope(s.body, into_loops=False):
            if isinstance(n, LEAVE_ALONE[:5]) and an.contains([n], (ast.Break, ast.Continue), into_loops=False):
                return self.refuse(n, "a `break` or `continue` inside a `try`/`with` block of a loop on traced "
                                      "values", "move the `break`/`continue` out of the `try`/`with` block")
        has_brk = an.contains(s.body, ast.Break, into_loops=False) or bool(returns)
        has_cont = an.contains(s.body, ast.Continue, into_loops=False)
        brk = self.fresh("brk") if has_brk else None
        cont = self.fresh("cont") if has_cont else None
        carry = [n for n in assigned if n in head]
        carry_all = carry + ([brk] if brk else []) + list(ret_flags.values())
        flag_names = (["broke"] if brk else []) + ["returned"] * len(ret_flags)
        self.ret_flags = ret_flags
        inner = self.flagged(s.body, brk, cont)
        if cont:
            inner.insert(0, ast.copy_location(ast.Assign(targets=[var(cont, True)], value=ast.Constant(False)), s))
        item = self.fresh("item") if is_for else None
        if is_for:
            inner.insert(0, ast.copy_location(ast.Assign(targets=[copy.deepcopy(s.target)], value=var(item)), s))
        if brk:
            inner = [guard(not_flag(brk), inner, s)]
        c = self.fresh("c")
        unpack = [ast.copy_location(ast.Assign(targets=[names_tuple(carry_all, True)], value=var(c)), s)] \
            if carry_all else []
        ret = ast.copy_location(ast.Return(value=names_tuple(carry_all)), s)
        body_fn = self.fresh("body")
        body = unpack + self.block(inner, set(carry_all), Ctx()) + [ret]
        defs = [make_def(body_fn, ([item] if is_for else []) + [c], body, s)]
        init = self.values(carry, "carry_init", ast.Constant(len(flag_names)))
        names = strings(carry + flag_names)
        # read only by a `return`'s value after the loop: may start unset (a `return` runs after it is assigned)
        unset = {"unset": strings([n for n in carry if n not in plain_head])} if returns else {}
        if [n for n in collected if n in carry]:
            unset["collected"] = strings([n for n in collected if n in carry])
        if is_for:
            run = self.call("for_stmt", var(it), var(body_fn), init, names, self.where(s),
                            strings([n for n in an.stores(s.target) if n in carry]), **unset)
        else:
            test = s.test if not brk else ast.BoolOp(op=ast.And(), values=[not_flag(brk), s.test])
            cond_fn = self.fresh("cond")
            check = ast.copy_location(ast.Return(value=self.expr(test)), s)
            defs.insert(0, make_def(cond_fn, [c], unpack + [check], s))
            run = self.call("while_stmt", var(cond_fn), var(body_fn), init, names, self.where(s), **unset)
        last = ast.Assign(targets=[names_tuple(carry_all, True)], value=run) if carry_all else ast.Expr(value=run)
        out = defs + [ast.copy_location(last, s)]
        if s.orelse:
            orelse = s.orelse if not brk else [guard(not_flag(brk), s.orelse, s)]
            out += self.block(orelse, an.block_live(post, live_out) if rest is not None else live,
                              replace(ctx, tail=False))
        if rest is not None:
            out += self.block(post, live_out, ctx)
        return out

    def lift_nested_returns(self, stmts, in_loop: bool = False) -> list:
        """``stmts`` with each `return` of a loop nested in another loop made ``flag = True; break``, and
        ``if flag: return <value>`` placed right after that loop (the flag set to False before it): the enclosing
        loop then holds the `return` itself, which its functional form turns into a flag of its own. After the
        `break` the variables hold what they held at the `return`, as Python leaves them."""
        out = []
        for s in stmts:
            if isinstance(s, (ast.For, ast.While)):
                s.body = self.lift_nested_returns(s.body, True)
                s.orelse = self.lift_nested_returns(s.orelse, in_loop)
                returns = [n for n in an.walk_scope(s.body, into_loops=False) if isinstance(n, ast.Return)]
                if in_loop and returns and returns_to_flags(s):
                    flags = {id(r): self.fresh("inner_ret") for r in returns}
                    self.locals.update(flags.values())
                    s.body = _returns_to_breaks(s.body, flags)
                    out += [ast.copy_location(ast.Assign(targets=[var(f, True)], value=ast.Constant(False)), s)
                            for f in flags.values()]
                    out.append(s)
                    out += [ast.copy_location(ast.If(test=var(flags[id(r)]), body=[
                        ast.copy_location(ast.Return(value=copy.deepcopy(r.value)), r)], orelse=[]), r)
                        for r in returns]
                    continue
            elif isinstance(s, ast.If):
                s.body = self.lift_nested_returns(s.body, in_loop)
                s.orelse = self.lift_nested_returns(s.orelse, in_loop)
            out.append(s)
        return out

    def flagged(self, stmts, brk, cont) -> list:
        """``stmts`` with this loop's ``break``/``continue`` as flag assignments and what follows a possible
        jump guarded by the flags."""
        out = []
        for k, s in enumerate(stmts):
            if isinstance(s, (ast.Break, ast.Continue, ast.Return)):
                flags = [brk if not isinstance(s, ast.Continue) else cont]
                if isinstance(s, ast.Return):
                    flags.insert(0, self.ret_flags[id(s)])
                out += [ast.copy_location(ast.Assign(targets=[var(f, True)], value=ast.Constant(True)), s)
                        for f in flags]
                return out
            jumps = [f for f, kind in ((brk, (ast.Break, ast.Return)), (cont, ast.Continue))
                     if f and an.contains([s], kind, into_loops=False)]
            if isinstance(s, ast.If) and jumps:
                s = ast.copy_location(ast.If(test=s.test, body=self.flagged(s.body, brk, cont) or [ast.Pass()],
                                             orelse=self.flagged(s.orelse, brk, cont)), s)
            out.append(s)
            rest = stmts[k + 1:]
            if jumps and rest:
                tests = [not_flag(f) for f in jumps]
                test = tests[0] if len(tests) == 1 else ast.BoolOp(op=ast.And(), values=tests)
                out.append(guard(test, self.flagged(rest, brk, cont), rest[0]))
                return out
        return out



def _exits_only_by_return(loop) -> bool:
    """Whether ``loop`` is a ``while`` on a constant true test (``while True:``, ``while 1:``) without a ``break``:
    it ends only at one of its `return`s."""
    return isinstance(loop, ast.While) and isinstance(loop.test, ast.Constant) and bool(loop.test.value) and \
        not an.contains(loop.body, ast.Break, into_loops=False)


def _returns_to_breaks(stmts, flags) -> list:
    """``stmts`` with each `return` ``r`` (not inside a nested loop) replaced by ``flags[id(r)] = True; break``."""
    out = []
    for s in stmts:
        if isinstance(s, ast.Return) and id(s) in flags:
            out += [ast.copy_location(ast.Assign(targets=[var(flags[id(s)], True)], value=ast.Constant(True)), s),
                    ast.copy_location(ast.Break(), s)]
            continue
        if isinstance(s, ast.If):
            s.body = _returns_to_breaks(s.body, flags)
            s.orelse = _returns_to_breaks(s.orelse, flags)
        out.append(s)
    return out


def _without_return_values(loop):
    """A copy of ``loop`` whose `return`s read nothing: the liveness of its variables apart from what a `return`
    reads (a `return` that runs has seen them assigned)."""
    out = copy.deepcopy(loop)
    for n in an.walk_scope(out.body):
        if isinstance(n, ast.Return):
            n.value = None
    return out


_APPENDERS = ("append_", "extend_", "concat_")


def _appended_names(body, rt) -> list:
    """Names ``ys`` of ``ys.append(y)`` / ``ys.extend(...)`` statements, ``ys += [...]`` and the rewritten
    ``ys = rt.append_(ys, y)`` in ``body`` (nested loops included)."""
    found: dict = {}
    for n in an.walk_scope(body):
        if isinstance(n, ast.Expr) and _append_call(n.value) is not None:
            found[_append_call(n.value)] = None
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and isinstance(n.op, ast.Add) and \
                isinstance(n.value, (ast.List, ast.Tuple)):
            found[n.target.id] = None
        elif _rewritten_append(n, rt) is not None:
            found[_rewritten_append(n, rt)] = None
        elif _list_concat(n) is not None:
            found[_list_concat(n)] = None
    return list(found)


def _list_concat(n):
    """``ys`` of ``ys = ys + [a, ...]`` (a list display added to the list itself)."""
    if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and \
            isinstance(n.value, ast.BinOp) and isinstance(n.value.op, ast.Add) and \
            isinstance(n.value.left, ast.Name) and n.value.left.id == n.targets[0].id and \
            isinstance(n.value.right, ast.List):
        return n.targets[0].id
    return None


def _append_call(call):
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in ("append", "extend") \
            and isinstance(call.func.value, ast.Name) and len(call.args) == 1 and not call.keywords and \
            not isinstance(call.args[0], ast.Starred):
        return call.func.value.id
    return None


def _rewritten_append(n, rt):
    if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and \
            isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) and \
            n.value.func.attr in _APPENDERS and isinstance(n.value.func.value, ast.Name) and \
            n.value.func.value.id == rt:
        return n.targets[0].id
    return None


def _only_collected(body, name, rt) -> bool:
    """Whether ``body`` uses ``name`` only to append to it, read its items (``name[k]``) or its length."""
    allowed = set()
    for n in an.walk_scope(body):
        if isinstance(n, ast.Expr) and _append_call(n.value) == name:
            allowed.add(id(n.value.func.value))
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name) and n.target.id == name and \
                isinstance(n.op, ast.Add) and isinstance(n.value, (ast.List, ast.Tuple)):
            allowed.add(id(n.target))
        elif _rewritten_append(n, rt) == name:
            allowed.update((id(n.targets[0]), id(n.value.args[0])))
        elif _list_concat(n) == name:
            allowed.update((id(n.targets[0]), id(n.value.left)))
        elif isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id == name and \
                isinstance(n.ctx, ast.Load):
            allowed.add(id(n.value))
        elif isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "len" and \
                len(n.args) == 1 and isinstance(n.args[0], ast.Name) and n.args[0].id == name:
            allowed.add(id(n.args[0]))
    uses = [n for n in an.walk_scope(body) if isinstance(n, ast.Name) and n.id == name]
    nested = [n for n in an.walk_scope(body) if isinstance(n, an.SCOPES) and name in an.loads(n)]
    return not nested and all(id(n) in allowed for n in uses)


class _Appends(ast.NodeTransformer):
    """``ys.append(y)`` -> ``ys = rt.append_(ys, y)`` (``extend_``), ``len(ys)`` -> ``rt.len_(ys)``, for ``names``."""

    def __init__(self, names, conv):
        self.names, self.conv = names, conv

    def _skip(self, node):
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = visit_Lambda = _skip

    def visit_Expr(self, node):
        name = _append_call(node.value)
        if name not in self.names:
            return self.generic_visit(node)
        call = self.conv.call(node.value.func.attr + "_", var(name), self.visit(node.value.args[0]))
        return ast.copy_location(ast.Assign(targets=[var(name, True)], value=call), node)

    def visit_Assign(self, node):
        name = _list_concat(node)
        if name not in self.names:
            return self.generic_visit(node)
        call = self.conv.call("concat_", var(name), self.visit(node.value.right))  # a new list, as `+` makes
        return ast.copy_location(ast.Assign(targets=[var(name, True)], value=call), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "len" and "len" in self.conv.builtins and \
                len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in self.names:
            return ast.copy_location(self.conv.call("len_", node.args[0]), node)
        return node
