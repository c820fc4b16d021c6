"""C lowerings on complex matrices: ``eig`` (the general eigenproblem) and ``det_phase``.

``EigLowerings`` is a mixin of the C function emitter (through ``LinalgLowerings``). Plain C99
``complex.h`` (LAPACK only where the module was given it); the algorithms, named again in the C:

* ``eig``: LAPACK's ``geev`` (complex or real, as NumPy) for a matrix of at least
  ``lapack.EIG_LAPACK_MIN`` rows when the module found LAPACK at load time
  (``gradc.backends.c.lapack``: then NumPy's eigenpairs, order included); otherwise
  Householder reduction to upper Hessenberg form, then the single-shift complex QR
  algorithm (Wilkinson shifts, an exceptional shift every 10 iterations without deflation, at
  most ``30 * max(10, n)`` iterations; Golub & Van Loan, Matrix Computations, 4th ed., 7.4-7.5)
  to the Schur form ``T = Q^H A Q``; eigenvectors by back-substitution on ``T`` (as LAPACK's
  ``ztrevc``: a pivot smaller than ``eps |t_kk|`` is replaced by that) and ``V = Q Y``. A real
  matrix is decomposed in complex arithmetic: its real eigenvalues carry imaginary parts of
  rounding size, where LAPACK's real algorithm gives exact zeros.
* ``det_phase`` (and ``logabsdet``, ``solve`` of complex matrices): the complex LU of
  ``gradc.backends.c.linalg_complex`` (the pivot of largest ``|re| + |im|``, LAPACK's ``izamax``).

Conventions of gradc's own eig: the eigenvalues come in the order the QR iteration deflates them (bottom up,
stored along T's diagonal), which need not be LAPACK's order; each eigenvector has unit norm
and its entry of largest modulus (the first of equals) real and positive, which is LAPACK's
``zgeev`` normalisation (``dgeev``, for a real matrix, leaves that entry's sign to its
algorithm). Functions of the eigenpairs that do not depend on their order or each vector's
phase (the only ones with a derivative) agree with the NumPy target. Input with NaN or
infinity, or an iteration that does not converge, gives NaN everywhere.

>>> "Hessenberg" in complex_helper_text("eig", "f64", "c128")
True
"""
from __future__ import annotations

from gradc.backends.c import lapack
from gradc.backends.c.values import C_TYPES

_REAL = {"c128": "f64", "c64": "f32"}
_EPSILON = {"c128": "2.220446049250313e-16", "c64": "1.1920929e-07F"}
_TINY = {"c128": "2.2250738585072014e-308", "c64": "1.17549435e-38F"}  # the smallest normal number
_BIG = {"c128": "1e150", "c64": "1e18F"}  # back-substitution rescales past this (no overflow on the way)

