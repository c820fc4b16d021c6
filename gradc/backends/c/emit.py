"""Emit graphs as one self-contained C99 translation unit (and its header).

Arrays are row-major and contiguous at the ABI; inside a function a value may
be a *view* (offset and strides into another value's storage) so transposes,
broadcasts and basic slices cost no code. Runs of elementwise equations of one
shape become one loop whose body is each op's C (its SymPy spelling printed once per op and operand kinds by
SymPy's C99 printer, ``fused``) in the program's order, a value read twice a ``const`` temporary, in ``float``
where all its float values are float32, else in ``double``. Inside such loops exp, log, log1p, expm1, tanh,
sinh, cosh, sin, cos and tan are gradc's vectorisable versions (``c_mathlib``) unless the loop calls libm
anyway (sin, cos and tan are right up to ``|x| = 2**20``: the loop notes larger arguments, and a second loop,
only then, recomputes those elements with libm's); in scalar code and loops that stay scalar, sin, cos and tan
are gradc's scalar ones (a branch to libm's beyond ``2**20``, about twice as fast as glibc's below). A loop of
short rows around vector math reads row-major copies of its broadcast operands and runs flat. Reductions, matmul,
concatenation, indexing and small dense linear algebra are plain loops (``c_loops``, ``linalg``).
Loops and branches of the program (``scan``, ``while_loop``, ``cond``) stay ``for``/``while``/``if``
statements whose bodies are emitted by a nested emitter (``control``, ``FunctionEmitter.nested``).
Helpers the program calls (``call`` equations) stay functions: each distinct body is one ``static``
function of the unit, emitted once before its callers, each call a C call (``calls``, ``call_graph``).

No heap allocation and no mutable static state: work arrays live on the
stack up to ``STACK_LIMIT`` bytes per function, beyond that in a caller-given
``work`` buffer of ``NAME_work_size()`` bytes (8-byte aligned).

Named sizes (``f64[n,3]``, ``gradc.ir.dims``): a function whose inputs have them takes each as a
first ``long`` argument, in the order of the names (``size_params``); loop bounds, strides and
offsets are SymPy expressions of them printed as C (``values.dim_c``), its work arrays are all in
``work``, and ``NAME_work_size(long n)`` takes the same sizes. Ops whose lowering needs numbers
(small dense linear algebra, index tables, structured control flow) are refused at once (``unsized_ops``).

>>> import numpy as np
>>> from gradc.trace import trace
>>> print(emit_function(trace(lambda x: np.sin(x) * 2.0, np.ones(3)), "f", ["value"])[1])
void f(const double *restrict x, double *restrict value)
{
    /* t0 = sin x
     * t2 = mul t0 t1 */
    for (long k = 0; k < 3; ++k) {
        value[k] = 2.0*gradc_sin_scalar(x[k]);
    }
}
"""
from __future__ import annotations

import re

import numpy as np
import sympy as sp

from gradc.backends.c import blas, lapack
from gradc.backends.c import mathlib as c_mathlib
from gradc.backends.c.bounds import check_work, work_guard
from gradc.backends.c.call_outputs import prune_call_outputs
from gradc.backends.c.calls import CallLowerings, call_table, lent_work
from gradc.backends.c.checks import CheckLowerings
from gradc.backends.c.constant_fills import constant_location, fill_constants
from gradc.backends.c.control import ControlLowerings, limits_doc, loop_limits
from gradc.backends.c.fft import FftLowerings
from gradc.backends.c.fused import FusedRun
from gradc.backends.c.in_place import InPlaceStorage, sink_reads
from gradc.backends.c.linalg_complex import COMPLEX_LINALG
from gradc.backends.c.loops import LoopLowerings
from gradc.backends.c.lowering import C_LOWERING, unsupported_ops
from gradc.backends.c.mathlib import fft as fft_mathlib
from gradc.backends.c.names import assign, fresh
from gradc.backends.c.reduce_fusion import fused_products
from gradc.backends.c.scalar_types import INT_DTYPES
from gradc.backends.c.slots import SlotPool
from gradc.backends.c.threads import openmp_enabled, parallel_for
from gradc.backends.c.values import (
    C_TYPES,
    STACK_LIMIT,
    Loc,
    Module,
    dim_c,
    eqn_text,
    known,
    loops,
    size,
    size_names,
    sym_const,
)
from gradc.backends.c.vectorise import (
    LIBM_MATH,
    VECTOR_MATH,
    VECTOR_MIN,
    compute_dtype,
    float_only,
    short_rows,
    vectorises,
)
from gradc.backends.escape import c_comment
from gradc.errors import EmitError
from gradc.ir.dims import is_dim_expr, is_symbolic, symbols_of
from gradc.ir.graph import Const, Var, subgraphs
from gradc.ir.types import TensorType
from gradc.passes.in_place import mark_in_place

