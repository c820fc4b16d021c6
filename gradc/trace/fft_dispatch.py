"""What ``np.fft`` means on traced values (a table merged into ``numpy_dispatch`` by ``gradc.trace.dispatch``).

Every transform is NumPy's, built from the unnormalised one-axis primitives of ``gradc.ops.fft``: the
input is cut or zero-padded to ``n`` along the axis (an ``index`` or ``index_grad``), transformed, and
multiplied by the ``norm=`` factor (``"backward"``: the inverse divides by ``n``; ``"ortho"``: both by
``sqrt(n)``; ``"forward"``: the forward one divides by ``n``). The n-dimensional transforms go axis by
axis (``rfftn``: ``rfft`` on the last of ``axes`` first; ``irfftn``: ``irfft`` on it last). ``fftshift`` and
``ifftshift`` are rolls; ``fftfreq`` and ``rfftfreq`` run NumPy's own code (constants, times ``1/d``).

>>> from gradc.trace import trace
>>> np.fft.rfft in FUNCTIONS and np.fft.fftshift in FUNCTIONS
True
"""
from __future__ import annotations

import math

import numpy as np

from gradc.errors import ShapeError, StaticValueNeeded, TraceError
from gradc.ir.builder import Traced
from gradc.ir.registry import OPS, bind
from gradc.ops import elementwise as ew
from gradc.ops import fft as F
from gradc.ops import shape as sh
from gradc.ops.values import aval

_NORMS = ("backward", "ortho", "forward")


def _operand(x):
    return x if isinstance(x, Traced) else np.asarray(x)


def _static_int(value, what: str, fn: str) -> int:
    if isinstance(value, Traced):
        raise StaticValueNeeded(f"np.fft.{fn}: {what} must be known at trace time, not a traced value",
                                hint="pass a Python int")
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TraceError(f"np.fft.{fn}: {what} must be an integer, not {value!r}", hint="pass a Python int")
    return int(value)


def _norm(norm, fn: str) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise TraceError(f"np.fft.{fn}: norm={norm!r} is not one of 'backward', 'ortho', 'forward'",
                         hint="pass norm='backward' (the default), 'ortho' or 'forward'")
    return norm


def _axis(axis, ndim: int, fn: str) -> int:
    ax = _static_int(axis, "axis", fn)
    if not -ndim <= ax < ndim:
        raise ShapeError(f"np.fft.{fn}: axis {ax} is out of bounds for an array of {ndim} dimensions",
                         hint=f"pick an axis in [{-ndim}, {ndim - 1}]")
    return ax % ndim


def _length(n, default, fn: str, what: str = "n") -> int:
    if n is None:
        return default
    n = _static_int(n, what, fn)
    if n < 1:
        raise ShapeError(f"np.fft.{fn}: {what}={n} points: the transform needs at least 1",
                         hint=f"pass {what} >= 1 (or leave it out for the input's length)")
    return n


def _resize(x, axis: int, n: int, fn: str):
    """``x`` cut to ``n`` along ``axis``, or zero-padded at the end (NumPy's meaning of ``n=``)."""
    t = aval(x)
    have = t.shape[axis]
    if type(have) is not int:
        raise ShapeError(f"np.fft.{fn} along an axis of named size {have}: gradc's FFT needs the length at "
                         "trace time", hint="give the axis a fixed size in the signature")
    if have == 0:
        raise ShapeError(f"np.fft.{fn}: the input has no elements along axis {axis}")
    if n == have:
        return x
    full = (sh.slice_item(None, None, None),)
    spec = full * axis + (sh.slice_item(None, min(n, have), None),) + full * (t.ndim - axis - 1)
    if n < have:
        return sh.index(x, spec)
    shape = list(t.shape)
    shape[axis] = n
    return sh.index_grad(x, spec, tuple(shape))


def _scale(x, n: int, norm: str, inverse: bool):
    if norm == "ortho":
        return ew.mul(x, 1.0 / math.sqrt(n))
    if (norm == "backward") == inverse:
        return ew.mul(x, 1.0 / n)
    return x


