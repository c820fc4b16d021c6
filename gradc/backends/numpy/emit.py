"""Emit a graph as a standalone NumPy (or, for all-scalar code, ``math``) module.

Every statement is an ``ast`` node, unparsed by ``ast.unparse``. Names are the
IR's; a value read once is written inline where short; scalar constants are
literals; a ``broadcast_to`` that NumPy's implicit broadcasting makes redundant
is left out; array constants become module-level ``C0, C1, ...``. Each function
checks its arguments' shapes and dtypes first, with one inline test per array
(dtypes compared by identity with module-level ``np.dtype`` objects, the
cheapest exact test) and one for all float scalars.

>>> import numpy as np
>>> from gradc.trace import trace
>>> print(emit_module([Function("f", trace(lambda x: np.sin(x) * 2.0, np.ones(3)), "f of x.")]))
import numpy as np
<BLANKLINE>
<BLANKLINE>
_float64 = np.dtype('float64')
<BLANKLINE>
<BLANKLINE>
def f(x):
    \"\"\"f of x.\"\"\"
    if type(x) is not np.ndarray or x.shape != (3,) or x.dtype is not _float64:
        _check_array('f', 'x', x, (3,), _float64)
    t2 = np.sin(x) * 2.0
    return t2
<BLANKLINE>
<BLANKLINE>
def _check_array(function, name, value, shape, dtype):
...
"""
from __future__ import annotations

import ast
import copy
import dataclasses
import keyword
import re
from dataclasses import dataclass

from gradc.backends.escape import python_comment
from gradc.backends.numpy import fallback
from gradc.backends.numpy import runtime_helpers as helpers
from gradc.backends.numpy.analysis import (
    MAX_INLINE_OPS,
    MAX_INLINE_SCALAR_OPS,
    accumulations,
    elided_broadcasts,
    occurrences,
    operation_count,
    single_use_values,
)
from gradc.backends.numpy.arguments import ArgumentChecks
from gradc.backends.numpy.calls import HelperNames, emit_call, helper_bodies, needs_checks
from gradc.backends.numpy.control import CONTROL_OPS, Scope, emit_control
from gradc.backends.numpy.fresh_broadcast import fresh_broadcasts
from gradc.backends.numpy.literals import array_constant_expr, const_value_for_literal, scalar_literal
from gradc.backends.numpy.names import (
    collides,
    finish,
    helper_source,
    import_line,
    import_math_functions,
    unmark,
    user,
)
from gradc.backends.numpy.short_reduce import short_axis_reduction
from gradc.errors import EmitError
from gradc.ir import dims
from gradc.ir.graph import Const, Graph, Var
from gradc.ir.registry import OPS
from gradc.ops import shape as shape_ops
from gradc.ops import spell
from gradc.ops.spell import USER_MARK
from gradc.passes.in_place import mark_in_place
from gradc.passes.vectorise_loops import vectorise_loops

_COMMENT = "__gradc_comment__"
_VIEW_OPS = {"reshape", "transpose", "index", "broadcast_to"}
_TEMPORARY = re.compile(r"t\d+(_\d+)?$")  # a name gradc made up (a user's name or ``x_bar`` stays)


@dataclass
class Function:
    """One function of an emitted module: its name, graph, docstring and return structure.

    ``returns`` nests output positions: ``0``, ``(0, 1)``, ``(0, (1, 2))``.
    """

    name: str
    graph: Graph
    doc: str
    returns: object = None
    sections: bool = False  # "# forward" / "# backward" comments
    defaults: dict | None = None  # parameter -> the default value the user's def gives it (Python literals)
    # (flag, structure): a keyword-only ``flag=False``; when true the function returns ``structure`` instead
    with_flag: tuple | None = None
    # (name, flag): check the arguments, then return the module's function ``name`` called with them and
    # ``flag=True`` (the one sweep a gradient and a value with it share)
    delegate: tuple | None = None


