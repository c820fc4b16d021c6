"""The statement rewriter of the capture transform (see ``gradc.trace.capture`` for the whole design).

Each ``if``/``for``/``while`` becomes two versions behind a run-time test: the user's own
statement (for concrete values, so Python's semantics are kept exactly) and a functional
form calling ``rt.if_stmt``/``rt.for_stmt``/``rt.while_stmt`` with nested functions for
the branches and bodies, the variables they change passed as a tuple. ``break`` and
``continue`` become flags in the functional form; statements after a possible jump are
guarded by ``if not flag:`` (converted again, so the guard is a ``cond`` on traced flags).
Every generated statement takes the line of the user's statement it comes from.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import replace

from gradc.trace import capture_analysis as an
from gradc.trace.capture_comprehensions import comprehension_call, kept_as_loop
from gradc.trace.capture_loops import LoopRewriter
from gradc.trace.capture_nodes import (  # noqa: F401  (MAX_NAMES, TooLarge: this module's public limits)
    LEAVE_ALONE,
    MAX_NAMES,
    Ctx,
    TooLarge,
    make_def,
    names_tuple,
    returns_to_flags,
    strings,
    thunk,
    unsafe_in_thunk,
    var,
)

# builtins the rewrite routes through run-time helpers (when the function does not shadow them): the loop
# iterables, and the choices that become ``np.where`` on traced scalars
CHOICE_BUILTINS = ("max", "min")
REWRITTEN_BUILTINS = ("range", "enumerate", "zip", "reversed", "sum", "len") + CHOICE_BUILTINS


class _Expressions(ast.NodeTransformer):
    """``a if p else b``, ``and``/``or`` and ``not`` in the function's own scope, as run-time helper calls."""

    def __init__(self, conv):
        self.conv = conv

    def _skip(self, node):
        return node

    visit_Lambda = visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _skip
    visit_SetComp = visit_DictComp = visit_GeneratorExp = _skip

    def visit_ListComp(self, node):
        """``[f(i) for i in range(n)]``: a loop on traced values (``gradc.trace.capture_comprehensions``)."""
        if not kept_as_loop(node):
            return node
        original = copy.deepcopy(node)  # what it reads and indexes, as the user wrote it
        self.generic_visit(node)
        return comprehension_call(self.conv, original, node) or node

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if unsafe_in_thunk(node.body) or unsafe_in_thunk(node.orelse):
            return node
        return ast.copy_location(self.conv.call("ifexp", node.test, thunk(node.body), thunk(node.orelse),
                                                self.conv.where(node)), node)

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if any(unsafe_in_thunk(v) for v in node.values[1:]):
            return node
        helper = "and_" if isinstance(node.op, ast.And) else "or_"
        return ast.copy_location(self.conv.call(helper, node.values[0], *map(thunk, node.values[1:])), node)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2 or any(unsafe_in_thunk(c) for c in node.comparators):
            return node
        ops = ast.Tuple(elts=[ast.Constant(type(op).__name__) for op in node.ops], ctx=ast.Load())
        return ast.copy_location(self.conv.call("compare", node.left, ops, *map(thunk, node.comparators)), node)

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(self.conv.call("not_", node.operand), node)
        return node

    def visit_Subscript(self, node):
        """``a[i]`` read at an index computed from names: ``rt.item(a, i)``, which lifts a NumPy array read at a
        traced index into the trace (a table read by a loop's counter keeps the loop a loop)."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or not any(isinstance(n, ast.Name) for n in ast.walk(node.slice)):
            return node
        return ast.copy_location(self.conv.call("item", node.value, self._key(node.slice)), node)

    def _key(self, node):
        if isinstance(node, ast.Slice):  # a[lo:hi] as a[slice(lo, hi, None)]
            parts = [p if p is not None else ast.Constant(None) for p in (node.lower, node.upper, node.step)]
            return self.conv.call("slice_", *parts)
        if isinstance(node, ast.Tuple):
            return ast.Tuple(elts=[self._key(e) for e in node.elts], ctx=ast.Load())
        return node

    def visit_Call(self, node):
        """``max(a, b, ...)`` and ``min(...)`` (the builtins, of two or more values, or of one list or tuple
        display): ``rt.max_``/``rt.min_``, which choose with ``np.where`` when a value is a traced scalar."""
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and f.id == "sum" and f.id in self.conv.builtins and not node.keywords and \
                len(node.args) in (1, 2) and not any(isinstance(a, ast.Starred) for a in node.args):
            return ast.copy_location(self.conv.call("sum_", *node.args), node)  # a collected list: one sum
        if not (isinstance(f, ast.Name) and f.id in CHOICE_BUILTINS and f.id in self.conv.builtins) or node.keywords:
            return node
        args = node.args
        if len(args) == 1 and isinstance(args[0], (ast.List, ast.Tuple)):
            args = args[0].elts
        if len(args) < 2 or any(isinstance(a, ast.Starred) for a in args):
            return node
        return ast.copy_location(self.conv.call(f.id + "_", *args, where=self.conv.where(node)), node)


class Converter(LoopRewriter):
    """Rewrites a function body's statements; ``prefix`` starts every generated name.

    >>> conv = Converter("_gc_", "f.py", {"x"}, set())
    >>> print(ast.unparse(conv.block(ast.parse("x = a if p else b").body, set(), Ctx())).replace("lambda :", "lambda:"))
    x = _gc_rt.ifexp(p, lambda: a, lambda: b, 'f.py:1')
    """

    def __init__(self, prefix: str, path: str, local_names: set, declared: set, builtins=REWRITTEN_BUILTINS):
        self.prefix, self.path = prefix, path
        self.rt = prefix + "rt"
        self.locals, self.declared = local_names, declared
        self.builtins = set(builtins)  # of REWRITTEN_BUILTINS: those the function does not shadow
        self.count = 0
        self.ret_flags: dict = {}  # id(return statement) -> its flag, in the loop being rewritten
        self.collected: list = []  # the lists the loop being rewritten appends to (capture_lists)

    # ---- small builders
    def fresh(self, base: str) -> str:
        self.count += 1
        if self.count > MAX_NAMES:
            raise TooLarge(self.count)
        return f"{self.prefix}{base}{self.count}"

    def call(self, helper, *args, **kwargs):
        func = ast.Attribute(value=var(self.rt), attr=helper, ctx=ast.Load())
        return ast.Call(func=func, args=list(args), keywords=[ast.keyword(arg=k, value=v) for k, v in kwargs.items()])

    def written_in_place(self, stmts) -> set:
        """Names whose array ``stmts`` change in place: ``y += ...`` and the item assignments (``y[k] = ...``,
        ``np.add.at(y, ...)``) that the capture has made ``y = rt.setitem(...)``."""
        found = set()
        for n in an.walk_scope(stmts):
            if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
                found.add(n.target.id)
            elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name) and \
                    isinstance(n.value, ast.Call) and isinstance(n.value.func, ast.Attribute) and \
                    isinstance(n.value.func.value, ast.Name) and n.value.func.value.id == self.rt and \
                    n.value.func.attr in ("setitem", "setitem_op", "ufunc_at"):
                found.add(n.targets[0].id)
        return found

    def where(self, node):
        return ast.Constant(f"{self.path}:{node.lineno}")

    def expr(self, node):
        return _Expressions(self).visit(copy.deepcopy(node))

    def refuse(self, at, message, hint):
        return [ast.copy_location(ast.Expr(self.call("refuse", ast.Constant(message), self.where(at),
                                                     ast.Constant(hint))), at)]

    def values(self, names, helper="values", *more):
        """``rt.values(lambda: (n1, ...), ("n1", ...))``: the lambda makes the variables reachable as closure
        cells (bound or not) from wherever the call stands."""
        if not names and helper == "values":
            return ast.Tuple(elts=[], ctx=ast.Load())
        scope = thunk(ast.Tuple(elts=[var(n) for n in names], ctx=ast.Load()))
        return self.call(helper, scope, strings(names), *more)

    # ---- blocks and statements
    def block(self, stmts, live_out, ctx: Ctx) -> list:
        """``stmts`` rewritten, given the names live after them."""
        if ctx.tail:  # an `if` or a loop holding `return`s takes the statements after it
            for k, s in enumerate(stmts):
                is_if = isinstance(s, ast.If) and an.contains(s, ast.Return) and k < len(stmts) - 1
                if is_if or (isinstance(s, (ast.For, ast.While)) and returns_to_flags(s)):
                    return self.ended_by(stmts[:k], s, stmts[k + 1:], live_out, ctx)
        live = set(live_out)
        pieces = []
        for k in range(len(stmts) - 1, -1, -1):
            s = stmts[k]
            pieces.append(self.stmt(s, live, replace(ctx, tail=ctx.tail and k == len(stmts) - 1)))
            live = an.stmt_live(s, live, ctx.brk, ctx.cont)
        return [x for piece in reversed(pieces) for x in piece]

    def ended_by(self, before, s, rest, live_out, ctx):
        """``before``, then ``s`` (an ``if`` or a loop holding `return`s, in tail position) followed by ``rest``:
        ``rest`` moves into ``s`` (into the branches that do not return, or after each version of the loop), so
        that every `return` ends the function where it stands. A long ``rest`` becomes a local function each
        place calls (copying it would double the code at every such statement)."""
        shared, tail = self.share(rest, s)
        if isinstance(s, ast.If):
            s = ast.copy_location(ast.If(test=s.test, body=s.body if an.always_exits(s.body) else s.body + tail,
                                         orelse=s.orelse if an.always_exits(s.orelse) else
                                         s.orelse + copy.deepcopy(tail)), s)
            last = self.block([s], set(), ctx)
            live = an.block_live(shared + [s], set())
        else:
            live_rest = an.block_live(rest, live_out)
            last = self.loop(s, live_rest, ctx, rest=tail, live_out=live_out)
            live = an.block_live(shared, an.stmt_live(s, live_rest, None, None))
        return self.block(before, live, replace(ctx, tail=False)) + [self.stmt(d, set(), ctx)[0] for d in shared] + \
            last

    def share(self, rest, at):
        """``(defs, tail)``: ``rest`` itself when short (``defs`` empty), else a local function holding it and
        ``return <function>(<the locals it reads or sets>)``; its parameters make its liveness that of ``rest``."""
        if (len(rest) <= 2 and not an.contains(rest, (ast.If, ast.For, ast.While))) or \
                an.contains(rest, (ast.Global, ast.Nonlocal)) or set(an.stores(rest)) & self.declared:
            return [], copy.deepcopy(rest)
        name = self.fresh("rest")
        params = sorted((set(an.stores(rest)) | an.loads(rest)) & self.locals)
        body = list(rest)
        if not an.always_exits(rest):
            body.append(ast.copy_location(ast.Return(value=ast.Constant(None)), rest[-1]))
        fn = make_def(name, params, body, rest[0])
        fn.gc_rest = True
        call = ast.Call(func=var(name), args=[ast.Starred(value=self.values(params), ctx=ast.Load())], keywords=[])
        return [fn], [ast.copy_location(ast.Return(value=call), rest[0])]

    def stmt(self, s, live, ctx):
        if getattr(s, "gc_rest", False):  # the statements after a `return`-holding `if`/loop, as a function
            out = copy.copy(s)
            out.body = self.block(s.body, set(), Ctx(tail=True))
            return [out]
        if isinstance(s, ast.If):
            return self.if_(s, live, ctx)
        if isinstance(s, (ast.For, ast.While)):
            return self.loop(s, live, ctx)
        if isinstance(s, ast.Assert):  # Python's own assert on concrete values; a clear refusal on traced ones
            message = ast.Lambda(args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[],
                                                    defaults=[]), body=s.msg or ast.Constant(None))
            call = self.call("assert_", self.expr(s.test), self.expr(message), ast.Constant(ast.unparse(s.test)),
                             self.where(s))
            return [ast.copy_location(ast.Expr(value=call), s)]
        if isinstance(s, LEAVE_ALONE):
            return [copy.deepcopy(s)]  # a statement may appear in both versions: never share nodes
        return [self.expr(s)]

    def _plain_if(self, s, live, ctx, why):
        """``s`` kept as a Python ``if`` (its test must be concrete: ``rt.static_test`` says why otherwise)."""
        body = self.block(s.body, live, ctx) or [ast.Pass()]
        test = self.call("static_test", self.expr(s.test), ast.Constant(why), self.where(s))
        return [ast.copy_location(ast.If(test=test, body=body, orelse=self.block(s.orelse, live, ctx)), s)]

    def if_(self, s, live, ctx):
        has_return = an.contains(s, ast.Return)
        if ctx.loop and an.contains([s], (ast.Break, ast.Continue), into_loops=False):
            return self._plain_if(s, live, ctx, "jump")
        if has_return and not ctx.tail:
            return self._plain_if(s, live, ctx, "return")
        p = self.fresh("p")
        if getattr(s, "gc_guard", False):  # a flag test of the functional form: control.cond runs it either way
            out = [ast.Assign(targets=[var(p, True)], value=self.expr(s.test)),
                   *self.functional_if(s, live, p, has_return, guard=True)]
            return [ast.copy_location(x, s) for x in out]
        concrete = ast.If(test=var(p), body=self.block(s.body, live, ctx) or [ast.Pass()],
                          orelse=self.block(s.orelse, live, ctx))
        out = [ast.Assign(targets=[var(p, True)], value=self.expr(s.test)),
               ast.If(test=self.call("traced", var(p)), body=self.functional_if(s, live, p, has_return),
                      orelse=[ast.copy_location(concrete, s)])]
        return [ast.copy_location(x, s) for x in out]

    def functional_if(self, s, live, p, has_return, guard=False):
        assigned = an.stores(s.body + s.orelse)
        if set(assigned) & self.declared:
            return self.refuse(s, "an `if` on a traced value assigns a global or nonlocal variable",
                               "assign a local variable in the branches and the global after the `if`")
        t_name, f_name = self.fresh("true"), self.fresh("false")
        fctx = Ctx(tail=has_return)
        if has_return:
            bodies = []
            for branch in (s.body, s.orelse):
                code = self.block(branch, set(), fctx)
                if not an.always_exits(branch):
                    code.append(ast.copy_location(ast.Return(value=ast.Constant(None)), s))
                bodies.append(code)
            run = self.call("if_stmt", var(p), var(t_name), var(f_name), self.values(assigned),
                            strings(assigned), ast.Constant(None), self.where(s))
            last = ast.Return(value=run)
        else:
            # an array written in place is kept though its name is not read again: another name may be its alias
            in_place = self.written_in_place(s.body + s.orelse)
            outs = [n for n in assigned if n in live or n in in_place]
            ret = ast.copy_location(ast.Return(value=names_tuple(outs)), s)
            bodies = [self.block(branch, set(outs), fctx) + [ret] for branch in (s.body, s.orelse)]
            run = self.call("if_stmt", var(p), var(t_name), var(f_name), self.values(assigned),
                            strings(assigned), strings(outs), self.where(s),
                            in_place=strings([n for n in outs if n not in live]),
                            **({"guard": ast.Constant(True)} if guard else {}))
            last = ast.Assign(targets=[names_tuple(outs, True)], value=run) if outs else ast.Expr(value=run)
        return [make_def(t_name, assigned, bodies[0], s), make_def(f_name, assigned, bodies[1], s),
                ast.copy_location(last, s)]

