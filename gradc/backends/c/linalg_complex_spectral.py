"""C99 sources of the Hermitian eigenproblem and the SVD of complex matrices (Jacobi methods, as the real ones).

The real helpers (``gradc.backends.c.linalg_spectral``) with complex rotations: a pair (p, q)
whose off-diagonal entry is ``g e`` (``g = |a_pq|``, ``e`` a unit complex number) is first turned
real by the diagonal phase ``diag(1, conj(e))``, then rotated by the real Jacobi rotation of
``[[a_pp, g], [g, a_qq]]``; the product ``U = diag(1, conj(e)) G`` is unitary, so ``U^H A U`` (or
``A U`` for the one-sided SVD) keeps the spectrum. ``T`` is the complex type, ``R`` its real type.

The eigenvalues and singular values (real) are written through ``void *`` as real or as complex
numbers (``eigh`` packs them with the complex eigenvectors, ``eigvalsh``/``svdvals`` return real
arrays). Each eigenvector (each right singular vector, its left one following) is multiplied by the
phase that makes its entry of largest magnitude (the first of equals) real and positive: NumPy's
phases come out of LAPACK's algorithm and cannot be reproduced, so only phase-free functions of the
vectors (the ones with a derivative) agree with the NumPy target. A wide matrix's SVD is that of its
conjugate transpose (``conj_a``), whose ``U`` and ``V`` swap places.

>>> "diag(1, conj(e))" in COMPLEX_SPECTRAL["eigh"]
True
"""
from __future__ import annotations

