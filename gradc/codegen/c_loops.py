"""Loop lowerings of the C emitter: views, reductions, matmul, concatenate and indexing.

``LoopLowerings`` is mixed into ``FunctionEmitter`` (``c_src``); each ``op_KIND`` method
lowers one equation whose ``C_LOWERING`` entry names ``KIND``.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from gradc.codegen.c_values import C_TYPES, Loc, eqn_text, index_view, loops, size
from gradc.ops.shape import spec_to_numpy

BLOCKED_MIN = 4096  # multiply-adds from which a matmul goes by register blocks (below: plain loops)
T_ROWS, T_LANES = 10, 24  # transposed blocks (see matmul_blocked): up to 10 x 24, 30 AVX-512 registers


def _lin(offset, terms) -> str:
    """``offset + s*i + ...`` as short C: constants summed, no zero terms, no ``1*``."""
    const, parts = offset, []
    for s, i in terms:
        if i.isdigit():
            const += s * int(i)
        elif s:
            parts.append(i if s == 1 else f"{s}*{i}")
    return " + ".join(parts + [str(const)] * (const != 0)) or "0"


def _ptr(name, offset, terms) -> str:
    """``name + offset + ...``, or ``name`` alone."""
    at = _lin(offset, terms)
    return name if at == "0" else f"{name} + {at}"


def _name(atom):
    return getattr(atom, "name", "a constant")


def _spans(total, step):
    """``(start, length)`` of the full blocks (as one span) and of the remainder."""
    full = total // step * step
    return [(0, step)] * (full > 0) + [(full, total - full)] * (total > full)


def _kernel_text(name, ctype, mul_add, mr, nr, strided_out=False) -> str:
    """The C of one block kernel: ``c[r*cr + q] = sum over k of p[r*pr + k*pk] * v[k*vk + q]``.

    Every statement is written out (no loops over ``r`` or ``q``), so the block stays in local
    variables and gcc's straight-line vectoriser packs each row's ``nr`` multiply-adds into SIMD.
    With ``strided_out`` the block goes to ``c[r*cr + q*cq]`` through a local tile (stored row by
    row first, which keeps gcc vectorising along ``q``).
    """
    cq, at = (", long cq", "c[r*cr + q*cq]") if strided_out else ("", "c[r*cr + q]")
    lines = [f"/* {at} = sum over k < n of p[r*pr + k*pk] * v[k*vk + q], for r < {mr}, q < {nr}.",
             " * Written out so the block stays in registers and each row's updates become SIMD. */",
             f"static void {name}(long n, const {ctype} *restrict p, long pr, long pk,",
             f"{' ' * (13 + len(name))}const {ctype} *restrict v, long vk, {ctype} *restrict c, long cr{cq})",
             "{"]
    if mr == 1:
        lines.append("    (void)pr;  /* one row */" if strided_out else "    (void)pr; (void)cr;  /* one row */")
    lines += [f"    {ctype} " + ", ".join(f"c{r}_{q} = 0" for q in range(nr)) + ";" for r in range(mr)]
    lines += ["    for (long k = 0; k < n; ++k) {", f"        const {ctype} *restrict vrow = v + k*vk;"]
    for r in range(mr):
        lines.append(f"        const {ctype} p{r} = p[{_lin(0, [(r, 'pr'), (1, 'k*pk')])}];")
    for r in range(mr):
        for q in range(nr):
            lines.append(f"        c{r}_{q} = {mul_add}(p{r}, vrow[{q}], c{r}_{q});")
    lines.append("    }")
    if strided_out:
        lines.append(f"    {ctype} tile[{mr}][{nr}];")
        for r in range(mr):
            lines.append("    " + " ".join(f"tile[{r}][{q}] = c{r}_{q};" for q in range(nr)))
        lines += [f"    for (long r = 0; r < {mr}; ++r) {{", f"        for (long q = 0; q < {nr}; ++q) {{",
                  "            c[r*cr + q*cq] = tile[r][q];", "        }", "    }", "}"]
        return "\n".join(lines)
    for r in range(mr):
        lines.append("    " + " ".join(f"c[{_lin(0, [(r, 'cr'), (1, str(q))])}] = c{r}_{q};" for q in range(nr)))
    lines.append("}")
    return "\n".join(lines)


class LoopLowerings:
    """Methods lowering non-elementwise ops; they use the emitter's ``emit``/``open``/``close``."""

    def copy(self, dst, src, comment):
        self.emit(f"/* {comment} */")
        lines, idx = loops(src.shape)
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
            loc = index_view(src, e.params["spec"], shape)
        if src.value is None and not src.local:
            self.emit(f"/* {eqn_text(e)}: no code, read in place from {src.name} */")
        self.loc[id(e.out)] = loc

    def op_reshape(self, e):
        src = self.atom_loc(e.inputs[0])
        shape = e.out.type.shape
        if src.standard or src.value is not None:
            if src.value is None and not src.local:
                self.emit(f"/* {eqn_text(e)}: no code, read in place from {src.name} */")
            self.loc[id(e.out)] = Loc(src.name, shape, src.offset, None, src.value, src.local, src.dtype)
            if src.local and shape != ():
                self.loc[id(e.out)].local, self.loc[id(e.out)].value = False, sp.Symbol(src.name, real=True)
            return
        out = self.storage(e.out)
        self.copy(Loc(out.name, src.shape, dtype=out.dtype), src, eqn_text(e) + ": copy of a strided view")

    def op_reduce(self, e):
        x = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        axes, keep = e.params["axes"], e.params["keepdims"]
        init = {"sum": "0", "mean": "0", "prod": "1", "max": "-INFINITY", "min": "INFINITY"}[e.op]
        if e.op in ("sum", "mean") and out.shape == () and x.dtype == out.dtype and x.dtype in ("f64", "f32") \
                and x.value is None and not x.local and x.standard and size(x.shape) >= 64:
            return self.reduce_all(e, x, out)
        self.emit(f"/* {eqn_text(e)} */")
        result = None
        if out.shape == () and not out.local:  # accumulate in a local, store once
            result, out = out, Loc("acc", (), local=True, dtype=out.dtype)
            self.open(["{"])
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name} = {init};")
        else:
            self.each(out, f"@ = {init};")
        lines, idx = loops(x.shape)
        self.open(lines)
        out_idx = [("0" if a in axes else i) for a, i in enumerate(idx) if keep or a not in axes]
        o, v = self.target(out, out_idx), x.at(idx)
        nan = f" || isnan({v})" if x.dtype in ("f32", "f64") else ""
        step = {"sum": f"{o} += {v};", "mean": f"{o} += {v};", "prod": f"{o} *= {v};",
                "max": f"if ({v} > {o}{nan}) {o} = {v};",  # NaN wins, as in NumPy
                "min": f"if ({v} < {o}{nan}) {o} = {v};"}[e.op]
        self.emit(step)
        self.close(len(lines))
        if e.op == "mean":
            if out.local:
                self.emit(f"{out.name} /= {e.params['count']};")
            else:
                self.each(out, f"@ /= {e.params['count']};")
        if result is not None:
            self.emit(f"{result.at(())} = acc;")
            self.close(1)

    def reduce_all(self, e, x, out):
        """A contiguous array summed to a scalar in 8 running sums (independent, so the loop vectorises)."""
        ctype, n = C_TYPES[out.dtype], size(x.shape)
        self.emit(f"/* {eqn_text(e)}: in 8 running sums, added pairwise */")
        if out.local:
            self.emit(f"{ctype} {out.name};")
        self.open(["{"])
        self.emit(f"{ctype} acc[8] = {{0, 0, 0, 0, 0, 0, 0, 0}};")
        self.open([f"for (long k = 0; k < {n // 8 * 8}; k += 8) {{"])
        for half in (range(4), range(4, 8)):
            self.emit(" ".join(f"acc[{j}] += {x.flat(f'k + {j}' if j else 'k')};" for j in half))
        self.close(1)
        if n % 8:
            self.open([f"for (long k = {n // 8 * 8}; k < {n}; ++k) {{"])
            self.emit(f"acc[0] += {x.flat('k')};")
            self.close(1)
        total = "((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))"
        if e.op == "mean":
            total = f"({total}) / {e.params['count']}"
        self.emit(f"{out.name if out.local else out.at(())} = {total};")
        self.close(1)

    def op_argreduce(self, e):
        x = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        axis = e.params["axis"] if e.params["axis"] is not None else 0
        cmp = ">" if e.op == "argmax" else "<"
        self.emit(f"/* {eqn_text(e)} */")
        rest = [d for a, d in enumerate(x.shape) if a != axis]
        lines, idx = loops(rest)
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name};")
        self.open(lines or ["{"])
        full = list(idx[:axis]) + ["best"] + list(idx[axis:])
        j = f"i{len(idx)}"  # the probe index: a name no array can take
        probe = list(idx[:axis]) + [j] + list(idx[axis:])
        self.emit("long best = 0;")
        self.open([f"for (long {j} = 1; {j} < {x.shape[axis]}; ++{j}) {{"])
        nan = f" || (isnan({x.at(probe)}) && !isnan({x.at(full)}))" if x.dtype in ("f32", "f64") else ""
        self.emit(f"if ({x.at(probe)} {cmp} {x.at(full)}{nan}) best = {j};")  # the first NaN, as in NumPy
        self.close(1)
        self.emit(f"{self.target(out, idx)} = best;")
        self.close(len(lines) or 1)

    def op_matmul(self, e):
        a, b = (self.atom_loc(x) for x in e.inputs)
        out = self.storage(e.out)
        na, nb = len(a.shape), len(b.shape)
        kdim = a.shape[-1]
        batched = na == nb == len(out.shape) >= 3 and a.shape[:-2] == b.shape[:-2]  # the tracer broadcasts
        if (na <= 2 and nb <= 2 or batched) and a.value is None and b.value is None and not out.local \
                and a.dtype == b.dtype == out.dtype and out.dtype in ("f64", "f32") \
                and size(out.shape[-2:] if batched else out.shape) * kdim >= BLOCKED_MIN:
            if not batched:
                return self.matmul_blocked(e, a, b, out)
            self.emit(f"/* {eqn_text(e)}: one matrix product per index of the leading axes */")
            lines, idx = loops(out.shape[:-2])
            self.open(lines)
            views = [Loc(x.name, x.shape[-2:], x.offset, x.strides[-2:], dtype=x.dtype) for x in (a, b, out)]
            self.matmul_blocked(e, *views, [list(zip(x.strides[:-2], idx)) for x in (a, b, out)])
            self.close(len(lines))
            return
        if nb >= 2 and b.strides[-1] == 1 and b.value is None and not out.local and out.shape[-1] > 1:
            return self.matmul_rows(e, a, b, out, kdim)
        lines, idx = loops(out.shape)
        if na == 1 and nb == 1:
            ia, ib = ["k"], ["k"]
        elif na == 1:
            ia, ib = ["k"], ["k", idx[0]]
        elif nb == 1:
            ia, ib = [idx[0], "k"], ["k"]
        else:
            ia, ib = idx[:-1] + ["k"], idx[:-2] + ["k", idx[-1]]
        self.emit(f"/* {eqn_text(e)} */")
        if out.local:
            self.emit(f"{C_TYPES[out.dtype]} {out.name};")
        self.open(lines or ["{"])
        self.emit(f"{C_TYPES[out.dtype]} acc = 0;")
        self.open([f"for (long k = 0; k < {kdim}; ++k) {{"])
        self.emit(f"acc += {a.at(ia)} * {b.at(ib)};")
        self.close(1)
        self.emit(f"{self.target(out, idx)} = acc;")
        self.close(len(lines) or 1)

    def matmul_blocked(self, e, a, b, out, batch=([], [], [])):
        """``out = a @ b`` (2-D or 1-D views; ``batch`` adds the leading axes) by register blocks, one call of
        a block kernel per block of ``out``.

        A kernel (``mm_kernel``) keeps an ``mr`` x ``nr`` block of ``out`` in local variables while it runs
        over ``k``, reading ``nr`` consecutive elements of a row of ``b`` per step, which the compiler turns
        into SIMD multiply-adds; ``a`` may have any strides. A ``b`` whose rows are not contiguous (a
        transposed ``b``) is first copied row-major into a work array. When ``a`` is a transposed view and
        ``out`` has at most ``T_ROWS`` columns (``x.T @ dz`` of a gradient), blocks of ``T_LANES`` rows of
        ``out`` are computed as blocks of ``out.T = b.T @ a.T`` instead: the vectors run along columns of
        ``a``, whole SIMD registers even when ``out`` is narrow. Loop indices are ``i<d>`` (names no array
        can take), after those of the leading axes.
        """
        m, kdim, n = (a.shape[0] if len(a.shape) == 2 else 1), a.shape[-1], (b.shape[1] if len(b.shape) == 2 else 1)
        ar, ak = (a.strides[0], a.strides[1]) if len(a.shape) == 2 else (0, a.strides[0])  # a as m x k
        bk, bc = (b.strides[0], b.strides[1]) if len(b.shape) == 2 else (b.strides[0], 1)  # b as k x n
        ctype = C_TYPES[out.dtype]
        ba, bb, bo = batch  # (stride, index) of the leading axes of a batched matmul
        ri, ci = f"i{len(bo)}", f"i{len(bo) + 1}"  # block row and column indices
        if not bo:
            self.emit(f"/* {eqn_text(e)} */")
        row0 = m // T_LANES * T_LANES if ar == 1 and n <= T_ROWS else 0  # rows done as out.T blocks
        if row0:
            kernel = self.mm_kernel(ctype, n, T_LANES, strided_out=True)
            self.emit(f"/* {out.name} up to row {row0} by {n}x{T_LANES} blocks of its transpose, vectors along "
                      f"{a.name}, each summed over k ({kdim} terms) in registers */")
            self.open([f"for (long {ri} = 0; {ri} < {row0}; {ri} += {T_LANES}) {{"] if row0 > T_LANES else [])
            i = ri if row0 > T_LANES else "0"
            lhs, rhs = _ptr(b.name, b.offset, bb), _ptr(a.name, a.offset, ba + [(1, i)])
            self.emit(f"{kernel}({kdim}, {lhs}, {bc}, {bk}, {rhs}, {ak}, {_ptr(out.name, out.offset, bo + [(n, i)])}, "
                      f"1, {n});")
            self.close(1 if row0 > T_LANES else 0)
        if row0 == m:
            return
        bname, boff = b.name, b.offset
        if bc != 1 and n > 1:
            bname, boff = self.pack_name(out.name + "_rhs"), 0
            self.arrays.append((bname, ctype, kdim * n))
            self.emit(f"/* {bname}: {_name(e.inputs[1])} copied row-major, so that its rows are contiguous */")
            self.open([f"for (long {ri} = 0; {ri} < {kdim}; ++{ri}) {{", f"for (long {ci} = 0; {ci} < {n}; ++{ci}) {{"])
            src = _lin(b.offset, bb + [(bk, ri), (bc, ci)])
            self.emit(f"{bname}[{_lin(0, [(n, ri), (1, ci)])}] = {b.name}[{src}];")
            self.close(2)
            bk, bb = n, []
        rows = m - row0
        nr = n if n <= 8 else (16 if n >= 16 else 8)
        mr = rows if rows <= 8 else (8 if nr <= 8 else 6)
        shapes = [f"{nrows}x{nq}" for _, nq in _spans(n, nr) for _, nrows in _spans(rows, mr)]
        self.emit(f"/* {out.name}{' from row ' + str(row0) if row0 else ''} by blocks of "
                  f"{', '.join(shapes[:-1]) + ' and ' if len(shapes) > 1 else ''}{shapes[-1]}, "
                  f"each summed over k ({kdim} terms) in registers */")
        for j0, nq in _spans(n, nr):
            for i0, nrows in _spans(rows, mr):
                i = ri if nrows == mr and rows // mr > 1 else str(row0 + i0)
                j = ci if nq == nr and n // nr > 1 else str(j0)
                opened = [f"for (long {j} = 0; {j} < {n // nr * nr}; {j} += {nr}) {{"] * (j == ci)
                opened += [f"for (long {i} = {row0}; {i} < {row0 + rows // mr * mr}; {i} += {mr}) {{"] * (i == ri)
                self.open(opened)
                kernel = self.mm_kernel(ctype, nrows, nq)
                lhs, rhs = _ptr(a.name, a.offset, ba + [(ar, i)]), _ptr(bname, boff, bb + [(1, j)])
                self.emit(f"{kernel}({kdim}, {lhs}, {ar}, {ak}, {rhs}, {bk}, "
                          f"{_ptr(out.name, out.offset, bo + [(n, i), (1, j)])}, {n});")
                self.close(len(opened))

    def pack_name(self, name):
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        return name

    def mm_kernel(self, ctype, mr, nr, strided_out=False):
        """The name of the ``mr`` x ``nr`` block kernel (defined once per translation unit)."""
        suffix = "f" if ctype == "float" else ""
        name = f"gradc_mm{'t' if strided_out else ''}{suffix}_{mr}x{nr}"
        # c_mathlib's multiply-add: fma() where C99's FP_FAST_FMA says it is fast, else a*b + c
        mul_add = "gradc_mul_addf" if ctype == "float" else "gradc_mul_add"
        return self.module.helper(("gradc_mm", ctype, mr, nr, strided_out), name, lambda: self.module.note_calls(
            "\n" + _kernel_text(name, ctype, mul_add, mr, nr, strided_out)))

    def matmul_rows(self, e, a, b, out, kdim):
        """``out[i, :] = sum_k a[i, k] * b[k, :]``: the inner loop runs along rows of ``b`` and ``out``."""
        lines, idx = loops(out.shape[:-1])
        j = f"i{len(idx)}"  # the column index: a name no array can take
        ia = idx + ["k"] if len(a.shape) >= 2 else ["k"]
        ib = (idx[:-1] if len(a.shape) >= 2 else []) + ["k", j]
        n = out.shape[-1]
        self.emit(f"/* {eqn_text(e)} (row by row) */")
        self.open(lines or ["{"])
        self.open([f"for (long {j} = 0; {j} < {n}; ++{j}) {{"])
        self.emit(f"{out.at(idx + [j])} = 0;")
        self.close(1)
        self.open([f"for (long k = 0; k < {kdim}; ++k) {{"])
        self.emit(f"const {C_TYPES[out.dtype]} aik = {a.at(ia)};")
        self.open([f"for (long {j} = 0; {j} < {n}; ++{j}) {{"])
        self.emit(f"{out.at(idx + [j])} += aik * {b.at(ib)};")
        self.close(2)
        self.close(len(lines) or 1)

    def op_outer(self, e):
        a, b = (self.atom_loc(x) for x in e.inputs)
        out = self.storage(e.out)
        lines, idx = loops(out.shape)
        self.emit(f"/* {eqn_text(e)} */")
        self.open(lines)
        self.emit(f"{out.at(idx)} = {a.at(idx[:1])} * {b.at(idx[1:])};")
        self.close(len(lines))

    def op_concatenate(self, e):
        out = self.storage(e.out)
        axis, start = e.params["axis"], 0
        self.emit(f"/* {eqn_text(e)} */")
        for x in e.inputs:
            src = self.atom_loc(x)
            dst = Loc(out.name, src.shape, out.offset + start * out.strides[axis], out.strides, dtype=out.dtype)
            lines, idx = loops(src.shape)
            self.open(lines)
            self.emit(f"{dst.at(idx)} = {src.at(idx)};")
            self.close(len(lines))
            start += src.shape[axis]

    def each(self, out, statement):
        """``statement`` (with ``@`` for the element) for every element of ``out``, row-major."""
        if out.shape == ():
            self.emit(statement.replace("@", out.at(())))
            return
        self.open([f"for (long k = 0; k < {size(out.shape)}; ++k) {{"])
        self.emit(statement.replace("@", out.flat("k")))
        self.close(1)

    def zero(self, out):
        self.each(out, "@ = 0;")

    def op_index_grad(self, e):
        ct = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        self.emit(f"/* {eqn_text(e)}: zeros with ct written at the index */")
        self.zero(out)
        view = index_view(out, e.params["spec"], ct.shape)
        lines, idx = loops(ct.shape)
        self.open(lines)
        self.emit(f"{view.at(idx)} = {ct.at(idx)};")
        self.close(len(lines))

    def gather_tables(self, x_loc, arrays, spec, out_shape):
        """Index tables: base[k] (physical index from slices and ints) and, per index array, pos[k]."""
        items = list(spec) + [("slice", None, None, None)] * (len(x_loc.shape) - len(spec))
        probe_shape, axis, positions = [], 0, []
        for item in items:
            if item[0] == "array":
                probe_shape.append(size(arrays[item[1]].shape))
                positions.append((item[1], axis))
            if item[0] != "new":
                if item[0] != "array":
                    probe_shape.append(x_loc.shape[axis])
                axis += 1
        pos_arrays = [np.arange(size(a.shape)).reshape(a.shape) for a in arrays]
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
        self.emit(f"/* {eqn_text(e)} (integer-array indexing) */")
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
        self.emit(f"/* {eqn_text(e)}: zeros with ct added at the index (repeats accumulate) */")
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
