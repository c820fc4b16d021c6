"""What NumPy's elementwise math and SciPy's special functions mean on traced values (tables merged into
``numpy_dispatch``; SciPy names registered with ``scipy_dispatch.register``).

``scipy.special.NAME`` is routed by name before SciPy's code runs (the ``scipy.stats`` distributions:
``gradc.trace.distribution_dispatch``).

>>> np.arcsin in UFUNCS, np.round in FUNCTIONS, "scipy.special.erf" in scipy_dispatch.SCIPY_FUNCTIONS
(True, True, True)
"""
from __future__ import annotations

import numpy as np

from gradc.errors import TraceError
from gradc.ops import elementwise as ew
from gradc.ops import special_bessel as bes
from gradc.ops import special_incomplete as inc
from gradc.ops import special_numpy as sf
from gradc.ops import special_scipy as sc
from gradc.ops.values import first_traced
from gradc.trace import (
    scipy_dispatch,
    special_composed_dispatch,  # noqa: F401  (registers the composed scipy.special names)
)

UFUNCS = {
    np.arcsin: sf.arcsin, np.arccos: sf.arccos, np.arcsinh: sf.arcsinh, np.arccosh: sf.arccosh,
    np.arctanh: sf.arctanh, np.arctan2: sf.arctan2, np.hypot: sf.hypot, np.log2: sf.log2, np.log10: sf.log10,
    np.exp2: sf.exp2, np.logaddexp2: sf.logaddexp2, np.cbrt: sf.cbrt, np.fmax: sf.fmax, np.fmin: sf.fmin,
    np.float_power: sf.float_power, np.deg2rad: sf.deg2rad, np.radians: sf.deg2rad, np.rad2deg: sf.rad2deg,
    np.degrees: sf.rad2deg, np.copysign: sf.copysign, np.rint: sf.rint, np.ceil: sf.ceil, np.trunc: sf.trunc,
    np.floor: sf.floor,
    np.mod: sf.mod, np.fmod: sf.fmod, np.floor_divide: sf.floor_divide, np.divmod: sf.divmod_,
    np.isnan: sf.isnan, np.isinf: sf.isinf, np.isfinite: sf.isfinite, np.signbit: sf.signbit,
}


def _no_out(what, fn):
    def call(x, *args, out=None, **kwargs):
        if out is not None:
            raise TraceError(f"{what} with out= is not supported by gradc", hint=f"assign the result: y = {what}(...)")
        return fn(x, *args, **kwargs)
    return call


def _unwrap(p, discont=None, axis=-1, *, period=2 * np.pi):
    """``np.unwrap`` (NumPy's steps: the jumps of the differences above ``discont`` folded into one period, then
    their corrections summed along the axis); the corrections are piecewise constant, so the derivative is 1."""
    p = p * 1.0
    discont = period / 2 if discont is None else discont
    dd = np.diff(p, axis=axis)
    half = period / 2
    folded = np.mod(dd + half, period) - half
    folded = np.where((folded == -half) & (dd > 0), half, folded)
    correction = np.where(np.abs(dd) < max(discont, half), 0.0, folded - dd)
    first = np.take(p, [0], axis=axis) * 0.0
    return p + np.concatenate([first, np.cumsum(correction, axis=axis)], axis=axis)


FUNCTIONS = {
    np.unwrap: _unwrap,
    np.i0: lambda x: bes.i0(x),  # NumPy's modified Bessel function of order 0 (scipy.special.i0)
    np.sinc: sf.sinc, np.round: _no_out("np.round", sf.round_), np.around: _no_out("np.around", sf.round_),
    np.fix: _no_out("np.fix", sf.trunc), np.nan_to_num: sf.nan_to_num,
}


# ---------------------------------------------------------------- scipy.special
def _in_scipys_dtype(name, fn):
    """A ufunc of several operands: a Python float next to float32 arrays computes in the dtype SciPy's loop
    order picks (``sc.scipy_operands``): float64 for ``xlogy(1.5, x32)``, as SciPy gives."""
    def call(*args):
        return fn(*sc.scipy_operands(name, list(args)))
    return call


for _name, _fn in [("xlogy", sc.xlogy), ("xlog1py", sc.xlog1py), ("rel_entr", sc.rel_entr), ("kl_div", sc.kl_div),
                   ("betaln", sc.betaln), ("beta", sc.beta)]:
    scipy_dispatch.register(f"scipy.special.{_name}", scipy_dispatch.operands_only(_name, _in_scipys_dtype(_name, _fn)))

for _name, _fn in [("erf", sc.erf), ("erfc", sc.erfc), ("erfinv", sc.erfinv), ("erfcinv", sc.erfcinv),
                   ("ndtr", sc.ndtr), ("ndtri", sc.ndtri), ("log_ndtr", sc.log_ndtr), ("gammaln", sc.gammaln),
                   ("loggamma", sc.loggamma), ("gamma", sc.gamma), ("digamma", sc.digamma), ("psi", sc.digamma),
                   ("expit", sc.expit), ("logit", sc.logit), ("log_expit", sc.log_expit), ("entr", sc.entr),
                   ("multigammaln", sc.multigammaln),
                   ("rgamma", sc.rgamma), ("gammasgn", sc.gammasgn), ("erfcx", sc.erfcx),
                   ("gammainc", inc.gammainc), ("gammaincc", inc.gammaincc), ("gammaincinv", inc.gammaincinv),
                   ("gammainccinv", inc.gammainccinv), ("betainc", inc.betainc), ("betaincinv", inc.betaincinv)]:
    scipy_dispatch.register(f"scipy.special.{_name}", scipy_dispatch.operands_only(_name, _fn))


def _polygamma(n, x):  # SciPy's polygamma is Python, not a ufunc: it gives float64 for float32
    return sc.polygamma(n, _f64(x))


for _name in bes.__all__[:-1]:  # Bessel functions (the order a constant)
    scipy_dispatch.register(f"scipy.special.{_name}", scipy_dispatch.operands_only(_name, getattr(bes, _name)))


scipy_dispatch.register("scipy.special.polygamma", scipy_dispatch.operands_only("polygamma", _polygamma))
scipy_dispatch.register("scipy.special.logsumexp", sc.logsumexp)
scipy_dispatch.register("scipy.special.softmax", sc.softmax)
scipy_dispatch.register("scipy.special.log_softmax", sc.log_softmax)


def _f64(value):
    """``value`` in float64, as SciPy's Python functions compute (also for float32 arguments)."""
    if isinstance(value, tuple):
        return tuple(_f64(v) for v in value)
    if isinstance(value, (int, float)):
        return value
    return ew.astype(value if first_traced([value]) is not None else np.asarray(value), "f64")


__all__ = ["FUNCTIONS", "UFUNCS"]
