"""``scipy.special``'s complete elliptic integrals ``ellipk``, ``ellipkm1`` and ``ellipe`` (parameter ``m = k**2``),
composed from gradc's ops by the arithmetic-geometric mean (DLMF 19.8.1, 19.8.6):

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

from gradc.ops import elementwise as ew
from gradc.ops import special_numpy as sf
from gradc.ops.promote import full_like
from gradc.ops.special_boxcox import as_float

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


__all__ = ["ellipk", "ellipkm1", "ellipe"]
