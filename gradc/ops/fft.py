"""Discrete Fourier transforms: three unnormalised primitives along one axis, and ``np.fft`` built on them.

The primitives, each a linear map along ``axis`` (its tangent is the op applied to the tangent):

* ``fft`` (``inverse=False``): ``y[k] = sum_j x[j] exp(-2 pi i jk/n)``, complex to complex; ``inverse=True``
  uses ``exp(+2 pi i jk/n)`` and does not divide by ``n`` (NumPy's ``ifft(x, norm="forward")``).
* ``rfft``: the same sum for real ``x``, its first ``n//2 + 1`` bins.
* ``irfft`` (``n``): the real signal of length ``n`` whose spectrum is the Hermitian extension of ``x``
  (``n//2 + 1`` bins), not divided by ``n`` (NumPy's ``irfft(x, n, norm="forward")``).

Derivatives follow JAX's convention: a cotangent of a complex value is ``d/dRe - i d/dIm`` of the real loss,
so the VJP of a complex-linear map ``A`` is its transpose ``A^T`` (not its conjugate transpose), and of a
map from reals to complex values ``Re(A^T ct)``. The Fourier matrix is symmetric, so ``fft``'s VJP is the
same ``fft``. ``rfft``'s is ``Re(F^T pad(ct))``; writing ``Re(sum_k c_k e^{-i t})`` as the unnormalised
``irfft`` of ``c_k / w_k`` read at ``-j mod n`` (``w_k`` = 2 for the bins that stand for two, 1 for bin 0
and, ``n`` even, bin ``n/2``) keeps it real and in two ops. ``irfft``'s is ``w_k sum_j ct_j e^{+i t}``,
which is ``w * rfft(ct read at -j mod n)``. The two rules call each other, so every order is closed.

Normalisation (``norm=``), the padding or truncation to ``n`` and the multi-axis transforms are
compositions (``index``, ``index_grad``, ``mul``) in ``gradc.trace.fft_dispatch``.

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> x = np.arange(4.0)
>>> np.allclose(irfft(rfft(x, 0), 0, 4) / 4, x)
True
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.shape as sh
from gradc.errors import ShapeError
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.values import aval

COMPLEX_OF = {"f64": "c128", "f32": "c64"}
REAL_OF = {"c128": "f64", "c64": "f32"}
_NP_COMPLEX = {"c128": np.complex128, "c64": np.complex64}
_NP_REAL = {"f64": np.float64, "f32": np.float32}


def _along(axis: int, ndim: int, item) -> tuple:
    full = sh.slice_item(None, None, None)
    return (full,) * axis + (item,) + (full,) * (ndim - axis - 1)


def reverse_mod(x, axis: int):
    """``x`` read at ``-j mod n`` along ``axis`` (element 0 stays, the rest reversed).

    >>> reverse_mod(np.arange(4.0), 0)
    array([0., 3., 2., 1.])
    """
    t = aval(x)
    if t.shape[axis] == 1:
        return x
    first = sh.index(x, _along(axis, t.ndim, sh.slice_item(None, 1, None)))  # x[..., :1]
    rest = sh.index(x, _along(axis, t.ndim, sh.slice_item(None, 0, -1)))  # x[..., :0:-1]: n-1 down to 1
    return sh.concatenate([first, rest], axis)


def bin_weights(n: int) -> np.ndarray:
    """How many spectrum bins each of ``rfft``'s ``n//2 + 1`` outputs stands for (1 or 2).

    >>> bin_weights(4), bin_weights(5)
    (array([1., 2., 1.]), array([1., 2., 2.]))
    """
    w = np.full(n // 2 + 1, 2.0)
    w[0] = 1.0
    if n % 2 == 0:
        w[-1] = 1.0
    return w


def _scale_along(x, values: np.ndarray, axis: int, dtype: str):
    shape = [1] * aval(x).ndim
    shape[axis] = len(values)
    real = REAL_OF.get(dtype, dtype)
    return ew.mul(x, values.reshape(shape).astype(_NP_REAL[real]))


# C: one call per equation of a line function of the radix-2/Bluestein library (``gradc.backends.c.fft``)
_C = c_spell.loop("fft_lines")


def _axis_length(t, axis: int, what: str) -> int:
    n = t.shape[axis]
    if type(n) is not int:
        raise ShapeError(f"{what} along an axis of named size {n}: gradc's FFT needs the length at trace time",
                         hint="give the axis a fixed size in the signature")
    return n


# ---------------------------------------------------------------- fft (complex to complex)
def _fft_infer(types, params):
    t = types[0]
    if t.dtype not in REAL_OF:
        raise ShapeError(f"fft takes a complex array, not {t.dtype}")
    return t


def _fft_impl(x, axis, inverse):
    x = np.asarray(x)
    y = np.fft.ifft(x, axis=axis, norm="forward") if inverse else np.fft.fft(x, axis=axis)
    return y.astype(x.dtype, copy=False)


def _fft_spell(args, params, out, target):
    kwargs = {"axis": spell.literal(params["axis"])}
    if params["inverse"]:
        kwargs["norm"] = ast.Constant("forward")
    call = spell.call("np.fft.ifft" if params["inverse"] else "np.fft.fft", args[0], **kwargs)
    return call if out.dtype == "c128" else spell.method_call(call, "astype", spell.dotted("np.complex64"))


defop("fft", infer=_fft_infer, impl=_fft_impl, linear=True,
      vjp=lambda ct, out, x, needs, axis, inverse: (fft(ct, axis, inverse),),
      jvp=lambda tangents, out, x, axis, inverse: None if tangents[0] is None else fft(tangents[0], axis, inverse),
      batch=lambda x, batched, axis, inverse: fft(x, axis + 1, inverse),
      doc="x_bar = fft(ct) (the Fourier matrix is symmetric: its transpose is itself)",
      np=_fft_spell, c=_C)


# ---------------------------------------------------------------- rfft (real to half spectrum)
def _rfft_infer(types, params):
    t = types[0]
    if t.dtype not in COMPLEX_OF:
        raise ShapeError(f"rfft takes a real floating array, not {t.dtype}")
    axis = params["axis"]
    n = _axis_length(t, axis, "rfft")
    shape = list(t.shape)
    shape[axis] = n // 2 + 1
    return t.with_shape(shape).with_dtype(COMPLEX_OF[t.dtype])


def _rfft_impl(x, axis):
    x = np.asarray(x)
    return np.fft.rfft(x, axis=axis).astype(_NP_COMPLEX[COMPLEX_OF[_real_name(x.dtype)]], copy=False)


def _real_name(dtype) -> str:
    return "f32" if np.dtype(dtype) == np.float32 else "f64"


def _rfft_vjp(ct, out, x, needs, axis):
    n = aval(x).shape[axis]
    halved = _scale_along(ct, 1.0 / bin_weights(n), axis, aval(ct).dtype)
    return (reverse_mod(irfft(halved, axis, n), axis),)


def _rfft_spell(args, params, out, target):
    call = spell.call("np.fft.rfft", args[0], axis=spell.literal(params["axis"]))
    return call if out.dtype == "c128" else spell.method_call(call, "astype", spell.dotted("np.complex64"))


defop("rfft", infer=_rfft_infer, impl=_rfft_impl, linear=True, vjp=_rfft_vjp,
      jvp=lambda tangents, out, x, axis: None if tangents[0] is None else rfft(tangents[0], axis),
      batch=lambda x, batched, axis: rfft(x, axis + 1),
      doc="x_bar = irfft(ct / w, n) read at -j mod n (w: 2 for the doubled bins), i.e. Re(F^T pad(ct))",
      np=_rfft_spell, c=_C)


# ---------------------------------------------------------------- irfft (half spectrum to real, unscaled)
def _irfft_infer(types, params):
    t = types[0]
    if t.dtype not in REAL_OF:
        raise ShapeError(f"irfft takes a complex array, not {t.dtype}")
    axis, n = params["axis"], params["n"]
    if _axis_length(t, axis, "irfft") != n // 2 + 1:
        raise ShapeError(f"irfft to {n} points takes {n // 2 + 1} bins along axis {axis}, not {t.shape[axis]}")
    shape = list(t.shape)
    shape[axis] = n
    return t.with_shape(shape).with_dtype(REAL_OF[t.dtype])


def _irfft_impl(x, axis, n):
    x = np.asarray(x)
    real = _NP_REAL[REAL_OF[_complex_name(x.dtype)]]
    return np.fft.irfft(x, n=n, axis=axis, norm="forward").astype(real, copy=False)


def _complex_name(dtype) -> str:
    return "c64" if np.dtype(dtype) == np.complex64 else "c128"


def _irfft_vjp(ct, out, x, needs, axis, n):
    return (_scale_along(rfft(reverse_mod(ct, axis), axis), bin_weights(n), axis, aval(ct).dtype),)


def _irfft_spell(args, params, out, target):
    call = spell.call("np.fft.irfft", args[0], n=spell.literal(params["n"]), axis=spell.literal(params["axis"]),
                      norm=ast.Constant("forward"))
    return call if out.dtype == "f64" else spell.method_call(call, "astype", spell.dotted("np.float32"))


defop("irfft", infer=_irfft_infer, impl=_irfft_impl, linear=True, vjp=_irfft_vjp,
      jvp=lambda tangents, out, x, axis, n: None if tangents[0] is None else irfft(tangents[0], axis, n),
      batch=lambda x, batched, axis, n: irfft(x, axis + 1, n),
      doc="x_bar = w * rfft(ct read at -j mod n) (w: 2 for the doubled bins; JAX's transpose, no conjugate)",
      np=_irfft_spell, c=_C)


# ---------------------------------------------------------------- the primitives' public spelling
def fft(x, axis: int, inverse: bool = False):
    """The unnormalised complex transform along ``axis`` (``inverse``: ``exp(+2 pi i jk/n)``, not divided by n).

    >>> fft(np.array([1.0, 0.0], dtype=complex), 0)
    array([1.+0.j, 1.+0.j])
    """
    return bind("fft", x, axis=axis, inverse=bool(inverse))


def rfft(x, axis: int):
    """The first ``n//2 + 1`` bins of the transform of real ``x`` along ``axis``.

    >>> rfft(np.array([1.0, 2.0, 3.0]), 0)
    array([ 6. +0.j       , -1.5+0.8660254j])
    """
    return bind("rfft", x, axis=axis)


def irfft(x, axis: int, n: int):
    """The unnormalised inverse of ``rfft``: ``n`` real points from ``n//2 + 1`` bins.

    >>> irfft(np.array([6.0 + 0j, -1.5 + 0.8660254j]), 0, 3).round(6)
    array([3., 6., 9.])
    """
    return bind("irfft", x, axis=axis, n=int(n))


__all__ = ["COMPLEX_OF", "REAL_OF", "bin_weights", "fft", "irfft", "reverse_mod", "rfft"]
