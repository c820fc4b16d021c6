"""What NumPy's elementwise math and SciPy's special functions mean on traced values (tables merged into
``numpy_dispatch``; SciPy names registered with ``scipy_dispatch.register``).

``scipy.special.NAME`` and the ``scipy.stats`` distributions ``norm``, ``t``, ``gamma``, ``beta``, ``expon``,
``laplace`` and ``cauchy`` are routed by name before SciPy's code runs. A distribution is routed as an object
standing in for SciPy's (``Distribution``): its ``logpdf``/``pdf``/``cdf``/... take SciPy's arguments, and a
frozen distribution (``norm(mu, sigma).logpdf(x)``) works too; its other methods go to SciPy's object,
and with a traced argument they are refused by name.

>>> np.arcsin in UFUNCS, np.round in FUNCTIONS, "scipy.special.erf" in scipy_dispatch.SCIPY_FUNCTIONS
(True, True, True)
"""
from __future__ import annotations

import sys

import numpy as np

from gradc.errors import TraceError
from gradc.ops import elementwise as ew
from gradc.ops import special_bessel as bes
from gradc.ops import special_incomplete as inc
from gradc.ops import special_numpy as sf
from gradc.ops import special_scipy as sc
from gradc.ops import special_stats as st
from gradc.ops.values import first_traced
from gradc.trace import scipy_dispatch

UFUNCS = {
    np.arcsin: sf.arcsin, np.arccos: sf.arccos, np.arcsinh: sf.arcsinh, np.arccosh: sf.arccosh,
    np.arctanh: sf.arctanh, np.arctan2: sf.arctan2, np.hypot: sf.hypot, np.log2: sf.log2, np.log10: sf.log10,
    np.exp2: sf.exp2, np.logaddexp2: sf.logaddexp2, np.cbrt: sf.cbrt, np.fmax: sf.fmax, np.fmin: sf.fmin,
    np.float_power: sf.float_power, np.deg2rad: sf.deg2rad, np.radians: sf.deg2rad, np.rad2deg: sf.rad2deg,
    np.degrees: sf.rad2deg, np.copysign: sf.copysign, np.rint: sf.rint, np.ceil: sf.ceil, np.trunc: sf.trunc,
    np.mod: sf.mod, np.fmod: sf.fmod, np.floor_divide: sf.floor_divide, np.divmod: sf.divmod_,
    np.isnan: sf.isnan, np.isinf: sf.isinf, np.isfinite: sf.isfinite, np.signbit: sf.signbit,
}


def _no_out(what, fn):
    def call(x, *args, out=None, **kwargs):
        if out is not None:
            raise TraceError(f"{what} with out= is not supported by gradc", hint=f"assign the result: y = {what}(...)")
        return fn(x, *args, **kwargs)
    return call


FUNCTIONS = {
    np.sinc: sf.sinc, np.round: _no_out("np.round", sf.round_), np.around: _no_out("np.around", sf.round_),
    np.fix: _no_out("np.fix", sf.trunc), np.nan_to_num: sf.nan_to_num,
}


# ---------------------------------------------------------------- scipy.special
def _elementwise(name, fn):
    """A SciPy ufunc's call: positional operands; ``out=``/``where=`` and the like refused by name."""
    def call(*args, **kwargs):
        if kwargs:
            raise TraceError(f"scipy.special.{name} with {', '.join(sorted(kwargs))}= is not supported by gradc",
                             hint=f"call scipy.special.{name} with its operands only")
        return fn(*args)
    return call


def _in_scipys_dtype(name, fn):
    """A ufunc of several operands: a Python float next to float32 arrays computes in the dtype SciPy's loop
    order picks (``sc.scipy_operands``): float64 for ``xlogy(1.5, x32)``, as SciPy gives."""
    def call(*args):
        return fn(*sc.scipy_operands(name, list(args)))
    return call


for _name, _fn in [("xlogy", sc.xlogy), ("xlog1py", sc.xlog1py), ("rel_entr", sc.rel_entr), ("kl_div", sc.kl_div),
                   ("betaln", sc.betaln), ("beta", sc.beta)]:
    scipy_dispatch.register(f"scipy.special.{_name}", _elementwise(_name, _in_scipys_dtype(_name, _fn)))

for _name, _fn in [("erf", sc.erf), ("erfc", sc.erfc), ("erfinv", sc.erfinv), ("erfcinv", sc.erfcinv),
                   ("ndtr", sc.ndtr), ("ndtri", sc.ndtri), ("log_ndtr", sc.log_ndtr), ("gammaln", sc.gammaln),
                   ("loggamma", sc.loggamma), ("gamma", sc.gamma), ("digamma", sc.digamma), ("psi", sc.digamma),
                   ("expit", sc.expit), ("logit", sc.logit), ("log_expit", sc.log_expit), ("entr", sc.entr),
                   ("multigammaln", sc.multigammaln),
                   ("rgamma", sc.rgamma), ("gammasgn", sc.gammasgn), ("erfcx", sc.erfcx),
                   ("gammainc", inc.gammainc), ("gammaincc", inc.gammaincc), ("gammaincinv", inc.gammaincinv),
                   ("gammainccinv", inc.gammainccinv), ("betainc", inc.betainc), ("betaincinv", inc.betaincinv)]:
    scipy_dispatch.register(f"scipy.special.{_name}", _elementwise(_name, _fn))


