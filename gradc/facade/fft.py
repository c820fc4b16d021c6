"""``torch.fft``: the discrete Fourier transforms of real and complex tensors, the shifts and the frequencies.

Every transform records the nodes torch 2.13.0 records (``FftC2CBackward0``, ``FftR2CBackward0``,
``FftC2RBackward0``, with ``ToCopyBackward0``/``ConjBackward0``/``SliceBackward0``/
``ConstantPadNdBackward0`` before them where torch has them) and computes with the registry's
unnormalised one-axis primitives (``gradc.ops.fft``), so the gradients come from their rules.
``n``/``s`` cut or zero-pad the input along ``dim`` first; ``norm`` is ``"backward"`` (the inverse
divides by the number of points), ``"ortho"`` (both by its square root) or ``"forward"``.
Integer input is computed in the default float dtype, as torch does.

>>> import gradc.torch as torch
>>> torch.fft.fft(torch.tensor([1., 2., 3., 4.]))
tensor([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j])
>>> torch.fft.irfft(torch.fft.rfft(torch.tensor([1., 2., 3., 4.])))
tensor([1., 2., 3., 4.])
>>> torch.fft.fftshift(torch.arange(5))
tensor([3, 4, 0, 1, 2])
>>> torch.fft.rfftfreq(4)
tensor([0.0000, 0.2500, 0.5000])
"""
from __future__ import annotations

import functools
import math

import numpy as np

import gradc.ops.complex_numbers as cx
import gradc.ops.elementwise as ew
import gradc.ops.fft as F
import gradc.ops.shape as sh
from gradc.facade import complex_ops, dtypes
from gradc.facade.creation import tensor
from gradc.facade.lift import accept_traced_everywhere, dim_tuple, operand
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.facade.tensor_select import roll_by
from gradc.facade.torch_args import with_out
from gradc.ops.values import aval

_NORMS = ("backward", "ortho", "forward")
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_FULL = ("slice", None, None, None)


# ---------------------------------------------------------------- arguments, as torch checks them
def _input(x, real_only: str = ""):
    """``x`` as a float or complex Tensor (integers in the default float dtype); ``real_only`` names the
    function that refuses complex input, with torch's message."""
    x = operand(x)
    if not isinstance(x, Tensor):
        raise TypeError(f"torch.fft expects a Tensor, got {type(x).__name__}")
    if x.dtype is dtypes.float16:
        raise RuntimeError("Unsupported dtype Half")
    if x.dtype.kind < 2:
        x = Tensor._wrap(x._data.astype(dtypes.DEFAULT[0].np))  # integers carry no gradient
    if real_only and x.dtype.kind == 3:
        raise RuntimeError(real_only.format(dtype=complex_ops._scalar_name(x)))
    return x


def _one_dim(n):
    """``n`` of a one-dimensional transform as ``s`` (where -1 would mean the input's length: not for ``n``)."""
    return None if n is None else [_points(n)]


def _norm(norm) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return norm


def _points(n: int) -> int:
    n = int(n)
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return n


def _dims_and_sizes(x, s, dim, default_dim=None, half_last: bool = False):
    """torch's ``canonicalize_fft_shape_and_dim_args``: the transformed dims and their signal sizes."""
    nd = x.dim()
    if dim is None:
        dim = default_dim
    if s is not None:
        s = [s] if isinstance(s, int) else list(s)
        if dim is None:
            if len(s) > nd:
                raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {nd} dimensions.")
            dims = tuple(range(nd - len(s), nd))
        else:
            dims = _dim_tuple(dim, nd)
            if len(dims) != len(s):
                raise RuntimeError("When given, dim and shape arguments must have the same length")
    else:
        dims = tuple(range(nd)) if dim is None else _dim_tuple(dim, nd)
    if len(set(dims)) != len(dims):
        raise RuntimeError("FFT dims must be unique")
    if s is None:
        sizes = [x.shape[d] for d in dims]
        if half_last and dims:
            sizes[-1] = 2 * (sizes[-1] - 1)
    else:
        sizes = [x.shape[d] if v == -1 else int(v) for d, v in zip(dims, s)]
        if half_last and s[-1] == -1:
            sizes[-1] = 2 * (x.shape[dims[-1]] - 1)
    return dims, [_points(v) for v in sizes]


def _dim_tuple(dim, nd: int) -> tuple:
    dims = []
    for d in (dim if isinstance(dim, (tuple, list)) else [dim]):
        if not -max(nd, 1) <= int(d) < max(nd, 1):
            raise IndexError(f"Dimension out of range (expected to be in range of [{-max(nd, 1)}, {max(nd, 1) - 1}], "
                             f"but got {d})")
        dims.append(int(d) % max(nd, 1))
    return tuple(dims)


