"""``scipy.special``'s orthogonal polynomials of constant integer degree (``eval_legendre``, ``eval_chebyt``,
``eval_chebyu``, ``eval_hermite``, ``eval_hermitenorm``, ``eval_laguerre``, ``eval_genlaguerre``,
``eval_jacobi``, ``eval_gegenbauer``) and the associated Legendre function ``lpmv`` of constant integer orders.

Each is its three-term recurrence (DLMF 18.9.1, 18.9.2; 14.10.3 for ``lpmv``) written with gradc's ops, so the
derivative in ``x`` and in the shape parameters (``alpha``, ``beta``) is that of the recurrence, of any order,
and both targets come from the ops. The degree selects the function: it must be a Python int known when
tracing (SciPy's non-integer degrees go through hypergeometric functions gradc does not have: refused).

>>> import numpy as np
>>> float(eval_legendre(2, np.float64(0.5)))
-0.125
"""
from __future__ import annotations

import math

import numpy as np

from gradc.errors import TraceError
from gradc.ops import elementwise as ew
from gradc.ops import special_numpy as sf
from gradc.ops.promote import full_like
from gradc.ops.special_boxcox import as_float
from gradc.ops.values import first_traced


def static_degree(value, name, what="the degree n"):
    """``value`` as a Python int, or a clear refusal (traced, fractional or not a number)."""
    if first_traced([value]) is not None:
        raise TraceError(f"scipy.special.{name}: {what} must be a Python int known when tracing, not a traced value",
                         hint=f"pass {what} as a Python int (it selects the polynomial: it has no derivative)")
    if isinstance(value, (bool, np.bool_)) or np.ndim(value) != 0:
        raise TraceError(f"scipy.special.{name}: {what} must be a single int, not {value!r}",
                         hint=f"call scipy.special.{name} once per degree (a Python loop over the degrees traces)")
    number = float(value)
    if not number.is_integer():
        raise TraceError(f"scipy.special.{name}: {what} {value!r} is not an integer; gradc evaluates these "
                         "polynomials by their recurrence, for integer degrees only",
                         hint=f"pass an integer {what}")
    return int(number)


def _double(x):
    """``x`` in float64: SciPy's loop for an integer degree and ``x`` alone is ``(long, double) -> double``."""
    return x if type(x) is float else ew.astype(as_float(x), "f64")


def _ones(x):
    """1 of ``x``'s shape, NaN where ``x`` is (SciPy's degree-0 polynomials propagate NaN)."""
    return ew.where(sf.isnan(x), x, 1.0)


def _recurrence(n, first, second, step):
    """``p_n`` of ``p_{k+1} = step(k, p_k, p_{k-1})`` from ``p_0 = first`` and ``p_1 = second``."""
    if n == 0:
        return first
    older, newer = first, second
    for k in range(1, n):
        older, newer = newer, step(k, newer, older)
    return newer


def _not_negative(n, name):
    if n < 0:
        raise TraceError(f"scipy.special.{name}: the degree n must be >= 0, not {n}", hint="pass n >= 0")
    return n


def eval_legendre(n, x):
    """``scipy.special.eval_legendre(n, x)``: ``(k+1) P_{k+1} = (2k+1) x P_k - k P_{k-1}`` (``P_{-n-1} = P_n``).

    >>> float(eval_legendre(3, np.float64(1.0)))
    1.0
    """
    n = static_degree(n, "eval_legendre")
    x = _double(x)
    n = -n - 1 if n < 0 else n
    if n == 0:  # 1, also for NaN (SciPy's)
        return full_like(x, 1.0)
    return _recurrence(n, _ones(x), ew.mul(x, 1.0), lambda k, p, q: ew.div(
        ew.sub(ew.mul(ew.mul(x, p), 2 * k + 1.0), ew.mul(q, float(k))), k + 1.0))


