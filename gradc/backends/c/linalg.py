"""Small dense linear algebra in C: Cholesky, triangular and LU solves, log|det|, the Cholesky adjoint.

``LinalgLowerings`` is a mixin of the C function emitter (``gradc.backends.c.emit``). Each op
calls a ``static`` helper, defined once per translation unit and dtype, on each matrix of its
operands (one call per index of the leading axes). Helpers read their operands through row and
column strides, so transposed and sliced views cost no copy; they write contiguous results and
take work arrays from the caller (the emitter places them like any other, on the stack or in
``work``). Plain loops, no blocking and no BLAS: these are for the small matrices the C target
is meant for (a few hundred rows at most).
The decompositions (eigh, eigvalsh, svd, svdvals, qr, expm) are in ``linalg_decomp`` and
``linalg_spectral``, mixed in here.

Errors, as NumPy's: a matrix that is not positive definite (a pivot <= 0; NaN stays NaN) makes
``cholesky`` return 1 (after writing NaN into the whole factor), and a singular matrix (an exact
zero pivot, as LAPACK's) makes ``solve`` return 1 (NaN in the solution); the function holding
the op then returns its status (:func:`linalg_status`), and Python raises NumPy's
``LinAlgError`` with NumPy's message. ``logabsdet``/``det_sign`` of a singular matrix are
``-inf`` and ``0`` as in NumPy.

>>> "NAN" in helper_text("cholesky", "double")
True
"""
from __future__ import annotations

from gradc.backends.c import linalg_spectral
from gradc.backends.c.linalg_complex import COMPLEX_NEEDS, EDITED, SAME_TEXT, SUFFIX, complex_helper_text
from gradc.backends.c.linalg_complex_spectral import ComplexSpectralLowerings
from gradc.backends.c.linalg_decomp import DECOMP_HELPERS, DECOMP_NEEDS, DecompLowerings
from gradc.backends.c.linalg_eig import EigLowerings
from gradc.backends.c.values import C_TYPES, Loc, atom_name, eqn_text, loops, ptr
from gradc.ir.types import REAL_OF_COMPLEX as REAL_OF

