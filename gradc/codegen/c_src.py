"""Emit graphs as one self-contained C99 translation unit (and its header).

Arrays are row-major and contiguous at the ABI; inside a function a value may
be a *view* (offset and strides into another value's storage) so transposes,
broadcasts and basic slices cost no code. Runs of elementwise equations of one
shape become one loop whose body is SymPy expressions, shared subexpressions
taken out by ``sympy.cse``, printed by SymPy's C99 printer. Reductions,
matmul, concatenation and indexing are plain loops written here.

No heap allocation and no mutable static state: work arrays live on the
stack up to ``STACK_LIMIT`` bytes per function, beyond that in a caller-given
``work`` buffer of ``NAME_work_size()`` bytes (8-byte aligned).

>>> import numpy as np
>>> from gradc.trace import trace
>>> print(emit_function(trace(lambda x: np.sin(x) * 2.0, np.ones(3)), "f", ["value"])[1])
void f(const double *x, double *value)
{
    /* t0 = sin x
     * t2 = mul t0 t1 */
    for (long k = 0; k < 3; ++k) {
        value[k] = 2.0*sin(x[k]);
    }
}
"""
from __future__ import annotations

import re

import numpy as np
import sympy as sp
from sympy.printing.c import C99CodePrinter

from gradc.codegen.c_ops import C_LOWERING, unsupported_ops
from gradc.errors import EmitError
from gradc.ir.graph import Const, Var
from gradc.ops.shape import spec_to_numpy

C_TYPES = {"f64": "double", "f32": "float", "i64": "int64_t", "i32": "int32_t", "bool": "unsigned char"}
STACK_LIMIT = 65536  # bytes of work arrays a function keeps on the stack
_C_KEYWORDS = set("""auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef union unsigned void
volatile while work acc best value k""".split())
_GENERATED = re.compile(r"^(i|q|C|G|a)\d+$")


class _Printer(C99CodePrinter):
    """SymPy's C99 printer, with ternaries on one line and booleans as 0/1."""

    def __init__(self):
        super().__init__({"user_functions": {"trunc": "trunc"}})

    def _print_Piecewise(self, expr):
        *cases, last = expr.args
        text = self._print(last.expr)
        for e, c in reversed(cases):
            text = f"({self._print(c)} ? {self._print(e)} : {text})"
        return text

    def _print_BooleanTrue(self, expr):
        return "1"

    def _print_BooleanFalse(self, expr):
        return "0"


PRINTER = _Printer()


def c_name(name: str) -> str:
    """An IR name as a C identifier that cannot clash with C or with generated names."""
    return name + "_" if name in _C_KEYWORDS or _GENERATED.match(name) else name


def _std_strides(shape):
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


def _size(shape):
    return int(np.prod(shape, dtype=np.int64))


class Loc:
    """Where a value's elements are: ``name[offset + sum(strides * index)]``, a scalar local, or a constant."""

    def __init__(self, name, shape, offset=0, strides=None, value=None, local=False, dtype="f64"):
        self.name, self.shape, self.offset = name, tuple(shape), offset
        self.strides = _std_strides(shape) if strides is None else tuple(strides)
        self.value, self.local, self.dtype = value, local, dtype

    @property
    def standard(self):
        return self.value is None and self.strides == _std_strides(self.shape)

    def at(self, idx) -> str:
        if self.value is not None:
            return PRINTER.doprint(self.value)
        if self.local:
            return self.name
        terms = [str(self.offset)] if self.offset else []
        for s, i in zip(self.strides, idx):
            if s:
                terms.append(i if s == 1 else f"{s}*{i}")
        return f"{self.name}[{' + '.join(terms) or '0'}]"

    def flat(self, k: str) -> str:
        """Element ``k`` in row-major order (standard locations only)."""
        if self.value is not None or self.local:
            return self.at(())
        return f"{self.name}[{self.offset} + {k}]" if self.offset else f"{self.name}[{k}]"

    def physical(self) -> np.ndarray:
        """Index into ``name`` of every element, as an array of the value's shape."""
        phys = np.full(self.shape, self.offset, dtype=np.int64)
        for axis, s in enumerate(self.strides):
            shape = [1] * len(self.shape)
            shape[axis] = self.shape[axis]
            phys = phys + s * np.arange(self.shape[axis]).reshape(shape)
        return phys


