"""The facade's Tensor: NumPy storage (float32 by default) plus torch's autograd bookkeeping.

This module holds the data class only: storage, metadata, grad bookkeeping, conversions to
Python and NumPy. Methods that record graph nodes (operators, math, indexing, ``to``,
``clone``, ``backward``, the registry protocol) need the modules above this one and are
attached by ``gradc.facade.methods`` when the facade is imported.

>>> from gradc.facade.creation import tensor
>>> x = tensor([1., 2.], requires_grad=True)
>>> y = (x * x).sum(); y.backward(); x.grad
tensor([2., 4.])
"""
from __future__ import annotations

import warnings

import numpy as np

from gradc.facade import dtypes, grad_mode, tensor_str

NONLEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information. "
    "(Triggered internally at /__w/pytorch/pytorch/build/aten/src/ATen/core/TensorBody.h:493.)")
LEAF_INPLACE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_INPLACE = "a view of a leaf Variable that requires grad is being used in an in-place operation."


class Size(tuple):
    """A shape, printed as ``torch.Size([2, 3])``."""

    def __repr__(self):
        return "torch.Size([%s])" % ", ".join(str(d) for d in self)

    __str__ = __repr__

    def numel(self):
        return int(np.prod(self, dtype=np.int64))


class MinMax(tuple):
    """``(values, indices)`` of ``max(dim)`` / ``min(dim)``."""

    def __new__(cls, kind, values, indices):
        self = super().__new__(cls, (values, indices))
        self.kind = kind
        return self

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])

    def __repr__(self):
        return f"torch.return_types.{self.kind}(\nvalues={self[0]!r},\nindices={self[1]!r})"


class _Handle:
    def __init__(self, hooks, hook):
        self._hooks, self._hook = hooks, hook

    def remove(self):
        if self._hook in self._hooks:
            self._hooks.remove(self._hook)


_STORED = frozenset(d.np for d in dtypes.ALL)


class _TorchNamed(type):
    """Shows a class by the name torch gives it (``_torch_name``): ``print(type(x))`` prints ``<class 'torch.Tensor'>``
    as in torch. Only the printed form: ``__module__`` and pickling by reference are the facade's own."""

    def __repr__(cls):
        name = cls.__dict__.get("_torch_name")
        return f"<class '{name}'>" if name else super().__repr__()