def uses_math_only(graphs) -> bool:
    """True when every value is a float64 scalar and every op has a ``math`` spelling."""
    for g in graphs:
        atoms = list(g.inputs) + [e.out for e in g.eqns] + [a for e in g.eqns for a in e.inputs]
        if any(a.type.shape != () or a.type.dtype != "f64" for a in atoms):
            return False
        if any(OPS[e.op].math is None for e in g.eqns):
            return False
    return bool(graphs)


class _ModuleState:
    """What the functions of one module share: constants and needed helpers."""

    def __init__(self, math_mode: bool):
        self.math_mode = math_mode
        self.constants: dict = {}  # Const.key() -> (name, Const)
        self.helpers: set = set()
        self.dtypes: dict = {}  # dtype name -> module-level name of the np.dtype (tested by identity)

    def dtype_name(self, dtype) -> str:
        return self.dtypes.setdefault(dtype.name, f"_{dtype.name}")

    def constant_name(self, const: Const) -> str:
        key = const.key()
        if key not in self.constants:
            self.constants[key] = (f"C{len(self.constants)}", const)
        return self.constants[key][0]


def _leading_complement(spec, shape):
    """Slices of the leading axis outside ``spec``, when ``spec`` is one step-1 slice of it; else None."""
    if not spec or spec[0][0] != "slice" or spec[0][3] not in (None, 1) or any(
            item != ("slice", None, None, None) for item in spec[1:]) or not isinstance(shape[0], int):
        return None
    start, stop, _ = slice(spec[0][1], spec[0][2]).indices(shape[0])
    parts = []
    if start > 0:
        parts.append(ast.Constant(0) if start == 1 else ast.Slice(None, ast.Constant(start), None))
    if stop < shape[0]:
        parts.append(ast.Constant(stop) if stop == shape[0] - 1 else ast.Slice(ast.Constant(stop), None, None))
    return parts


