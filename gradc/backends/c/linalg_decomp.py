"""C lowerings of the dense decompositions: eigh, eigvalsh, svd, svdvals, qr and expm, in plain C99.

``DecompLowerings`` is a mixin of the C function emitter (through ``LinalgLowerings``); each op
calls a ``static`` helper (defined once per unit and dtype, as in ``gradc.backends.c.linalg``) on
each matrix of the leading axes, writing the op's packed result (see ``gradc.ops.linalg_decomp``
and ``linalg_svd``) directly. The algorithms (one per op, named in the C):

* ``eigh``/``eigvalsh``: cyclic Jacobi (``gradc.backends.c.linalg_spectral``);
* ``svd``/``svdvals``: one-sided Jacobi (Hestenes); a wide matrix is decomposed transposed;
* ``qr``: Householder QR with LAPACK's reflector convention (``dlarfg``: R's diagonal is
  ``-sign(alpha) |x|``, a column already zero below the diagonal is left alone), so Q and R equal
  NumPy's, signs included;
* ``expm``: scaling and squaring with the degree-13 Pade approximant (Higham 2005).

>>> "Householder" in DECOMP_HELPERS["qr"] and "Pade" in DECOMP_HELPERS["expm"]
True
"""
from __future__ import annotations

from gradc.backends.c.linalg_spectral import SPECTRAL_HELPERS, SPECTRAL_NEEDS
from gradc.backends.c.values import eqn_text, loops, ptr