def _polygamma(n, x):  # SciPy's polygamma is Python, not a ufunc: it gives float64 for float32
    return sc.polygamma(n, _f64(x))


for _name in bes.__all__[:-1]:  # Bessel functions (the order a constant)
    scipy_dispatch.register(f"scipy.special.{_name}", _elementwise(_name, getattr(bes, _name)))


scipy_dispatch.register("scipy.special.polygamma", _elementwise("polygamma", _polygamma))
scipy_dispatch.register("scipy.special.logsumexp", sc.logsumexp)
scipy_dispatch.register("scipy.special.softmax", sc.softmax)
scipy_dispatch.register("scipy.special.log_softmax", sc.log_softmax)


# ---------------------------------------------------------------- scipy.stats distributions
def _has_tracer(values) -> bool:
    return any(first_traced([v]) is not None or (isinstance(v, (tuple, list)) and _has_tracer(v)) for v in values)


def _bind(name, method, args, kwargs):
    """SciPy's arguments of ``<name>.<method>``: ``(x, *shapes, loc=0, scale=1)`` as x, shapes, loc, scale."""
    shape_names = st.DISTRIBUTIONS[name][0]
    names = ("x", *shape_names, "loc", "scale")
    values = {"loc": 0.0, "scale": 1.0}
    if len(args) > len(names):
        raise TraceError(f"scipy.stats.{name}.{method} takes at most {len(names)} arguments ({', '.join(names)})",
                         hint=f"call scipy.stats.{name}.{method}({', '.join(names)})")
    values.update(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or names.index(key) < len(args):
            raise TraceError(f"scipy.stats.{name}.{method} got an unexpected or repeated argument {key!r}",
                             hint=f"its arguments are {', '.join(names)}")
        values[key] = value
    missing = [n for n in names if n not in values]
    if missing:
        raise TraceError(f"scipy.stats.{name}.{method} is missing {', '.join(missing)}",
                         hint=f"call scipy.stats.{name}.{method}({', '.join(names)})")
    return values["x"], tuple(values[n] for n in shape_names), values["loc"], values["scale"]


def _f64(value):
    """``value`` in float64, as SciPy's distributions compute (also for float32 arguments)."""
    if isinstance(value, tuple):
        return tuple(_f64(v) for v in value)
    if isinstance(value, (int, float)):
        return value
    return ew.astype(value if first_traced([value]) is not None else np.asarray(value), "f64")


class Distribution:
    """Stands in for ``scipy.stats.<name>`` while tracing: its methods in ``special_stats.METHODS`` compute in
    gradc ops when an argument is traced; everything else is SciPy's own object."""

    routes_itself = True  # scipy_dispatch uses this object as it is (it falls back to SciPy by itself)

    def __init__(self, name):
        self._name = name

    def _real(self):
        return getattr(sys.modules["scipy.stats"], self._name)

    def __getattr__(self, method):
        real = getattr(self._real(), method)
        if method.startswith("_") or not callable(real):
            return real
        known = method in st.METHODS[self._name]

        def call(*args, **kwargs):
            if not _has_tracer(args) and not _has_tracer(kwargs.values()):
                return real(*args, **kwargs)
            if not known:
                raise TraceError(f"scipy.stats.{self._name}.{method} is not supported by gradc",
                                 hint=f"gradc has scipy.stats.{self._name}.{', .'.join(st.METHODS[self._name])}")
            x, shapes, loc, scale = (_f64(v) for v in _bind(self._name, method, args, kwargs))
            return st.evaluate(self._name, method, x, shapes, loc, scale)
        call.__name__ = method
        return call

    def __call__(self, *args, **kwargs):
        """A frozen distribution: ``norm(loc, scale)``, ``t(df, loc, scale)``..."""
        return _Frozen(self, args, kwargs)


class _Frozen:
    def __init__(self, dist, args, kwargs):
        self._dist, self._args, self._kwargs = dist, args, kwargs

    def __getattr__(self, method):
        if _has_tracer(self._args) or _has_tracer(self._kwargs.values()) or method in st.METHODS[self._dist._name]:
            bound = getattr(self._dist, method)
            return lambda x, *rest, **kw: bound(x, *self._args, *rest, **self._kwargs, **kw)
        return getattr(self._dist._real()(*self._args, **self._kwargs), method)


for _name in st.DISTRIBUTIONS:
    scipy_dispatch.register(f"scipy.stats.{_name}", Distribution(_name))

__all__ = ["FUNCTIONS", "UFUNCS", "Distribution"]