COMPLEX_SPECTRAL = {
    "eigh": """
/* The eigenvalues (n, ascending; written to w as R, or as T when w_complex) and v (n x n, row stride ldv, column j
 * the eigenvector of eigenvalue j; NULL: eigenvalues only) of the Hermitian matrix whose lower (lower != 0) or
 * upper triangle the strided n x n complex a holds (the diagonal's imaginary part unread), by the cyclic Jacobi
 * method with complex rotations diag(1, conj(e)) G (see the module docstring). Each eigenvector's entry of
 * largest magnitude is made real and positive. Work: s (n*n + n). */
static void gradc_eighF(long n, const T *restrict a, long rs, long cs, int lower, void *w, int w_complex,
                       T *restrict v, long ldv, T *restrict s)
{
    R *wr = (R *)(s + n*n);
    R big = 0;
    int sweep = 0;
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j <= i; ++j) {
            T x = lower ? a[i*rs + j*cs] : conj(a[j*rs + i*cs]);  /* A_ij, i >= j */
            x = i == j ? creal(x) : x;
            s[i*n + j] = x;
            s[j*n + i] = conj(x);
            big = fabs(x) > big || isnan(fabs(x)) ? fabs(x) : big;
        }
    }
    for (long i = 0; v && i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            v[i*ldv + j] = isfinite(big) ? i == j : NAN;
        }
    }
    if (!isfinite(big)) {
        for (long i = 0; i < n; ++i) {
            wr[i] = NAN;
        }
    } else {
        int scale = 0;  /* a power of two bringing the largest magnitude to [0.5, 1): exact */
        frexp(big, &scale);
        for (long i = 0; i < n*n; ++i) {
            s[i] *= ldexp((R)1, -scale);
        }
        const R floor_ = EPS_T * EPS_T;
        for (; sweep < MAX_SWEEPS; ++sweep) {
            int rotated = 0;
            for (long p = 0; p < n; ++p) {
                for (long q = p + 1; q < n; ++q) {
                    const T apq = s[p*n + q];
                    const R app = creal(s[p*n + p]), aqq = creal(s[q*n + q]), g = fabs(apq);
                    if (!(g > EPS_T * sqrt(fabs(app)) * sqrt(fabs(aqq)) && g > floor_)) {
                        continue;
                    }
                    rotated = 1;
                    const T e = apq / g, ce = conj(e);
                    const R tau = (aqq - app) / (2 * g);
                    const R t = (tau >= 0 ? 1 : -1) / (fabs(tau) + hypot(1, tau));
                    const R c = 1 / sqrt(1 + t*t), sn = t * c;
                    for (long k = 0; k < n; ++k) {
                        const T akp = s[k*n + p], akq = s[k*n + q];
                        s[k*n + p] = c * akp - sn * ce * akq;
                        s[k*n + q] = sn * akp + c * ce * akq;
                    }
                    for (long k = 0; k < n; ++k) {
                        const T apk = s[p*n + k], aqk = s[q*n + k];
                        s[p*n + k] = c * apk - sn * e * aqk;
                        s[q*n + k] = sn * apk + c * e * aqk;
                    }
                    s[p*n + p] = app - t * g;
                    s[q*n + q] = aqq + t * g;
                    s[p*n + q] = 0;
                    s[q*n + p] = 0;
                    for (long k = 0; v && k < n; ++k) {
                        const T vkp = v[k*ldv + p], vkq = v[k*ldv + q];
                        v[k*ldv + p] = c * vkp - sn * ce * vkq;
                        v[k*ldv + q] = sn * vkp + c * ce * vkq;
                    }
                }
            }
            if (!rotated) {
                break;
            }
        }
        for (long i = 0; i < n; ++i) {  /* never a sweep without rotations: NaN, not the unconverged values */
            wr[i] = sweep == MAX_SWEEPS ? NAN : ldexp(creal(s[i*n + i]), scale);
            for (long j = 0; v && sweep == MAX_SWEEPS && j < n; ++j) {
                v[i*ldv + j] = NAN;
            }
        }
    }
    for (long i = 0; i < n; ++i) {  /* ascending by selection (the first minimum first), v's columns along */
        long best = i;
        for (long j = i + 1; j < n; ++j) {
            if (wr[j] < wr[best]) {
                best = j;
            }
        }
        if (best == i) {
            continue;
        }
        const R t = wr[i]; wr[i] = wr[best]; wr[best] = t;
        for (long r = 0; v && r < n; ++r) {
            const T y = v[r*ldv + i]; v[r*ldv + i] = v[r*ldv + best]; v[r*ldv + best] = y;
        }
    }
    for (long j = 0; v && j < n; ++j) {  /* phases: the entry of largest magnitude real and positive */
        long top = 0;
        for (long r = 1; r < n; ++r) {
            if (fabs(v[r*ldv + j]) > fabs(v[top*ldv + j])) {
                top = r;
            }
        }
        if (fabs(v[top*ldv + j]) > 0) {
            const T phase = conj(v[top*ldv + j]) / fabs(v[top*ldv + j]);
            for (long r = 0; r < n; ++r) {
                v[r*ldv + j] *= phase;
            }
        }
    }
    for (long i = 0; i < n; ++i) {
        if (w_complex) {
            ((T *)w)[i] = wr[i];
        } else {
            ((R *)w)[i] = wr[i];
        }
    }
}""",
    "svd": """
/* u (m x n, row stride ldu), the singular values (n, descending; written to sv_out as R, or as T when sv_complex)
 * and v (n x n, row stride ldv; NULL: not wanted) = the thin SVD a = u diag(s) v^H of the strided m x n complex a
 * (conjugated when conj_a), m >= n, by one-sided Jacobi with complex rotations (see the module docstring): pairs
 * of columns of u are rotated until orthogonal to eps |u_p| |u_q|; s = the column norms, u's columns normalised;
 * a zero singular value's column of u is completed to an orthonormal basis (Gram-Schmidt on unit vectors). Each
 * column of v has its entry of largest magnitude real and positive (u's column takes the same phase). Work: sv (n). */
static void gradc_svdF(long m, long n, const T *restrict a, long rs, long cs, int conj_a, T *restrict u, long ldu,
                      void *sv_out, int sv_complex, T *restrict v, long ldv, R *restrict sv)
{
    R big = 0;
    for (long i = 0; i < m; ++i) {
        for (long j = 0; j < n; ++j) {
            u[i*ldu + j] = conj_a ? conj(a[i*rs + j*cs]) : a[i*rs + j*cs];
            big = fabs(u[i*ldu + j]) > big || isnan(fabs(u[i*ldu + j])) ? fabs(u[i*ldu + j]) : big;
        }
    }
    int finite = isfinite(big);
    int scale = 0;  /* a power of two bringing the largest magnitude to [0.5, 1): no overflow or underflow */
    frexp(finite ? big : 1, &scale);
    for (long i = 0; i < m; ++i) {
        for (long j = 0; j < n; ++j) {
            u[i*ldu + j] *= ldexp((R)1, -scale);
        }
    }
    for (long i = 0; v && i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            v[i*ldv + j] = finite ? i == j : NAN;
        }
    }
    int sweep = 0;
    for (; finite && sweep < MAX_SWEEPS; ++sweep) {
        int rotated = 0;
        for (long p = 0; p < n; ++p) {
            for (long q = p + 1; q < n; ++q) {
                R alpha = 0, beta = 0;
                T gamma = 0;
                for (long k = 0; k < m; ++k) {
                    const T up = u[k*ldu + p], uq = u[k*ldu + q];
                    alpha += creal(up) * creal(up) + cimag(up) * cimag(up);
                    beta += creal(uq) * creal(uq) + cimag(uq) * cimag(uq);
                    gamma += conj(up) * uq;
                }
                const R g = fabs(gamma);
                if (!(g > EPS_T * sqrt(alpha) * sqrt(beta))) {
                    continue;
                }
                rotated = 1;
                const T ce = conj(gamma / g);
                const R zeta = (beta - alpha) / (2 * g);
                const R t = (zeta >= 0 ? 1 : -1) / (fabs(zeta) + hypot(1, zeta));
                const R c = 1 / sqrt(1 + t*t), sn = t * c;
                for (long k = 0; k < m; ++k) {
                    const T up = u[k*ldu + p], uq = u[k*ldu + q];
                    u[k*ldu + p] = c * up - sn * ce * uq;
                    u[k*ldu + q] = sn * up + c * ce * uq;
                }
                for (long k = 0; v && k < n; ++k) {
                    const T vp = v[k*ldv + p], vq = v[k*ldv + q];
                    v[k*ldv + p] = c * vp - sn * ce * vq;
                    v[k*ldv + q] = sn * vp + c * ce * vq;
                }
            }
        }
        if (!rotated) {
            break;
        }
    }
    if (sweep == MAX_SWEEPS) {  /* never a sweep without rotations: NaN, not the unconverged values */
        finite = 0;
        for (long i = 0; i < m*n; ++i) {
            u[(i / n)*ldu + i % n] = NAN;
        }
        for (long i = 0; v && i < n*n; ++i) {
            v[(i / n)*ldv + i % n] = NAN;
        }
    }
    for (long j = 0; j < n; ++j) {
        R ss = 0;
        for (long k = 0; k < m; ++k) {
            ss += creal(u[k*ldu + j]) * creal(u[k*ldu + j]) + cimag(u[k*ldu + j]) * cimag(u[k*ldu + j]);
        }
        sv[j] = finite ? sqrt(ss) : NAN;
    }
    for (long i = 0; finite && i < n; ++i) {  /* descending, the columns of u and v along */
        long best = i;
        for (long j = i + 1; j < n; ++j) {
            if (sv[j] > sv[best]) {
                best = j;
            }
        }
        if (best == i) {
            continue;
        }
        const R t = sv[i]; sv[i] = sv[best]; sv[best] = t;
        for (long k = 0; k < m; ++k) {
            const T y = u[k*ldu + i]; u[k*ldu + i] = u[k*ldu + best]; u[k*ldu + best] = y;
        }
        for (long k = 0; v && k < n; ++k) {
            const T y = v[k*ldv + i]; v[k*ldv + i] = v[k*ldv + best]; v[k*ldv + best] = y;
        }
    }
    for (long j = 0; finite && j < n; ++j) {
        if (sv[j] > 0) {
            for (long k = 0; k < m; ++k) {
                u[k*ldu + j] /= sv[j];
            }
            continue;
        }
        long pick = 0;  /* a zero singular value: the unit vector whose part orthogonal to columns 0..j-1 is largest */
        R pick_norm = -1;
        for (long e = 0; e < m; ++e) {
            R r = 1;
            for (long l = 0; l < j; ++l) {
                r -= creal(u[e*ldu + l]) * creal(u[e*ldu + l]) + cimag(u[e*ldu + l]) * cimag(u[e*ldu + l]);
            }
            if (r > pick_norm + EPS_T) {
                pick = e;
                pick_norm = r;
            }
        }
        for (long k = 0; k < m; ++k) {
            u[k*ldu + j] = k == pick;
        }
        for (int twice = 0; twice < 2; ++twice) {  /* Gram-Schmidt, repeated once for orthogonality */
            for (long l = 0; l < j; ++l) {
                T d = 0;
                for (long k = 0; k < m; ++k) {
                    d += conj(u[k*ldu + l]) * u[k*ldu + j];
                }
                for (long k = 0; k < m; ++k) {
                    u[k*ldu + j] -= d * u[k*ldu + l];
                }
            }
        }
        R ss = 0;
        for (long k = 0; k < m; ++k) {
            ss += creal(u[k*ldu + j]) * creal(u[k*ldu + j]) + cimag(u[k*ldu + j]) * cimag(u[k*ldu + j]);
        }
        for (long k = 0; k < m; ++k) {
            u[k*ldu + j] /= sqrt(ss);
        }
    }
    for (long j = 0; j < n; ++j) {
        sv[j] = ldexp(sv[j], scale);
        if (sv_complex) {
            ((T *)sv_out)[j] = sv[j];
        } else {
            ((R *)sv_out)[j] = sv[j];
        }
    }
    for (long j = 0; finite && v && j < n; ++j) {  /* phases: v's entry of largest magnitude real and positive */
        long top = 0;
        for (long k = 1; k < n; ++k) {
            if (fabs(v[k*ldv + j]) > fabs(v[top*ldv + j])) {
                top = k;
            }
        }
        const T phase = conj(v[top*ldv + j]) / fabs(v[top*ldv + j]);
        for (long k = 0; k < n; ++k) {
            v[k*ldv + j] *= phase;
        }
        for (long k = 0; k < m; ++k) {
            u[k*ldu + j] *= phase;
        }
    }
}""",
}