# a run whose expression written out as a tree (a value read twice counted twice) would grow past this many nodes
# starts a new fused loop, reading the values before it from memory: it bounds a loop's body and the arguments of
# sin, cos and tan written out in terms of the loop's reads (the test for the fix-up loop, see group)
MAX_TREE = 48


# the C lowerings that compute on complex values (C99's complex.h, the type-generic functions of tgmath.h):
# elementwise ops, reductions, contractions, the moves of data and the dense linear algebra: eig, det_phase
# and LU's solve and slogdet (gradc.backends.c.linalg_eig), the rest of linalg_complex
COMPLEX_LOWERINGS = frozenset({"view", "reshape", "matmul", "outer", "concatenate", "gather",
                               "gather_grad", "index_grad", "index_add", "index_update", "size", "eye_like",
                               "fft_lines", "triangle", "call", "eig", "det_phase", "scan", "while_loop", "cond",
                               *COMPLEX_LINALG})
# the elementwise ops C99 defines on complex values and the sums and products (no ordering: <, max, sign, floor
# are real-only)
COMPLEX_SCALAR_OPS = frozenset({
    "sum", "mean", "prod", "add", "sub", "mul", "div", "pow", "neg", "exp", "log", "sqrt", "sin", "cos", "tan",
    "sinh", "cosh", "tanh", "abs", "real", "imag", "conj", "astype", "where", "equal", "not_equal", "broadcast_to",
    "element", "cumsum", "cumprod", "stop_gradient"})  # element: an item of a tuple-valued result, moved as it is


def complex_values(graph) -> list:
    """Sorted names of the ops of ``graph`` (sub-graphs included) that read or make a complex value in C
    where their lowering computes on real values only."""
    found = set()
    stack = [graph]
    while stack:
        g = stack.pop()
        for e in g.eqns:
            lowering = C_LOWERING.get(e.op)
            if lowering is not None and (lowering[0] in COMPLEX_LOWERINGS or e.op in COMPLEX_SCALAR_OPS):
                continue
            if any(getattr(a.type, "is_complex", False) for a in [*e.inputs, e.out]):
                found.add(e.op)
            stack.extend(p for p in e.params.values() if hasattr(p, "eqns"))
    return sorted(found)


def has_half_values(graph) -> bool:
    """Whether any value of ``graph`` (its sub-graphs included) is float16, which C99 has no type for."""
    stack = [graph]
    while stack:
        g = stack.pop()
        if any(getattr(v.type, "dtype", None) == "f16" for v in g.inputs):
            return True
        for e in g.eqns:
            if any(getattr(getattr(v, "type", None), "dtype", None) == "f16" for v in [*e.inputs, e.out]):
                return True
            stack.extend(subgraphs(e))
    return False


