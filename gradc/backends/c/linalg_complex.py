"""The C helpers of the dense linear algebra on complex matrices (C99 ``double _Complex``/``float _Complex``).

Same signatures and conventions as the real helpers of ``gradc.backends.c.linalg`` (``T`` the element
type, here complex; ``R`` its real type); the names end in ``z`` (double) or ``c`` (float), as
LAPACK's. The unit includes ``tgmath.h``, so ``sqrt``, ``fabs`` (the modulus) and ``log`` pick the
function of their argument's type. The triangular solve and product and the solve by LU have the
real helpers' text (they never compare two numbers); these differ from the real ones:

* ``lu``: the real text, the pivot the first entry of largest ``|Re| + |Im|`` (LAPACK's ``izamax``, as ``zgetrf``);
* ``slogdet``: the sign is the phase ``det / |det|``, the product of the pivots' phases (and ``-1``
  per interchange), ``log|det|`` the sum of the pivots' ``log|u_ii|``;
* ``cholesky``: ``a = L L^H`` from the lower triangle, the diagonal's imaginary part unread (as
  LAPACK's ``zpotrf``), NaN everywhere when a pivot is not positive;
* ``expm``: the real scaling and squaring (Higham 2005), its 1-norm and scaling on the moduli;
* ``qr``: Householder reflections with LAPACK's complex convention (``zgeqr2``/``zlarfg``: R's diagonal
  real, ``-sign(Re alpha)`` times the column's norm), so Q and R equal NumPy's;
* ``eigh`` and ``svd``: Jacobi methods with complex rotations (``gradc.backends.c.linalg_complex_spectral``).

>>> "gradc_choleskyz(long n" in complex_helper_text("cholesky", "double _Complex")
True
"""
from __future__ import annotations

from gradc.backends.c import linalg_spectral
from gradc.backends.c.linalg_complex_spectral import COMPLEX_SPECTRAL

COMPLEX_HELPERS = {
    "slogdet": """
/* *sign and *logabs: the phase det(a)/|det(a)| and log|det(a)| of the strided n x n complex matrix a, by LU with
 * partial pivoting in the work array w (n*n); a singular matrix gives 0 and -inf, NaN entries NaN and NaN. */
static void gradc_slogdetF(long n, const T *restrict a, long ars, long acs, T *restrict w, T *sign, R *logabs)
{
    const long swaps = gradc_luF(n, 0, a, ars, acs, w, w);
    if (swaps < 0) {
        int nan = 0;
        for (long k = 0; k < n*n; ++k) {
            nan |= isnan(creal(w[k])) || isnan(cimag(w[k]));
        }
        *sign = nan ? NAN : 0;
        *logabs = nan ? NAN : -INFINITY;
        return;
    }
    T s = swaps % 2 ? -1 : 1;
    R total = 0;
    for (long i = 0; i < n; ++i) {
        const R size = fabs(w[i*n + i]);
        s *= w[i*n + i] / size;
        total += log(size);
    }
    *sign = s / fabs(s);  /* (a product of unit numbers drifts from the unit circle by rounding) */
    *logabs = total;
}""",
    "cholesky": """
/* l = the lower Cholesky factor (a = l l^H) of the n x n Hermitian matrix a (its lower triangle, read through
 * strides rs and cs; the diagonal's imaginary part unread), zeros above the diagonal; returns 0. A matrix that
 * is not positive definite (a pivot <= 0) gives NaN everywhere and returns 1 (a NaN pivot: NaN, and 0). */
static int gradc_choleskyF(long n, const T *restrict a, long rs, long cs, T *restrict l)
{
    for (long i = 0; i < n; ++i) {
        for (long j = 0; j < i; ++j) {
            T s = a[i*rs + j*cs];
            for (long k = 0; k < j; ++k) {
                s -= l[i*n + k] * conj(l[j*n + k]);
            }
            l[i*n + j] = s / l[j*n + j];
        }
        R d = creal(a[i*rs + i*cs]);
        for (long k = 0; k < i; ++k) {
            d -= creal(l[i*n + k]) * creal(l[i*n + k]) + cimag(l[i*n + k]) * cimag(l[i*n + k]);
        }
        if (!(d > 0)) {
            for (long q = 0; q < n*n; ++q) {
                l[q] = NAN;
            }
            return d == d;
        }
        l[i*n + i] = sqrt(d);
        for (long j = i + 1; j < n; ++j) {
            l[i*n + j] = 0;
        }
    }
    return 0;
}""",
    "qr": """
/* The reduced QR of the strided m x n complex matrix a by Householder reflections H_j = I - tau_j v_j v_j^H with
 * LAPACK's zgeqr2/zlarfg convention: R_jj = beta = -sign(Re alpha) |(alpha, x)|, real, for the column (alpha; x)
 * below the diagonal, tau = (beta - alpha) / beta, no reflection (tau = 0) where x is zero and alpha real; the
 * trailing columns are multiplied by H_j^H; Q = H_0 ... H_{k-1} applied to the first k = min(m, n) columns of I
 * (zung2r). q: m x k (row stride ldq); r: k x n (row stride ldr). Work: w (m*n), tau (k). */
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
        R big = 0, xx = 0;  /* |x| = big sqrt(sum |x_i / big|^2): no overflow or underflow */
        for (long i = j + 1; i < m; ++i) {
            big = fabs(w[i*n + j]) > big || isnan(fabs(w[i*n + j])) ? fabs(w[i*n + j]) : big;
        }
        if (big == 0 && cimag(alpha) == 0) {
            tau[j] = 0;
            continue;
        }
        for (long i = j + 1; i < m; ++i) {
            const R re = creal(w[i*n + j]) / (big > 0 ? big : 1), im = cimag(w[i*n + j]) / (big > 0 ? big : 1);
            xx += re * re + im * im;
        }
        const R beta = -copysign(hypot(fabs(alpha), big * sqrt(xx)), creal(alpha));
        tau[j] = (beta - alpha) / beta;
        const T scale = 1 / (alpha - beta);
        for (long i = j + 1; i < m; ++i) {
            w[i*n + j] *= scale;
        }
        w[j*n + j] = beta;
        for (long c = j + 1; c < n; ++c) {  /* the trailing columns: w <- H_j^H w */
            T d = w[j*n + c];
            for (long i = j + 1; i < m; ++i) {
                d += conj(w[i*n + j]) * w[i*n + c];
            }
            d *= conj(tau[j]);
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
                d += conj(w[i*n + j]) * q[i*ldq + c];
            }
            d *= tau[j];
            q[j*ldq + c] -= d;
            for (long i = j + 1; i < m; ++i) {
                q[i*ldq + c] -= d * w[i*n + j];
            }
        }
    }
}""",
}
SAME_TEXT = frozenset({"solve", "trisolve", "trimm", "square_matmul"})  # the real text computes on complex as it is
# expm: the real text, its norm and scaling computed on the real modulus (ldexp of a complex value is no C99)
_EXPM_EDITS = (("T norm1 = 0;", "R norm1 = 0;"), ("T col = 0;", "R col = 0;"),
               ("const T ratio = frexpF(", "const R ratio = frexp("),
               ("ldexpF(a[i*rs + j*cs], -s)", "a[i*rs + j*cs] * ldexp((R)1, -s)"), ("fabsF(", "fabs("))