class ComplexSpectralLowerings:
    """``eigh``/``eigvalsh`` and ``svd``/``svdvals`` of complex matrices (mixed into the decompositions' lowerings,
    which hand over when the operand is complex)."""

    def complex_eigh(self, e):
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        n, vectors = a.shape[-1], e.op == "eigh"
        dtype = e.inputs[0].type.dtype
        fn = self.linalg_helper("eigh", dtype)
        s = self.work(dtype, n * n + n, e.out.name + "_jacobi")
        lower = int(e.params["lower"])
        self.each_decomposition(e, a, out, len(out.shape) - (2 if vectors else 1), lambda p, o: (
            f"{fn}({n}, {p}, {a.strides[-2]}, {a.strides[-1]}, {lower}, {o}, {int(vectors)}, "
            f"{f'{o} + {n}' if vectors else 'NULL'}, {n}, {s});"))

    def complex_svd(self, e):
        a = self.matrix_operand(e.inputs[0])
        out = self.storage(e.out)
        m, n = a.shape[-2:]
        k, wide, vectors = min(m, n), m < n, e.op == "svd"
        dtype = e.inputs[0].type.dtype
        fn = self.linalg_helper("svd", dtype)
        rs, cs = (a.strides[-1], a.strides[-2]) if wide else (a.strides[-2], a.strides[-1])
        big = max(m, n)
        sv = self.work({"c128": "f64", "c64": "f32"}[dtype], k, e.out.name + "_values")
        if vectors:  # wide: the SVD of a^H = V S U^H, so the helper's u is V and its v is U
            u_at, v_at = ("{o} + " + str((m + 1) * k), "{o}") if wide else ("{o}", "{o} + " + str((m + 1) * k))

            def call(p, o):
                return (f"{fn}({big}, {k}, {p}, {rs}, {cs}, {int(wide)}, {u_at.format(o=o)}, {k}, {o} + {m * k}, 1, "
                        f"{v_at.format(o=o)}, {k}, {sv});")
        else:
            u = self.work(dtype, big * k, e.out.name + "_columns")

            def call(p, o):
                return f"{fn}({big}, {k}, {p}, {rs}, {cs}, {int(wide)}, {u}, {k}, {o}, 0, NULL, 0, {sv});"
        self.each_decomposition(e, a, out, len(out.shape) - (2 if vectors else 1), call)