class FunctionEmitter(LoopLowerings, ControlLowerings, CheckLowerings, InPlaceStorage, CallLowerings, FftLowerings):
    """Lowers one graph to the body of one C function."""

    def __init__(self, graph, fname, out_params, module=None, max_trips=None, check=True, sizes=None):
        if check and has_half_values(graph):  # C99 has no float16: computing in float would round otherwise
            raise EmitError(f"target c does not compute in float16 (the values of {graph.name} are float16)",
                            where=graph.origin or None,
                            hint="use target='numpy' (NumPy's float16 rules), or pass .astype(np.float32) inputs")
        bad = unsupported_ops(graph) if check else []
        if bad:
            raise EmitError(f"no C lowering for op{'s' if len(bad) > 1 else ''} {', '.join(bad)} in {graph.name}",
                            where=graph.origin or None, hint="use target='numpy' for this function")
        complex_ops = complex_values(graph) if check else []
        if complex_ops:
            raise EmitError(f"target c computes {', '.join(complex_ops)} on real values only, not on the complex "
                            f"values of {graph.name}", where=graph.origin or None,
                            hint="use target='numpy' for this function")
        bad = unsized_ops(graph) if check else []
        if bad:
            raise EmitError(f"target c does not take named sizes for op{'s' if len(bad) > 1 else ''} "
                            f"{', '.join(bad)} yet (in {graph.name})", where=graph.origin or None,
                            hint="give these operands fixed sizes, or use target='numpy' for this function")
        self.size_cnames = dict(sizes or {})  # named size -> its C parameter (see size_params)
        self.graph, self.fname, self.out_params = graph, fname, out_params
        self.module = module or Module()
        self.lines: list = []
        self.indent = 1
        self.arrays: list = []  # (cname, ctype, size)
        self.loc: dict = {}
        self.used_inputs: set = set()
        self.temps = 0  # temporaries q0, q1, ... of fused loops, numbered across the whole function
        self.copy_holders: list = []
        self.depth = 0  # loops around the code being emitted (a loop's counter is j<depth>)
        self.busy: set = set()  # arrays the nested graphs of the current equation use
        self.lent: list = []  # arrays those nested graphs added: free for this emitter after the equation
        self.max_trips = max_trips  # the default bound of tapes of unknown length (see control.loop_limits)
        self.limits: list = []
        self.bound: dict = {}  # arrays of the enclosing code this nested graph may write (see in_place)

    # ---------------------------------------------------------------- helpers
    def emit(self, line):
        self.lines.append("    " * self.indent + line)

    def open(self, lines):
        for line in lines:
            self.emit(line)
            self.indent += 1

    def close(self, n):
        for _ in range(n):
            self.indent -= 1
            self.emit("}")

    def atom_loc(self, atom) -> Loc:
        if isinstance(atom, Const):
            if atom.value.ndim == 0:
                return Loc("", (), value=sym_const(atom.value[()]), dtype=atom.type.dtype)
            return constant_location(self, atom)  # a static, a repeating slice, or a table filled at the top
        if id(atom) in self.input_ids:
            self.used_inputs.add(id(atom))
        return self.loc[id(atom)]

    def storage(self, var) -> Loc:
        """A fresh location for ``var``: its output parameter, a scalar local or a work array."""
        t = var.type
        if id(var) in self.direct_out:
            loc = Loc(self.direct_out[id(var)], t.shape, dtype=t.dtype)
        else:
            name = fresh(var.name, self.taken)  # e.g. x_bar_ when the output parameter is x_bar
            self.taken.add(name)
            loc = Loc(name, t.shape, local=t.shape == (), dtype=t.dtype)
            if t.shape != ():
                self.place(var, loc)
        self.loc[id(var)] = loc
        return loc

    def place(self, var, loc):
        """Give ``loc`` an array: a new one, or one whose values are all dead by now (declared as an alias)."""
        ctype, n = C_TYPES[var.type.dtype], size(var.type.shape)
        # the smallest that fits (first of equals: deterministic)
        slot = self.pool.best_free(self.segment, self.busy, lambda ct, m: ct == ctype and known(m >= n, False),
                                   _slot_order)
        if slot is not None:
            slot[3].append(id(var))
            self.pool.taken(slot)
            self.emit(f"{ctype} *const {loc.name} = {slot[0]};  /* {slot[0]} is dead from here: reuse it */")
            return
        self.pool.add((loc.name, ctype, n, [id(var)]))
        self.arrays.append((loc.name, ctype, n))

    def free_slots(self) -> list:
        """Arrays whose values are all dead here (and no nested graph of this equation is using), oldest first."""
        return self.pool.free_at(self.segment, self.busy)

    def target(self, loc, idx, declare=False) -> str:
        if loc.local:
            return f"{C_TYPES[loc.dtype]} {loc.name}" if declare else loc.name
        return loc.at(idx)

    # ---------------------------------------------------------------- planning
    def plan(self, bindings=None):
        """Segments, value lifetimes and output places; ``bindings``: the input locations of a nested graph."""
        g = self.graph
        produced = {id(e.out): e for e in g.eqns}
        self.direct_out, self.copies = {}, []
        if bindings is not None:  # a loop body or branch: its outputs are read by the loop, never written to params
            self.input_ids = set()
            for v, loc in zip(g.inputs, bindings):
                self.loc[id(v)] = loc
            self.copies = [(None, out) for out in g.outputs]
        else:
            self.input_ids = {id(v) for v in g.inputs}
            cnames = assign([v.name for v in g.inputs])  # the same in every function of the unit (see build)
            self.taken = set(cnames.values()) | set(self.out_params) | set(self.size_cnames.values())
            for v in g.inputs:
                self.loc[id(v)] = Loc(cnames[v.name], v.type.shape, dtype=v.type.dtype)
        for param, out in zip(self.out_params, g.outputs):
            e = produced.get(id(out)) if isinstance(out, Var) else None
            if e is not None and C_LOWERING[e.op][0] not in ("view", "reshape", "element") \
                    and id(out) not in self.direct_out:
                self.direct_out[id(out)] = param
            else:
                self.copies.append((param, out))
        self.elements = {}  # id(tuple value) -> {index: [element equations]}
        for e in g.eqns:
            if e.op == "element":
                self.elements.setdefault(id(e.inputs[0]), {}).setdefault(e.params["index"], []).append(e)
        segments, group = [], None
        group_ids: set = set()
        tree: dict = {}  # id(value) -> the size of its expression written out as a tree, in its group
        self.fused = fused_products(g)  # products read by a sum in its loop, never stored (reduce_fusion)
        unstored = {id(m) for m in self.fused.values()}
        for e in sink_reads(g.eqns):
            if id(e) in unstored:
                continue
            kind = C_LOWERING[e.op][0]
            if kind == "scalar":
                fits = group is not None and group[0].out.type.shape == e.out.type.shape
                if fits and 1 + sum(tree.get(id(a), 1) for a in e.inputs) <= MAX_TREE:
                    group.append(e)
                else:
                    group, tree = [e], {}  # values of earlier runs are read from memory: one node each
                    segments.append(("group", group))
                tree[id(e.out)] = 1 + sum(tree.get(id(a), 1) for a in e.inputs)
                group_ids.add(id(e.out))
                continue
            if kind == "view" and group is not None and not any(id(a) in tree for a in e.inputs):
                segments.insert(len(segments) - 1, ("op", e))  # no code: hoist above the loop (the group is last)
                continue
            group = None
            segments.append(("op", e))
        self.segments = segments
        uses: dict = {}
        group_of = {}
        for n, (kind, item) in enumerate(segments):
            eqns = item if kind == "group" else [item] + ([self.fused[id(item)]] if id(item) in self.fused else [])
            for e in eqns:
                group_of[id(e.out)] = n
                for a in e.inputs:
                    uses.setdefault(id(a), set()).add(n)
        outs = {id(o) for o in g.outputs}
        self.materialize = {i for i in group_ids
                            if i in outs or any(n != group_of[i] for n in uses.get(i, ()))}
        # last segment reading each value; a view keeps the value it reads from alive as long as itself
        self.last = {i: max(ns) for i, ns in uses.items()}
        for _, out in self.copies:
            self.last[id(out)] = len(segments)
        for e in reversed(g.eqns):
            if C_LOWERING[e.op][0] in ("view", "reshape"):
                src = id(e.inputs[0])
                self.last[src] = max(self.last.get(src, -1), self.last.get(id(e.out), -1))
        self.pool = SlotPool(self.last)  # the work arrays: (name, ctype, size, ids of the values stored there)
        self.segment = 0

    # ---------------------------------------------------------------- lowering
    def body(self) -> list:
        self.limits = loop_limits(self.graph, self.max_trips, marked=True)
        self.plan()
        fill_constants(self, [self.graph])
        self.run_segments()
        loop_results = {id(e.out) for items in self.elements.values() for es in items.values() for e in es}
        self.aliased = {}  # work array -> the output parameter it is (see output_array)
        for param, out in self.copies:
            src, note = self.atom_loc(out), f"{param} = {_name(out)}"
            if id(out) in loop_results and src.value is None and src.name != out.name:
                if self.output_array(src, out.type, param):
                    self.emit(f"/* {param} = {_name(out)}, the loop's {src.name}: kept in {param} all along */")
                    continue
                note += f", the loop's {src.name}"  # a loop's result lives where the loop kept it
            self.copy(Loc(param, out.type.shape, dtype=out.type.dtype), src, note)
        unused = [f"(void){self.loc[id(v)].name};" for v in self.graph.inputs if id(v) not in self.used_inputs]
        return ["    " + u for u in unused] + self.lines

    def output_array(self, src: Loc, type_, param) -> bool:
        """Whether the work array holding a loop's result (``src``) can be the output ``param`` itself, making
        the final copy unneeded: an array of exactly the output's size and type, read as a whole. Whatever else
        it held before went to the output's memory, which nothing reads (outputs overlap no input)."""
        if param is None or not src.standard or src.offset != 0 or src.local or type_.shape == () \
                or src.name in self.aliased \
                or param in self.aliased.values():
            return False
        entry = next((a for a in self.arrays if a[0] == src.name), None)
        if entry is None or entry[1] != C_TYPES[type_.dtype] or entry[2] != size(type_.shape):
            return False
        self.aliased[src.name] = param
        return True

    def run_segments(self):
        for n, (kind, item) in enumerate(self.segments):
            self.segment = n
            if kind == "group":
                self.group(item)
            else:
                getattr(self, "op_" + C_LOWERING[item.op][0])(item)
            # the arrays of a loop body or branch are dead once it is done: later code may reuse them
            for slot in self.lent:
                self.pool.add(slot)
            self.busy, self.lent = set(), []

    def nested(self, graph, bindings, depth, writable=()):
        """Emit ``graph`` (a loop body or branch) here, its inputs at ``bindings``; returns its outputs' locations.

        The nested emitter writes into this function's lines, arrays and names; arrays dead here are lent
        to it, and the arrays it used are free again once the equation is done (``run_segments``). It may
        also overwrite the arrays bound to the inputs at the positions ``writable`` once it has read them.
        """
        sub = FunctionEmitter(graph, self.fname, [], self.module, check=False, sizes=self.size_cnames)
        sub.lines, sub.indent, sub.arrays, sub.taken = self.lines, self.indent, self.arrays, self.taken
        sub.temps, sub.copy_holders, sub.depth = self.temps, self.copy_holders, depth
        sub.filled = getattr(self, "filled", {})  # the tables computed at the function's top
        sub.limits, sub.max_trips = self.limits, self.max_trips
        sub._counter_ranges = self.counter_ranges  # a loop counter's range holds in the loops nested in it
        sub.plan(bindings)
        self.lend_for_writing(sub, [graph.inputs[n] for n in writable], [bindings[n] for n in writable])
        lent = self.free_slots()  # arrays dead here are free in the nested graph (its values are not ours)
        for slot in lent:
            sub.pool.add(slot)
        sub.run_segments()
        self.temps = sub.temps
        self.busy.update(slot[0] for slot in sub.pool.slots)
        self.lent.extend(sub.pool.slots[len(lent):])  # the nested graph's own arrays (after the lent ones)
        return [sub.atom_loc(o) for o in graph.outputs]

    def group(self, eqns):
        shape = eqns[0].out.type.shape
        stores = []
        for e in eqns:
            if id(e.out) in self.materialize:
                stores.append((e.out, self.storage(e.out)))
        inside = {id(e.out): n for n, e in enumerate(eqns)}
        reads = {id(a): self.atom_loc(a) for e in eqns for a in e.inputs if id(a) not in inside}
        flat = all(loc.standard or loc.value is not None or loc.local for loc in reads.values())
        if not flat and short_rows(shape) and known(size(shape) >= VECTOR_MIN, True) \
                and any(e.op in VECTOR_MATH for e in eqns) and not any(e.op in LIBM_MATH for e in eqns):
            # rows too short to vectorise well around vector math: read contiguous copies, loop once
            for key, loc in reads.items():
                if not (loc.standard or loc.value is not None or loc.local):
                    reads[key] = self.contiguous_copy(loc)
            flat = True
        ints = any(a.type.dtype in INT_DTYPES for e in eqns for a in [*e.inputs, e.out])  # (SymPy's is_integer costs)
        texts = [eqn_text(e) for e in eqns]
        self.emit("/* " + c_comment(texts[0]) + (" */" if len(texts) == 1 else ""))
        for n, text in enumerate(texts[1:], 2):
            self.emit(" * " + c_comment(text) + (" */" if n == len(texts) else ""))
        if shape == ():
            idx, loop_lines = [], []
        elif flat:
            idx, loop_lines = None, [f"for (long k = 0; k < {dim_c(size(shape))}; ++k) {{"]
        else:
            loop_lines, idx = loops(shape)
        operands = [[self.operand(a, inside, reads, idx) for a in e.inputs] for e in eqns]
        targets = []
        for var, loc in stores:
            where = loc.flat("k") if idx is None and not loc.local else self.target(loc, idx or [], declare=True)
            targets.append((inside[id(var)], "const " + where if loc.local else where))
        # float where every float value of the run is float32, else double; inside a loop the vectorisable math
        dtype = compute_dtype(eqns)
        ctypes = ["int" if e.out.type.dtype == "bool" else "int64_t" if e.out.type.dtype in INT_DTYPES
                  else C_TYPES[_temporary_dtype(dtype, e.out.type.dtype)] for e in eqns]
        run = FusedRun(eqns, operands, targets, ctypes, ints, dtype, float_only(eqns), self.temps)
        vector = known(size(shape) >= VECTOR_MIN, True) and dtype not in ("c64", "c128")  # a named size: large
        lines = run.lines(vector=True) if vector else None
        if vector and not all(vectorises(line) for line in lines):
            vector = False  # a libm call (arctan, pow, ...) keeps the loop scalar, where libm's exp and log are faster
        if not vector:
            lines = run.lines(vector=False)
        limited = run.limited() if vector else []
        if limited:
            # gradc_sin, gradc_cos and gradc_tan are right up to |x| = 2**20 (float: 2**28) only: the loop notes
            # a larger argument (an or of a comparison: it still vectorises), and a second loop, only then,
            # recomputes those elements by the scalar versions, which branch to libm's
            flag = f"q{run.next_temp}"
            run.next_temp += 1
            fabs = "fabsf" if dtype == "f32" else "fabs"
            power = int(c_mathlib.LIMITS[dtype]).bit_length() - 1
            limit = f"0x1p{power}" + ("F" if dtype == "f32" else "")
            big = " | ".join(f"({fabs}({a}) > {limit})" for a in limited)  # no branch: | not ||
            self.emit(f"int {flag} = 0;  /* whether an argument of sin, cos or tan is beyond 2**{power}: libm's */")
            lines.append(f"{flag} |= {big};")
        pragma = parallel_for(size(shape), self.module.openmp, flag if limited else None) \
            if loop_lines and not self.depth else None
        if pragma:  # each thread writes its own elements: the same results as one thread
            self.emit(pragma)
        self.open(loop_lines)
        for line in lines:
            self.emit(self.module.note_calls(line))
        self.close(len(loop_lines))
        if limited:
            self.open([f"if ({flag}) {{", *loop_lines, f"if ({big}) {{"])
            for line in run.lines(vector=False):
                self.emit(self.module.note_calls(line))
            self.close(len(loop_lines) + 2)
        self.temps = run.next_temp

    def operand(self, atom, inside, reads, idx) -> tuple:
        """An input of a fused run: ``("value", n)`` (its equation ``n``), ``("const", v)`` or ``("read", C)``."""
        if id(atom) in inside:
            return ("value", inside[id(atom)])
        loc = reads[id(atom)]
        if loc.value is not None:
            return ("const", sp.sympify(loc.value))
        return ("read", loc.flat("k") if idx is None else loc.at(idx))

    def scratch(self, base: str, dtype: str, count) -> str:
        """The name of a work array of ``count`` elements of ``dtype`` that this segment alone uses (a packed
        operand, a factorisation's workspace): an array dead by now, else a new one; free again after it."""
        name = fresh(base, self.taken)
        self.taken.add(name)
        holder = _Copy(TensorType((count,), dtype))
        self.copy_holders.append(holder)  # alive while the emitter is: place() tracks it by id
        self.last[id(holder)] = self.segment
        self.place(holder, Loc(name, (count,), dtype=dtype))
        return name

    def contiguous_copy(self, loc) -> Loc:
        """A row-major copy of the view ``loc`` in a work array that is dead after this segment."""
        name = fresh(loc.name + "_rows", self.taken)
        self.taken.add(name)
        copy = Loc(name, loc.shape, dtype=loc.dtype)
        holder = _Copy(TensorType(loc.shape, loc.dtype))
        self.copy_holders.append(holder)  # alive while the emitter is: place() tracks it by id
        self.last[id(holder)] = self.segment  # read in this segment only
        self.place(holder, copy)
        self.copy(copy, loc, f"{name}: {loc.name} read in row-major order, so the loop below is one flat loop")
        return copy


