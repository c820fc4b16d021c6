"""NumPy's polynomial functions on traced coefficients (merged into ``numpy_dispatch`` by ``gradc.trace.dispatch``).

``np.polyval`` (Horner's rule, as NumPy evaluates), ``polyder``, ``polyint``, ``polyadd``,
``polysub``, ``polymul`` (a convolution), ``vander``, ``polyfit`` (least squares on the
Vandermonde matrix), ``poly`` (the coefficients of given roots) and ``roots`` (companion-matrix
eigenvalues): compositions of registry ops, so both targets have them and the derivatives come from those ops.
``np.poly1d`` of traced coefficients cannot be built (NumPy trims leading zeros, a data-dependent length):
the refusal says to use ``np.polyval``.

>>> from gradc.trace import trace
>>> print(trace(lambda p: np.polyval(p, 2.0), np.ones(2)))
def lambda_(p: f64[2]) -> f64[]:
  t0: f64[] = index p spec=(0,)
  t1: f64[] = index p spec=(1,)
  t2: f64[] = mul t0 2.0
  t3: f64[] = add t2 t1
  return t3
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, StaticValueNeeded, TraceError, user_location
from gradc.ir.builder import Traced
from gradc.ops import checks, signal
from gradc.ops import elementwise as ew
from gradc.ops import linalg_api as lin
from gradc.ops import linalg_structured as structured
from gradc.ops import shape as sh
from gradc.ops.values import aval, first_traced, lift, result_dtype
from gradc.trace.routines_dispatch import _float, _operand, _static_int


# ---------------------------------------------------------------- polynomials
def _coefficients(p, what):
    p = _operand(p)
    if aval(p).ndim != 1:
        raise ShapeError(f"{what}: the coefficients must be a 1-d array, not of shape {aval(p).shape}",
                         hint="pass the coefficients highest power first, as a 1-d array")
    return p


def _coefficient(p, i):
    return sh.index(p, (("int", i),)) if isinstance(p, Traced) else p[i]


def _polyval(p, x):
    """Horner's rule, as NumPy evaluates: ``y = y * x + p[i]``."""
    if isinstance(p, np.poly1d) or isinstance(x, np.poly1d):
        raise TraceError("np.polyval with a np.poly1d is not supported on traced values",
                         hint="pass the coefficients as an array: np.polyval(p.coeffs, x)")
    p, x = _coefficients(p, "np.polyval"), _operand(x)
    n = aval(p).shape[0]
    if not isinstance(n, int):
        raise StaticValueNeeded("np.polyval: the number of coefficients must be known at trace time",
                                hint="compile for a fixed number of coefficients")
    if n == 0:
        return np.zeros(aval(x).shape, aval(x).np_dtype)
    y = ew.add(np.zeros(aval(x).shape, aval(x).np_dtype), _coefficient(p, 0)) if aval(x).ndim else None
    for i in range(n):
        c = _coefficient(p, i)
        if i == 0:
            y = c if y is None else y
            continue
        y = ew.add(ew.mul(y, x), c)
    return y if isinstance(y, Traced) else np.asarray(y)


def _polyder(p, m=1):
    m = _static_int(m, "np.polyder's order m")
    if m < 0:
        raise ShapeError("np.polyder: the order of the derivative must be positive", hint="pass m >= 0")
    p = _float(_coefficients(p, "np.polyder"))
    for _ in range(m):
        n = aval(p).shape[0]
        if n <= 1:  # a constant's derivative: NumPy's empty array
            return np.zeros(0, np.float64)
        p = ew.mul(sh.index(p, (sh.slice_item(None, -1, None),)), np.arange(n - 1, 0, -1, dtype=np.float64))
    return p


