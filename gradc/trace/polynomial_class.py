"""``numpy.polynomial.Polynomial`` with traced coefficients (or domain): evaluation, calculus, arithmetic and
least-squares fitting, as NumPy's class computes them (the argument mapped from ``domain`` to ``window`` first).

>>> p = Polynomial([1.0, 2.0, 3.0])
>>> float(p(2.0)), p.deriv().coef.tolist()
(17.0, [2.0, 6.0])
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ir.builder import Traced
from gradc.trace import array_routing
from gradc.trace import polynomial_bases as bases
from gradc.trace import polynomial_series as ps

_DEFAULT = np.array([-1.0, 1.0])


def _pair(value, what):
    if value is None:
        return _DEFAULT
    pair = value if isinstance(value, Traced) else np.asarray(value, dtype=float)
    if np.shape(pair) != (2,):
        raise TraceError(f"numpy.polynomial.Polynomial: {what} must have two entries, not shape {np.shape(pair)}",
                         hint=f"pass {what}=[low, high]")
    return pair


def _same(a, b) -> bool:
    """Whether two domains (or windows) are the same: by value when both are constants, by identity otherwise."""
    if isinstance(a, Traced) or isinstance(b, Traced):
        return a is b
    return bool(np.array_equal(a, b))


class Polynomial:
    """``numpy.polynomial.Polynomial(coef, domain=None, window=None, symbol='x')`` on traced values."""

    __array_priority__ = 1000  # ``2.0 * p`` and ``array + p`` reach this class's reflected operators
    __array_ufunc__ = None

    def __init__(self, coef, domain=None, window=None, symbol="x"):
        coef = ps._float(ps._operand(coef))
        self.coef = np.reshape(coef, (1,)) if np.ndim(coef) == 0 else coef
        if np.ndim(self.coef) != 1:
            raise TraceError("numpy.polynomial.Polynomial: the coefficients must be 1-d",
                             hint="pass a 1-d array, lowest power first")
        self.domain, self.window, self.symbol = _pair(domain, "domain"), _pair(window, "window"), symbol

    # ---- the mapping and evaluation
    def mapparms(self):
        """``(off, scl)`` with ``window = off + scl * domain``."""
        (d0, d1), (w0, w1) = self.domain, self.window
        return (d1 * w0 - d0 * w1) / (d1 - d0), (w1 - w0) / (d1 - d0)

    def _mapped(self, x):
        if not isinstance(self.domain, Traced) and not isinstance(self.window, Traced) and \
                np.array_equal(self.domain, self.window):
            return x
        off, scl = self.mapparms()
        return off + scl * x

    def __call__(self, x):
        return ps.polyval(self._mapped(ps._operand(x)), self.coef)

    def degree(self) -> int:
        return int(np.shape(self.coef)[0]) - 1

    def linspace(self, n=100, domain=None):
        """``(x, p(x))`` at ``n`` points spanning ``domain`` (the polynomial's own by default)."""
        low, high = _pair(self.domain if domain is None else domain, "domain")
        x = low + (high - low) * np.linspace(0.0, 1.0, n)
        return x, self(x)

    # ---- calculus
    def _like(self, coef):
        return Polynomial(coef, self.domain, self.window, self.symbol)

    def deriv(self, m=1):
        return self._like(ps.polyder(self.coef, m, self.mapparms()[1]))

    def integ(self, m=1, k=(), lbnd=None):
        off, scl = self.mapparms()
        lbnd = 0.0 if lbnd is None else off + scl * lbnd
        return self._like(ps.polyint(self.coef, m, k, lbnd, 1.0 / scl))

    # ---- arithmetic
    def _other(self, other):
        if isinstance(other, Polynomial):
            if not (_same(self.domain, other.domain) and _same(self.window, other.window)):
                raise TraceError("numpy.polynomial.Polynomial arithmetic needs the same domain and window",
                                 hint="convert one first, or make both with the same domain= and window=")
            return other.coef
        if np.ndim(other) != 0:
            return NotImplemented
        return ps._float(ps._operand(other)) * np.ones(1)

    def __add__(self, other):
        c = self._other(other)
        return NotImplemented if c is NotImplemented else self._like(ps.polyadd(self.coef, c))

    __radd__ = __add__

    def __sub__(self, other):
        c = self._other(other)
        return NotImplemented if c is NotImplemented else self._like(ps.polysub(self.coef, c))

    def __rsub__(self, other):
        c = self._other(other)
        return NotImplemented if c is NotImplemented else self._like(ps.polysub(c, self.coef))

    def __mul__(self, other):
        c = self._other(other)
        return NotImplemented if c is NotImplemented else self._like(ps.polymul(self.coef, c))

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Polynomial) or np.ndim(other) != 0:
            raise TraceError("numpy.polynomial.Polynomial division by a polynomial is not supported by gradc",
                             hint="divide by a number, or use // and % on constants outside the traced function")
        return self._like(self.coef / other)

    def __neg__(self):
        return self._like(-self.coef)

    def __pos__(self):
        return self

    def __pow__(self, power):
        return self._like(ps.polypow(self.coef, power))

    def __repr__(self):
        return f"<gradc stand-in for numpy.polynomial.Polynomial of degree {self.degree()}>"

    # ---- fitting
    @classmethod
    def fit(cls, x, y, deg, domain=None, rcond=None, full=False, w=None, window=None, symbol="x"):
        """Least squares on ``x`` mapped from ``domain`` (the data's range by default) to ``window``."""
        x = ps._float(ps._operand(x))
        if domain is None:
            domain = np.stack([np.min(x), np.max(x)]) if isinstance(x, Traced) else \
                np.array([np.min(x), np.max(x)], dtype=float)
        fitted = cls([0.0], domain, window, symbol)
        coef = ps.polyfit(fitted._mapped(x), y, deg, rcond, full, w)
        return cls(coef, fitted.domain, fitted.window, symbol)

    @classmethod
    def identity(cls, domain=None, window=None, symbol="x"):
        """The polynomial ``x`` (on ``domain``)."""
        p = cls([0.0], domain, window, symbol)
        off, scl = p.mapparms()
        return cls(ps.polyline(-off / scl, 1.0 / scl), domain, window, symbol)