class Tensor(metaclass=_TorchNamed):
    """An n-dimensional array that can record the ops applied to it (see the module docstring)."""

    _torch_name = "torch.Tensor"

    __array_priority__ = 1000
    # defaults of the per-tensor bookkeeping (``_wrap`` sets only what differs: most tensors are plain results)
    _requires_grad = False
    _grad_fn = _grad = _acc = _base = _view_fn = _views = None
    _retains_grad = False
    _hooks = ()
    _view_flags = ()  # ("no_grad",) for a view made in no_grad mode, ("multi", op, i) for an unbind/split output
    _gf_version = 0  # a view's version when its node was made (``gradc.facade.views``)

    def __init__(self, data=None, requires_grad=False):
        self._data = np.asarray([] if data is None else data, dtype=np.float32)
        self._init_meta(requires_grad)

    def _init_meta(self, requires_grad=False):
        self._requires_grad = bool(requires_grad)
        self._grad_fn = None
        self._grad = None
        self._acc = None
        self._vc = [0]
        self._retains_grad = False
        self._base = None
        self._hooks = ()

    @classmethod
    def _wrap(cls, data, requires_grad=False):
        t = cls.__new__(cls)
        if type(data) is not np.ndarray and not hasattr(type(data), "__gradc_bind__"):  # a traced value stays
            data = np.asarray(data)
        if data.dtype not in _STORED:
            data = data.astype(dtypes.from_np(data.dtype).np)
        t._data = data
        t._vc = [0]
        if requires_grad:
            t._requires_grad = True
        return t

    # ------------------------------------------------------------ metadata
    dtype = property(lambda self: dtypes.from_np(self._data.dtype))
    shape = property(lambda self: Size(self._data.shape))
    ndim = property(lambda self: self._data.ndim)
    is_leaf = property(lambda self: self.grad_fn is None)
    grad_fn = property(lambda self: self._grad_fn if self._base is None else self._lazy_grad_fn(self))
    retains_grad = property(lambda self: self._retains_grad)
    _version = property(lambda self: self._vc[0])

    def size(self, dim=None):
        return self.shape if dim is None else self.shape[dim]

    def dim(self):
        return self._data.ndim

    def numel(self):
        return int(self._data.size)

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def type(self):
        return "torch." + self.dtype.legacy

    def is_floating_point(self):
        return self.dtype.kind == 2

    def _bump(self):
        self._vc[0] += 1

    @property
    def requires_grad(self):
        if self._view_flags and self._stale_no_grad_view(self):  # its history is refused (``views``)
            return True
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if self._grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables." + (
                "" if flag else " If you want to use a computed variable in a subgraph that doesn't require "
                "differentiation use var_no_grad = var.detach()."))
        if flag and self.dtype.kind < 2:
            raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
        self._requires_grad = bool(flag)

    def requires_grad_(self, requires_grad=True):
        if self._grad_fn is not None:
            if not requires_grad:
                self.requires_grad = False
            return self
        if requires_grad and self.dtype.kind < 2:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        tracing = grad_mode._STATE["tracing"]  # torch.compile is tracing: it refuses what it cannot trace
        if tracing is not None:
            tracing.refuse("grad")
        if self._grad_fn is not None and not self._retains_grad:
            warnings.warn(NONLEAF_GRAD, UserWarning, stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None and not isinstance(value, Tensor):  # torch's words (a tutorial assigns 0.)
            raise TypeError("assigned grad expected to be a Tensor or None but got grad of type "
                            + type(value).__name__)
        if value is not None and tuple(value.shape) != tuple(self.shape):
            raise RuntimeError("attempting to assign a gradient of size '[%s]' to a tensor of size '[%s]'. Please "
                               "ensure that the gradient and the tensor are the same size"
                               % (", ".join(map(str, value.shape)), ", ".join(map(str, self.shape))))
        self._grad = value

    def retain_grad(self):
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is not None and not self._retains_grad:
            self._retains_grad = True
            if not any(t is self for t in self._grad_fn._retained):
                self._grad_fn._retained += (self,)

    def register_hook(self, hook):
        """Call ``hook(grad)`` when this tensor's gradient is computed; a returned tensor replaces the gradient."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if not self._hooks:
            self._hooks = []
        self._hooks.append(hook)
        if self._grad_fn is not None and not any(t is self for t in self._grad_fn._retained):
            self._grad_fn._retained += (self,)
        return _Handle(self._hooks, hook)

    def detach(self):
        tracing = grad_mode._STATE["tracing"]  # torch.compile: the same memory, read without a gradient
        t = Tensor._wrap(self._data if tracing is None else tracing.detached(self._data))
        t._vc = self._vc
        return t

    def detach_(self):
        self._grad_fn, self._requires_grad = None, False
        return self

    @property
    def data(self):
        tracing = grad_mode._STATE["tracing"]
        return Tensor._wrap(self._data if tracing is None else tracing.detached(self._data))

    @data.setter
    def data(self, value):
        self._data = value._data

    # ------------------------------------------------------------ conversions
    def __repr__(self):
        return tensor_str.tensor_repr(self)

    def __format__(self, spec):
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted to Scalar")
        value = self._data.reshape(())
        if not isinstance(value, (np.ndarray, np.generic)):  # traced: torch's item() is a Python number, refused
            int(value)
        return value.item()

    def tolist(self):
        if not isinstance(self._data, np.ndarray):
            int(self._data.reshape(-1)[0])  # traced: torch's tolist() gives Python numbers, refused
        return self._data.tolist()

    def numpy(self, force=False):
        if self._requires_grad and not force:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self._data

    def __array__(self, dtype=None, copy=None):
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self._data.reshape(()))

    def __float__(self):
        if self._requires_grad:
            warnings.warn("Converting a tensor with requires_grad=True to a scalar may lead to unexpected behavior.\n"
                          "Consider using tensor.detach() first. (Triggered internally at "
                          "/__w/pytorch/pytorch/torch/csrc/autograd/generated/python_variable_methods.cpp:836.)",
                          UserWarning, stacklevel=2)
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __index__(self):
        return int(self.item())

    def cpu(self):
        return self

    def data_ptr(self):
        return self._data.__array_interface__["data"][0]

    def __hash__(self):
        return id(self)

    # ------------------------------------------------------------ in-place machinery
    def _check_inplace(self):
        if not grad_mode.is_grad_enabled():
            return
        base = self._base
        if base is None:
            if self._requires_grad and self._grad_fn is None:
                raise RuntimeError(LEAF_INPLACE)
        elif not self._view_flags:
            if base._requires_grad and base._grad_fn is None:
                raise RuntimeError(VIEW_INPLACE)
            if self._requires_grad and self._grad_fn is None:  # torch reads the node without renewing it here
                raise RuntimeError(LEAF_INPLACE)