def _loops(shape):
    """Lines opening one ``for`` per axis (indices ``i0, i1, ...``) and the index names."""
    names = [f"i{a}" for a in range(len(shape))]
    return [f"for (long {n} = 0; {n} < {d}; ++{n}) {{" for n, d in zip(names, shape)], names


def _literal(value, dtype) -> str:
    v = value.item() if isinstance(value, np.generic) else value
    if dtype in ("f64", "f32"):
        v = float(v)
        if v != v:
            return "NAN"
        if v in (float("inf"), float("-inf")):
            return "INFINITY" if v > 0 else "-INFINITY"
        return repr(v)
    return str(int(v))


def _sym_const(value):
    v = value.item() if isinstance(value, np.generic) else value
    if isinstance(v, bool):
        return sp.true if v else sp.false
    if isinstance(v, int):
        return sp.Integer(v)
    return sp.Float(v) if np.isfinite(v) else (sp.nan if v != v else (sp.oo if v > 0 else -sp.oo))


def _eqn_text(eqn) -> str:
    args = " ".join(a.name if isinstance(a, Var) else repr(a.value.item()) if a.value.ndim == 0 else "<array>"
                    for a in eqn.inputs)
    params = "".join(f" {k}={v}" for k, v in sorted(eqn.params.items()) if k not in ("spec", "count"))
    return f"{eqn.out.name} = {eqn.op} {args}{params}".replace("*/", "* /")


class Module:
    """What the functions of one translation unit share: constant arrays and index tables."""

    def __init__(self):
        self.statics: dict = {}  # key -> (name, definition line)

    def static(self, prefix, ctype, values, key_extra=()) -> str:
        key = (prefix, ctype, tuple(values), key_extra)
        if key not in self.statics:
            name = f"{prefix}{sum(1 for k in self.statics if k[0] == prefix)}"
            dtype = {"double": "f64", "float": "f32"}.get(ctype, "i64")
            body = ", ".join(_literal(v, dtype) for v in values) or "0"
            self.statics[key] = (name, f"static const {ctype} {name}[{max(len(values), 1)}] = {{{body}}};")
        return self.statics[key][0]

    def definitions(self) -> list:
        return [line for _, line in self.statics.values()]