# ---------------------------------------------------------------- helper sources (T: the C type, F: libm suffix)
_HELPERS = {
    "cholesky": """
/* l = the lower Cholesky factor of the n x n matrix a (its lower triangle, read through strides rs and cs),
 * zeros above the diagonal; returns 0. A matrix that is not positive definite (a pivot <= 0) gives NaN
 * everywhere and returns 1; a NaN pivot gives NaN everywhere and returns 0, as NumPy raises nothing then. */
static int gradc_choleskyF(long n, const T *restrict a, long rs, long cs, T *restrict l)
{
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j <= i; ++j) {
            /* s = a[i][j] - (row i of l) . (row j of l), in four running sums (they vectorise) */
            T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
            long k = 0;
            for (; k + 4 <= j; k += 4) {
                s0 += l[i*n + k] * l[j*n + k];
                s1 += l[i*n + k + 1] * l[j*n + k + 1];
                s2 += l[i*n + k + 2] * l[j*n + k + 2];
                s3 += l[i*n + k + 3] * l[j*n + k + 3];
            }
            for (; k < j; ++k) {
                s0 += l[i*n + k] * l[j*n + k];
            }
            const T s = a[i*rs + j*cs] - ((s0 + s1) + (s2 + s3));
            if (i > j) {
                l[i*n + j] = s / l[j*n + j];
            } else if (s > 0) {
                l[i*n + i] = sqrtF(s);
            } else {
                for (long q = 0; q < n*n; ++q) {
                    l[q] = NAN;
                }
                return s == s;  /* a NaN pivot is NaN's, not a failure (NumPy's factor holds NaN then) */
            }
        }
        for (long j = i + 1; j < n; ++j) {
            l[i*n + j] = 0;
        }
    }
    return 0;
}""",
    "trisolve": """
/* x = E^-1 b for the n x m matrix b, E the lower (lower != 0) or upper triangle of the n x n matrix a, or its
 * transpose (trans != 0); a and b are read through strides, x is contiguous. */
static void gradc_trisolveF(long n, long m, const T *restrict a, long ars, long acs, const T *restrict b, long brs,
                           long bcs, T *restrict x, int lower, int trans)
{
    const long es = trans ? acs : ars, ek = trans ? ars : acs;  /* E[i][k] = a[i*es + k*ek] */
    const int forward = lower != trans;  /* E lower: forward substitution */
    for (long i = 0; i < n; ++i) {
        for (long q = 0; q < m; ++q) {
            x[i*m + q] = b[i*brs + q*bcs];
        }
    }
    for (long s = 0; s < n; ++s) {
        const long i = forward ? s : n - 1 - s;
        const long k0 = forward ? 0 : i + 1, k1 = forward ? i : n;
        for (long k = k0; k < k1; ++k) {
            const T e = a[i*es + k*ek];
            for (long q = 0; q < m; ++q) {
                x[i*m + q] -= e * x[k*m + q];
            }
        }
        const T d = a[i*es + i*ek];
        for (long q = 0; q < m; ++q) {
            x[i*m + q] /= d;
        }
    }
}""",
    "lu": """
/* w (n x n, contiguous) = the LU factors of the strided n x n matrix a by partial pivoting (row interchanges; the
 * pivot: the first entry of largest |a|, of a complex T largest |Re| + |Im| as LAPACK's izamax), the same
 * interchanges applied to the n x m matrix x; returns the number of interchanges, or -1 at a zero (or NaN) pivot. */
static long gradc_luF(long n, long m, const T *restrict a, long ars, long acs, T *restrict w, T *restrict x)
{
    long swaps = 0;
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            w[i*n + j] = a[i*ars + j*acs];
        }
    }
    for (long c = 0; c < n; ++c) {
        long p = c;
        R best = PIVOT_SIZE(w[c*n + c]);
        for (long r = c + 1; r < n; ++r) {
            const R size = PIVOT_SIZE(w[r*n + c]);
            if (size > best) {
                best = size;
                p = r;
            }
        }
        if (!(best > 0)) {
            return -1;
        }
        if (p != c) {
            ++swaps;
            for (long j = 0; j < n; ++j) {
                const T t = w[c*n + j]; w[c*n + j] = w[p*n + j]; w[p*n + j] = t;
            }
            for (long q = 0; q < m; ++q) {
                const T t = x[c*m + q]; x[c*m + q] = x[p*m + q]; x[p*m + q] = t;
            }
        }
        for (long r = c + 1; r < n; ++r) {
            const T f = w[r*n + c] / w[c*n + c];
            w[r*n + c] = f;
            for (long j = c + 1; j < n; ++j) {
                w[r*n + j] -= f * w[c*n + j];
            }
            for (long q = 0; q < m; ++q) {
                x[r*m + q] -= f * x[c*m + q];
            }
        }
    }
    return swaps;
}""",
    "solve": """
/* x = a^-1 b for the strided n x n matrix a and n x m matrix b, by LU with partial pivoting in the work array
 * w (n*n); returns 0, or 1 for a singular matrix (a zero pivot), with NaN everywhere (NaN entries: NaN, 0). */
static int gradc_solveF(long n, long m, const T *restrict a, long ars, long acs, const T *restrict b, long brs,
                        long bcs, T *restrict x, T *restrict w)
{
    for (long i = 0; i < n; ++i) {
        for (long q = 0; q < m; ++q) {
            x[i*m + q] = b[i*brs + q*bcs];
        }
    }
    if (gradc_luF(n, m, a, ars, acs, w, x) < 0) {
        int nan = 0;  /* a NaN entry is NaN's, not a singular matrix (NumPy's solution holds NaN then) */
        for (long k = 0; k < n*n; ++k) {
            nan |= w[k] != w[k];  /* (isnan takes no complex T) */
        }
        for (long k = 0; k < n*m; ++k) {
            x[k] = NAN;
        }
        return !nan;
    }
    for (long i = n - 1; i >= 0; --i) {
        for (long k = i + 1; k < n; ++k) {
            const T e = w[i*n + k];
            for (long q = 0; q < m; ++q) {
                x[i*m + q] -= e * x[k*m + q];
            }
        }
        for (long q = 0; q < m; ++q) {
            x[i*m + q] /= w[i*n + i];
        }
    }
    return 0;
}""",
    "slogdet": """
/* *sign and *logabs: the sign of det(a) and log|det(a)| of the strided n x n matrix a, by LU with partial
 * pivoting in the work array w (n*n); a singular matrix gives 0 and -inf, NaN entries NaN and NaN. */
static void gradc_slogdetF(long n, const T *restrict a, long ars, long acs, T *restrict w, T *sign, T *logabs)
{
    const long swaps = gradc_luF(n, 0, a, ars, acs, w, w);
    if (swaps < 0) {
        int nan = 0;
        for (long k = 0; k < n*n; ++k) {
            nan |= isnan(w[k]);
        }
        *sign = nan ? NAN : 0;
        *logabs = nan ? NAN : -INFINITY;
        return;
    }
    T s = swaps % 2 ? -1 : 1, total = 0;
    for (long i = 0; i < n; ++i) {
        const T d = w[i*n + i];
        s = d < 0 ? -s : s;
        total += logF(fabsF(d));
    }
    *sign = s;
    *logabs = total;
}""",
    "trimm": """
/* out = E b for the n x m matrix b, E the lower (lower != 0) or upper triangle of the n x n matrix a, or its
 * transpose (trans != 0); a and b are read through strides, out is contiguous. */
static void gradc_trimmF(long n, long m, const T *restrict a, long ars, long acs, const T *restrict b, long brs,
                        long bcs, T *restrict out, int lower, int trans)
{
    const long es = trans ? acs : ars, ek = trans ? ars : acs;  /* E[i][k] = a[i*es + k*ek] */
    const int below = lower != trans;  /* E lower */
    for (long i = 0; i < n; ++i) {
        for (long q = 0; q < m; ++q) {
            out[i*m + q] = 0;
        }
        const long k0 = below ? 0 : i, k1 = below ? i + 1 : n;
        for (long k = k0; k < k1; ++k) {
            const T e = a[i*es + k*ek];
            for (long q = 0; q < m; ++q) {
                out[i*m + q] += e * b[k*brs + q*bcs];
            }
        }
    }
}""",
    "cholesky_grad": """
/* abar = the cotangent of a for l = cholesky(a), from the cotangent g of l (lower triangles, strided): Murray's
 * (2016) unblocked reverse-mode algorithm, backwards over the columns; abar is contiguous, zeros above the
 * diagonal. */
static void gradc_cholesky_gradF(long n, const T *restrict l, long lrs, long lcs, const T *restrict g, long grs,
                                long gcs, T *restrict abar)
{
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            abar[i*n + j] = j <= i ? g[i*grs + j*gcs] : 0;
        }
    }
    for (long j = n - 1; j >= 0; --j) {
        const T d = l[j*lrs + j*lcs];
        T dbar = abar[j*n + j];
        for (long i = j + 1; i < n; ++i) {
            dbar -= l[i*lrs + j*lcs] * abar[i*n + j] / d;
        }
        dbar /= d;
        for (long k = 0; k < j; ++k) {
            abar[j*n + k] -= dbar * l[j*lrs + k*lcs];
        }
        for (long i = j + 1; i < n; ++i) {
            const T c = abar[i*n + j] / d;
            abar[i*n + j] = c;
            for (long k = 0; k < j; ++k) {
                abar[j*n + k] -= c * l[i*lrs + k*lcs];
                abar[i*n + k] -= c * l[j*lrs + k*lcs];
            }
        }
        abar[j*n + j] = dbar / 2;
    }
}""",
}
_HELPERS.update(DECOMP_HELPERS)  # eigh, svd, qr, expm (gradc.backends.c.linalg_decomp)
_NEEDS = {"solve": ("lu",), "slogdet": ("lu",), **DECOMP_NEEDS}  # helpers a helper calls (defined before it)
_EPSILON = {"double": "2.220446049250313e-16", "float": "1.1920929e-07F"}


