"""Discrete Fourier transforms for the C target: plain C99 with ``complex.h``, O(n log n) for every length.

C text only; ``gradc.backends.c.mathlib`` says what calls what and emits what is used.

Method. ``gradc_fft_pow2`` is the iterative radix-2 Cooley-Tukey transform: a bit-reversal permutation,
then ``log2 m`` passes of butterflies; each twiddle ``exp(s 2 pi i k / len)`` is computed by ``cos`` and
``sin`` of its own angle (no recurrence, so no error builds up along the pass). Any other length ``n`` goes
through Bluestein's chirp-z identity ``jk = (j^2 + k^2 - (k - j)^2) / 2``: with the chirp
``w_j = exp(s pi i j^2 / n)`` (``j^2`` taken mod ``2n`` so the angle stays small and exact),
``X_k = w_k sum_j (x_j w_j) conj(w_{k-j})``, a circular convolution of length ``m >= 2n - 1`` (a power of
two) done by three radix-2 transforms. ``s`` is -1 for the forward transform and +1 for the unnormalised
inverse (NumPy's ``ifft(x, norm="forward")``); like gradc's ``fft`` op, nothing divides by ``n``.

``gradc_fft_lines`` transforms every line of an array along one axis: the array is ``outer x n x inner``
(row-major), a line is ``n`` elements ``inner`` apart; each is copied into a contiguous buffer, transformed
and written back. ``gradc_rfft_lines`` keeps the first ``n/2 + 1`` bins of the transform of real lines;
``gradc_irfft_lines`` rebuilds the Hermitian spectrum of length ``n`` from ``n/2 + 1`` bins
(``X_{n-k} = conj(X_k)``), transforms it back and keeps the real part, so the imaginary parts of bin 0 and,
for even ``n``, bin ``n/2`` are ignored, as NumPy ignores them. All compute in ``double complex``; the
``float`` arrays (``c64``, ``f32``) are read and written through the same double buffers. Scratch space is
``malloc``'d per call (``n`` values per call, ``2 m + n`` more per Bluestein line): where an allocation fails
the values it was for are NaN (gradc's C error model: NaN runs through, as for a singular matrix) and the
function returns -1; otherwise 0.
"""

_CORE = """\
/* Discrete Fourier transforms, O(n log n) for every length n, nothing divided by n:
 *   X[k] = sum_j x[j] exp(s 2 pi i jk/n), s = -1 (forward) or +1 (inverse, unscaled).
 * Powers of two: iterative radix-2 Cooley-Tukey (bit-reversal permutation, then log2 n passes of butterflies;
 * each twiddle is cos/sin of its own angle, so no error builds up along a pass). Other lengths: Bluestein's
 * chirp-z identity jk = (j^2 + k^2 - (k - j)^2) / 2 makes X a circular convolution of x[j] w[j] with
 * conj(w), w[j] = exp(s pi i j^2 / n) (j^2 taken mod 2n), done by three radix-2 transforms of a power of
 * two m >= 2n - 1. Scratch space is malloc'd; where that fails the results are NaN. */

/* in-place radix-2 FFT of a[0..m-1], m a power of two; sign -1: exp(-2 pi i jk/m), +1: exp(+...), unscaled */
static void gradc_fft_pow2(double complex *a, long m, int sign)
{
    const double two_pi = 6.283185307179586476925286766559;
    for (long i = 1, j = 0; i < m; ++i) {
        long bit = m >> 1;
        for (; j & bit; bit >>= 1) {
            j ^= bit;
        }
        j ^= bit;
        if (i < j) {
            double complex t = a[i];
            a[i] = a[j];
            a[j] = t;
        }
    }
    for (long len = 2; len <= m; len <<= 1) {
        long half = len >> 1;
        for (long k = 0; k < half; ++k) {
            double angle = sign * two_pi * (double)k / (double)len;
            double complex w = cos(angle) + sin(angle) * I;
            for (long i = 0; i < m; i += len) {
                double complex u = a[i + k];
                double complex v = a[i + k + half] * w;
                a[i + k] = u + v;
                a[i + k + half] = u - v;
            }
        }
    }
}

/* in-place unscaled DFT of x[0..n-1] for any n >= 1: radix 2, or Bluestein's chirp-z over radix 2 */
static int gradc_fft_any(double complex *x, long n, int sign)
{
    const double pi = 3.141592653589793238462643383280;
    long m = 1;
    if ((n & (n - 1)) == 0) {
        gradc_fft_pow2(x, n, sign);
        return 0;
    }
    while (m < 2 * n - 1) {
        m <<= 1;
    }
    double complex *a = malloc((size_t)(2 * m + n) * sizeof(double complex));
    if (a == NULL) {
        for (long k = 0; k < n; ++k) {
            x[k] = NAN;
        }
        return -1;
    }
    double complex *b = a + m;
    double complex *chirp = b + m;
    for (long j = 0; j < n; ++j) {
        long sq = (long)(((long long)j * j) % (2LL * n));
        double angle = sign * pi * (double)sq / (double)n;
        chirp[j] = cos(angle) + sin(angle) * I;
    }
    for (long j = 0; j < m; ++j) {
        a[j] = j < n ? x[j] * chirp[j] : 0.0;
        b[j] = 0.0;
    }
    b[0] = conj(chirp[0]);
    for (long j = 1; j < n; ++j) {
        b[j] = conj(chirp[j]);
        b[m - j] = conj(chirp[j]);
    }
    gradc_fft_pow2(a, m, -1);
    gradc_fft_pow2(b, m, -1);
    for (long j = 0; j < m; ++j) {
        a[j] *= b[j];
    }
    gradc_fft_pow2(a, m, 1);
    for (long k = 0; k < n; ++k) {
        x[k] = chirp[k] * a[k] / (double)m;
    }
    free(a);
    return 0;
}
"""