def _temporary_dtype(compute: str, dtype: str) -> str:
    """The C type of a temporary in a run computing in ``compute``: a real value of a complex run stays real
    (C99's real functions, atan2 and the comparisons, take no complex argument)."""
    if compute in ("c64", "c128") and dtype not in ("c64", "c128"):
        return "f32" if compute == "c64" else "f64"
    return compute


def _name(atom):
    return atom.name if isinstance(atom, Var) else "constant"


def _slot_order(n):
    """Work arrays by size ``n``: fixed sizes first, smallest first; named sizes after them, by their text."""
    return (1, 0, dim_c(n)) if is_dim_expr(n) else (0, n, "")


class _Copy:
    """The value of a contiguous copy, for the work-array planner (which knows values by ``type`` and ``id``)."""

    def __init__(self, type_):
        self.type = type_


def emit_function(graph, fname, out_params, module=None, max_trips=None, sizes=None, static=False, stack=None):
    """``(prototype, definition, work_bytes)`` of one C function computing ``graph``'s outputs.

    The bodies of the helpers it calls are emitted first, once per unit, into ``module`` (``calls``);
    ``static``: the function is one of those bodies (no linkage); ``stack``: the bytes of work arrays it may keep
    on its stack (default ``STACK_LIMIT``; beyond, all are in ``work``).

    A function with bounded loops (``control.loop_limits``) returns ``int``: 0, or the number of the
    loop that would have run past its bound; the others return ``void``. A graph whose inputs have
    named sizes (``f64[n,3]``) takes each as a first ``long`` argument, in the order of the names
    (``sizes``: their C names, see ``size_params``); its work arrays are then all in ``work``, and
    ``work_bytes`` is a SymPy expression of the sizes.
    """
    sizes = size_params([graph], []) if sizes is None else {k: v for k, v in sizes.items()
                                                            if k in _size_names(graph)}
    module = module or Module()
    call_table(module).prepare(graph, module, max_trips, emit_function, size_params)
    em = FunctionEmitter(graph, fname, out_params, module, max_trips=max_trips, sizes=sizes)
    with size_names(sizes):
        body = em.body()
        if em.limits:
            body.append("    return 0;")
        work = sum(8 * _words(n, ct) for _, ct, n in em.arrays)
        lent = lent_work(graph, module)  # the first words of work: for the bodies it calls
        # restrict: the ABI promises no overlap, which lets the compiler keep sums in registers and vectorise
        params = [f"long {c}" for c in sizes.values()]
        params += [f"const {C_TYPES[v.type.dtype]} *restrict {em.loc[id(v)].name}" for v in graph.inputs]
        params += [f"{C_TYPES[o.type.dtype]} *restrict {p}" for p, o in zip(out_params, graph.outputs)]
        decls, heap = [], is_dim_expr(work) or work > (STACK_LIMIT if stack is None else stack)
        offset = (lent + 7) // 8 if not is_dim_expr(lent) else sp.expand(lent / 8)  # (8 per word already)
        for name, ctype, n_elems in em.arrays:
            if name in em.aliased:  # a loop's result: computed in the output itself (FunctionEmitter.output_array)
                decls.append(f"    {ctype} *restrict {name} = {em.aliased[name]};")
                offset += _words(n_elems, ctype) if heap else 0
            elif heap:
                decls.append(f"    {ctype} *restrict {name} = ({ctype} *)(work + {dim_c(offset)});")
                offset += _words(n_elems, ctype)
            else:
                decls.append(f"    {ctype} {name}[{max(n_elems, 1)}];")
    unused = [f"    (void){c};" for c in sizes.values() if not re.search(rf"\b{c}\b", "\n".join(decls + body))]
    lends = is_dim_expr(offset) or offset > 0
    if heap or lends:
        params.append("double *work")
    if not is_dim_expr(offset):
        check_work(graph.name, 8 * offset, where=graph.origin or None)
    proto = f"{'static ' if static else ''}{'int' if em.limits else 'void'} {fname}({', '.join(params)})"
    text = "\n".join([proto, "{"] + decls + unused + body + ["}"])
    return proto, text, (8 * offset if heap or lends else 0)