class _FunctionEmitter(ArgumentChecks):
    def __init__(self, fn: Function, state: _ModuleState, graph: Graph | None = None, scope=None, narrowed=None,
                 guarded=False, numpy_scalars=False):
        self.fn = fn
        self.graph = fn.graph if graph is None else graph  # a sub-graph (a loop body) shares the function's scope
        self.state = state
        self.flag = flag_name(fn.with_flag[0], self.graph) if fn.with_flag else None
        self.twin = None  # the name of the function's NumPy twin, where float scalars are Python's (fallback.py)
        self.guarded = guarded  # computes in a try with a NumPy twin: Python-float powers are math.pow
        self.numpy_scalars = numpy_scalars  # a NumPy twin: float64 scalar arguments become np.float64
        # the keyword flag's name is no value's
        self.scope = scope if scope is not None else Scope(self.graph, reserved=(self.flag,) if self.flag else ())
        self.narrowed = {} if narrowed is None else narrowed  # loop bodies' inputs bound to unbroadcast values
        self.sub = lambda g: _FunctionEmitter(fn, state, g, self.scope, self.narrowed, self.guarded,
                                              self.numpy_scalars)
        self.elided = elided_broadcasts(self.graph, self.narrowed)
        self.sources: dict = {}  # elided broadcast id -> expression of its source
        self._pending_vars: dict = {}  # id -> the value whose expression ``sources`` holds (written inline)
        self.chains, self.absorbed = accumulations(self.graph)
        self.inlined = single_use_values(self.graph)
        # an elided broadcast hands its source to each of its readers: an expression there would be repeated
        self.inlined -= {id(e.inputs[0]) for e in self.graph.eqns if id(e.out) in self.elided}
        if not state.math_mode:  # named adjoints (``t2_bar``) stay: they are what a reader looks for
            self.inlined -= {id(e.out) for e in self.graph.eqns if e.out.name.endswith("_bar")}

    def accumulate(self, eqn) -> list:
        """Terms at the same index summed first; the first index written, the others added.

        The buffer is ``np.empty`` with the rest zeroed when the first index is one
        slice of the leading axis (``x_bar[:-1] = a``, ``x_bar[999:] = 0.0``), else ``np.zeros``.
        """
        target, t = self.name_of(eqn.out), eqn.out.type
        groups: dict = {}
        for piece in self.chains[id(eqn.out)]:
            groups.setdefault(piece.params["spec"], []).append(self.atom(piece.inputs[0]))
        stmts = []
        for k, (spec, values) in enumerate(groups.items()):
            value = values[0]
            for other in values[1:]:
                value = ast.BinOp(value, ast.Add(), other)
            store = ast.Subscript(ast.Name(target, ast.Load()), shape_ops._spec_ast(spec), ast.Store())
            if k > 0:
                stmts.append(ast.AugAssign(store, ast.Add(), value))
                continue
            rest = _leading_complement(spec, t.shape)
            kwargs = {} if t.dtype == "f64" else {"dtype": spell.dotted(f"np.{t.np_dtype.name}")}
            alloc = "np.zeros" if rest is None else "np.empty"
            stmts.append(spell.assign(target, spell.call(alloc, spell.literal(tuple(t.shape)), **kwargs)))
            for part in rest or []:
                zero = ast.Subscript(ast.Name(target, ast.Load()), part, ast.Store())
                stmts.append(ast.Assign([zero], ast.Constant(0.0 if t.is_float else 0), lineno=0))
            stmts.append(ast.Assign([store], value, lineno=0))
        return stmts

    def atom(self, atom) -> ast.expr:
        if isinstance(atom, Const):
            if atom.is_scalar:
                return scalar_literal(const_value_for_literal(atom), self.state.math_mode)
            return ast.Name(self.state.constant_name(atom), ast.Load())
        if id(atom) in self.sources:
            self._pending_vars.pop(id(atom), None)  # read by its one consumer: no longer pending
            return self.sources[id(atom)]
        return ast.Name(self.name_of(atom), ast.Load())

    def name_of(self, var) -> str:
        """The Python name of ``var``: its IR name, made unique across the function's nested graphs."""
        return user(self.scope.name(var))

    def statements(self, eqn) -> list:
        if eqn.op == "call":
            return emit_call(self, eqn)
        if eqn.op in CONTROL_OPS:
            return emit_control(self, eqn)
        if id(eqn.out) in self.elided:
            self.sources[id(eqn.out)] = self.atom(eqn.inputs[0])
            return []
        if id(eqn.out) in self.absorbed:
            return []
        if id(eqn.out) in self.chains:
            return self.accumulate(eqn)
        op = OPS[eqn.op]
        spelling = op.math if self.state.math_mode and op.math is not None else op.np
        if eqn.op == "pow" and self.guarded and eqn.out.type.shape == ():  # Python's ** may make a complex number
            spelling = op.math
        if spelling is None:
            raise EmitError(f"op {eqn.op} has no NumPy spelling")
        before = self.before_in_place(eqn) if eqn.params.get("in_place") else []
        args = [self.atom(a) for a in eqn.inputs]
        result = short_axis_reduction(eqn, args) if not self.state.math_mode else None
        if result is None:
            result = spelling(args, eqn.params, eqn.out.type, self.name_of(eqn.out))
        for a, arg in zip(eqn.inputs, args):  # a spelling that repeats an operand gets it by name
            if id(a) in self.sources and id(a) not in self.elided and occurrences(arg, result) > 1 and not \
                    isinstance(self.sources[id(a)], (ast.Name, ast.Constant)):
                before.append(spell.assign(self.name_of(a), self.sources.pop(id(a))))
        if before:
            args = [self.atom(a) for a in eqn.inputs]
            result = short_axis_reduction(eqn, args) if not self.state.math_mode else None
            if result is None:
                result = spelling(args, eqn.params, eqn.out.type, self.name_of(eqn.out))
        if isinstance(result, list):
            if self.numpy_scalars and eqn.op == "check_raise":  # a twin raises inside its caller's except
                result = [_without_context(st) for st in result]
            return before + result
        limit = MAX_INLINE_SCALAR_OPS if self.state.math_mode else MAX_INLINE_OPS
        if id(eqn.out) in self.inlined and operation_count(result) <= limit:
            self.sources[id(eqn.out)] = result
            self._pending_vars[id(eqn.out)] = eqn.out
            return before
        return before + [spell.assign(self.name_of(eqn.out), result)]

    def before_in_place(self, eqn) -> list:
        """Before an update written into its operand: the expressions pending inline (read once, written where
        read) computed now, since they may read the array about to change; the result takes the operand's name
        (``out[i] = v``, no ``t10 = out``) when the operand is a variable nothing else names."""
        keep = {id(a) for a in eqn.inputs}
        stmts = []
        for key, var in list(self._pending_vars.items()):
            if key not in keep and key in self.sources:
                del self._pending_vars[key]
                stmts.append(spell.assign(self.name_of(var), self.sources.pop(key)))
        target = eqn.inputs[0]
        current = self.scope.names.get(id(eqn.out))
        if isinstance(target, Var) and id(target) not in self.sources and (
                current is None or _TEMPORARY.match(current)):
            self.scope.names[id(eqn.out)] = self.scope.name(target)
            self.scope.keep.append(eqn.out)
        return stmts

    def body(self) -> list:
        stmts = self.checks()
        if self.fn.delegate is not None:
            name, flag = self.fn.delegate
            call = spell.call(user(name), *(ast.Name(user(p), ast.Load()) for p in self.graph.params),
                              **{flag_name(flag, self.graph): ast.Constant(True)})
            return stmts + [ast.Return(call)]
        computed_from = len(stmts)
        backward: set = set()
        in_backward = False
        if self.fn.sections:
            stmts.append(_comment("forward"))
        forward_at = len(stmts)
        for eqn in self.graph.eqns:
            reads_backward = any(isinstance(a, Var) and id(a) in backward for a in eqn.inputs)
            # a loop re-issued by reverse mode to write its tape is still the forward loop
            is_backward = reads_backward or eqn.params.get("adjoint", False) or (
                eqn.out.name in self.graph.adjoint and eqn.op not in CONTROL_OPS)
            emitted = self.statements(eqn)
            if is_backward:
                backward.add(id(eqn.out))
                if self.fn.sections and not in_backward and emitted:
                    if len(stmts) == forward_at:  # nothing before the adjoint (a linear function): no section
                        stmts.pop()
                    stmts.append(_comment("backward"))
                    in_backward = True
            stmts.extend(emitted)
        if self.twin is not None and not all(_is_comment(st) for st in stmts[computed_from:]):
            call = fallback.twin_call(self.twin, [user(p) for p in self.graph.params], self.flag)
            stmts[computed_from:] = fallback.guard(stmts[computed_from:], call)
        if self.fn.with_flag is not None:
            structure = self.fn.with_flag[1]
            stmts.append(ast.If(ast.Name(self.flag, ast.Load()), [ast.Return(self.returns(structure))], []))
        stmts.append(ast.Return(self.returns()))
        return stmts

    # ---- results
    def returns(self, structure=None) -> ast.expr:
        exprs = self.output_exprs()
        if structure is None:
            structure = self.fn.returns if self.fn.returns is not None else (
                0 if len(exprs) == 1 else tuple(range(len(exprs))))

        def build(node):
            if isinstance(node, tuple):
                return ast.Tuple([build(n) for n in node], ast.Load())
            return exprs[node]
        return build(structure)

    def output_exprs(self) -> list:
        """Outputs, copied where they could alias an argument, a read-only view or each other."""
        may_alias = {id(v) for v in self.graph.inputs}
        producers = {id(e.out): e for e in self.graph.eqns}
        for eqn in self.graph.eqns:
            if eqn.op in _VIEW_OPS and isinstance(eqn.inputs[0], Var) and (
                    id(eqn.inputs[0]) in may_alias or eqn.op == "broadcast_to"):
                may_alias.add(id(eqn.out))
            elif eqn.op in CONTROL_OPS or eqn.op == "element":  # a loop of no trips hands its input back
                if any(id(a) in may_alias or isinstance(a, Const) for a in eqn.inputs):
                    may_alias.add(id(eqn.out))
        seen: set = set()
        exprs = []
        for out in self.graph.outputs:
            expr = self.atom(out)
            scalar = out.type.shape == ()
            producer = producers.get(id(out)) if isinstance(out, Var) else None
            if not scalar and producer is not None and producer.op == "broadcast_to" and isinstance(
                    producer.inputs[0], Const) and producer.inputs[0].is_scalar:
                expr = self.full(out, producer.inputs[0])
            elif not scalar and (isinstance(out, Const) or id(out) in may_alias or id(out) in seen):
                expr = spell.method_call(expr, "copy")
            seen.add(id(out))
            exprs.append(expr)
        return exprs

    def full(self, out: Var, const: Const) -> ast.expr:
        kwargs = {} if out.type.dtype == "f64" else {"dtype": spell.dotted(f"np.{out.type.np_dtype.name}")}
        return spell.call("np.full", spell.literal(out.type.shape), self.atom(const), **kwargs)

    def function_def(self) -> ast.FunctionDef:
        body = [ast.Expr(ast.Constant(self.fn.doc))] + self.body()
        params = self.graph.params
        defaults = []
        for p in reversed(params):  # the trailing parameters with a default in the user's def keep it
            if not self.fn.defaults or p not in self.fn.defaults:
                break
            defaults.insert(0, spell.literal(self.fn.defaults[p]))
        args = ast.arguments(posonlyargs=[], args=[ast.arg(user(p)) for p in params], vararg=None,
                             kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=defaults)
        if self.fn.with_flag is not None:
            args.kwonlyargs, args.kw_defaults = [ast.arg(self.flag)], [ast.Constant(False)]
        fdef = ast.FunctionDef(user(self.fn.name), args, body, [], None, lineno=0)
        fdef.scope_names = self.scope.used
        return fdef


