"""C99 sources of the spectral decompositions: symmetric eigenproblems (cyclic Jacobi) and the SVD (one-sided Jacobi).

Plain C99, no LAPACK: both are Jacobi methods, chosen because they are short, need no
shift strategy and are accurate to working precision (relative accuracy for the SVD,
Demmel & Veselic 1992). ``T`` is the C type, ``F`` the libm suffix and ``EPS_T`` the
type's machine epsilon (``gradc.backends.c.linalg.helper_text`` substitutes them).

Conventions: eigenvalues ascending, singular values descending, as NumPy gives them.
Eigenvectors and singular vectors are defined up to sign; LAPACK's signs come out of its
own algorithm and cannot be reproduced by another, so here each eigenvector (each right
singular vector, its left one following) has its entry of largest magnitude (the first of
equals) positive: deterministic, and equal to NumPy's up to the sign of each column.
Functions of the decomposition that do not depend on those signs (the only ones with a
derivative) agree with the NumPy target. Input with NaN or infinity gives NaN everywhere.

>>> "cyclic Jacobi" in SPECTRAL_HELPERS["eigh"]
True
"""
from __future__ import annotations

SPECTRAL_HELPERS = {
    "eigh": """
/* w (n, ascending) and v (n x n, row stride ldv, column j the eigenvector of w[j]; NULL: eigenvalues only) of the
 * symmetric matrix whose lower (lower != 0) or upper triangle the strided n x n a holds, by the cyclic Jacobi
 * method (Golub & Van Loan, Matrix Computations, 4th ed., 8.5.3): each sweep zeroes every off-diagonal entry in
 * turn with a plane rotation; sweeps repeat until no entry exceeds eps sqrt|a_pp a_qq| (nor eps^2 max|a|).
 * Each eigenvector's entry of largest magnitude is made positive. Work: s (n*n). */
static void gradc_eighF(long n, const T *restrict a, long rs, long cs, int lower, T *restrict w, T *restrict v,
                       long ldv, T *restrict s)
{
    T big = 0;
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j <= i; ++j) {
            const T x = lower ? a[i*rs + j*cs] : a[j*rs + i*cs];
            s[i*n + j] = x;
            s[j*n + i] = x;
            big = fabsF(x) > big || isnan(x) ? fabsF(x) : big;
        }
    }
    if (!isfinite(big)) {
        for (long i = 0; i < n; ++i) {
            w[i] = NAN;
            for (long j = 0; v && j < n; ++j) {
                v[i*ldv + j] = NAN;
            }
        }
        return;
    }
    for (long i = 0; v && i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            v[i*ldv + j] = i == j;
        }
    }
    /* scaled by a power of two to largest magnitude in [0.5, 1): no overflow or underflow on the way, exact */
    int scale = 0;
    frexpF(big, &scale);
    for (long i = 0; i < n*n; ++i) {
        s[i] = ldexpF(s[i], -scale);
    }
    const T floor_ = EPS_T * EPS_T;
    int sweep = 0;
    for (; sweep < MAX_SWEEPS; ++sweep) {
        int rotated = 0;
        for (long p = 0; p < n; ++p) {
            for (long q = p + 1; q < n; ++q) {
                const T apq = s[p*n + q], app = s[p*n + p], aqq = s[q*n + q];
                if (!(fabsF(apq) > EPS_T * sqrtF(fabsF(app)) * sqrtF(fabsF(aqq)) && fabsF(apq) > floor_)) {
                    continue;
                }
                rotated = 1;
                /* t = tan(theta), the smaller root of t^2 + 2 tau t - 1 = 0: |theta| <= pi/4 */
                const T tau = (aqq - app) / (2 * apq);
                const T t = (tau >= 0 ? 1 : -1) / (fabsF(tau) + hypotF(1, tau));
                const T c = 1 / sqrtF(1 + t*t), sn = t * c;
                for (long k = 0; k < n; ++k) {
                    const T akp = s[k*n + p], akq = s[k*n + q];
                    s[k*n + p] = c * akp - sn * akq;
                    s[k*n + q] = sn * akp + c * akq;
                }
                for (long k = 0; k < n; ++k) {
                    const T apk = s[p*n + k], aqk = s[q*n + k];
                    s[p*n + k] = c * apk - sn * aqk;
                    s[q*n + k] = sn * apk + c * aqk;
                }
                s[p*n + p] = app - t * apq;
                s[q*n + q] = aqq + t * apq;
                s[p*n + q] = 0;
                s[q*n + p] = 0;
                for (long k = 0; v && k < n; ++k) {
                    const T vkp = v[k*ldv + p], vkq = v[k*ldv + q];
                    v[k*ldv + p] = c * vkp - sn * vkq;
                    v[k*ldv + q] = sn * vkp + c * vkq;
                }
            }
        }
        if (!rotated) {
            break;
        }
    }
    if (sweep == MAX_SWEEPS) {  /* never a sweep without rotations: NaN, not the unconverged values */
        for (long i = 0; i < n; ++i) {
            s[i*n + i] = NAN;
            for (long j = 0; v && j < n; ++j) {
                v[i*ldv + j] = NAN;
            }
        }
    }
    for (long i = 0; i < n; ++i) {
        w[i] = ldexpF(s[i*n + i], scale);
    }
    gradc_order_columnsF(n, w, v, ldv);
}""",
    "order_columns": """
/* Sorts the n values w ascending by selection (the first minimum first), moving column j of the n x n matrix v
 * (row stride ldv; NULL: none) with w[j]; then makes each column of v have its entry of largest magnitude (the
 * first of equals) positive. */
static void gradc_order_columnsF(long n, T *restrict w, T *restrict v, long ldv)
{
    for (long i = 0; i < n; ++i) {
        long best = i;
        for (long j = i + 1; j < n; ++j) {
            if (w[j] < w[best]) {
                best = j;
            }
        }
        if (best == i) {
            continue;
        }
        const T t = w[i]; w[i] = w[best]; w[best] = t;
        for (long r = 0; v && r < n; ++r) {
            const T y = v[r*ldv + i]; v[r*ldv + i] = v[r*ldv + best]; v[r*ldv + best] = y;
        }
    }
    for (long j = 0; v && j < n; ++j) {
        long big = 0;
        for (long r = 1; r < n; ++r) {
            if (fabsF(v[r*ldv + j]) > fabsF(v[big*ldv + j])) {
                big = r;
            }
        }
        if (v[big*ldv + j] < 0) {
            for (long r = 0; r < n; ++r) {
                v[r*ldv + j] = -v[r*ldv + j];
            }
        }
    }
}""",
    "svd": """
/* u (m x n, row stride ldu), sv (n, descending) and v (n x n, row stride ldv; NULL: not wanted) = the thin SVD
 * a = u diag(sv) v^T of the strided m x n matrix a, m >= n, by one-sided Jacobi (Hestenes 1958; Demmel &
 * Veselic 1992): plane rotations of pairs of columns of u (starting as a; the same rotations accumulated in v)
 * until every pair is orthogonal to eps |u_p| |u_q|; then sv = the column norms and u's columns are normalised.
 * A zero singular value's column of u is completed to an orthonormal basis (Gram-Schmidt on unit vectors).
 * Each column of v has its entry of largest magnitude positive (u's column follows). */
static void gradc_svdF(long m, long n, const T *restrict a, long rs, long cs, T *restrict u, long ldu,
                      T *restrict sv, T *restrict v, long ldv)
{
    T big = 0;
    for (long i = 0; i < m; ++i) {
        for (long j = 0; j < n; ++j) {
            u[i*ldu + j] = a[i*rs + j*cs];
            big = fabsF(u[i*ldu + j]) > big || isnan(u[i*ldu + j]) ? fabsF(u[i*ldu + j]) : big;
        }
    }
    const int finite = isfinite(big);
    int scale = 0;  /* a power of two bringing the largest magnitude to [0.5, 1): no overflow or underflow */
    frexpF(finite ? big : 1, &scale);
    for (long i = 0; i < m; ++i) {
        for (long j = 0; j < n; ++j) {
            u[i*ldu + j] = ldexpF(u[i*ldu + j], -scale);
        }
    }
    for (long i = 0; v && i < n; ++i) {
        for (long j = 0; j < n; ++j) {
            v[i*ldv + j] = finite ? i == j : NAN;
        }
    }
    if (!finite) {
        for (long j = 0; j < n; ++j) {
            sv[j] = NAN;
            for (long i = 0; i < m; ++i) {
                u[i*ldu + j] = NAN;
            }
        }
        return;
    }
    int sweep = 0;
    for (; sweep < MAX_SWEEPS; ++sweep) {
        int rotated = 0;
        for (long p = 0; p < n; ++p) {
            for (long q = p + 1; q < n; ++q) {
                T alpha = 0, beta = 0, gamma = 0;
                for (long k = 0; k < m; ++k) {
                    alpha += u[k*ldu + p] * u[k*ldu + p];
                    beta += u[k*ldu + q] * u[k*ldu + q];
                    gamma += u[k*ldu + p] * u[k*ldu + q];
                }
                if (!(fabsF(gamma) > EPS_T * sqrtF(alpha) * sqrtF(beta))) {
                    continue;
                }
                rotated = 1;
                /* the Jacobi rotation diagonalising [[alpha, gamma], [gamma, beta]] (u^T u restricted to p, q) */
                const T zeta = (beta - alpha) / (2 * gamma);
                const T t = (zeta >= 0 ? 1 : -1) / (fabsF(zeta) + hypotF(1, zeta));
                const T c = 1 / sqrtF(1 + t*t), sn = t * c;
                for (long k = 0; k < m; ++k) {
                    const T up = u[k*ldu + p], uq = u[k*ldu + q];
                    u[k*ldu + p] = c * up - sn * uq;
                    u[k*ldu + q] = sn * up + c * uq;
                }
                for (long k = 0; v && k < n; ++k) {
                    const T vp = v[k*ldv + p], vq = v[k*ldv + q];
                    v[k*ldv + p] = c * vp - sn * vq;
                    v[k*ldv + q] = sn * vp + c * vq;
                }
            }
        }
        if (!rotated) {
            break;
        }
    }
    if (sweep == MAX_SWEEPS) {  /* never a sweep without rotations: NaN, not the unconverged values */
        for (long j = 0; j < n; ++j) {
            sv[j] = NAN;
            for (long i = 0; i < m; ++i) {
                u[i*ldu + j] = NAN;
            }
            for (long i = 0; v && i < n; ++i) {
                v[i*ldv + j] = NAN;
            }
        }
        return;
    }
    for (long j = 0; j < n; ++j) {
        T ss = 0;
        for (long k = 0; k < m; ++k) {
            ss += u[k*ldu + j] * u[k*ldu + j];
        }
        sv[j] = sqrtF(ss);
    }
    /* (sv is scaled by 2^-scale until the end) */
    /* order by sv descending, moving the columns of u and v along */
    for (long i = 0; i < n; ++i) {
        long best = i;
        for (long j = i + 1; j < n; ++j) {
            if (sv[j] > sv[best]) {
                best = j;
            }
        }
        if (best == i) {
            continue;
        }
        const T t = sv[i]; sv[i] = sv[best]; sv[best] = t;
        for (long k = 0; k < m; ++k) {
            const T y = u[k*ldu + i]; u[k*ldu + i] = u[k*ldu + best]; u[k*ldu + best] = y;
        }
        for (long k = 0; v && k < n; ++k) {
            const T y = v[k*ldv + i]; v[k*ldv + i] = v[k*ldv + best]; v[k*ldv + best] = y;
        }
    }
    for (long j = 0; j < n; ++j) {
        if (sv[j] > 0) {
            for (long k = 0; k < m; ++k) {
                u[k*ldu + j] /= sv[j];
            }
            continue;
        }
        /* a zero singular value: the first unit vector whose part orthogonal to columns 0..j-1 is largest */
        long pick = 0;
        T pick_norm = -1;
        for (long e = 0; e < m; ++e) {
            T r = 1;
            for (long l = 0; l < j; ++l) {
                r -= u[e*ldu + l] * u[e*ldu + l];
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
                    d += u[k*ldu + l] * u[k*ldu + j];
                }
                for (long k = 0; k < m; ++k) {
                    u[k*ldu + j] -= d * u[k*ldu + l];
                }
            }
        }
        T ss = 0;
        for (long k = 0; k < m; ++k) {
            ss += u[k*ldu + j] * u[k*ldu + j];
        }
        for (long k = 0; k < m; ++k) {
            u[k*ldu + j] /= sqrtF(ss);
        }
    }
    for (long j = 0; j < n; ++j) {
        sv[j] = ldexpF(sv[j], scale);
    }
    for (long j = 0; v && j < n; ++j) {  /* signs: v's entry of largest magnitude positive, u's column follows */
        long big = 0;
        for (long k = 1; k < n; ++k) {
            if (fabsF(v[k*ldv + j]) > fabsF(v[big*ldv + j])) {
                big = k;
            }
        }
        if (v[big*ldv + j] < 0) {
            for (long k = 0; k < n; ++k) {
                v[k*ldv + j] = -v[k*ldv + j];
            }
            for (long k = 0; k < m; ++k) {
                u[k*ldu + j] = -u[k*ldu + j];
            }
        }
    }
}""",
}
SPECTRAL_NEEDS = {"eigh": ("order_columns",)}
# Jacobi sweeps before eigh/svd (real and complex) give up with NaN: convergence is quadratic, a few sweeps in
# practice (tests/backends/c/test_c_linalg_conditioning.py); the cap stops a cycle, and never silently.
JACOBI_SWEEPS = 100