DECOMP_HELPERS = {
    **SPECTRAL_HELPERS,
    "qr": """
/* The reduced QR of the strided m x n matrix a by Householder reflections H_j = I - tau_j v_j v_j^T (Golub &
 * Van Loan 5.2.2) with LAPACK's dgeqr2/dlarfg convention: R_jj = -sign(alpha) |(alpha, x)| for the column
 * (alpha; x) below the diagonal, no reflection (tau = 0) where x is zero; Q = H_0 ... H_{k-1} applied to the
 * first k = min(m, n) columns of I (dorg2r). q: m x k (row stride ldq); r: k x n (row stride ldr).
 * Work: w (m*n), tau (k). */
static void gradc_qrF(long m, long n, const T *restrict a, long rs, long cs, T *restrict q, long ldq,
                     T *restrict r, long ldr, T *restrict w, T *restrict tau)
{
    const long k = m < n ? m : n;
    for (long i = 0; i < m; ++i) {
        for (long j = 0; j < n; ++j) {
            w[i*n + j] = a[i*rs + j*cs];
        }
    }
    for (long j = 0; j < k; ++j) {
        const T alpha = w[j*n + j];
        T big = 0, xx = 0;  /* |x| = big sqrt(sum (x_i / big)^2): no overflow or underflow (as dnrm2) */
        for (long i = j + 1; i < m; ++i) {
            big = fabsF(w[i*n + j]) > big || isnan(w[i*n + j]) ? fabsF(w[i*n + j]) : big;
        }
        if (big == 0) {
            tau[j] = 0;
            continue;
        }
        for (long i = j + 1; i < m; ++i) {
            xx += (w[i*n + j] / big) * (w[i*n + j] / big);
        }
        const T beta = -copysignF(hypotF(alpha, big * sqrtF(xx)), alpha);
        tau[j] = (beta - alpha) / beta;
        const T scale = 1 / (alpha - beta);
        for (long i = j + 1; i < m; ++i) {
            w[i*n + j] *= scale;
        }
        w[j*n + j] = beta;
        for (long c = j + 1; c < n; ++c) {  /* the trailing columns: w <- H_j w */
            T d = w[j*n + c];
            for (long i = j + 1; i < m; ++i) {
                d += w[i*n + j] * w[i*n + c];
            }
            d *= tau[j];
            w[j*n + c] -= d;
            for (long i = j + 1; i < m; ++i) {
                w[i*n + c] -= d * w[i*n + j];
            }
        }
    }
    for (long i = 0; i < k; ++i) {
        for (long j = 0; j < n; ++j) {
            r[i*ldr + j] = j >= i ? w[i*n + j] : 0;
        }
    }
    for (long i = 0; i < m; ++i) {
        for (long j = 0; j < k; ++j) {
            q[i*ldq + j] = i == j;
        }
    }
    for (long j = k - 1; j >= 0; --j) {  /* q <- H_j q, last reflection first */
        for (long c = j; c < k; ++c) {
            T d = q[j*ldq + c];
            for (long i = j + 1; i < m; ++i) {
                d += w[i*n + j] * q[i*ldq + c];
            }
            d *= tau[j];
            q[j*ldq + c] -= d;
            for (long i = j + 1; i < m; ++i) {
                q[i*ldq + c] -= d * w[i*n + j];
            }
        }
    }
}""",
    "square_matmul": """
/* c = a b for contiguous n x n matrices, c distinct from both. No restrict: a and b are one matrix when squaring,
 * and with restrict there GCC -O3 gave wrong products once the helper was inlined. */
static void gradc_square_matmulF(long n, const T *a, const T *b, T *c)
{
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            c[i*n + j] = 0;
        }
        for (long l = 0; l < n; ++l) {
            const T x = a[i*n + l];
            for (long j = 0; j < n; ++j) {
                c[i*n + j] += x * b[l*n + j];
            }
        }
    }
}""",
    "expm": """
/* e = the matrix exponential of the strided n x n matrix a by scaling and squaring with the degree-13 Pade
 * approximant (Higham 2005, "The scaling and squaring method for the matrix exponential revisited", Alg. 2.3,
 * degree 13 only): x = a / 2^s with |x|_1 <= theta_13, r = (V - U)^-1 (V + U), e = r^(2^s). Input with NaN or
 * infinity gives NaN. Work: w (8*n*n). */
static void gradc_expmF(long n, const T *restrict a, long rs, long cs, T *restrict e, T *restrict w)
{
    static const double b[14] = {64764752532480000.0, 32382376266240000.0, 7771770303897600.0,
        1187353796428800.0, 129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
        40840800.0, 960960.0, 16380.0, 182.0, 1.0};
    const long nn = n*n;
    T *x = w, *a2 = w + nn, *a4 = w + 2*nn, *a6 = w + 3*nn, *u = w + 4*nn, *v = w + 5*nn, *t = w + 6*nn;
    T norm1 = 0;
    for (long j = 0; j < n; ++j) {
        T col = 0;
        for (long i = 0; i < n; ++i) {
            col += fabsF(a[i*rs + j*cs]);
        }
        norm1 = col > norm1 || isnan(col) ? col : norm1;
    }
    if (!isfinite(norm1)) {
        for (long i = 0; i < nn; ++i) {
            e[i] = NAN;
        }
        return;
    }
    int s = 0;
    if (norm1 > 5.371920351148152) {  /* s = ceil(log2(norm1 / theta_13)) */
        const T ratio = frexpF(norm1 / 5.371920351148152, &s);
        s -= ratio == 0.5;
    }
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            x[i*n + j] = ldexpF(a[i*rs + j*cs], -s);
        }
    }
    gradc_square_matmulF(n, x, x, a2);
    gradc_square_matmulF(n, a2, a2, a4);
    gradc_square_matmulF(n, a4, a2, a6);
    for (long i = 0; i < nn; ++i) {
        t[i] = b[13]*a6[i] + b[11]*a4[i] + b[9]*a2[i];
    }
    gradc_square_matmulF(n, a6, t, v);
    for (long i = 0; i < nn; ++i) {
        v[i] += b[7]*a6[i] + b[5]*a4[i] + b[3]*a2[i] + (i % (n + 1) == 0 ? b[1] : 0);
    }
    gradc_square_matmulF(n, x, v, u);  /* U = x (a6 (b13 a6 + b11 a4 + b9 a2) + b7 a6 + b5 a4 + b3 a2 + b1 I) */
    for (long i = 0; i < nn; ++i) {
        t[i] = b[12]*a6[i] + b[10]*a4[i] + b[8]*a2[i];
    }
    gradc_square_matmulF(n, a6, t, v);
    for (long i = 0; i < nn; ++i) {  /* V = a6 (b12 a6 + b10 a4 + b8 a2) + b6 a6 + b4 a4 + b2 a2 + b0 I */
        v[i] += b[6]*a6[i] + b[4]*a4[i] + b[2]*a2[i] + (i % (n + 1) == 0 ? b[0] : 0);
    }
    for (long i = 0; i < nn; ++i) {
        t[i] = v[i] - u[i];
        a2[i] = v[i] + u[i];
    }
    gradc_solveF(n, n, t, n, 1, a2, n, 1, e, w + 7*nn);
    for (int k = 0; k < s; ++k) {
        gradc_square_matmulF(n, e, e, t);
        for (long i = 0; i < nn; ++i) {
            e[i] = t[i];
        }
    }
}""",
}
DECOMP_NEEDS = {**SPECTRAL_NEEDS, "expm": ("square_matmul", "lu", "solve")}