_HELPERS = {
    "cabs1": """
/* |re z| + |im z|: LAPACK's cheap modulus (pivots, deflation tests) */
static inline RT gradc_cabs1_SUF(CT z)
{
    return fabsF(crealF(z)) + fabsF(cimagF(z));
}""",
    "eig": """
/* w (n) and v (n x n, row stride ldv; column j the eigenvector of w[j]) of the strided n x n matrix a (real or
 * complex): Householder reduction to Hessenberg form H = Q^H A Q, then the single-shift complex QR algorithm
 * (Golub & Van Loan 7.4-7.5: Wilkinson shifts, explicit shifted QR steps by Givens rotations, deflation where
 * a subdiagonal entry falls below eps (|h_(k-1)(k-1)| + |h_kk|), an exceptional shift every 10 steps without
 * deflation) to the Schur form T; each eigenvector solves (T - t_kk I) y = 0 by back-substitution (as
 * LAPACK's ztrevc), v = Q y, scaled to unit norm with its entry of largest modulus real and positive. NaN or
 * infinite input, or no convergence in 30 max(10, n) steps, gives NaN. Work: h, q (n*n each), y, g (2n), lw
 * (LAPACK's work). From LAPACK_MIN rows, LAPACK's geev when the unit has it (gradc.backends.c.lapack). */
static void gradc_eig_INSUF(long n, const IT *restrict a, long rs, long cs, CT *restrict w, CT *restrict v,
                            long ldv, CT *restrict h, CT *restrict q, CT *restrict y, CT *restrict g,
                            CT *restrict lw)
{
    RT big = 0;
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            h[i*n + j] = a[i*rs + j*cs];
            const RT m = gradc_cabs1_SUF(h[i*n + j]);
            big = m > big || isnan(m) ? m : big;
        }
    }
    int ok = isfinite(big);
LAPACK_BLOCK
    int scale = 0;  /* a power of two bringing the largest |re| + |im| to [0.5, 1): exact, no overflow later */
    frexpF(ok && big > 0 ? big : 1, &scale);
    const RT down = ldexpF((RT)1, -scale), up = ldexpF((RT)1, scale);
    for (long i = 0; i < n*n; ++i) {
        h[i] *= down;
        q[i] = i % (n + 1) == 0;
    }
    /* Hessenberg: reflections P = I - 2 u u^H / (u^H u) with u = x + phase(x_0) |x| e_0 for x = h[k+1:, k] */
    for (long k = 0; ok && k + 2 < n; ++k) {
        RT most = 0, tail = 0, ss = 0;
        for (long i = k + 1; i < n; ++i) {
            const RT m = cabsF(h[i*n + k]);
            most = m > most ? m : most;
            tail += i > k + 1 ? m : 0;
        }
        if (tail == 0) {
            continue;  /* already zero below the subdiagonal */
        }
        for (long i = k + 1; i < n; ++i) {  /* u scaled by 1 / max|x_i|: no underflow in u^H u */
            y[i] = h[i*n + k] / most;
            const RT m = cabsF(y[i]);
            ss += m * m;
        }
        const RT lead = cabsF(y[k + 1]);
        y[k + 1] += (lead > 0 ? y[k + 1] / lead : 1) * sqrtF(ss);
        RT uu = 0;
        for (long i = k + 1; i < n; ++i) {
            uu += crealF(y[i] * conjF(y[i]));
        }
        const RT beta = 2 / uu;
        for (long j = k; j < n; ++j) {  /* h <- P h (rows k+1..n-1) */
            CT d = 0;
            for (long i = k + 1; i < n; ++i) {
                d += conjF(y[i]) * h[i*n + j];
            }
            d *= beta;
            for (long i = k + 1; i < n; ++i) {
                h[i*n + j] -= d * y[i];
            }
        }
        for (long i = 0; i < n; ++i) {  /* h <- h P and q <- q P (columns k+1..n-1) */
            CT d = 0, e = 0;
            for (long j = k + 1; j < n; ++j) {
                d += h[i*n + j] * y[j];
                e += q[i*n + j] * y[j];
            }
            d *= beta;
            e *= beta;
            for (long j = k + 1; j < n; ++j) {
                h[i*n + j] -= d * conjF(y[j]);
                q[i*n + j] -= e * conjF(y[j]);
            }
        }
        for (long i = k + 2; i < n; ++i) {
            h[i*n + k] = 0;
        }
    }
    /* shifted QR on the active block lo..hi, deflating from the bottom */
    const long most_steps = 30 * (n > 10 ? n : 10);
    long hi = n - 1, steps = 0, quiet = 0;
    while (ok && hi > 0) {
        long lo = hi;
        for (; lo > 0; --lo) {
            const RT near = gradc_cabs1_SUF(h[(lo - 1)*n + lo - 1]) + gradc_cabs1_SUF(h[lo*n + lo]);
            if (gradc_cabs1_SUF(h[lo*n + lo - 1]) <= EPS_T * near || gradc_cabs1_SUF(h[lo*n + lo - 1]) < TINY_T) {
                h[lo*n + lo - 1] = 0;
                break;
            }
        }
        if (lo == hi) {
            --hi;
            quiet = 0;
            continue;
        }
        if (++steps > most_steps) {
            ok = 0;
            break;
        }
        CT mu;
        const CT p = h[(hi - 1)*n + hi - 1], b = h[(hi - 1)*n + hi], c = h[hi*n + hi - 1], d = h[hi*n + hi];
        if (++quiet % 10 == 0) {  /* exceptional shift: breaks a cycle of the Wilkinson shifts */
            mu = d + (RT)0.75 * gradc_cabs1_SUF(c);
        } else {  /* Wilkinson: the eigenvalue of the trailing 2 x 2 block nearer to its last diagonal entry */
            const CT half = (p - d) / 2, root = csqrtF(half * half + b * c);
            const CT m1 = d + half + root, m2 = d + half - root;
            mu = gradc_cabs1_SUF(m1 - d) <= gradc_cabs1_SUF(m2 - d) ? m1 : m2;
        }
        for (long i = lo; i <= hi; ++i) {
            h[i*n + i] -= mu;
        }
        for (long k = lo; k < hi; ++k) {  /* h - mu I = G R: G_k^H zeroes h[k+1][k] */
            const CT x0 = h[k*n + k], x1 = h[(k + 1)*n + k];
            const RT ax = cabsF(x0), r = hypotF(ax, cabsF(x1));
            RT cc = 1;
            CT sn = 0;
            if (r > 0) {
                cc = ax / r;
                sn = (ax > 0 ? x0 / ax : 1) * conjF(x1) / r;
            }
            g[k] = cc;
            g[n + k] = sn;
            for (long j = k; j < n; ++j) {
                const CT t0 = h[k*n + j], t1 = h[(k + 1)*n + j];
                h[k*n + j] = cc * t0 + sn * t1;
                h[(k + 1)*n + j] = cc * t1 - conjF(sn) * t0;
            }
        }
        for (long k = lo; k < hi; ++k) {  /* R G + mu I, and q <- q G */
            const RT cc = crealF(g[k]);
            const CT sn = g[n + k];
            for (long i = 0; i <= k + 1; ++i) {
                const CT t0 = h[i*n + k], t1 = h[i*n + k + 1];
                h[i*n + k] = cc * t0 + conjF(sn) * t1;
                h[i*n + k + 1] = cc * t1 - sn * t0;
            }
            for (long i = 0; i < n; ++i) {
                const CT t0 = q[i*n + k], t1 = q[i*n + k + 1];
                q[i*n + k] = cc * t0 + conjF(sn) * t1;
                q[i*n + k + 1] = cc * t1 - sn * t0;
            }
        }
        for (long i = lo; i <= hi; ++i) {
            h[i*n + i] += mu;
        }
    }
    for (long k = 0; k < n; ++k) {
        w[k] = ok ? h[k*n + k] * up : NAN;
    }
    for (long k = n - 1; v && k >= 0; --k) {
        if (!ok) {
            for (long r = 0; r < n; ++r) {
                v[r*ldv + k] = NAN;
            }
            continue;
        }
        /* (T - t_kk I) y = 0 with y_k = 1, y_j = 0 below */
        const CT tkk = h[k*n + k];
        RT smin = EPS_T * gradc_cabs1_SUF(tkk);
        smin = smin > TINY_T ? smin : TINY_T;
        y[k] = 1;
        for (long i = k - 1; i >= 0; --i) {
            CT s = 0;
            for (long j = i + 1; j <= k; ++j) {
                s += h[i*n + j] * y[j];
            }
            CT pivot = h[i*n + i] - tkk;
            if (gradc_cabs1_SUF(pivot) < smin) {
                pivot = smin;
            }
            y[i] = -s / pivot;
            const RT grown = gradc_cabs1_SUF(y[i]);
            if (grown > BIG_T) {  /* rescale before an overflow (the vector is normalised below) */
                for (long j = i; j <= k; ++j) {
                    y[j] /= grown;
                }
            }
        }
        RT most = 0;
        long at = 0;
        for (long r = 0; r < n; ++r) {
            CT s = 0;
            for (long j = 0; j <= k; ++j) {
                s += q[r*n + j] * y[j];
            }
            v[r*ldv + k] = s;
            const RT m = cabsF(s);
            if (m > most) {
                most = m;
                at = r;
            }
        }
        RT ss = 0;
        for (long r = 0; r < n; ++r) {
            const RT m = cabsF(v[r*ldv + k]) / most;
            ss += m * m;
        }
        /* unit norm, the entry of largest modulus real and positive */
        const CT turn = conjF(v[at*ldv + k]) / most / (most * sqrtF(ss));
        for (long r = 0; r < n; ++r) {
            v[r*ldv + k] *= turn;
        }
        v[at*ldv + k] = crealF(v[at*ldv + k]);
    }
}""",
}
# LAPACK's geev on a matrix of at least LAPACK_MIN rows (h: the matrix, row-major; q, h, y, lw its work): zgeev/cgeev
# for a complex matrix (zgeev's normalisation is gradc's own), dgeev/sgeev for a real one (NumPy's own results:
# its eigenvalues in conjugate pairs, exactly, and a real eigenvector's sign LAPACK's)
_LAPACK_COMPLEX = """    if (ok && n >= LAPACK_MIN && GEEV) {
        for (long i = 0; i < n; ++i) {
            for (long j = 0; j < n; ++j) {
                q[j*n + i] = h[i*n + j];
            }
        }
        const char no = 'N', yes = 'V';
        const int in = (int)n, one = 1, lwork = (int)(LWORK_ROWS * n);
        int info = 0;
        GEEV(&no, &yes, &in, q, &in, w, h, &one, h, &in, lw, &lwork, (RT *)y, &info);
        for (long i = 0; i < n; ++i) {
            for (long j = 0; j < n; ++j) {
                v[i*ldv + j] = info == 0 ? h[j*n + i] : NAN;
            }
            w[i] = info == 0 ? w[i] : NAN;
        }
        return;
    }"""