def _polyint(p, m=1, k=None):
    m = _static_int(m, "np.polyint's order m")
    if m < 0:
        raise ShapeError("np.polyint: the order of the antiderivative must be positive", hint="pass m >= 0")
    k = 0.0 if k is None else k
    if isinstance(k, Traced):
        flat = sh.reshape(k, (aval(k).size,))
        ks = [sh.index(flat, (("int", i),)) for i in range(aval(k).size)]
    else:
        ks = list(np.atleast_1d(np.asarray(k, dtype=np.float64)))
    ks = ks * m if len(ks) == 1 else ks  # one constant for every order, as NumPy repeats it
    if len(ks) != m:
        raise ShapeError("np.polyint: k must be a scalar or have m entries", hint="pass one constant per order")
    p = _float(_coefficients(p, "np.polyint"))
    for i in range(m):
        n = aval(p).shape[0]
        scaled = ew.div(p, np.arange(n, 0, -1, dtype=np.float64))
        last = ks[i]
        last = sh.reshape(ew.astype(last, "f64"), (1,)) if isinstance(last, Traced) else \
            np.asarray([last], dtype=np.float64)
        p = sh.concatenate([lift(scaled, first_traced([scaled, last])),
                            lift(last, first_traced([scaled, last]))], 0)
    return p


def _polyadd(a1, a2, sign=1.0):
    a1, a2 = _operand(a1), _operand(a2)
    n1, n2 = aval(a1).shape[0], aval(a2).shape[0]
    n = max(n1, n2)
    dtype = result_dtype(a1, a2)

    def padded(a, k):
        a = ew.astype(a, dtype) if isinstance(a, Traced) else np.asarray(a, dtype=aval(lift_dtype(dtype)).np_dtype)
        if k == n:
            return a
        zeros = np.zeros(n - k, dtype=aval(a).np_dtype)
        return sh.concatenate([lift(zeros, a), a], 0) if isinstance(a, Traced) else np.concatenate([zeros, a])
    second = padded(a2, n2)
    return ew.add(padded(a1, n1), second if sign > 0 else ew.neg(second))


def lift_dtype(dtype):
    return np.zeros((), {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32,
                         "bool": np.bool_}.get(dtype, np.float64))


def _trim_zeros(filt, trim="fb", axis=None):
    raise TraceError("np.trim_zeros of a traced array: how many zeros it drops is known only when the code runs "
                     "(np.poly1d of traced coefficients calls it)",
                     hint="keep the zeros; evaluate polynomials with np.polyval(p, x) (np.polyder, np.polyint, "
                          "np.polyadd, np.polymul take coefficient arrays too)")