POLYNOMIAL = array_routing._module(ps._REAL, "numpy.polynomial.polynomial")  # what traced code sees
PACKAGE = array_routing._module(np.polynomial, "numpy.polynomial")
for _name, _fn in ps.OURS.items():
    setattr(POLYNOMIAL, _name, ps.routed(getattr(ps._REAL, _name), _fn))
    array_routing.add_stand_in(getattr(ps._REAL, _name), getattr(POLYNOMIAL, _name))
for _basis, _module_name in bases.MODULES.items():  # numpy.polynomial.chebyshev, legendre, ...
    _real_module = getattr(np.polynomial, _module_name)
    _proxy = array_routing._module(_real_module, f"numpy.polynomial.{_module_name}")
    for (_owner, _name), _fn in bases.FUNCTIONS.items():
        if _owner == _basis:
            setattr(_proxy, _name, ps.routed(getattr(_real_module, _name), _fn))
            array_routing.add_stand_in(getattr(_real_module, _name), getattr(_proxy, _name))
    setattr(PACKAGE, _module_name, _proxy)
    array_routing.add_stand_in(_real_module, _proxy)
POLYNOMIAL.Polynomial = PACKAGE.Polynomial = Polynomial
PACKAGE.polynomial = POLYNOMIAL
array_routing.NUMPY.polynomial = PACKAGE
for _real, _ours in ((np.polynomial, PACKAGE), (ps._REAL, POLYNOMIAL), (np.polynomial.Polynomial, Polynomial)):
    array_routing.add_stand_in(_real, _ours)

__all__ = ["Polynomial", "POLYNOMIAL", "PACKAGE"]
