"""``scipy.special``'s elliptic integrals (parameter ``m = k**2``), composed from gradc's ops: the incomplete
``ellipkinc`` and ``ellipeinc`` by Carlson's symmetric forms after duplication (DLMF 19.25.5, 19.25.9, 19.36.1-2;
the derivative in ``phi`` and ``m`` is that of the duplication steps, which converge with the values), and the
complete ``ellipk``, ``ellipkm1`` and ``ellipe`` by the arithmetic-geometric mean (DLMF 19.8.1, 19.8.6):

    K(m) = pi / (2 AGM(1, sqrt(1 - m)))
    E(m) = K(m) (1 - sum_n 2**(n-1) c_n**2),  c_0**2 = m,  c_{n+1} = (a_n - b_n) / 2

The AGM converges quadratically: ``_STEPS`` steps reach AGM(1, b) to the last bit for every double
``b`` in (1e-154, 1e154) (once ``a = b`` a step changes nothing), so the iteration is unrolled and its
derivative is that of the iterates, which converges with them (``dK/dm = (E - (1 - m) K) / (2m (1 - m))``, checked
in tests/ops/test_special_composed.py). For ``m < 0``, ``E`` uses ``E(m) = sqrt(1 - m) E(-m / (1 - m))``, which keeps
the sum away from cancellation. At ``m = 1`` ``K`` is ``inf`` and ``E`` is 1, SciPy's values (their derivatives
there are infinite: the value is given, the derivative at exactly 1 is not meaningful).

>>> import numpy as np
>>> bool(np.isclose(ellipk(np.float64(0.0)), np.pi / 2))
True
"""
from __future__ import annotations

import math

import numpy as np  # noqa: F401 (the doctests use it)

from gradc.ops import elementwise as ew
from gradc.ops import special_numpy as sf
from gradc.ops.promote import full_like
from gradc.ops.special_boxcox import as_float, same_float

_STEPS = 12


def _agm_terms(b):
    """The arithmetic-geometric means' last ``a`` from ``(1, b)`` and the ``(a_n - b_n) / 2`` along the way."""
    a = full_like(b, 1.0)
    differences = []
    for _ in range(_STEPS):
        differences.append(ew.mul(ew.sub(a, b), 0.5))
        a, b = ew.mul(ew.add(a, b), 0.5), ew.sqrt(ew.mul(a, b))
    return a, differences


def _k_from_root(root):
    """``pi / (2 AGM(1, root))``, ``inf`` where ``root`` is 0."""
    zero = ew.equal(root, 0.0)
    a, _ = _agm_terms(ew.where(zero, 1.0, root))
    return ew.where(zero, math.inf, ew.div(math.pi / 2.0, a))


def ellipk(m):
    """``scipy.special.ellipk(m)``: ``K(m) = integral_0^(pi/2) (1 - m sin(t)**2)**(-1/2) dt`` (NaN for ``m > 1``).

    >>> bool(np.isclose(ellipk(np.float64(0.5)), 1.8540746773013719))
    True
    """
    return _k_from_root(ew.sqrt(ew.sub(1.0, as_float(m))))


def ellipkm1(p):
    """``scipy.special.ellipkm1(p)``: ``K(1 - p)``, accurate for small ``p`` (NaN for ``p < 0``).

    >>> bool(np.isclose(ellipkm1(np.float64(0.5)), 1.8540746773013719))
    True
    """
    return _k_from_root(ew.sqrt(as_float(p)))


def _ellipe_unit(m):
    """``E(m)`` for ``0 <= m < 1`` by the AGM sum (``m`` where that holds, finite elsewhere)."""
    a, differences = _agm_terms(ew.sqrt(ew.sub(1.0, m)))
    total = ew.mul(m, 0.5)  # 2**-1 c_0**2
    for n, c in enumerate(differences, start=1):  # differences[n - 1] is c_n
        total = ew.add(total, ew.mul(ew.mul(c, c), 2.0 ** (n - 1)))
    return ew.mul(ew.div(math.pi / 2.0, a), ew.sub(1.0, total))


def ellipe(m):
    """``scipy.special.ellipe(m)``: ``E(m) = integral_0^(pi/2) (1 - m sin(t)**2)**(1/2) dt`` (NaN for ``m > 1``).

    >>> bool(np.isclose(ellipe(np.float64(0.5)), 1.3506438810476755))
    True
    """
    m = as_float(m)
    negative = ew.less(m, 0.0)
    one = ew.equal(m, 1.0)
    safe = ew.where(one, 0.0, m)
    below = ew.where(negative, safe, 0.0)
    mapped = ew.where(negative, ew.div(ew.neg(below), ew.sub(1.0, below)), safe)  # -m / (1 - m) in [0, 1)
    mapped_one = ew.equal(mapped, 1.0)  # m below about -1e16 maps to 1 in rounding: E(1) = 1 there
    value = ew.where(mapped_one, 1.0, _ellipe_unit(ew.where(mapped_one, 0.0, mapped)))
    value = ew.where(negative, ew.mul(ew.sqrt(ew.sub(1.0, below)), value), value)
    value = ew.where(ew.logical_and(sf.isinf(m), negative), math.inf, value)  # (C: SymPy takes m == -inf as False)
    value = ew.where(ew.greater(m, 1.0), math.nan, value)
    return ew.where(one, 1.0, value)