class _HelperEmitter(_FunctionEmitter):
    """A helper's body as a module-level function: a generated name, no argument checks (its callers are the
    module's own functions) unless it reads named sizes from its inputs."""

    def checks(self) -> list:
        return super().checks() if needs_checks(self.graph) else []

    def function_def(self) -> ast.FunctionDef:
        fdef = super().function_def()
        fdef.name = self.fn.name
        return fdef


def _helper_doc(name: str, body: Graph) -> str:
    ins = ", ".join(f"{v.name}: {v.type}" for v in body.inputs)
    outs = ", ".join(str(o.type) for o in body.outputs)
    return f"Helper {name}({ins}) -> {outs}."


# ops spelled with a Python operator that raises on Python floats (1.0 / 0.0, 0.0 ** -1.0, 1.0 % 0.0); NumPy's
# functions do not raise on them
_RAISING_OPERATORS = frozenset({"div", "pow", "mod", "floor_divide"})


def _needs_twin(graph: Graph) -> bool:
    """Whether a float64 scalar argument comes in as a Python float and meets an operator that may raise on it."""
    if not any(v.type.shape == () and v.type.dtype == "f64" for v in graph.inputs):
        return False
    pending = [graph]
    while pending:  # sub-graphs nest as deep as the user's loops, not as long as the program
        g = pending.pop()
        for e in g.eqns:
            if e.op in _RAISING_OPERATORS and e.out.type.shape == ():
                return True
            for value in e.params.values():
                pending.extend(v for v in (value if isinstance(value, tuple) else (value,)) if isinstance(v, Graph))
    return False