def _words(n_elems, ctype):
    """8-byte words of a work array (a named size: one word per element, enough for any C type)."""
    if is_dim_expr(n_elems):
        return n_elems
    return (n_elems * np.dtype(_NP[ctype]).itemsize + 7) // 8


def _size_names(graph) -> list:
    """The named sizes of ``graph``'s inputs, sorted by name."""
    return [s.name for s in symbols_of([d for v in graph.inputs for d in getattr(v.type, "shape", None) or ()])]


def size_params(graphs, taken) -> dict:
    """The C parameter of each named size of ``graphs``' inputs, in the order of the names (the user's name
    unless C, an input or an output buffer (``taken``) has it).

    >>> import gradc
    >>> from gradc.trace import trace
    >>> size_params([trace(lambda x, v: x @ v, gradc.spec("f64[n,k]"), gradc.spec("f64[k]"))], [])
    {'k': 'k_', 'n': 'n'}
    """
    taken = set(taken)
    for g in graphs:
        taken |= set(assign([v.name for v in g.inputs]).values())
    out: dict = {}
    for name in sorted({n for g in graphs for n in _size_names(g)}):
        out[name] = fresh(name, taken)
        taken.add(out[name])
    return out


def sizes_doc(sizes) -> list:
    """The header's lines on the named-size arguments (none without named sizes).

    >>> sizes_doc({"k": "k_", "n": "n"})[1]
    'Named sizes: k (as the argument k_), n. Each function whose arrays have named sizes takes them first,'
    """
    if not sizes:
        return []
    names = ", ".join(name if c == name else f"{name} (as the argument {c})" for name, c in sizes.items())
    return ["", f"Named sizes: {names}. Each function whose arrays have named sizes takes them first,",
            "as `long` arguments in this order (the order of the names), before the arrays; each must be at",
            "least 1 and equal the extent of every array axis of that name (the C code trusts this; the",
            "Python entry points check it). Such a function keeps all its work arrays in `work`, of",
            "NAME_work_size(sizes...) bytes; that is SIZE_MAX ((size_t)-1) when a size is below 1 or the",
            "buffer would pass 2**62 bytes: do not call the function with those sizes."]