def eval_chebyt(n, x):
    """``scipy.special.eval_chebyt(n, x)``: ``T_{k+1} = 2x T_k - T_{k-1}`` (``T_{-n} = T_n``).

    >>> float(eval_chebyt(2, np.float64(0.5)))
    -0.5
    """
    n = abs(static_degree(n, "eval_chebyt"))
    x = _double(x)
    return _recurrence(n, _ones(x), ew.mul(x, 1.0), lambda k, p, q: ew.sub(ew.mul(ew.mul(x, p), 2.0), q))


def eval_chebyu(n, x):
    """``scipy.special.eval_chebyu(n, x)``: ``U_{k+1} = 2x U_k - U_{k-1}``, ``U_1 = 2x`` (``U_{-1} = 0``,
    ``U_{-n} = -U_{n-2}``).

    >>> float(eval_chebyu(2, np.float64(0.5)))
    0.0
    """
    n = static_degree(n, "eval_chebyu")
    x = _double(x)
    if n < 0:
        return ew.neg(eval_chebyu(-n - 2, x)) if n < -1 else full_like(x, 0.0)
    return _recurrence(n, _ones(x), ew.mul(x, 2.0), lambda k, p, q: ew.sub(ew.mul(ew.mul(x, p), 2.0), q))


def eval_hermite(n, x):
    """``scipy.special.eval_hermite(n, x)`` (physicists'): ``H_{k+1} = 2x H_k - 2k H_{k-1}``.

    >>> float(eval_hermite(2, np.float64(1.0)))
    2.0
    """
    n = static_degree(n, "eval_hermite")
    x = _double(x)
    if n < 0:  # SciPy's NaN
        return ew.add(ew.mul(x, 0.0), math.nan)
    return _recurrence(n, _ones(x), ew.mul(x, 2.0),
                       lambda k, p, q: ew.sub(ew.mul(ew.mul(x, p), 2.0), ew.mul(q, 2.0 * k)))


def eval_hermitenorm(n, x):
    """``scipy.special.eval_hermitenorm(n, x)`` (probabilists'): ``He_{k+1} = x He_k - k He_{k-1}``.

    >>> float(eval_hermitenorm(2, np.float64(1.0)))
    0.0
    """
    n = static_degree(n, "eval_hermitenorm")
    x = _double(x)
    if n < 0:  # SciPy's NaN
        return ew.add(ew.mul(x, 0.0), math.nan)
    return _recurrence(n, _ones(x), ew.mul(x, 1.0), lambda k, p, q: ew.sub(ew.mul(x, p), ew.mul(q, float(k))))


def eval_genlaguerre(n, alpha, x):
    """``scipy.special.eval_genlaguerre(n, alpha, x)``: ``(k+1) L_{k+1} = (2k+1+alpha-x) L_k - (k+alpha) L_{k-1}``
    (NaN for ``alpha <= -1``, as SciPy; 0 for a negative degree).

    >>> float(eval_genlaguerre(1, np.float64(0.5), np.float64(0.5)))
    1.0
    """
    n = static_degree(n, "eval_genlaguerre")
    x, alpha = as_float(x), as_float(alpha)
    if n < 0:
        value = ew.mul(ew.add(x, alpha), 0.0)
        return ew.where(ew.less_equal(alpha, -1.0), math.nan, value)
    first = ew.add(_ones(x), ew.mul(alpha, 0.0))
    value = _recurrence(n, first, ew.sub(ew.add(alpha, 1.0), x), lambda k, p, q: ew.div(
        ew.sub(ew.mul(ew.sub(ew.add(alpha, 2 * k + 1.0), x), p), ew.mul(ew.add(alpha, float(k)), q)), k + 1.0))
    return ew.where(ew.less_equal(alpha, -1.0), math.nan, value)


def eval_laguerre(n, x):
    """``scipy.special.eval_laguerre(n, x)``: ``eval_genlaguerre(n, 0, x)``.

    >>> float(eval_laguerre(1, np.float64(0.25)))
    0.75
    """
    n = static_degree(n, "eval_laguerre")
    x = _double(x)
    if n < 0:
        return ew.mul(x, 0.0)
    return _recurrence(n, _ones(x), ew.sub(1.0, x), lambda k, p, q: ew.div(
        ew.sub(ew.mul(ew.sub(2 * k + 1.0, x), p), ew.mul(q, float(k))), k + 1.0))