def flag_name(base: str, graph: Graph) -> str:
    """The keyword flag's name (``with_value``), with ``_`` appended while a parameter or named size has it."""
    taken = set(graph.params) | {s.name for v in graph.inputs for s in dims.symbols_of(v.type.shape)}
    while base in taken:
        base += "_"
    return base


def _without_context(stmt: ast.stmt) -> ast.stmt:
    """``raise E(...) from None`` for each ``raise`` in ``stmt``: no chained traceback of the fast path's error."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Raise):
            node.cause = ast.Constant(None)
    return stmt


def _is_comment(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and str(stmt.value.value).startswith(
        _COMMENT)


def _comment(text: str) -> ast.stmt:
    return ast.Expr(ast.Constant(f"{_COMMENT} {text}"))


def emit_module(functions: list, header: list | None = None, numpy_twins: bool = True) -> str:
    """Source text of a module defining ``functions`` (a list of :class:`Function`).

    Float scalar arguments are Python floats; with ``numpy_twins`` each function reading one (and each
    of all-scalar code) returns its NumPy twin's result where Python raises (``fallback.py``).
    """
    for f in functions:  # a __name__ set to anything (a keyword, "x²") cannot name a def
        if not f.name.isidentifier() or keyword.iskeyword(f.name):
            raise EmitError(f"cannot emit a Python function named {f.name!r}: not an identifier", where="",
                            hint="give the function a name that is a Python identifier (its __name__)")
    # loops of independent iterations become whole-array operations (gradc.passes.vectorise_loops); then index
    # updates whose operand is dead afterwards write into it (gradc.passes.in_place)
    vectorised: dict = {}
    functions = [dataclasses.replace(f, graph=mark_in_place(vectorise_loops(f.graph, vectorised))) for f in functions]
    bodies = helper_bodies([f.graph for f in functions])  # each helper kept as a function: written once
    state = _ModuleState(uses_math_only([f.graph for f in functions] + bodies))
    state.helper_names = HelperNames(bodies, taken={f.name for f in functions})
    # a helper's own updates run in place too (its inputs are the caller's: never written); the call equations keep
    # naming the unmarked body, the key of its name
    helper_emitters = [_HelperEmitter(Function(name, mark_in_place(body), _helper_doc(name, body)), state)
                       for name, body in state.helper_names.unique]
    emitters = [_FunctionEmitter(f, state) for f in functions]
    twins = []  # (name, emitter) of the NumPy twins (see fallback.py)
    if numpy_twins:
        numpy_state = copy.copy(state)  # the same constants, dtypes and helpers
        numpy_state.math_mode = False
        for em in emitters:
            if em.fn.delegate is None and (state.math_mode or _needs_twin(em.fn.graph)):
                em.twin, em.guarded = fallback.twin_name(em.fn.name), True
                doc = f"{em.fn.doc.rstrip('.')}, as NumPy computes it (where Python floats raise)."
                twin = dataclasses.replace(em.fn, doc=doc, sections=False, defaults=None)
                twins.append((em.twin, _FunctionEmitter(twin, numpy_state, numpy_scalars=True)))
    defs = [em.function_def() for em in helper_emitters] + [em.function_def() for em in emitters]
    for name, em in twins:
        defs.append(em.function_def())
        defs[-1].name = name
    body: list = []
    blobs: dict = {}  # placeholder -> a large constant's hex (gradc.backends.numpy.literals)
    for name, const in state.constants.values():
        body.append(spell.assign(name, array_constant_expr(const, blobs)))
    for dtype, name in sorted(state.dtypes.items()):
        body.append(spell.assign(name, spell.call("np.dtype", ast.Constant(dtype))))
    body += defs
    texts = [text for key, text in [("array", helpers.ARRAY_CHECK), ("bad", helpers.BAD_ARGUMENT),
                                    ("sized", helpers.SIZED_CHECK),
                                    ("scalar", helpers.SCALAR_ARG), ("static", helpers.STATIC_CHECK)]
             if key in state.helpers]
    module = ast.Module(body=body, type_ignores=[])
    fresh_broadcasts(module)  # small broadcasts as np.full/np.zeros: a tenth of the time of np.broadcast_to
    from_math = import_math_functions(module) if state.math_mode else []
    text = _unparse(module)
    texts += list(dict.fromkeys(src for name, src in sorted(spell.HELPERS.items())  # ops' own algorithms
                                if re.search(rf"\b{name}\(", text)))
    # every name the emitter marked as the user's (parameters, values, named sizes, loop names), read off the text
    users = set(re.findall(rf"{USER_MARK}(\w+)", text))
    generated = [name for name, _ in state.constants.values()] + list(state.dtypes.values()) + [
        name for name, _ in twins] + from_math + [name for name, _ in state.helper_names.unique]
    always = ("np", "math", "scipy")
    if collides(users, always, texts, generated):  # a user's np, float or C0 renames the generated one
        alias = finish(module, always=always, helpers=texts)
        text = unmark(_unparse(module))
    else:
        alias = {name: name for name in always}
        text = unmark("".join([text, *(helper_source(t) for t in texts)]))
    text = _format(text)
    used = {name for name in alias.values() if re.search(rf"\b{name}\.", text)}  # np. but not xnp.
    needs_numpy = alias["np"] in used
    needs_math = alias["math"] in used or not (needs_numpy or from_math)
    imports = ([import_line("math", alias["math"])] if needs_math else []) \
        + ([f"from math import {', '.join(from_math)}"] if from_math else []) + (
        [import_line("numpy", alias["np"])] if needs_numpy else [])
    if alias["scipy"] in used:  # triangular solves, expm, special functions: NumPy has none
        modules = sorted(set(re.findall(rf"\b{alias['scipy']}\.(\w+)", text)))  # each subpackage the code uses
        imports += [f"import scipy.{m}" for m in modules] + (
            [f"{alias['scipy']} = scipy"] if alias["scipy"] != "scipy" else [])
    lines = [python_comment(h) for h in (header or [])] + imports  # file names and commands, escaped
    for placeholder, data in blobs.items():  # large constants' bytes, left out of the scans above
        text = text.replace(placeholder, data)
    return "\n".join(lines) + "\n\n\n" + text + "\n"


def _unparse(module: ast.Module) -> str:
    try:  # statements carry lineno=0 where unparse needs one; fix_missing_locations costs ~15% of a compile
        return ast.unparse(module)
    except AttributeError:  # a spelling made a statement without a lineno
        return ast.unparse(ast.fix_missing_locations(module))


_PARENTHESISED_TARGETS = re.compile(r"^(\s*)\(([A-Za-z_][\w]*(?:, [A-Za-z_][\w]*)+)\) = ")
# ``ast.unparse`` brackets the later comparisons of a long ``or`` (``... or (X.dtype is not _float64)``)
_BRACKETED_CHECK = re.compile(r" or \((\w+\.(?:shape\[\d+\]|ndim|dtype) (?:!=|<|is not) [^()]+)\)")


def _format(text: str) -> str:
    """Comments from markers; two blank lines between top-level definitions (PEP 8); ``a, b = ...`` as Python
    3.11's ``ast.unparse`` writes it (3.10's adds parentheses), so the module is the same on every version."""
    out = []
    for line in text.split("\n"):
        line = _PARENTHESISED_TARGETS.sub(r"\1\2 = ", line)
        if line.lstrip().startswith("if "):  # an argument check
            line = _BRACKETED_CHECK.sub(r" or \1", line)
        stripped = line.strip()
        if stripped.startswith(f"'{_COMMENT} ") or stripped.startswith(f'"{_COMMENT} '):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# {stripped[len(_COMMENT) + 2:-1]}")
            continue
        if line.startswith("def ") and out and out[-1] != "":
            out += ["", ""]
        elif line.startswith("def ") and out and out[-1] == "" and (len(out) < 2 or out[-2] != ""):
            out.append("")
        out.append(line)
    return "\n".join(out)