# (name, input C type, output C type); the line functions for each pair of element types
_LINES = """\
/* every line along the middle axis of IN[outer][n][inner]: the unscaled DFT (sign -1) or its inverse (+1) */
static int gradc_fft_lines_SUFFIX(const CIN *in, COUT *out, long outer, long n, long inner, int sign)
{
    double complex *buf = malloc((size_t)n * sizeof(double complex));
    int status = 0;
    if (buf == NULL) {
        for (long q = 0; q < outer * n * inner; ++q) {
            out[q] = NAN;
        }
        return -1;
    }
    for (long o = 0; o < outer; ++o) {
        for (long i = 0; i < inner; ++i) {
            long base = o * n * inner + i;
            for (long j = 0; j < n; ++j) {
                buf[j] = in[base + j * inner];
            }
            status |= gradc_fft_any(buf, n, sign);
            for (long j = 0; j < n; ++j) {
                out[base + j * inner] = (COUT)buf[j];
            }
        }
    }
    free(buf);
    return status;
}

/* the first n/2 + 1 bins of the DFT of the real lines of IN[outer][n][inner] into OUT[outer][n/2+1][inner] */
static int gradc_rfft_lines_SUFFIX(const RIN *in, COUT *out, long outer, long n, long inner)
{
    long bins = n / 2 + 1;
    double complex *buf = malloc((size_t)n * sizeof(double complex));
    int status = 0;
    if (buf == NULL) {
        for (long q = 0; q < outer * bins * inner; ++q) {
            out[q] = NAN;
        }
        return -1;
    }
    for (long o = 0; o < outer; ++o) {
        for (long i = 0; i < inner; ++i) {
            for (long j = 0; j < n; ++j) {
                buf[j] = in[o * n * inner + j * inner + i];
            }
            status |= gradc_fft_any(buf, n, -1);
            for (long k = 0; k < bins; ++k) {
                out[o * bins * inner + k * inner + i] = (COUT)buf[k];
            }
        }
    }
    free(buf);
    return status;
}

/* n real points per line (unscaled) from the n/2 + 1 bins of IN[outer][n/2+1][inner], Hermitian-extended */
static int gradc_irfft_lines_SUFFIX(const CIN *in, ROUT *out, long outer, long n, long inner)
{
    long bins = n / 2 + 1;
    double complex *buf = malloc((size_t)n * sizeof(double complex));
    int status = 0;
    if (buf == NULL) {
        for (long q = 0; q < outer * n * inner; ++q) {
            out[q] = NAN;
        }
        return -1;
    }
    for (long o = 0; o < outer; ++o) {
        for (long i = 0; i < inner; ++i) {
            for (long k = 0; k < bins; ++k) {
                buf[k] = in[o * bins * inner + k * inner + i];
            }
            for (long k = bins; k < n; ++k) {
                buf[k] = conj(buf[n - k]);
            }
            status |= gradc_fft_any(buf, n, 1);
            for (long j = 0; j < n; ++j) {
                out[o * n * inner + j * inner + i] = (ROUT)creal(buf[j]);
            }
        }
    }
    free(buf);
    return status;
}
"""

_TYPES = {"c128": ("double complex", "double"), "c64": ("float complex", "float")}


def lines(suffix: str) -> str:
    """The line functions for complex dtype ``suffix`` (``c128`` or ``c64``) and its real partner.

    >>> "gradc_rfft_lines_c64(const float *in, float complex *out" in lines("c64")
    True
    """
    complex_type, real_type = _TYPES[suffix]
    return (_LINES.replace("SUFFIX", suffix).replace("CIN", complex_type).replace("COUT", complex_type)
            .replace("RIN", real_type).replace("ROUT", real_type))


LIBRARY = {
    "gradc_fft_pow2": (_CORE.split("\n/* in-place unscaled DFT")[0], ()),
    "gradc_fft_any": ("/* in-place unscaled DFT" + _CORE.split("\n/* in-place unscaled DFT")[1], ("gradc_fft_pow2",)),
    **{f"gradc_{kind}_lines_{s}": (lines(s).split("\n\n")[i], ("gradc_fft_any",))
       for s in _TYPES for i, kind in enumerate(("fft", "rfft", "irfft"))},
}
INCLUDES = ("#include <complex.h>", "#include <stdlib.h>")