def eval_gegenbauer(n, alpha, x):
    """``scipy.special.eval_gegenbauer(n, alpha, x)``: ``(k+1) C_{k+1} = 2(k+alpha) x C_k - (k+2alpha-1) C_{k-1}``,
    ``C_1 = 2 alpha x`` (0 for a negative degree, as SciPy; NaN from degree 2 where ``2 alpha`` is an integer
    ``<= -1``).

    >>> float(eval_gegenbauer(1, np.float64(1.5), np.float64(0.5)))
    1.5
    """
    n = static_degree(n, "eval_gegenbauer")
    x, alpha = as_float(x), as_float(alpha)
    if n < 0:
        return ew.mul(ew.add(x, alpha), 0.0)
    first = ew.add(_ones(x), ew.mul(alpha, 0.0))
    if n == 0:
        return first
    value = _recurrence(n, first, ew.mul(ew.mul(alpha, x), 2.0), lambda k, p, q: ew.div(
        ew.sub(ew.mul(ew.mul(ew.add(alpha, float(k)), ew.mul(x, p)), 2.0),
               ew.mul(ew.add(ew.mul(alpha, 2.0), k - 1.0), q)), k + 1.0))
    if n == 1:
        return value
    # SciPy's NaN where 2 alpha is an integer <= -1 (a pole of its normalisation; its series at |x| < 1e-5 gives
    # numbers for some of these alpha at x = 0: gradc gives NaN there too)
    twice = ew.mul(alpha, 2.0)
    degenerate = ew.logical_and(ew.less_equal(twice, -1.0), ew.equal(twice, ew.floor(twice)))
    return ew.where(degenerate, math.nan, value)


def eval_jacobi(n, alpha, beta, x):
    """``scipy.special.eval_jacobi(n, alpha, beta, x)``: ``P_0 = 1``, ``P_1 = (alpha+1) + (alpha+beta+2)(x-1)/2``
    and DLMF 18.9.2's recurrence.

    >>> float(eval_jacobi(1, np.float64(0.0), np.float64(0.0), np.float64(0.5)))
    0.5
    """
    n = _not_negative(static_degree(n, "eval_jacobi"), "eval_jacobi")
    x, alpha, beta = as_float(x), as_float(alpha), as_float(beta)
    total = ew.add(alpha, beta)
    first = ew.add(full_like(x, 1.0), ew.mul(total, 0.0))  # 1 also for NaN x, as SciPy's
    second = ew.add(ew.add(alpha, 1.0), ew.mul(ew.add(total, 2.0), ew.mul(ew.sub(x, 1.0), 0.5)))
    squares = ew.sub(ew.mul(alpha, alpha), ew.mul(beta, beta))

    def step(k, p, q):  # P_{m} from P_{m-1} = p and P_{m-2} = q, m = k + 1
        m = float(k + 1)
        s = ew.add(total, 2.0 * m)  # 2m + alpha + beta
        scale = ew.mul(ew.mul(ew.add(total, m), ew.sub(s, 2.0)), 2.0 * m)
        linear = ew.mul(ew.sub(s, 1.0), ew.add(ew.mul(ew.mul(s, ew.sub(s, 2.0)), x), squares))
        back = ew.mul(ew.mul(ew.mul(ew.add(alpha, m - 1.0), ew.add(beta, m - 1.0)), s), 2.0)
        return ew.div(ew.sub(ew.mul(linear, p), ew.mul(back, q)), scale)
    return _recurrence(n, first, second, step)