# ---------------------------------------------------------------- incomplete integrals: Carlson's symmetric forms
_DUPLICATIONS = 14  # each divides the arguments' spread by about 4: from 1 to 4**-14 ~ 4e-9, whose 6th power is far
# below an ulp (the series below stops after its 5th-order terms)


def _duplicate(x, y, z):
    """One step of Carlson's duplication: ``lambda`` and the three arguments moved towards their mean."""
    sx, sy, sz = ew.sqrt(x), ew.sqrt(y), ew.sqrt(z)
    lam = ew.add(ew.add(ew.mul(sx, sy), ew.mul(sy, sz)), ew.mul(sz, sx))
    quarter = [ew.mul(ew.add(v, lam), 0.25) for v in (x, y, z)]
    return lam, sz, quarter


def carlson_rf(x, y, z):
    """``R_F(x, y, z) = 1/2 integral_0^inf ((t+x)(t+y)(t+z))^(-1/2) dt`` (DLMF 19.36.1's series after duplication)."""
    for _ in range(_DUPLICATIONS):
        _, _, (x, y, z) = _duplicate(x, y, z)
    mean = ew.div(ew.add(ew.add(x, y), z), 3.0)
    dx, dy = ew.sub(1.0, ew.div(x, mean)), ew.sub(1.0, ew.div(y, mean))
    dz = ew.neg(ew.add(dx, dy))
    e2 = ew.sub(ew.mul(dx, dy), ew.mul(dz, dz))
    e3 = ew.mul(ew.mul(dx, dy), dz)
    series = ew.add(ew.sub(ew.add(ew.sub(1.0, ew.div(e2, 10.0)), ew.div(e3, 14.0)), ew.mul(ew.mul(e2, e3), 3.0 / 44.0)),
                    ew.div(ew.mul(e2, e2), 24.0))
    return ew.div(series, ew.sqrt(mean))


def carlson_rd(x, y, z):
    """``R_D(x, y, z) = 3/2 integral_0^inf ((t+x)(t+y))^(-1/2) (t+z)^(-3/2) dt`` (DLMF 19.36.2 after duplication)."""
    total = ew.mul(z, 0.0)
    scale = 1.0
    for _ in range(_DUPLICATIONS):
        lam, sz, (nx, ny, nz) = _duplicate(x, y, z)
        total = ew.add(total, ew.div(scale, ew.mul(sz, ew.add(z, lam))))
        scale /= 4.0
        x, y, z = nx, ny, nz
    mean = ew.div(ew.add(ew.add(x, y), ew.mul(z, 3.0)), 5.0)
    dx, dy = ew.sub(1.0, ew.div(x, mean)), ew.sub(1.0, ew.div(y, mean))
    dz = ew.div(ew.neg(ew.add(dx, dy)), 3.0)
    xy, zz = ew.mul(dx, dy), ew.mul(dz, dz)
    e2 = ew.sub(xy, ew.mul(zz, 6.0))
    e3 = ew.mul(ew.sub(ew.mul(xy, 3.0), ew.mul(zz, 8.0)), dz)
    e4 = ew.mul(ew.mul(ew.sub(xy, zz), zz), 3.0)
    e5 = ew.mul(ew.mul(xy, dz), zz)
    terms = [(e2, -3.0 / 14.0), (e3, 1.0 / 6.0), (ew.mul(e2, e2), 9.0 / 88.0), (e4, -3.0 / 22.0),
             (ew.mul(e2, e3), -9.0 / 52.0), (e5, 3.0 / 26.0)]
    series = full_like(mean, 1.0)
    for term, weight in terms:
        series = ew.add(series, ew.mul(term, weight))
    tail = ew.div(ew.mul(series, scale), ew.mul(mean, ew.sqrt(mean)))
    return ew.add(ew.mul(total, 3.0), tail)


def _reduced(phi):
    """``phi = n pi + r`` with ``|r| <= pi/2``: (``n``, held constant, and ``r``)."""
    from gradc.ops.autodiff import stop_gradient
    turns = stop_gradient(ew.floor(ew.add(ew.div(phi, math.pi), 0.5)))
    return turns, ew.sub(phi, ew.mul(turns, math.pi))


