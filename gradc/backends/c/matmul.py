"""Matrix products in C: register-blocked kernels gcc vectorises, and plain loops for small ones.

``MatmulLowerings`` is a mixin of the C function emitter (``gradc.backends.c.emit``):
blocks of ``mr x nr`` outputs accumulate in registers over the shared axis; a
transposed right operand is first copied row-major into the work buffer.

>>> "gradc_mm_6x16" in _kernel_text("gradc_mm_6x16", "double", "gradc_mul_add", 6, 16)
True
"""
from __future__ import annotations

from gradc.backends.c import blas
from gradc.backends.c.names import fresh
from gradc.backends.c.threads import parallel_for
from gradc.backends.c.values import C_TYPES, Loc, atom_name, dim_c, eqn_text, known, lin, loops, ptr, size

T_ROWS, T_LANES = 10, 24  # transposed blocks (see matmul_blocked): up to 10 x 24, 30 AVX-512 registers
BLOCKED_MIN = 4096  # multiply-adds from which a matmul goes by register blocks (below: plain loops)

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
        lines.append(f"        const {ctype} p{r} = p[{lin(0, [(r, 'pr'), (1, 'k*pk')])}];")
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
        lines.append("    " + " ".join(f"c[{lin(0, [(r, 'cr'), (1, str(q))])}] = c{r}_{q};" for q in range(nr)))
    lines.append("}")
    return "\n".join(lines)


def _blockable(a, b, out, batched) -> bool:
    """Whether register blocks can compute ``out = a @ b``: every size a number but the shared axis's, which may
    be named (``X.T @ dz`` over ``n`` rows); blocks along a named axis of ``out`` are not written yet."""
    sizes = [*out.shape, *a.shape[:-1], *b.shape[:-2], *(b.shape[-1:] if len(b.shape) >= 2 else ())]
    sizes += [d for x in (a, b, out) for d in (*x.strides, x.offset)]
    return not any(hasattr(d, "free_symbols") for d in sizes) and not (batched and hasattr(a.shape[-1], "free_symbols"))