def _polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least squares on the Vandermonde matrix (NumPy scales its columns first: the same solution)."""
    if full or cov:
        raise TraceError("np.polyfit with full= or cov= is not supported by gradc",
                         hint="take the coefficients only; compute residuals from np.polyval(p, x) - y")
    deg = _static_int(deg, "np.polyfit's deg")
    if deg < 0:
        raise ShapeError("np.polyfit: expected deg >= 0", hint="pass a non-negative degree")
    x, y = _float(_operand(x)), _float(_operand(y))
    if aval(x).ndim != 1 or aval(y).ndim not in (1, 2) or aval(y).shape[0] != aval(x).shape[0]:
        raise ShapeError("np.polyfit: x must be 1-d and y 1-d or 2-d with as many rows as x has points",
                         hint="pass the sample points and their values")
    lhs = structured.vander(x, deg + 1)
    rhs = y
    if w is not None:
        w = _float(_operand(w))
        lhs = ew.mul(lhs, sh.reshape(w, (aval(w).shape[0], 1)))
        rhs = ew.mul(rhs, w if aval(rhs).ndim == 1 else sh.reshape(w, (aval(w).shape[0], 1)))
    rcond = aval(x).shape[0] * np.finfo(aval(x).np_dtype).eps if rcond is None else rcond
    return lin.lstsq(lhs, rhs, rcond, what="np.polyfit")[0]


def _poly(seq_of_zeros):
    """The monic polynomial with these roots: ``[1]`` convolved with ``[1, -r]`` for each root."""
    roots = _operand(seq_of_zeros)
    t = aval(roots)
    if t.ndim != 1:
        raise TraceError("np.poly of a matrix (its characteristic polynomial) is not supported by gradc",
                         hint="pass the roots as a 1-d array (np.linalg.eigvalsh(a) for a symmetric matrix)")
    coefficients = np.ones(1, aval(_float(roots)).np_dtype)
    for k in range(t.shape[0]):
        root = sh.reshape(sh.index(roots, (("int", k),)), (1,)) if isinstance(roots, Traced) else roots[k:k + 1]
        factor = sh.concatenate([lift(np.ones(1, aval(coefficients).np_dtype), first_traced([root])),
                                 ew.neg(_float(root))], 0) if isinstance(root, Traced) else np.array([1.0, -root[0]])
        coefficients = signal.convolve(coefficients, factor, what="np.poly")
    return coefficients


def _roots(p):
    """The eigenvalues of the companion matrix NumPy builds (first row ``-p[1:] / p[0]``, ones below the
    diagonal); derivatives are eig's, i.e. implicit differentiation of ``p(r) = 0`` at simple roots. As
    ``jax.numpy.roots`` under jit (``strip_zeros=False``): the result is always complex (NumPy returns a real
    array when every root is real: a dtype that depends on the values) and zero coefficients are not stripped
    (a leading zero makes the roots infinite; trailing zeros give roots at 0, as NumPy's, in eig's order)."""
    p = _float(_coefficients(p, "np.roots"))
    n = aval(p).shape[0]
    if not isinstance(n, int):
        raise StaticValueNeeded("np.roots: the number of coefficients must be known at trace time",
                                hint="compile for a fixed number of coefficients")
    complex_dtype = np.result_type(aval(p).np_dtype, np.complex64)
    if n < 2:
        return np.zeros(0, complex_dtype)
    first_row = sh.reshape(ew.neg(ew.div(sh.index(p, (sh.slice_item(1, None, None),)), _coefficient(p, 0))),
                           (1, n - 1))
    below = lift(np.eye(n - 2, n - 1, dtype=aval(p).np_dtype), p)
    return lin.eigvals(sh.concatenate([first_row, below], 0))


_LEADING_ZERO = ("numpy.polymul: a polynomial's leading coefficient is 0; NumPy drops leading zeros first, which "
                 "makes the result's length depend on the values (trim them before the call)")


def _leading_nonzero(p):
    """``p`` as NumPy's polymul takes it (through ``poly1d``): leading zeros dropped. A constant ``p`` is
    trimmed now; a traced one must start with a nonzero coefficient, checked when the compiled code runs
    (``ValueError``), since dropping it would change the result's length."""
    p = _operand(p)
    if not isinstance(p, Traced):
        trimmed = np.trim_zeros(np.atleast_1d(np.asarray(p)), "f")
        return trimmed if trimmed.size else np.zeros(1, np.asarray(p).dtype)
    if len(aval(p).shape) == 1 and aval(p).shape[0] != 1:
        checks.check(ew.equal(_coefficient(p, 0), 0), "ValueError", (_LEADING_ZERO,), user_location())
    return p


FUNCTIONS = {
    np.roots: _roots,
    np.polyval: _polyval, np.polyder: _polyder, np.polyint: _polyint,
    np.polyadd: _polyadd, np.polysub: lambda a1, a2: _polyadd(a1, a2, -1.0),
    np.polymul: lambda a1, a2: signal.convolve(_leading_nonzero(a1), _leading_nonzero(a2), what="np.polymul"),
    np.vander: lambda x, N=None, increasing=False: structured.vander(_operand(x), N, increasing),
    np.trim_zeros: _trim_zeros, np.polyfit: _polyfit, np.poly: _poly,
}
UFUNCS: dict = {}