def _periods(turns, complete):
    """``2 n`` times the complete integral, 0 where ``n`` is 0 (also where the complete one is NaN or inf)."""
    zero = ew.equal(turns, 0.0)
    return ew.where(zero, 0.0, ew.mul(ew.mul(turns, 2.0), ew.where(zero, 1.0, complete)))


def _carlson_arguments(s, c, m):
    """``cos(r)**2`` and ``1 - m sin(r)**2``, the latter as ``cos(r)**2 + (1 - m) sin(r)**2``: no cancellation
    next to ``m = 1``, ``r = pi/2``, where both terms are small (``1 - m`` is exact there)."""
    square = ew.mul(c, c)
    return square, ew.add(square, ew.mul(ew.sub(1.0, m), ew.mul(s, s)))


def ellipkinc(phi, m):
    """``scipy.special.ellipkinc(phi, m)``: ``F(phi | m) = integral_0^phi (1 - m sin(t)**2)**(-1/2) dt``, as
    ``sin(r) R_F(cos(r)**2, 1 - m sin(r)**2, 1) + 2 n K(m)`` for ``phi = n pi + r`` (SciPy's NaN for ``m > 1``,
    ``+inf`` for ``m = 1`` beyond ``|phi| = pi/2``).

    >>> bool(np.isclose(ellipkinc(np.float64(1.0), np.float64(0.5)), 1.0832167728451888))
    True
    """
    phi, m = as_float(phi), as_float(m)  # float64 for a Python phi, as SciPy
    turns, rest = _reduced(phi)
    s, c = ew.sin(rest), ew.cos(rest)
    x, y = _carlson_arguments(s, c, m)
    part = ew.mul(s, carlson_rf(x, y, full_like(s, 1.0)))
    value = ew.add(part, _periods(turns, ellipk(m)))
    value = ew.where(ew.logical_and(ew.equal(m, 1.0), ew.greater(ew.abs_(turns), 0.0)), math.inf, value)  # SciPy+inf
    return ew.where(ew.greater(m, 1.0), math.nan, value)  # SciPy's NaN for every m > 1


def ellipeinc(phi, m):
    """``scipy.special.ellipeinc(phi, m)``: ``E(phi | m) = integral_0^phi (1 - m sin(t)**2)**(1/2) dt``, as
    ``sin(r) R_F - m sin(r)**3 R_D / 3`` (arguments ``cos(r)**2, 1 - m sin(r)**2, 1``) ``+ 2 n E(m)`` (NaN for
    ``m > 1``, as SciPy).

    >>> bool(np.isclose(ellipeinc(np.float64(1.0), np.float64(0.5)), 0.92732988362444))
    True
    """
    phi, m = as_float(phi), as_float(m)  # float64 for a Python phi, as SciPy
    turns, rest = _reduced(phi)
    s, c = ew.sin(rest), ew.cos(rest)
    (x, y), one = _carlson_arguments(s, c, m), full_like(s, 1.0)
    cube = ew.mul(ew.mul(s, s), s)
    part = ew.sub(ew.mul(s, carlson_rf(x, y, one)), ew.mul(ew.mul(m, cube), ew.div(carlson_rd(x, y, one), 3.0)))
    value = ew.add(part, _periods(turns, ellipe(m)))
    return ew.where(ew.greater(m, 1.0), math.nan, value)  # SciPy's NaN for every m > 1


def elliprf(x, y, z):
    """``scipy.special.elliprf(x, y, z)`` for real non-negative arguments (at most one of them 0).

    >>> bool(np.isclose(elliprf(np.float64(1.0), np.float64(2.0), np.float64(0.0)), 1.3110287771461))
    True
    """
    x, y, z = same_float(x, y, z)
    return ew.where(_two_zero(x, y, z), math.inf, carlson_rf(x, y, z))  # SciPy's inf where the integral diverges


def _two_zero(*args):
    zeros = [ew.equal(a, 0.0) for a in args]
    pairs = [ew.logical_and(zeros[i], zeros[j]) for i in range(len(zeros)) for j in range(i + 1, len(zeros))]
    out = pairs[0]
    for pair in pairs[1:]:
        out = ew.logical_or(out, pair)
    return out


def elliprd(x, y, z):
    """``scipy.special.elliprd(x, y, z)`` for real non-negative ``x``, ``y`` (at most one 0) and positive ``z``.

    >>> bool(np.isclose(elliprd(np.float64(0.0), np.float64(2.0), np.float64(1.0)), 1.7972103521034))
    True
    """
    x, y, z = same_float(x, y, z)
    diverges = ew.logical_or(_two_zero(x, y), ew.equal(z, 0.0))
    return ew.where(diverges, math.inf, carlson_rd(x, y, z))


__all__ = ["ellipk", "ellipkm1", "ellipe", "ellipkinc", "ellipeinc", "elliprf", "elliprd"]