def _resize(x, dims, sizes):
    """``x`` cut (``SliceBackward0`` per dim) and zero-padded (one ``ConstantPadNdBackward0``) to ``sizes``."""
    for d, n in zip(dims, sizes):
        if x.shape[d] > n:
            x = x.narrow(d, 0, n)
    shape = list(x.shape)
    for d, n in zip(dims, sizes):
        shape[d] = max(shape[d], n)
    if tuple(shape) == tuple(x.shape):
        return x
    spec = tuple(("slice", 0, x.shape[i], None) for i in range(x.dim()))
    return record("ConstantPadNdBackward0", lambda v: sh.index_grad(v, spec, tuple(shape)), [x])


def _to_complex(x):
    return x if x.dtype.kind == 3 else x.to(dtypes.complex_of(x.dtype))


def _scale(y, n: int, norm: str, inverse: bool):
    if norm == "ortho":
        return ew.mul(y, 1.0 / math.sqrt(n))
    if (norm == "backward") == inverse:
        return ew.mul(y, 1.0 / n)
    return y


def _c2c(v, dims, sizes, norm, inverse):
    for d, n in zip(dims, sizes):
        v = _scale(F.fft(v, d, inverse), n, norm, inverse)
    return v


def _as_complex(v):
    return ew.astype(v, F.COMPLEX_OF[aval(v).dtype])


# ---------------------------------------------------------------- the transforms
def _fft_c2c_or_r2c(input, n, dim, norm, inverse):  # noqa: A002
    x = _input(input)
    dims, sizes = _dims_and_sizes(x, _one_dim(n), [dim])
    x = _resize(x, dims, sizes)
    norm = _norm(norm)
    if x.dtype.kind == 3:
        return record("FftC2CBackward0", lambda v: _c2c(v, dims, sizes, norm, inverse), [x])
    d, n = dims[0], sizes[0]
    y = record("FftR2CBackward0", lambda v: _scale(_two_sided_rfft(v, d, n), n, norm, inverse), [x])
    # torch's inverse of a real signal is the conjugate of the forward sum (scaled as the inverse)
    return complex_ops.conj(y) if inverse else y


