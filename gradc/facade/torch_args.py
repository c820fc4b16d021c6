"""torch's calling conventions for the ``torch.*`` functions: ``input=``/``other=`` keywords and ``out=``.

``torch_fn(f, "add")`` accepts ``torch.add(x, y)``, ``torch.add(input=x, other=y)`` and
``torch.add(x, y, out=z)``; ``out=`` writes the result into ``z`` (resized if needed) and
returns it, with torch's errors for a result that needs a gradient or does not fit ``z``'s dtype.

>>> import gradc.torch as torch
>>> z = torch.zeros(2); torch.add(input=torch.ones(2), other=torch.ones(2), out=z) is z, z
(True, tensor([2., 2.]))
"""
from __future__ import annotations

import warnings

import numpy as np

from gradc.facade import grad_mode
from gradc.facade.tensor import Tensor


def _type_name(dt):
    return dt.legacy[:-len("Tensor")]


def with_out(result, out, name):
    """``result`` written into ``out`` (when given), as torch's ``out=`` argument does."""
    if out is None:
        return result
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if grad_mode.is_grad_enabled() and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic differentiation, "
                           "but one of the arguments requires grad.")
    if result.dtype.kind > out.dtype.kind:
        raise RuntimeError(f"result type {_type_name(result.dtype)} can't be cast to the desired output type "
                           f"{_type_name(out.dtype)}")
    data = result._data.astype(out._data.dtype, copy=False)
    if out._data.shape == data.shape:
        np.copyto(out._data, data)
    else:
        if out._data.size:
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          "which does not match the required output shape "
                          f"{list(result.shape)}. This behavior is deprecated, and in a future PyTorch release "
                          "outputs will not be resized unless they have zero elements. You can explicitly reuse an "
                          "out tensor t by resizing it, inplace, to zero elements with t.resize_(0).",
                          UserWarning, stacklevel=3)
        out._data = np.array(data)
    out._bump()
    return out


def torch_fn(f, name, names=("input", "other")):
    """``f`` with torch's argument names (``names``, in order) usable as keywords, and ``out=``."""
    def call(*args, out=None, **kwargs):
        if out is None and not kwargs:  # the common call, kept cheap
            return f(*args)
        args = list(args)
        for n in names[len(args):]:
            if n not in kwargs:
                break
            args.append(kwargs.pop(n))
        stray = [n for n in names if n in kwargs]
        if stray:
            raise TypeError(f"{name}() got multiple values for argument '{stray[0]}'")
        return with_out(f(*args, **kwargs), out, name)
    call.__name__ = call.__qualname__ = name
    call.__doc__ = f"torch.{name}({', '.join(names)}, ..., out=None)"
    return call


def method_fn(name, names=("input",)):
    """``torch.name(input, ...)`` calling the Tensor method ``input.name(...)``."""
    def apply(input, *args, **kwargs):  # noqa: A002 - torch name
        return getattr(input, name)(*args, **kwargs)
    return torch_fn(apply, name, names)