class DecompLowerings:
    """The lowerings of eigh, eigvalsh, svd, svdvals, qr and expm (see the module docstring)."""

    def each_decomposition(self, e, a, out, lead, call):
        """``call(operand_pointer, out_pointer)`` once per index of the ``lead`` leading axes."""
        lines, idx = loops(out.shape[:lead])
        self.emit(f"/* {eqn_text(e)}{': one call per index of the leading axes' if lines else ''} */")
        self.open(lines)
        self.emit(call(ptr(a.name, a.offset, list(zip(a.strides[:lead], idx))),
                       ptr(out.name, out.offset, list(zip(out.strides[:lead], idx)))))
        self.close(len(lines))

    def op_eigh(self, e):
        """``eigh`` (packed: eigenvalues on row 0, eigenvectors below) and ``eigvalsh``."""
        if e.inputs[0].type.is_complex:  # (gradc.backends.c.linalg_complex_spectral)
            return self.complex_eigh(e)
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        n, vectors = a.shape[-1], e.op == "eigh"
        fn = self.linalg_helper("eigh", out.dtype)
        s = self.work(out.dtype, n * n, e.out.name + "_jacobi")
        lower = int(e.params["lower"])
        self.each_decomposition(e, a, out, len(out.shape) - (2 if vectors else 1), lambda p, o: (
            f"{fn}({n}, {p}, {a.strides[-2]}, {a.strides[-1]}, {lower}, {o}, "
            f"{f'{o} + {n}' if vectors else 'NULL'}, {n}, {s});"))

    def op_svd(self, e):
        """``svd`` (packed [U; s; V], k = min(m, n) columns) and ``svdvals``; a wide matrix is decomposed transposed."""
        if e.inputs[0].type.is_complex:  # (gradc.backends.c.linalg_complex_spectral)
            return self.complex_svd(e)
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        m, n = a.shape[-2:]
        k, wide, vectors = min(m, n), m < n, e.op == "svd"
        fn = self.linalg_helper("svd", out.dtype)
        rs, cs = (a.strides[-1], a.strides[-2]) if wide else (a.strides[-2], a.strides[-1])
        big, small = max(m, n), k  # the helper's m >= n
        if vectors:
            # the helper's u (big x k) is U for tall input, V for wide; its v (k x k) the other one
            u_at, v_at = ("{o} + " + str((m + 1) * k), "{o}") if wide else ("{o}", "{o} + " + str((m + 1) * k))

            def call(p, o):
                return (f"{fn}({big}, {small}, {p}, {rs}, {cs}, {u_at.format(o=o)}, {k}, {o} + {m * k}, "
                        f"{v_at.format(o=o)}, {k});")
        else:
            u = self.work(out.dtype, big * small, e.out.name + "_columns")

            def call(p, o):
                return f"{fn}({big}, {small}, {p}, {rs}, {cs}, {u}, {k}, {o}, NULL, 0);"
        self.each_decomposition(e, a, out, len(out.shape) - (2 if vectors else 1), call)

    def op_qr(self, e):
        """``qr``: packed [Q; R] along axis -2 (tall or square) or [Q, R] along axis -1 (wide)."""
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        m, n = a.shape[-2:]
        fn = self.linalg_helper("qr", out.dtype)
        w = self.work(out.dtype, m * n, e.out.name + "_householder")
        tau = self.work(out.dtype, min(m, n), e.out.name + "_tau")
        if m >= n:
            place = lambda o: f"{o}, {n}, {o} + {m * n}, {n}"  # noqa: E731
        else:
            place = lambda o: f"{o}, {m + n}, {o} + {m}, {m + n}"  # noqa: E731
        self.each_decomposition(e, a, out, len(out.shape) - 2, lambda p, o: (
            f"{fn}({m}, {n}, {p}, {a.strides[-2]}, {a.strides[-1]}, {place(o)}, {w}, {tau});"))

    def op_expm(self, e):
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        n = a.shape[-1]
        fn = self.linalg_helper("expm", out.dtype)
        w = self.work(out.dtype, 8 * n * n, e.out.name + "_pade")
        self.each_decomposition(e, a, out, len(out.shape) - 2, lambda p, o: (
            f"{fn}({n}, {p}, {a.strides[-2]}, {a.strides[-1]}, {o}, {w});"))
