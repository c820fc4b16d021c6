"""``torch.fft``: the real-valued part (``fftshift``, ``ifftshift``, ``fftfreq``, ``rfftfreq``); the transforms
themselves are refused.

The facade's tensors are real (float16/32/64, int32/64, bool), and every transform of
``torch.fft`` returns (or takes) a complex tensor, so ``fft``, ``rfft``, ``irfft``, ... raise a
``RuntimeError`` saying so and pointing at what works: gradc's compiler differentiates NumPy
code that calls ``np.fft`` (complex values included), e.g. ``gradc.grad(f)`` where ``f`` uses
``np.fft.rfft``. The shifts are rolls (differentiable); the frequencies are constants.

>>> import gradc.torch as torch
>>> torch.fft.fftshift(torch.arange(5))
tensor([3, 4, 0, 1, 2])
>>> torch.fft.rfftfreq(4)
tensor([0.0000, 0.2500, 0.5000])
"""
from __future__ import annotations

import numpy as np

from gradc.facade import dtypes
from gradc.facade.creation import tensor
from gradc.facade.lift import accept_traced_everywhere, dim_tuple, operand
from gradc.facade.tensor_select import roll_by


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


def _complex(name):
    def refuse(*args, **kwargs):
        raise RuntimeError(f"torch.fft.{name}: the facade's tensors are real, and this transform's result (or "
                           f"input) is complex, so gradc's Tensor facade does not provide it. gradc differentiates "
                           f"NumPy code calling np.fft.{name} (complex values included): use gradc.grad on a NumPy "
                           "function")
    refuse.__name__ = name
    refuse.__doc__ = f"``torch.fft.{name}``: refused (complex result)."
    return refuse


for _name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
              "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"):
    globals()[_name] = _complex(_name)

__all__ = sorted(n for n, v in dict(globals()).items()
                 if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == __name__)

accept_traced_everywhere(globals(), __all__)  # torch-style code given to gradc.grad on NumPy arrays