def helper_text(kind: str, ctype: str) -> str:
    """The C source of helper ``kind`` for ``ctype`` ("double" or "float"; complex: ``COMPLEX_KINDS``).

    >>> "gradc_trisolvef(long n" in helper_text("trisolve", "float")
    True
    """
    if "_Complex" in ctype:  # (gradc.backends.c.linalg_complex)
        return complex_helper_text(kind, ctype, _HELPERS[kind] if kind in SAME_TEXT | set(EDITED) else "")
    suffix = "f" if ctype == "float" else ""
    text = _HELPERS[kind].replace("PIVOT_SIZE", "fabsF")  # (the complex lu's pivot: linalg_complex)
    text = text.replace("sqrtF", "sqrt" + suffix).replace("fabsF", "fabs" + suffix)
    text = text.replace("logF", "log" + suffix).replace("F(", suffix + "(").replace("EPS_T", _EPSILON[ctype])
    text = text.replace("MAX_SWEEPS", str(linalg_spectral.JACOBI_SWEEPS))
    text = text.replace("const R ", f"const {ctype} ").replace("    R ", f"    {ctype} ")  # (R: T's real type)
    return text.replace("const T ", f"const {ctype} ").replace("T *", f"{ctype} *").replace("    T ", f"    {ctype} ")