def _two_sided_rfft(v, d: int, n: int):
    """torch's r2c transform made two-sided: the ``n // 2 + 1`` bins of ``rfft``, then the conjugates of bins
    ``(n - 1) // 2 .. 1`` (so exact zeros carry torch's signs)."""
    half = F.rfft(v, d)
    if n < 3:
        return half
    ndim = len(aval(v).shape)
    spec = tuple(sh.slice_item((n - 1) // 2, 0, -1) if i == d else _FULL for i in range(ndim))
    return sh.concatenate([half, cx.conj(sh.index(half, spec))], d)


def fft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002 - torch names
    """The one-dimensional discrete Fourier transform along ``dim``."""
    return _fft_c2c_or_r2c(input, n, dim, norm, False)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``fft``."""
    return _fft_c2c_or_r2c(input, n, dim, norm, True)


def _rfft_nd(v, dims, sizes, norm):
    """The one-sided transform: ``rfft`` along the last of ``dims``, then full transforms along the others."""
    return _c2c(_scale(F.rfft(v, dims[-1]), sizes[-1], norm, False), dims[:-1], sizes[:-1], norm, False)


def _irfft_nd(v, dims, sizes, norm):
    """The inverse of ``_rfft_nd``: full inverse transforms along all but the last dim, then ``irfft``."""
    v = _c2c(v, dims[:-1], sizes[:-1], norm, True)
    n = sizes[-1]
    return _scale(F.irfft(v, dims[-1], n), n, norm, True)


def _rfftn(input, s, dim, norm, default_dim, message):  # noqa: A002
    x = _input(input, message)
    dims, sizes = _dims_and_sizes(x, s, dim, default_dim)
    x = _resize(x, dims, sizes)
    norm = _norm(norm)
    return record("FftR2CBackward0", lambda v: _rfft_nd(v, dims, sizes, norm), [x])


def _irfftn(input, s, dim, norm, default_dim, conjugate=False):  # noqa: A002
    x = _to_complex(_input(input))
    dims, sizes = _dims_and_sizes(x, s, dim, default_dim, half_last=True)
    x = _resize(x, dims, sizes[:-1] + [sizes[-1] // 2 + 1])
    if conjugate:
        x = complex_ops.conj(x)
    norm = _norm(norm)
    return record("FftC2RBackward0", lambda v: _irfft_nd(v, dims, sizes, norm), [x])


def rfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The transform of a real signal: its ``n // 2 + 1`` non-negative frequency bins."""
    return _rfftn(input, _one_dim(n), [dim], norm, None,
                  "rfft expects a real input tensor, but got {dtype}")


def irfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The real signal of ``n`` points (default ``2 * (bins - 1)``) whose one-sided spectrum is ``input``."""
    return _irfftn(input, _one_dim(n), [dim], norm, None)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The transform of a Hermitian-symmetric signal given by its first half: a real spectrum of ``n`` points."""
    return _irfftn(input, _one_dim(n), [dim], _SWAP[_norm(norm)], None, conjugate=True)


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``hfft``: the first half of the (Hermitian) inverse transform of a real signal."""
    x = _rfftn(input, _one_dim(n), [dim], _SWAP[_norm(norm)], None,
               "ihfft expects a real input tensor, but got {dtype}")
    return complex_ops.conj(x)


def _fftn(input, s, dim, norm, default_dim, inverse):  # noqa: A002
    x = _to_complex(_input(input))
    dims, sizes = _dims_and_sizes(x, s, dim, default_dim)
    x = _resize(x, dims, sizes)
    norm = _norm(norm)
    return record("FftC2CBackward0", lambda v: _c2c(v, dims, sizes, norm, inverse), [x])


def fftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional transform over ``dim`` (all dims by default; the last ``len(s)`` when ``s`` is given)."""
    return _fftn(input, s, dim, norm, None, False)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``fftn``."""
    return _fftn(input, s, dim, norm, None, True)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``fftn`` over the last two dims."""
    return _fftn(input, s, dim, norm, (-2, -1), False)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``ifftn`` over the last two dims."""
    return _fftn(input, s, dim, norm, (-2, -1), True)


def rfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional transform of a real signal, one-sided along the last of ``dim``."""
    return _rfftn(input, s, dim, norm, None, "rfftn expects a real-valued input tensor, but got {dtype}")


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``rfftn`` over the last two dims."""
    return _rfftn(input, s, dim, norm, (-2, -1), "rfftn expects a real-valued input tensor, but got {dtype}")


def irfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``rfftn`` (the last size defaults to ``2 * (bins - 1)``)."""
    return _irfftn(input, s, dim, norm, None)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``irfftn`` over the last two dims."""
    return _irfftn(input, s, dim, norm, (-2, -1))


def hfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The n-dimensional ``hfft``: a real result from the first half (along the last dim) of a Hermitian signal."""
    return _irfftn(input, s, dim, _SWAP[_norm(norm)], None, conjugate=True)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``hfftn`` over the last two dims."""
    return _irfftn(input, s, dim, _SWAP[_norm(norm)], (-2, -1), conjugate=True)


def _ihfftn(input, s, dim, norm, default_dim):  # noqa: A002
    """torch's graph: ``FftR2CBackward0`` on the last dim, ``ConjPhysicalBackward0``, ``FftC2CBackward0`` on the
    others (the inverse transforms, so the result is the one-sided inverse transform of the real input)."""
    x = _input(input, "Only supports floating-point dtypes, but found: {dtype}")
    dims, sizes = _dims_and_sizes(x, s, dim, default_dim)
    x = _resize(x, dims, sizes)
    norm = _norm(norm)
    last = dims[-1:], sizes[-1:]
    y = record("FftR2CBackward0", lambda v: _scale(F.rfft(v, last[0][0]), last[1][0], norm, True), [x])
    if len(dims) == 1:
        return complex_ops.conj(y)
    y = complex_ops.conj_physical(y)
    return record("FftC2CBackward0", lambda v: _c2c(v, dims[:-1], sizes[:-1], norm, True), [y])


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):  # noqa: A002
    """The inverse of ``hfftn``."""
    return _ihfftn(input, s, dim, norm, None)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):  # noqa: A002
    """``ihfftn`` over the last two dims."""
    return _ihfftn(input, s, dim, norm, (-2, -1))


# ---------------------------------------------------------------- shifts and frequencies
def _roll(x, dim, sign: int):
    x = operand(x)
    dims = tuple(range(x.dim())) if dim is None else dim_tuple(dim, x.dim(), "fftshift")
    return roll_by("RollBackward0", x, {d: sign * (x.shape[d] // 2) for d in dims})


def fftshift(input, dim=None):  # noqa: A002 - torch name
    """The zero frequency moved to the middle (a roll by ``n // 2`` along each of ``dim``)."""
    return _roll(input, dim, 1)


def ifftshift(input, dim=None):  # noqa: A002
    """``fftshift``'s inverse (a roll by ``-(n // 2)``)."""
    return _roll(input, dim, -1)


def _freq(values, dtype, requires_grad):
    dt = dtypes.to_dtype(dtype) or dtypes.DEFAULT[0]
    return tensor(np.asarray(values, dt.np), dtype=dt, requires_grad=requires_grad)


def fftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False, out=None):
    """The sample frequencies of an ``n``-point transform (cycles per unit of the spacing ``d``)."""
    return _freq(np.fft.fftfreq(int(n), float(d)), dtype, requires_grad)


def rfftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False, out=None):
    """The non-negative sample frequencies of an ``n``-point real transform."""
    return _freq(np.fft.rfftfreq(int(n), float(d)), dtype, requires_grad)


def _writing_out(f):
    """``f`` with torch's ``out=`` (the result written into a given tensor)."""
    @functools.wraps(f)
    def call(*args, out=None, **kwargs):
        return with_out(f(*args, **kwargs), out, f.__name__)
    return call


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
              "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"):
    globals()[_name] = _writing_out(globals()[_name])

__all__ = sorted(n for n, v in dict(globals()).items()
                 if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__)

accept_traced_everywhere(globals(), __all__)  # torch-style code given to gradc.grad on NumPy arrays