class MatmulLowerings:
    """The matmul and outer-product lowerings (see the module docstring)."""

    def op_matmul(self, e):
        a, b = (self.atom_loc(x) for x in e.inputs)
        out = self.storage(e.out)
        na, nb = len(a.shape), len(b.shape)
        kdim = a.shape[-1]
        batched = na == nb == len(out.shape) >= 3 and a.shape[:-2] == b.shape[:-2]  # the tracer broadcasts
        if (na <= 2 and nb <= 2 or batched) and a.value is None and b.value is None and not out.local \
                and a.dtype == b.dtype == out.dtype and out.dtype in ("f64", "f32") \
                and known(size(out.shape[-2:] if batched else out.shape) * kdim >= BLOCKED_MIN, True) \
                and _blockable(a, b, out, batched):
            if not batched:
                return self.matmul_blocked(e, a, b, out)
            self.emit(f"/* {eqn_text(e)}: one matrix product per index of the leading axes */")
            lines, idx = loops(out.shape[:-2])
            self.open(lines)
            views = [Loc(x.name, x.shape[-2:], x.offset, x.strides[-2:], dtype=x.dtype) for x in (a, b, out)]
            self.matmul_blocked(e, *views, [list(zip(x.strides[:-2], idx)) for x in (a, b, out)])
            self.close(len(lines))
            return
        if nb >= 2 and b.strides[-1] == 1 and b.value is None and not out.local and known(out.shape[-1] > 1, True):
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
        self.open([f"for (long k = 0; k < {dim_c(kdim)}; ++k) {{"])
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
        gemm = None if bo else self.blas_call(a, b, out, m, kdim, n)
        if gemm is not None:  # the BLAS when the loader found one, else the kernels below
            condition, call = gemm
            self.open([f"if ({condition}) {{"])
            self.emit(call)
            self.close(1)
            self.open(["else {"])
            self.matmul_kernels(e, a, b, out, batch, m, kdim, n, ar, ak, bk, bc, ctype, ri, ci)
            self.close(1)
            return
        self.matmul_kernels(e, a, b, out, batch, m, kdim, n, ar, ak, bk, bc, ctype, ri, ci)

    def blas_call(self, a, b, out, m, kdim, n):
        """``(condition, C call)`` computing a 2-D ``out = a @ b`` by the BLAS's gemm, or None: a product below
        ``blas.BLAS_MIN`` multiply-adds or with a side below ``blas.BLAS_MIN_SIDE``, or operands BLAS cannot take
        as they are (neither axis contiguous)."""
        side = blas.BLAS_MIN_SIDE
        if len(a.shape) != 2 or len(b.shape) != 2 or len(out.shape) != 2 or m < side or n < side:
            return None
        work = m * n * kdim
        if known(work < blas.BLAS_MIN, False) or known(kdim < side, False):
            return None
        (ar, ak), (bk, bc) = a.strides, b.strides
        if out.strides != (n, 1) and list(out.strides) != [n, 1]:
            return None
        if ak == 1 and known(ar >= kdim, False):
            ta, lda = 0, ar
        elif ar == 1 and ak >= m:
            ta, lda = 1, ak
        else:
            return None
        if bc == 1 and bk >= n:
            tb, ldb = 0, bk
        elif bk == 1 and known(bc >= kdim, False):
            tb, ldb = 1, bc
        else:
            return None
        pointer = "gradc_blas_dgemm" if out.dtype == "f64" else "gradc_blas_sgemm"
        self.module.helper(("gradc_blas", "pointers"), "gradc_blas_dgemm", blas.pointer_declarations)
        suffix = "" if out.dtype == "f64" else "f"
        helper = self.module.helper(("gradc_blas", out.dtype), f"gradc_gemm{suffix}",
                                    lambda: blas.gemm_helper_text(C_TYPES[out.dtype]))
        condition = f"{pointer} != NULL"
        if not known(work >= blas.BLAS_MIN, False):  # a named shared axis: decided when it runs
            k = dim_c(kdim)
            condition += f" && {k} >= {side} && (double){k}*{m * n} >= {blas.BLAS_MIN} && {k} <= {blas.INT_MAX}"
        call = (f"{helper}({ta}, {tb}, {m}, {n}, {dim_c(kdim)}, {ptr(a.name, a.offset, [])}, {dim_c(lda)}, "
                f"{ptr(b.name, b.offset, [])}, {dim_c(ldb)}, {ptr(out.name, out.offset, [])}, {n});")
        return condition, call

    def matmul_kernels(self, e, a, b, out, batch, m, kdim, n, ar, ak, bk, bc, ctype, ri, ci):
        """The register-blocked kernels of ``matmul_blocked`` (see there)."""
        ba, bb, bo = batch
        row0 = m // T_LANES * T_LANES if ar == 1 and n <= T_ROWS else 0  # rows done as out.T blocks
        if row0:
            kernel = self.mm_kernel(ctype, n, T_LANES, strided_out=True)
            self.emit(f"/* {out.name} up to row {row0} by {n}x{T_LANES} blocks of its transpose, vectors along "
                      f"{a.name}, each summed over k ({dim_c(kdim)} terms) in registers */")
            self.open([f"for (long {ri} = 0; {ri} < {row0}; {ri} += {T_LANES}) {{"] if row0 > T_LANES else [])
            i = ri if row0 > T_LANES else "0"
            lhs, rhs = ptr(b.name, b.offset, bb), ptr(a.name, a.offset, ba + [(1, i)])
            self.emit(f"{kernel}({dim_c(kdim)}, {lhs}, {bc}, {bk}, {rhs}, {ak}, "
                      f"{ptr(out.name, out.offset, bo + [(n, i)])}, 1, {n});")
            self.close(1 if row0 > T_LANES else 0)
        if row0 == m:
            return
        bname, boff = b.name, b.offset
        if bc != 1 and n > 1:
            bname, boff = self.scratch(out.name + "_rhs", out.dtype, kdim * n), 0
            self.emit(f"/* {bname}: {atom_name(e.inputs[1])} copied row-major, so that its rows are contiguous */")
            self.open([f"for (long {ri} = 0; {ri} < {dim_c(kdim)}; ++{ri}) {{",
                       f"for (long {ci} = 0; {ci} < {n}; ++{ci}) {{"])
            src = lin(b.offset, bb + [(bk, ri), (bc, ci)])
            self.emit(f"{bname}[{lin(0, [(n, ri), (1, ci)])}] = {b.name}[{src}];")
            self.close(2)
            bk, bb = n, []
        rows = m - row0
        nr = n if n <= 8 else (16 if n >= 16 else 8)
        mr = rows if rows <= 8 else (8 if nr <= 8 else 6)
        shapes = [f"{nrows}x{nq}" for _, nq in _spans(n, nr) for _, nrows in _spans(rows, mr)]
        self.emit(f"/* {out.name}{' from row ' + str(row0) if row0 else ''} by blocks of "
                  f"{', '.join(shapes[:-1]) + ' and ' if len(shapes) > 1 else ''}{shapes[-1]}, "
                  f"each summed over k ({dim_c(kdim)} terms) in registers */")
        for j0, nq in _spans(n, nr):
            for i0, nrows in _spans(rows, mr):
                i = ri if nrows == mr and rows // mr > 1 else str(row0 + i0)
                j = ci if nq == nr and n // nr > 1 else str(j0)
                opened = [f"for (long {j} = 0; {j} < {n // nr * nr}; {j} += {nr}) {{"] * (j == ci)
                opened += [f"for (long {i} = {row0}; {i} < {row0 + rows // mr * mr}; {i} += {mr}) {{"] * (i == ri)
                pragma = parallel_for(m * n * kdim, self.module.openmp) if opened and not self.depth and not bo \
                    else None
                if pragma:  # blocks of out shared among threads: each block is computed as without them
                    self.emit(pragma)
                self.open(opened)
                kernel = self.mm_kernel(ctype, nrows, nq)
                lhs, rhs = ptr(a.name, a.offset, ba + [(ar, i)]), ptr(bname, boff, bb + [(1, j)])
                self.emit(f"{kernel}({dim_c(kdim)}, {lhs}, {ar}, {ak}, {rhs}, {bk}, "
                          f"{ptr(out.name, out.offset, bo + [(n, i), (1, j)])}, {n});")
                self.close(len(opened))

    def pack_name(self, name):
        name = fresh(name, self.taken)
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
        self.open([f"for (long {j} = 0; {j} < {dim_c(n)}; ++{j}) {{"])
        self.emit(f"{out.at(idx + [j])} = 0;")
        self.close(1)
        self.open([f"for (long k = 0; k < {dim_c(kdim)}; ++k) {{"])
        self.emit(f"const {C_TYPES[out.dtype]} aik = {a.at(ia)};")
        self.open([f"for (long {j} = 0; {j} < {dim_c(n)}; ++{j}) {{"])
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