# op kinds the emitter lowers with named sizes in their shapes (the others need numbers: see unsized_ops)
SIZED_KINDS = frozenset({"scalar", "view", "reshape", "reduce", "argreduce", "concatenate", "index_grad",
                         "cumulative", "matmul", "outer", "eye_like", "triangle", "size", "call", "element"})


def unsized_ops(graph) -> list:
    """Sorted names of the ops of ``graph`` whose C lowering needs fixed sizes and that have named ones.

    >>> import numpy as np, gradc
    >>> from gradc.trace import trace
    >>> unsized_ops(trace(lambda x: np.sum(np.sin(x)), gradc.spec("f64[n]")))
    []
    """
    def named(t):
        items = getattr(t, "items", None)
        if items is not None:
            return any(named(i) for i in items)
        return is_symbolic(getattr(t, "shape", None))

    return sorted({e.op for e in graph.eqns if (C_LOWERING.get(e.op) or ("",))[0] not in SIZED_KINDS
                   and any(named(a.type) for a in [*e.inputs, e.out])})


# a complex constant from its parts (C11's CMPLX is not C99; re + im*I would turn an infinite part into NaNs):
# C99 lays a complex number out as an array of two reals
COMPLEX_CONSTANT = """static inline double _Complex gradc_complex(double re, double im)
{
    union { double _Complex z; double parts[2]; } u;
    u.parts[0] = re;
    u.parts[1] = im;
    return u.z;
}"""

