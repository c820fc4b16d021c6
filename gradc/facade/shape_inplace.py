"""torch's in-place shape changes of a tensor: ``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_``, ``swapdims_``,
``swapaxes_``. The tensor takes the out-of-place view's metadata (same storage) and, under autograd, its node
under torch's name for the in-place overload (``UnsqueezeBackward1``, ``TBackward1``...); the version counter
moves by one, as in torch. A leaf that requires grad refuses, as in torch. A view, or a tensor with live views,
is refused with a clear error: the facade's view bookkeeping maps a storage through fixed shapes.

>>> import gradc.torch as torch
>>> x = torch.zeros(3, 2)
>>> x.t_().shape, x.unsqueeze_(0).shape
(torch.Size([2, 3]), torch.Size([1, 2, 3]))
"""
from __future__ import annotations

from gradc.facade import grad_fn as gf

# method -> (the out-of-place method, torch's node name for the in-place overload)
_OPS = {"unsqueeze_": ("unsqueeze", "UnsqueezeBackward1"), "squeeze_": ("squeeze", None),
        "t_": ("t", "TBackward1"), "transpose_": ("transpose", "TransposeBackward1"),
        "swapdims_": ("transpose", "TransposeBackward1"), "swapaxes_": ("transpose", "TransposeBackward1")}


def _live_views(t) -> bool:
    return any(ref() is not None for ref in t._views or ())  # weak references to the tensor's views


def _shape_inplace(name):
    method, node_name = _OPS[name]

    def change(self, *args, **kwargs):
        self._check_inplace()
        if self._base is not None or _live_views(self):
            raise RuntimeError(f"gradc's Tensor facade does not support {name}() on a view or on a tensor that has "
                               f"views (the views map its storage through its current shape); use the "
                               f"out-of-place x.{method}(...) and keep its result instead")
        if name == "t_" and self.dim() > 2:
            raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {self.dim()}D")
        out = getattr(self, method)(*args, **kwargs)
        self._data = out._data
        if out._grad_fn is not None:
            self._grad_fn = out._grad_fn
            gf.rename_node(self._grad_fn, _squeeze_name(args, kwargs) if method == "squeeze" else node_name)
        self._bump()
        return self
    change.__name__ = change.__qualname__ = name
    return change


def _squeeze_name(args, kwargs):
    """torch's node of ``squeeze_()``, ``squeeze_(dim)`` and ``squeeze_((dims...))``."""
    dim = args[0] if args else kwargs.get("dim")
    return "SqueezeBackward3" if dim is None else "SqueezeBackward5" if isinstance(dim, (tuple, list)) \
        else "SqueezeBackward4"


def install(T) -> None:
    """The in-place shape methods on the Tensor class ``T``."""
    for name in _OPS:
        setattr(T, name, _shape_inplace(name))