def lpmv(m, v, x):
    """``scipy.special.lpmv(m, v, x)``: the associated Legendre function of integer order ``m`` and degree ``v``
    (Condon-Shortley phase; for ``m != 0`` NaN beyond ``|x| = 1``, as SciPy), from
    ``P_m^m = (-1)^m (2m-1)!! (1-x^2)^(m/2)`` upward.

    >>> float(lpmv(1, 1, np.float64(0.0)))
    -1.0
    """
    m = static_degree(m, "lpmv", "the order m")
    v = static_degree(v, "lpmv", "the degree v")
    x = as_float(x)
    v = -v - 1 if v < 0 else v
    if v == 0 and m == 0:  # P_0: 1, also for NaN (SciPy's)
        return full_like(x, 1.0)
    if m < 0:  # P_v^-m = (-1)^m (v-m)! / (v+m)! P_v^m
        if -m > v:  # SciPy's NaN
            return ew.add(ew.mul(x, 0.0), math.nan)
        factor = (-1.0) ** m * math.factorial(v + m) / math.factorial(v - m)
        return ew.mul(lpmv(-m, v, x), factor)
    if m > v:  # 0 inside [-1, 1], NaN beyond (SciPy's)
        return ew.where(ew.greater(ew.abs_(x), 1.0), math.nan, ew.mul(x, 0.0))
    root = ew.sqrt(ew.sub(1.0, ew.mul(x, x)))  # (1 - x^2)^(1/2): NaN beyond |x| = 1, as SciPy
    start = ew.mul(_ones(x), (-1.0) ** m * math.prod(range(1, 2 * m, 2)))
    for _ in range(m):
        start = ew.mul(start, root)
    if v == m:
        return start
    above = ew.mul(ew.mul(x, start), 2 * m + 1.0)
    return _recurrence(v - m, start, above, lambda k, p, q: ew.div(
        ew.sub(ew.mul(ew.mul(x, p), 2.0 * (k + m) + 1.0), ew.mul(q, float(k + 2 * m))), float(k + 1)))


def eval_sh_legendre(n, x):
    """``scipy.special.eval_sh_legendre(n, x)``: the shifted Legendre polynomial ``P_n(2x - 1)``.

    >>> float(eval_sh_legendre(2, np.float64(1.0)))
    1.0
    """
    return eval_legendre(static_degree(n, "eval_sh_legendre"), ew.sub(ew.mul(_double(x), 2.0), 1.0))


def eval_sh_chebyt(n, x):
    """``scipy.special.eval_sh_chebyt(n, x)``: ``T_n(2x - 1)``.

    >>> float(eval_sh_chebyt(2, np.float64(0.0)))
    1.0
    """
    return eval_chebyt(static_degree(n, "eval_sh_chebyt"), ew.sub(ew.mul(_double(x), 2.0), 1.0))


def eval_sh_chebyu(n, x):
    """``scipy.special.eval_sh_chebyu(n, x)``: ``U_n(2x - 1)``.

    >>> float(eval_sh_chebyu(1, np.float64(1.0)))
    2.0
    """
    return eval_chebyu(static_degree(n, "eval_sh_chebyu"), ew.sub(ew.mul(_double(x), 2.0), 1.0))


def eval_chebyc(n, x):
    """``scipy.special.eval_chebyc(n, x)``: ``2 T_n(x / 2)`` on ``[-2, 2]``.

    >>> float(eval_chebyc(0, np.float64(0.3)))
    2.0
    """
    return ew.mul(eval_chebyt(static_degree(n, "eval_chebyc"), ew.mul(_double(x), 0.5)), 2.0)


def eval_chebys(n, x):
    """``scipy.special.eval_chebys(n, x)``: ``U_n(x / 2)`` on ``[-2, 2]``.

    >>> float(eval_chebys(1, np.float64(0.3)))
    0.3
    """
    return eval_chebyu(static_degree(n, "eval_chebys"), ew.mul(_double(x), 0.5))


__all__ = ["eval_sh_legendre", "eval_sh_chebyt", "eval_sh_chebyu", "eval_chebyc", "eval_chebys",
           "eval_legendre", "eval_chebyt", "eval_chebyu", "eval_hermite", "eval_hermitenorm", "eval_laguerre",
           "eval_genlaguerre", "eval_gegenbauer", "eval_jacobi", "lpmv", "static_degree"]