class FunctionEmitter:
    """Lowers one graph to the body of one C function."""

    def __init__(self, graph, fname, out_params, module=None):
        bad = unsupported_ops(graph)
        if bad:
            raise EmitError(f"no C lowering for op{'s' if len(bad) > 1 else ''} {', '.join(bad)} in {graph.name}",
                            where=graph.origin or None, hint="use target='numpy' for this function")
        self.graph, self.fname, self.out_params = graph, fname, out_params
        self.module = module or Module()
        self.lines: list = []
        self.indent = 1
        self.arrays: list = []  # (cname, ctype, size)
        self.loc: dict = {}
        self.used_inputs: set = set()
        self.temps = 0  # cse temporaries q0, q1, ... numbered across the whole function

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
                return Loc("", (), value=_sym_const(atom.value[()]), dtype=atom.type.dtype)
            ctype = C_TYPES[atom.type.dtype]
            name = self.module.static("C", ctype, atom.value.reshape(-1).tolist(), atom.type.shape)
            return Loc(name, atom.type.shape, dtype=atom.type.dtype)
        if id(atom) in self.input_ids:
            self.used_inputs.add(id(atom))
        return self.loc[id(atom)]

    def storage(self, var) -> Loc:
        """A fresh location for ``var``: its output parameter, a scalar local or a work array."""
        t = var.type
        if id(var) in self.direct_out:
            loc = Loc(self.direct_out[id(var)], t.shape, dtype=t.dtype)
        elif t.shape == ():
            loc = Loc(c_name(var.name), (), local=True, dtype=t.dtype)
        else:
            loc = Loc(c_name(var.name), t.shape, dtype=t.dtype)
            self.arrays.append((loc.name, C_TYPES[t.dtype], _size(t.shape)))
        self.loc[id(var)] = loc
        return loc

    def target(self, loc, idx, declare=False) -> str:
        if loc.local:
            return f"{C_TYPES[loc.dtype]} {loc.name}" if declare else loc.name
        return loc.at(idx)

    # ---------------------------------------------------------------- planning
    def plan(self):
        g = self.graph
        self.input_ids = {id(v) for v in g.inputs}
        for v in g.inputs:
            self.loc[id(v)] = Loc(c_name(v.name), v.type.shape, dtype=v.type.dtype)
        produced = {id(e.out): e for e in g.eqns}
        self.direct_out, self.copies = {}, []
        for param, out in zip(self.out_params, g.outputs):
            e = produced.get(id(out)) if isinstance(out, Var) else None
            if e is not None and C_LOWERING[e.op][0] not in ("view", "reshape") and id(out) not in self.direct_out:
                self.direct_out[id(out)] = param
            else:
                self.copies.append((param, out))
        segments, group = [], None
        group_ids: set = set()
        for e in g.eqns:
            kind = C_LOWERING[e.op][0]
            if kind == "scalar":
                if group is not None and group[0].out.type.shape == e.out.type.shape:
                    group.append(e)
                else:
                    group = [e]
                    segments.append(("group", group))
                group_ids.add(id(e.out))
                continue
            if kind == "view" and group is not None and not any(id(a) in {id(x.out) for x in group}
                                                                for a in e.inputs):
                segments.insert(segments.index(("group", group)), ("op", e))  # no code: hoist above the loop
                continue
            group = None
            segments.append(("op", e))
        self.segments = segments
        uses: dict = {}
        group_of = {}
        for n, (kind, item) in enumerate(segments):
            eqns = item if kind == "group" else [item]
            for e in eqns:
                group_of[id(e.out)] = n
                for a in e.inputs:
                    uses.setdefault(id(a), set()).add(n)
        outs = {id(o) for o in g.outputs}
        self.materialize = {i for i in group_ids
                            if i in outs or any(n != group_of[i] for n in uses.get(i, ()))}

    # ---------------------------------------------------------------- lowering
    def body(self) -> list:
        self.plan()
        for kind, item in self.segments:
            if kind == "group":
                self.group(item)
            else:
                getattr(self, "op_" + C_LOWERING[item.op][0])(item)
        for param, out in self.copies:
            self.copy(Loc(param, out.type.shape, dtype=out.type.dtype), self.atom_loc(out), f"{param} = {_name(out)}")
        unused = [f"(void){c_name(v.name)};" for v in self.graph.inputs if id(v) not in self.used_inputs]
        return ["    " + u for u in unused] + self.lines

    def sym(self, loc, idx):
        if loc.value is not None:
            return loc.value
        s = sp.Symbol(loc.at(idx), real=True)
        return sp.Ne(s, 0) if loc.dtype == "bool" else s

    def group(self, eqns):
        shape = eqns[0].out.type.shape
        exprs: dict = {}
        stores = []
        for e in eqns:
            if id(e.out) in self.materialize:
                stores.append((e.out, self.storage(e.out)))
        reads = {id(a): self.atom_loc(a) for e in eqns for a in e.inputs if id(a) not in {id(x.out) for x in eqns}}
        flat = all(loc.standard or loc.value is not None or loc.local for loc in reads.values())
        texts = [_eqn_text(e) for e in eqns]
        self.emit("/* " + texts[0] + (" */" if len(texts) == 1 else ""))
        for n, text in enumerate(texts[1:], 2):
            self.emit(" * " + text + (" */" if n == len(texts) else ""))
        if shape == ():
            idx, opened = [], 0
        elif flat:
            self.open([f"for (long k = 0; k < {_size(shape)}; ++k) {{"])
            idx, opened = None, 1
        else:
            lines, idx = _loops(shape)
            self.open(lines)
            opened = len(lines)
        for e in eqns:
            args = []
            for a in e.inputs:
                if id(a) in exprs:
                    args.append(exprs[id(a)])
                else:
                    loc = reads[id(a)]
                    if idx is None:
                        args.append(self.sym_flat(loc))
                    else:
                        args.append(self.sym(loc, idx))
            fn = C_LOWERING[e.op][1]
            exprs[id(e.out)] = fn(args, e.params, [a.type for a in e.inputs], e.out.type)
        names = sp.numbered_symbols("q", start=self.temps)
        temps, reduced = sp.cse([exprs[id(v)] for v, _ in stores], symbols=names)
        self.temps += len(temps)
        for sym, expr in temps:
            ctype = "int" if isinstance(expr, sp.logic.boolalg.Boolean) else "double"
            self.emit(f"const {ctype} {sym} = {PRINTER.doprint(expr)};")
        for (_, loc), expr in zip(stores, reduced):
            where = loc.flat("k") if idx is None and not loc.local else self.target(loc, idx or [], declare=True)
            if loc.local:
                where = "const " + where
            self.emit(f"{where} = {PRINTER.doprint(expr)};")
        self.close(opened)

    def sym_flat(self, loc):
        if loc.value is not None:
            return loc.value
        s = sp.Symbol(loc.flat("k"), real=True)
        return sp.Ne(s, 0) if loc.dtype == "bool" else s

    def copy(self, dst, src, comment):
        self.emit(f"/* {comment} */")
        lines, idx = _loops(src.shape)
        self.open(lines)
        self.emit(f"{dst.at(idx) if not dst.local else dst.name} = {src.at(idx)};")
        self.close(len(lines))

    def op_view(self, e):
        src = self.atom_loc(e.inputs[0])
        shape = e.out.type.shape
        if e.op == "transpose":
            perm = e.params["perm"]
            loc = Loc(src.name, shape, src.offset, [src.strides[p] for p in perm], src.value, src.local, src.dtype)
        elif e.op == "broadcast_to":
            lead = len(shape) - len(src.shape)
            strides = [0] * lead + [0 if d == 1 and n != 1 else s
                                    for s, d, n in zip(src.strides, src.shape, shape[lead:])]
            loc = Loc(src.name, shape, src.offset, strides, src.value, src.local, src.dtype)
            if src.local:
                loc.local = False  # a broadcast scalar local reads as the local at every index
                loc.value = sp.Symbol(src.name, real=True) if src.dtype != "bool" else sp.Ne(
                    sp.Symbol(src.name, real=True), 0)
        else:  # basic index
            loc = _index_view(src, e.params["spec"], shape)
        self.loc[id(e.out)] = loc

    def op_reshape(self, e):
        src = self.atom_loc(e.inputs[0])
        shape = e.out.type.shape
        if src.standard or src.value is not None:
            self.loc[id(e.out)] = Loc(src.name, shape, src.offset, None, src.value, src.local, src.dtype)
            if src.local and shape != ():
                self.loc[id(e.out)].local, self.loc[id(e.out)].value = False, sp.Symbol(src.name, real=True)
            return
        out = self.storage(e.out)
        self.copy(Loc(out.name, src.shape, dtype=out.dtype), src, _eqn_text(e) + ": copy of a strided view")

    def op_reduce(self, e):
        x = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        axes, keep = e.params["axes"], e.params["keepdims"]
        init = {"sum": "0", "mean": "0", "prod": "1", "max": "-INFINITY", "min": "INFINITY"}[e.op]
        self.emit(f"/* {_eqn_text(e)} */")
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name} = {init};")
        else:
            self.each(out, f"@ = {init};")
        lines, idx = _loops(x.shape)
        self.open(lines)
        out_idx = [("0" if a in axes else i) for a, i in enumerate(idx) if keep or a not in axes]
        o, v = self.target(out, out_idx), x.at(idx)
        step = {"sum": f"{o} += {v};", "mean": f"{o} += {v};", "prod": f"{o} *= {v};",
                "max": f"if ({v} > {o}) {o} = {v};", "min": f"if ({v} < {o}) {o} = {v};"}[e.op]
        self.emit(step)
        self.close(len(lines))
        if e.op == "mean":
            if out.local:
                self.emit(f"{out.name} /= {e.params['count']};")
            else:
                self.each(out, f"@ /= {e.params['count']};")

    def op_argreduce(self, e):
        x = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        axis = e.params["axis"] if e.params["axis"] is not None else 0
        cmp = ">" if e.op == "argmax" else "<"
        self.emit(f"/* {_eqn_text(e)} */")
        rest = [d for a, d in enumerate(x.shape) if a != axis]
        lines, idx = _loops(rest)
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name};")
        self.open(lines or ["{"])
        full = list(idx[:axis]) + ["best"] + list(idx[axis:])
        probe = list(idx[:axis]) + ["j"] + list(idx[axis:])
        self.emit("long best = 0;")
        self.open([f"for (long j = 1; j < {x.shape[axis]}; ++j) {{"])
        self.emit(f"if ({x.at(probe)} {cmp} {x.at(full)}) best = j;")
        self.close(1)
        self.emit(f"{self.target(out, idx)} = best;")
        self.close(len(lines) or 1)

    def op_matmul(self, e):
        a, b = (self.atom_loc(x) for x in e.inputs)
        out = self.storage(e.out)
        na, nb = len(a.shape), len(b.shape)
        kdim = a.shape[-1]
        if nb >= 2 and b.strides[-1] == 1 and b.value is None and not out.local and out.shape[-1] > 1:
            return self.matmul_rows(e, a, b, out, kdim)
        lines, idx = _loops(out.shape)
        if na == 1 and nb == 1:
            ia, ib = ["k"], ["k"]
        elif na == 1:
            ia, ib = ["k"], ["k", idx[0]]
        elif nb == 1:
            ia, ib = [idx[0], "k"], ["k"]
        else:
            ia, ib = idx[:-1] + ["k"], idx[:-2] + ["k", idx[-1]]
        self.emit(f"/* {_eqn_text(e)} */")
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name};")
        self.open(lines or ["{"])
        self.emit(f"{C_TYPES[out.dtype]} acc = 0;")
        self.open([f"for (long k = 0; k < {kdim}; ++k) {{"])
        self.emit(f"acc += {a.at(ia)} * {b.at(ib)};")
        self.close(1)
        self.emit(f"{self.target(out, idx)} = acc;")
        self.close(len(lines) or 1)

    def matmul_rows(self, e, a, b, out, kdim):
        """``out[i, :] = sum_k a[i, k] * b[k, :]``: the inner loop runs along rows of ``b`` and ``out``."""
        lines, idx = _loops(out.shape[:-1])
        ia = idx + ["k"] if len(a.shape) >= 2 else ["k"]
        ib = (idx[:-1] if len(a.shape) >= 2 else []) + ["k", "j"]
        n = out.shape[-1]
        self.emit(f"/* {_eqn_text(e)} (row by row) */")
        self.open(lines or ["{"])
        self.open([f"for (long j = 0; j < {n}; ++j) {{"])
        self.emit(f"{out.at(idx + ['j'])} = 0;")
        self.close(1)
        self.open([f"for (long k = 0; k < {kdim}; ++k) {{"])
        self.emit(f"const {C_TYPES[out.dtype]} aik = {a.at(ia)};")
        self.open([f"for (long j = 0; j < {n}; ++j) {{"])
        self.emit(f"{out.at(idx + ['j'])} += aik * {b.at(ib)};")
        self.close(2)
        self.close(len(lines) or 1)

    def op_outer(self, e):
        a, b = (self.atom_loc(x) for x in e.inputs)
        out = self.storage(e.out)
        lines, idx = _loops(out.shape)
        self.emit(f"/* {_eqn_text(e)} */")
        self.open(lines)
        self.emit(f"{out.at(idx)} = {a.at(idx[:1])} * {b.at(idx[1:])};")
        self.close(len(lines))

    def op_concatenate(self, e):
        out = self.storage(e.out)
        axis, start = e.params["axis"], 0
        self.emit(f"/* {_eqn_text(e)} */")
        for x in e.inputs:
            src = self.atom_loc(x)
            dst = Loc(out.name, src.shape, out.offset + start * out.strides[axis], out.strides, dtype=out.dtype)
            lines, idx = _loops(src.shape)
            self.open(lines)
            self.emit(f"{dst.at(idx)} = {src.at(idx)};")
            self.close(len(lines))
            start += src.shape[axis]

    def each(self, out, statement):
        """``statement`` (with ``@`` for the element) for every element of ``out``, row-major."""
        if out.shape == ():
            self.emit(statement.replace("@", out.at(())))
            return
        self.open([f"for (long k = 0; k < {_size(out.shape)}; ++k) {{"])
        self.emit(statement.replace("@", out.flat("k")))
        self.close(1)

    def zero(self, out):
        self.each(out, "@ = 0;")

    def op_index_grad(self, e):
        ct = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        self.emit(f"/* {_eqn_text(e)}: zeros with ct written at the index */")
        self.zero(out)
        view = _index_view(out, e.params["spec"], ct.shape)
        lines, idx = _loops(ct.shape)
        self.open(lines)
        self.emit(f"{view.at(idx)} = {ct.at(idx)};")
        self.close(len(lines))

    def gather_tables(self, x_loc, arrays, spec, out_shape):
        """Index tables: base[k] (physical index from slices and ints) and, per index array, pos[k]."""
        items = list(spec) + [("slice", None, None, None)] * (len(x_loc.shape) - len(spec))
        probe_shape, axis, positions = [], 0, []
        for item in items:
            if item[0] == "array":
                probe_shape.append(_size(arrays[item[1]].shape))
                positions.append((item[1], axis))
            if item[0] != "new":
                if item[0] != "array":
                    probe_shape.append(x_loc.shape[axis])
                axis += 1
        pos_arrays = [np.arange(_size(a.shape)).reshape(a.shape) for a in arrays]
        coords = np.indices(probe_shape, dtype=np.int64) if probe_shape else np.zeros((0,), np.int64)
        npspec = spec_to_numpy(spec, pos_arrays)
        base = np.full(out_shape, x_loc.offset, dtype=np.int64)
        pos = {}
        for d in range(len(probe_shape)):
            c = np.broadcast_to(coords[d][npspec], out_shape)
            arr = [p for p in positions if p[1] == d]
            if arr:
                phys = arrays[arr[0][0]].physical().reshape(-1)
                pos[arr[0][0]] = (phys[c].reshape(-1), d)
            else:
                base = base + x_loc.strides[d] * c
        return base.reshape(-1), pos

    def gather_code(self, e, x_loc, arrays):
        base, pos = self.gather_tables(x_loc, arrays, e.params["spec"], e.inputs[0].type.shape
                                       if e.op == "gather_grad" else e.out.type.shape)
        bname = self.module.static("G", "long", base.tolist())
        terms = [f"{bname}[k]"]
        body = []
        for j in sorted(pos):
            table, axis = pos[j]
            tname = self.module.static("G", "long", table.tolist())
            body.append(f"long a{j} = (long){arrays[j].name}[{tname}[k]];")
            body.append(f"if (a{j} < 0) a{j} += {x_loc.shape[axis]};")
            stride = x_loc.strides[axis]
            terms.append(f"a{j}" if stride == 1 else f"{stride}*a{j}")
        return body, f"{x_loc.name}[{' + '.join(terms)}]", base.size

    def op_gather(self, e):
        x = self.atom_loc(e.inputs[0])
        arrays = [self.atom_loc(a) for a in e.inputs[1:]]
        out = self.storage(e.out)
        self.emit(f"/* {_eqn_text(e)} (integer-array indexing) */")
        body, src, n = self.gather_code(e, x, arrays)
        self.open([f"for (long k = 0; k < {n}; ++k) {{"])
        for line in body:
            self.emit(line)
        self.emit(f"{out.flat('k') if not out.local else out.name} = {src};")
        self.close(1)

    def op_gather_grad(self, e):
        ct = self.atom_loc(e.inputs[0])
        arrays = [self.atom_loc(a) for a in e.inputs[1:]]
        out = self.storage(e.out)
        self.emit(f"/* {_eqn_text(e)}: zeros with ct added at the index (repeats accumulate) */")
        self.zero(out)
        body, dst, n = self.gather_code(e, out, arrays)
        if not (ct.standard or ct.value is not None or ct.local):
            ctab = self.module.static("G", "long", ct.physical().reshape(-1).tolist())
            src = f"{ct.name}[{ctab}[k]]"
        else:
            src = ct.flat("k")
        self.open([f"for (long k = 0; k < {n}; ++k) {{"])
        for line in body:
            self.emit(line)
        self.emit(f"{dst} += {src};")
        self.close(1)