_LAPACK_REAL = """    if (ok && n >= LAPACK_MIN && GEEV) {
        RT *ar = (RT *)q, *vr = (RT *)h, *wr = (RT *)y, *wi = (RT *)y + n;
        for (long i = 0; i < n; ++i) {
            for (long j = 0; j < n; ++j) {
                ar[j*n + i] = a[i*rs + j*cs];
            }
        }
        const char no = 'N', yes = 'V';
        const int in = (int)n, one = 1, lwork = (int)(2 * LWORK_ROWS * n);
        int info = 0;
        GEEV(&no, &yes, &in, ar, &in, wr, wi, vr, &one, vr, &in, (RT *)lw, &lwork, &info);
        for (long j = 0; j < n; ++j) {  /* a pair's vectors: columns j and j + 1 are its real and imaginary parts */
            const int pair = info == 0 && wi[j] > 0 && j + 1 < n;
            w[j] = info == 0 ? gradc_complex(wr[j], wi[j]) : NAN;
            for (long i = 0; i < n; ++i) {
                v[i*ldv + j] = info != 0 ? NAN : pair ? gradc_complex(vr[j*n + i], vr[(j + 1)*n + i]) : vr[j*n + i];
            }
            if (pair) {
                w[j + 1] = conjF(w[j]);
                for (long i = 0; i < n; ++i) {
                    v[i*ldv + j + 1] = conjF(v[i*ldv + j]);
                }
                ++j;
            }
        }
        return;
    }"""