# lu: the real text, its pivot the first entry of largest |Re| + |Im| (LAPACK's izamax)
_LU_EDITS = (("PIVOT_SIZE(w[c*n + c])", "fabs(creal(w[c*n + c])) + fabs(cimag(w[c*n + c]))"),
             ("PIVOT_SIZE(w[r*n + c])", "fabs(creal(w[r*n + c])) + fabs(cimag(w[r*n + c]))"))
EDITED = {"expm": _EXPM_EDITS, "lu": _LU_EDITS}
COMPLEX_KINDS = SAME_TEXT | frozenset(COMPLEX_HELPERS) | frozenset(EDITED)
COMPLEX_HELPERS.update(COMPLEX_SPECTRAL)  # eigh, svd (gradc.backends.c.linalg_complex_spectral)
COMPLEX_KINDS = COMPLEX_KINDS | frozenset(COMPLEX_SPECTRAL)
COMPLEX_NEEDS = {"solve": ("lu",), "slogdet": ("lu",), "expm": ("square_matmul", "lu", "solve")}  # defined before
COMPLEX_LINALG = frozenset({"solve", "slogdet", "trisolve", "trimm", "cholesky", "expm", "qr", "eigh", "svd"})
_REAL = {"double _Complex": "double", "float _Complex": "float"}
_EPSILON = {"double _Complex": "2.220446049250313e-16", "float _Complex": "1.1920929e-07F"}
SUFFIX = {"double _Complex": "z", "float _Complex": "c", "float": "f", "double": ""}


def complex_helper_text(kind: str, ctype: str, real_text: str = "") -> str:
    """The C source of helper ``kind`` for the complex ``ctype`` ("double _Complex" or "float _Complex");
    ``real_text``: the real helper's source, for the kinds whose text is the same (``SAME_TEXT``) or edited.

    >>> "float _Complex *sign, float *logabs" in complex_helper_text("slogdet", "float _Complex")
    True
    """
    text = COMPLEX_HELPERS.get(kind, real_text).replace("EPS_T", _EPSILON[ctype])
    text = text.replace("MAX_SWEEPS", str(linalg_spectral.JACOBI_SWEEPS))
    for old, new in EDITED.get(kind, ()):
        assert old in text, (kind, old)  # (the real helper changed: edit these edits)
        text = text.replace(old, new)
    text = text.replace("F(", SUFFIX[ctype] + "(")
    text = text.replace("const R ", f"const {_REAL[ctype]} ").replace("R *", f"{_REAL[ctype]} *")
    text = text.replace("    R ", f"    {_REAL[ctype]} ").replace("(R)", f"({_REAL[ctype]})")
    return text.replace("const T ", f"const {ctype} ").replace("T *", f"{ctype} *").replace("    T ", f"    {ctype} ")