def _name(atom):
    return atom.name if isinstance(atom, Var) else "constant"


def _index_view(src: Loc, spec, shape) -> Loc:
    offset, strides, axis = src.offset, [], 0
    for item in spec:
        if item[0] == "new":
            strides.append(0)
            continue
        dim, s = src.shape[axis], src.strides[axis]
        if item[0] == "int":
            offset += (item[1] % dim) * s
        else:
            start, _, step = slice(*item[1:]).indices(dim)
            offset += start * s
            strides.append(s * step)
        axis += 1
    strides.extend(src.strides[axis:])
    return Loc(src.name, shape, offset, strides, src.value, src.local, src.dtype)


def emit_function(graph, fname, out_params, module=None):
    """``(prototype, definition, work_bytes)`` of one C function computing ``graph``'s outputs."""
    em = FunctionEmitter(graph, fname, out_params, module)
    body = em.body()
    work = sum(8 * ((size * np.dtype(_NP[ct]).itemsize + 7) // 8) for _, ct, size in em.arrays)
    params = [f"const {C_TYPES[v.type.dtype]} *{c_name(v.name)}" for v in graph.inputs]
    params += [f"{C_TYPES[o.type.dtype]} *{p}" for p, o in zip(out_params, graph.outputs)]
    decls, heap = [], work > STACK_LIMIT
    offset = 0
    for name, ctype, size in em.arrays:
        if heap:
            decls.append(f"    {ctype} *{name} = ({ctype} *)(work + {offset});")
            offset += (size * np.dtype(_NP[ctype]).itemsize + 7) // 8
        else:
            decls.append(f"    {ctype} {name}[{max(size, 1)}];")
    if heap:
        params.append("double *work")
    proto = f"void {fname}({', '.join(params)})"
    text = "\n".join([proto, "{"] + decls + body + ["}"])
    return proto, text, (8 * offset if heap else 0)


_NP = {"double": np.float64, "float": np.float32, "int64_t": np.int64, "int32_t": np.int32, "unsigned char": np.uint8}


def emit_c(functions, header_lines, guard):
    """``(source, header)`` for ``functions``: a list of ``(graph, name, out_params, doc)``."""
    module = Module()
    defs, protos = [], []
    for graph, fname, out_params, doc in functions:
        proto, text, work = emit_function(graph, fname, out_params, module)
        protos.append((proto, doc, fname, work))
        defs.append(f"/* {doc} */\n{text}\n\nsize_t {fname}_work_size(void)\n{{\n    return {work};\n}}")
    comment = ["/* " + header_lines[0]] + [" * " + line if line else " *" for line in header_lines[1:]] + [" */"]
    includes = ["#include <math.h>", "#include <stddef.h>", "#include <stdint.h>"]
    statics = module.definitions()
    source = "\n".join(comment + [""] + includes + [""] + statics + ([""] if statics else []) + ["\n\n".join(defs)])
    hdr = comment + ["", f"#ifndef {guard}", f"#define {guard}", "", "#include <stddef.h>", "#include <stdint.h>", ""]
    for proto, doc, fname, _ in protos:
        hdr += [f"/* {doc} */", proto + ";", f"size_t {fname}_work_size(void);", ""]
    hdr += [f"#endif /* {guard} */"]
    return source + "\n", "\n".join(hdr) + "\n"