# NumPy's LinAlgError messages for the ops whose C helper returns 1 where LAPACK reports failure
_FAILURES = {"cholesky": "Matrix is not positive definite", "solve": "Singular matrix"}


def linalg_status(eqn) -> tuple | None:
    """``(what, message)`` of an op whose C helper can fail as NumPy's ``LinAlgError`` (its status), else None.

    >>> from types import SimpleNamespace
    >>> linalg_status(SimpleNamespace(op="cholesky"))[1], linalg_status(SimpleNamespace(op="trisolve"))
    ('Matrix is not positive definite', None)
    """
    message = _FAILURES.get(eqn.op)
    return None if message is None else (f"np.linalg.{eqn.op}: {message}", message)


class LinalgLowerings(DecompLowerings, EigLowerings, ComplexSpectralLowerings):
    """The lowerings of the matrix ops (see the module docstring); they use the emitter's ``emit``/``open``."""

    def linalg_helper(self, kind, dtype):
        ctype = C_TYPES[dtype]
        for need in (COMPLEX_NEEDS if "_Complex" in ctype else _NEEDS).get(kind, ()):
            self.linalg_helper(need, dtype)
        name = f"gradc_{kind}{SUFFIX[ctype]}"
        return self.module.helper(("gradc_linalg", kind, ctype), name, lambda: "\n" + helper_text(kind, ctype))

    def matrix_operand(self, atom) -> Loc:
        """``atom``'s location, copied row-major first when it is a constant or a scalar local (no array)."""
        loc = self.atom_loc(atom)
        if loc.value is not None:  # (named after the value, for the copy's name and comment)
            loc = Loc(atom_name(atom), loc.shape, loc.offset, loc.strides, loc.value, loc.local, loc.dtype)
        return self.contiguous_copy(loc) if loc.value is not None or loc.local else loc

    def each_matrix(self, e, operands, out, call, declare=""):
        """``call(pointers, out_pointer)`` once per index of the leading axes of ``out``'s matrices."""
        lead = len(out.shape) - (2 if e.op not in ("logabsdet", "det_sign", "det_phase") else 0)
        lines, idx = loops(out.shape[:lead])
        self.emit(f"/* {eqn_text(e)}{': one call per index of the leading axes' if lines else ''} */")
        if declare:
            self.emit(declare)
        self.open(lines)
        ptrs = [ptr(x.name, x.offset, list(zip(x.strides[:lead], idx))) for x in operands]
        if out.local:
            target = f"&{out.name}"
        else:
            target = ptr(out.name, out.offset, list(zip(out.strides[:lead], idx)))
        self.emit(call(ptrs, target))
        self.close(len(lines))

    def work(self, dtype, count, base):
        return self.scratch(base, dtype, count)  # the op's own workspace: free for later ops

    def op_cholesky(self, e):
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        fn, n = self.linalg_helper("cholesky", out.dtype), out.shape[-1]
        self.each_matrix(e, [a], out, lambda p, o: self.failing(e, f"{fn}({n}, {p[0]}, {a.strides[-2]}, "
                                                                   f"{a.strides[-1]}, {o})"))

    def failing(self, e, call: str) -> str:
        """The statement calling a helper that returns 1 on failure: the function returns ``e``'s status then."""
        limit = self.limit_of(e)
        return f"if ({call}) return {limit.code};" if limit is not None else f"{call};"

    def op_cholesky_grad(self, e):
        lf, g = (self.matrix_operand(x) for x in e.inputs)
        out = self.storage(e.out)
        fn, n = self.linalg_helper("cholesky_grad", out.dtype), out.shape[-1]
        self.each_matrix(e, [lf, g], out, lambda p, o: f"{fn}({n}, {p[0]}, {lf.strides[-2]}, {lf.strides[-1]}, "
                                                       f"{p[1]}, {g.strides[-2]}, {g.strides[-1]}, {o});")

    def _two_operand(self, e, kind, flags):
        a, b = (self.matrix_operand(x) for x in e.inputs)
        out = self.storage(e.out)
        fn, (n, m) = self.linalg_helper(kind, out.dtype), out.shape[-2:]
        self.each_matrix(e, [a, b], out, lambda p, o: self.failing(e, f"{fn}({n}, {m}, {p[0]}, {a.strides[-2]}, "
                                                                      f"{a.strides[-1]}, {p[1]}, {b.strides[-2]}, "
                                                                      f"{b.strides[-1]}, {o}{flags})"))

    def op_trisolve(self, e):
        self._two_operand(e, "trisolve", f", {int(e.params['lower'])}, {int(e.params['trans'])}")

    def op_trimm(self, e):
        self._two_operand(e, "trimm", f", {int(e.params['lower'])}, {int(e.params['trans'])}")

    def op_solve(self, e):
        n = e.out.type.shape[-2]
        self._two_operand(e, "solve", f", {self.work(e.out.type.dtype, n * n, e.out.name + '_lu')}")

    def op_slogdet(self, e):
        """``logabsdet`` and ``det_sign``/``det_phase``: one helper computes both, the other result goes to a local."""
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        dtype = e.inputs[0].type.dtype  # the matrix's (complex: the sign too; log|det| is real)
        fn, n = self.linalg_helper("slogdet", dtype), a.shape[-1]
        w = self.work(dtype, n * n, e.out.name + "_lu")
        other = self.pack_name("sign" if e.op == "logabsdet" else "logabsdet")  # the result not asked for
        other_dtype = dtype if e.op == "logabsdet" else REAL_OF.get(dtype, dtype)  # the sign, or log|det| (real)

        def call(p, o):
            pair = f"&{other}, {o}" if e.op == "logabsdet" else f"{o}, &{other}"
            return f"{fn}({n}, {p[0]}, {a.strides[-2]}, {a.strides[-1]}, {w}, {pair});"
        if C_TYPES[out.dtype] == C_TYPES[other_dtype]:
            declare = f"{C_TYPES[out.dtype]} {out.name + ', ' if out.local else ''}{other};"
        else:
            mine = f"{C_TYPES[out.dtype]} {out.name}; " if out.local else ""
            declare = f"{mine}{C_TYPES[other_dtype]} {other};"
        self.each_matrix(e, [a], out, call, declare)

    def op_eye_like(self, e):
        out = self.storage(e.out)
        lines, idx = loops(out.shape)
        self.emit(f"/* {eqn_text(e)} */")
        self.open(lines)
        self.emit(f"{out.at(idx)} = {idx[-2]} == {idx[-1]};")
        self.close(len(lines))

    def op_triangle(self, e):
        """``tri_mask`` (np.tril/np.triu with offset k) and ``tri_half`` (the triangle, diagonal halved)."""
        x = self.atom_loc(e.inputs[0])
        out = self.storage(e.out)
        lines, idx = loops(out.shape)
        i, j = idx[-2:]
        k = e.params.get("k", 0)
        keep = f"{j} <= {i} + {k}" if e.params["lower"] else f"{j} >= {i} + {k}"
        keep = keep.replace(" + 0", "").replace("+ -", "- ")
        self.emit(f"/* {eqn_text(e)} */")
        self.open(lines)
        # loaded before the select: no load under a condition (see fused.FusedRun._hoist_loads)
        v = f"q{self.temps}"  # a generated name (names.py): no user's array is called so
        self.temps += 1
        self.emit(f"const {C_TYPES[x.dtype]} {v} = {x.at(idx)};")
        if e.op == "tri_half":
            half = f"0.5{'F' if out.dtype == 'f32' else ''}"
            self.emit(f"{out.at(idx)} = {keep} ? ({i} == {j} ? {half} * {v} : {v}) : 0;")
        else:
            self.emit(f"{out.at(idx)} = {keep} ? {v} : 0;")
        self.close(len(lines))