def _real(x, fn: str):
    x = _operand(x)
    dtype = aval(x).dtype
    if dtype in F.REAL_OF:
        raise TraceError(f"np.fft.{fn} of a complex array: it takes real input (NumPy would drop the "
                         "imaginary part)", hint=f"pass np.real(x), or use np.fft.{fn.replace('r', '', 1)}")
    return ew.astype(x, "f32" if dtype == "f32" else "f64")


def _complex(x):
    x = _operand(x)
    dtype = aval(x).dtype
    if dtype in F.REAL_OF:
        return x
    return ew.astype(x, "c64" if dtype == "f32" else "c128")


def _conj(x, fn: str):
    if "conj" not in OPS:
        raise TraceError(f"np.fft.{fn} needs complex conjugation, which this gradc lacks")
    return bind("conj", x)


def _no_out(fn: str, out):
    if out is not None:
        raise TraceError(f"np.fft.{fn} with out= is not supported by gradc",
                         hint=f"assign the result: y = np.fft.{fn}(...)")


# ---------------------------------------------------------------- one axis
def _c2c(name: str, inverse: bool):
    def transform(a, n=None, axis=-1, norm=None, out=None):
        _no_out(name, out)
        x = _complex(a)
        ax = _axis(axis, aval(x).ndim, name)
        n = _length(n, aval(x).shape[ax], name)
        y = F.fft(_resize(x, ax, n, name), ax, inverse)
        return _scale(y, n, _norm(norm, name), inverse)
    transform.__name__ = name
    return transform


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.rfft`` on a traced array."""
    _no_out("rfft", out)
    x = _real(a, "rfft")
    ax = _axis(axis, aval(x).ndim, "rfft")
    n = _length(n, aval(x).shape[ax], "rfft")
    return _scale(F.rfft(_resize(x, ax, n, "rfft"), ax), n, _norm(norm, "rfft"), False)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.irfft`` on a traced array: ``n`` defaults to ``2 * (bins - 1)``."""
    _no_out("irfft", out)
    x = _complex(a)
    ax = _axis(axis, aval(x).ndim, "irfft")
    n = _length(n, 2 * (aval(x).shape[ax] - 1), "irfft")
    if n < 1:
        raise ShapeError("np.fft.irfft of 1 bin needs n= (the default 2 * (bins - 1) is 0 points)", hint="pass n >= 1")
    y = F.irfft(_resize(x, ax, n // 2 + 1, "irfft"), ax, n)
    return _scale(y, n, _norm(norm, "irfft"), True)


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.hfft``: ``irfft`` of the conjugate, with the opposite normalisation."""
    _no_out("hfft", out)
    return irfft(_conj(_complex(a), "hfft"), n, axis, _SWAP[_norm(norm, "hfft")])


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """``np.fft.ihfft``: the conjugate of ``rfft``, with the opposite normalisation."""
    _no_out("ihfft", out)
    return _conj(rfft(a, n, axis, _SWAP[_norm(norm, "ihfft")]), "ihfft")


# ---------------------------------------------------------------- several axes
def _axes_and_sizes(x, s, axes, fn: str, half_last: bool = False):
    ndim = aval(x).ndim
    if axes is None:
        axes = list(range(ndim)) if s is None else list(range(-len(s), 0))
    elif isinstance(axes, (int, np.integer)):
        axes = [axes]
    axes = [_axis(ax, ndim, fn) for ax in axes]  # an axis named twice is transformed twice, as NumPy does
    shape = aval(x).shape
    if s is None:
        sizes = [shape[ax] for ax in axes]
        if half_last and axes:
            sizes[-1] = 2 * (sizes[-1] - 1)
        return axes, sizes
    s = [s] if isinstance(s, (int, np.integer)) else list(s)
    if len(s) != len(axes):
        raise ShapeError(f"np.fft.{fn}: s has {len(s)} sizes for {len(axes)} axes", hint="give one size per axis")
    sizes = []
    for i, (v, ax) in enumerate(zip(s, axes)):
        if v is None:  # NumPy's (deprecated) "the 1-d transform's default"
            v = 2 * (shape[ax] - 1) if half_last and i == len(axes) - 1 else shape[ax]
        elif not isinstance(v, Traced) and v == -1:  # NumPy's "the input's length along that axis"
            v = shape[ax]
        sizes.append(_length(v, None, fn, "s"))
    return axes, sizes


def _c2c_nd(name: str, inverse: bool, default_axes=None):
    def transform(a, s=None, axes=default_axes, norm=None, out=None):
        _no_out(name, out)
        x = _complex(a)
        axes, sizes = _axes_and_sizes(x, s, axes, name)
        norm = _norm(norm, name)
        for ax, n in reversed(list(zip(axes, sizes))):  # NumPy's order (it matters when an axis repeats)
            x = _scale(F.fft(_resize(x, ax, n, name), ax, inverse), n, norm, inverse)
        return x
    transform.__name__ = name
    return transform


def _rfftn(name: str, default_axes=None):
    def transform(a, s=None, axes=default_axes, norm=None, out=None):
        _no_out(name, out)
        x = _real(a, name)
        axes, sizes = _axes_and_sizes(x, s, axes, name)
        norm = _norm(norm, name)
        x = _scale(F.rfft(_resize(x, axes[-1], sizes[-1], name), axes[-1]), sizes[-1], norm, False)
        for ax, n in reversed(list(zip(axes[:-1], sizes[:-1]))):
            x = _scale(F.fft(_resize(x, ax, n, name), ax, False), n, norm, False)
        return x
    transform.__name__ = name
    return transform


def _irfftn(name: str, default_axes=None):
    def transform(a, s=None, axes=default_axes, norm=None, out=None):
        _no_out(name, out)
        x = _complex(a)
        axes, sizes = _axes_and_sizes(x, s, axes, name, half_last=True)
        norm = _norm(norm, name)
        for ax, n in zip(axes[:-1], sizes[:-1]):
            x = _scale(F.fft(_resize(x, ax, n, name), ax, True), n, norm, True)
        n = sizes[-1]
        if n < 1:
            raise ShapeError(f"np.fft.{name}: the last axis has 1 bin, so s= must give its length",
                             hint="pass s with the output sizes")
        x = F.irfft(_resize(x, axes[-1], n // 2 + 1, name), axes[-1], n)
        return _scale(x, n, norm, True)
    transform.__name__ = name
    return transform


# ---------------------------------------------------------------- shifts and frequencies
def _shift(name: str, sign: int):
    def shift(x, axes=None):
        from gradc.trace.shape_dispatch import _roll

        x = _operand(x)
        t = aval(x)
        if axes is None:
            axes = tuple(range(t.ndim))
        elif isinstance(axes, (int, np.integer)):
            axes = (axes,)
        axes = [_axis(ax, t.ndim, name) for ax in axes]
        amounts = [(t.shape[ax] // 2) if sign > 0 else -(t.shape[ax] // 2) for ax in axes]
        return _roll(x, amounts, axes) if axes else x
    shift.__name__ = name
    return shift


FUNCTIONS = {
    np.fft.fft: _c2c("fft", False), np.fft.ifft: _c2c("ifft", True), np.fft.rfft: rfft, np.fft.irfft: irfft,
    np.fft.hfft: hfft, np.fft.ihfft: ihfft,
    np.fft.fftn: _c2c_nd("fftn", False), np.fft.ifftn: _c2c_nd("ifftn", True),
    np.fft.fft2: _c2c_nd("fft2", False, (-2, -1)), np.fft.ifft2: _c2c_nd("ifft2", True, (-2, -1)),
    np.fft.rfftn: _rfftn("rfftn"), np.fft.irfftn: _irfftn("irfftn"),
    np.fft.rfft2: _rfftn("rfft2", (-2, -1)), np.fft.irfft2: _irfftn("irfft2", (-2, -1)),
    np.fft.fftshift: _shift("fftshift", 1), np.fft.ifftshift: _shift("ifftshift", -1),
}
UFUNCS: dict = {}  # fftfreq/rfftfreq need no entry: NumPy's code runs, a traced d= as arithmetic

__all__ = ["FUNCTIONS", "UFUNCS", "hfft", "ihfft", "irfft", "rfft"]