_NP = {"double": np.float64, "float": np.float32, "int64_t": np.int64, "int32_t": np.int32, "unsigned char": np.uint8,
       "double _Complex": np.complex128, "float _Complex": np.complex64}


def emit_c(functions, header_lines, guard, max_trips=None):
    """``(source, header)`` for ``functions``: a list of ``(graph, name, out_params, doc)``.

    ``max_trips`` bounds the tapes of loops whose trip count is known only when they run (default
    ``control.DEFAULT_MAX_TRIPS``); the header lists each bounded loop and its status code.
    """
    module = Module()
    module.openmp = openmp_enabled()
    defs, protos = [], []
    # index updates and accumulations of scatters in loops as the in-place pass writes and orders them (the
    # emitter writes in place only where its own lifetimes allow: see in_place.py)
    # (first, calls return only the results their callers read: see call_outputs.py)
    pruned: dict = {}
    functions = [(mark_in_place(prune_call_outputs(g, pruned)), name, outs, doc) for g, name, outs, doc in functions]
    sizes = size_params([g for g, *_ in functions], [p for _, _, outs, _ in functions for p in outs])
    header_lines = list(header_lines) + sizes_doc(sizes)
    header_lines += limits_doc([(g, name) for g, name, _, _ in functions], max_trips)
    for graph, fname, out_params, doc in functions:
        proto, text, work = emit_function(graph, fname, out_params, module, max_trips, sizes=sizes)
        own = [c for name, c in sizes.items() if name in _size_names(graph)]
        with size_names(sizes):
            checked = []
            if is_dim_expr(work) and sp.sympify(work).free_symbols:  # a run-time size: SIZE_MAX when too large
                checked = [f"    if ({work_guard(work, sizes)})", "        return (size_t)-1;  /* see the header */"]
            used = "\n".join(checked + [dim_c(work)])
            returned = "\n".join([f"    (void){c};" for c in own if not re.search(rf"\b{c}\b", used)] + checked
                                 + [f"    return {dim_c(work)};"])
        signature = f"size_t {fname}_work_size({', '.join(f'long {c}' for c in own) or 'void'})"
        protos.append((proto, doc, fname, signature))
        defs.append(f"/* {c_comment(doc)} */\n{text}\n\n{signature}\n{{\n{returned}\n}}")
    if ("gradc_blas", "pointers") in module.statics:  # large products: the loader gives the unit a BLAS
        setter = functions[0][1]
        header_lines += ["", f"Matrix products of at least {blas.BLAS_MIN} multiply-adds call the BLAS's dgemm/sgemm "
                             f"(Fortran ABI) given by {setter}_use_blas(dgemm, sgemm), once, before any other call "
                             "(gradc's Python loader does so); until then, or given nulls, gradc's own kernels run."]
        defs.append(blas.setter_text(setter))
        protos.append((None, None, setter, None))
    if ("gradc_lapack", "pointers") in module.statics:  # eig: the loader gives the unit LAPACK's geev
        setter = functions[0][1]
        header_lines += ["", lapack.header_line(setter)]
        defs.append(lapack.setter_text(setter))
        protos.append((None, "lapack", setter, None))
    comment = ["/* " + c_comment(header_lines[0])] + [" * " + c_comment(line) if line else " *"
                                                      for line in header_lines[1:]] + [" */"]
    library = module.library()
    includes = ["#include <math.h>", "#include <stddef.h>", "#include <stdint.h>"]
    statics = module.definitions()
    if "_Complex" in "\n".join(defs + statics):  # complex values (also only in a helper): C99's complex.h, and
        includes += ["#include <complex.h>", "#include <tgmath.h>", "", COMPLEX_CONSTANT]  # tgmath.h: exp(z) is cexp
    includes += ["#include <string.h>"] if library else []
    includes += list(fft_mathlib.INCLUDES) if any("gradc_fft_any(" in text for text in library) else []
    library_text = ["\n\n".join(library), ""] if library else []
    source = "\n".join(comment + [""] + includes + [""] + library_text + statics + ([""] if statics else [])
                       + ["\n\n".join(defs)])
    # C and C++ callers alike: C linkage, and no `restrict` (not C++; top-level qualifiers of parameters
    # do not change a function's type, so these declarations match the restrict-qualified definitions)
    hdr = comment + ["", f"#ifndef {guard}", f"#define {guard}", "", "#include <stddef.h>", "#include <stdint.h>", "",
                     "#ifdef __cplusplus", 'extern "C" {', "#endif", ""]
    for proto, doc, fname, signature in protos:
        if proto is None:  # the BLAS (LAPACK) setter
            hdr += [f"{(lapack if doc == 'lapack' else blas).setter_prototype(fname)};", ""]
            continue
        hdr += [f"/* {c_comment(doc)} */", proto.replace(" *restrict ", " *") + ";", f"{signature};", ""]
    hdr += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */"]
    return source + "\n", "\n".join(hdr) + "\n"