_NEEDS = {"eig": ("cabs1",)}


def complex_helper_text(kind: str, input_dtype: str, complex_dtype: str) -> str:
    """The C source of helper ``kind`` on complex ``complex_dtype`` ("c128" or "c64"), reading ``input_dtype``.

    >>> "static void gradc_eig_f32(long n, const float *restrict a" in complex_helper_text("eig", "f32", "c64")
    True
    """
    real = _REAL[complex_dtype]
    suffix = "f" if real == "f32" else ""
    real_input = input_dtype in ("f64", "f32")
    text = _HELPERS[kind].replace("LAPACK_BLOCK", _LAPACK_REAL if real_input else _LAPACK_COMPLEX)
    text = text.replace("INSUF", input_dtype).replace("SUF", complex_dtype).replace("F(", suffix + "(")
    text = text.replace("EPS_T", _EPSILON[complex_dtype]).replace("TINY_T", _TINY[complex_dtype])
    text = text.replace("BIG_T", _BIG[complex_dtype]).replace("IT ", C_TYPES[input_dtype] + " ")
    geev = {"f64": "dgeev", "f32": "sgeev", "c128": "zgeev", "c64": "cgeev"}[input_dtype]
    text = text.replace("GEEV", "gradc_lapack_" + geev)
    text = text.replace("LAPACK_MIN", str(lapack.EIG_LAPACK_MIN)).replace("LWORK_ROWS", str(lapack.LWORK_PER_ROW))
    return text.replace("CT ", C_TYPES[complex_dtype] + " ").replace("RT ", C_TYPES[real] + " ").replace(
        "(RT)", f"({C_TYPES[real]})")


class EigLowerings:
    """The lowerings of ``eig`` and ``det_phase``."""

    def complex_helper(self, kind, complex_dtype, input_dtype=None):
        input_dtype = input_dtype or complex_dtype
        for need in _NEEDS.get(kind, ()):
            self.complex_helper(need, complex_dtype)
        name = f"gradc_{kind}_{input_dtype if kind == 'eig' else complex_dtype}"
        return self.module.helper(("gradc_complex_linalg", kind, input_dtype, complex_dtype), name,
                                  lambda: "\n" + complex_helper_text(kind, input_dtype, complex_dtype))

    def op_eig(self, e):
        """``eig``: packed [w; V] (shape (..., n + 1, n)), complex, of a real or complex matrix."""
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        n = a.shape[-1]
        self.module.helper(("gradc_lapack", "pointers"), "gradc_lapack_zgeev", lapack.pointer_declarations)
        fn = self.complex_helper("eig", out.dtype, a.dtype)
        h = self.work(out.dtype, n * n, e.out.name + "_hessenberg")
        q = self.work(out.dtype, n * n, e.out.name + "_schur")
        y = self.work(out.dtype, 2 * n, e.out.name + "_vector")
        g = self.work(out.dtype, 2 * n, e.out.name + "_rotations")
        # LAPACK's work (only from EIG_LAPACK_MIN rows: smaller matrices never call it)
        lw = self.work(out.dtype, lapack.LWORK_PER_ROW * n if n >= lapack.EIG_LAPACK_MIN else 1,
                       e.out.name + "_lapack")
        self.each_decomposition(e, a, out, len(out.shape) - 2, lambda p, o: (
            f"{fn}({n}, {p}, {a.strides[-2]}, {a.strides[-1]}, {o}, {o} + {n}, {n}, {h}, {q}, {y}, {g}, {lw});"))

    def op_det_phase(self, e):
        self.op_slogdet(e)  # (gradc.backends.c.linalg: the complex LU of gradc.backends.c.linalg_complex)
