"""``torch.autograd`` of the facade: ``backward`` and ``grad`` over recorded Tensor graphs.

>>> from gradc.facade.creation import tensor
>>> x = tensor([1., 2., 3.], requires_grad=True)
>>> grad((x ** 2).sum(), x)
(tensor([2., 4., 6.]),)
"""
from __future__ import annotations

import types

import numpy as np

from gradc.facade import grad_fn as gf
from gradc.facade.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from gradc.facade.tensor import Tensor

graph = types.SimpleNamespace(Node=gf.Node)

__all__ = ["Function", "backward", "enable_grad", "grad", "graph", "is_grad_enabled", "no_grad", "set_detect_anomaly",
           "set_grad_enabled"]


def _seq(x):
    if x is None:
        return None
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _roots(outputs, grads, create_graph):
    grads = grads if grads is not None else [None] * len(outputs)
    nodes, cts = [], []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t._data.dtype.kind == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs but got "
                                   + repr(t.dtype))
            if not create_graph:
                nodes.append(gf.edge(t))
                cts.append(np.ones(t._data.shape, t._data.dtype))
                continue
            g = Tensor._wrap(np.ones(t._data.shape, t._data.dtype))
        elif tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                               f"shape of {t.shape}.")
        nodes.append(gf.edge(t))
        data = gf.torch_convention(g._data.astype(t._data.dtype))  # the engine's convention (``torch_convention``)
        cts.append(Tensor._wrap(data) if not create_graph else
                   gf.torch_convention(g if g.dtype is t.dtype else g.to(t.dtype)))
        if not create_graph:
            cts[-1] = data
    return nodes, cts


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Add d(tensors)/d(leaf) (weighted by ``grad_tensors``) into every leaf's ``.grad``."""
    tensors = _seq(tensors)
    nodes, cts = _roots(tensors, _seq(grad_tensors), create_graph)
    gf.run(nodes, cts, retain_graph=create_graph if retain_graph is None else retain_graph,
           create_graph=create_graph)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False,
         materialize_grads=False):
    """The gradients of ``outputs`` with respect to ``inputs``, as a tuple; ``.grad`` is left alone."""
    outputs, inputs = _seq(outputs), _seq(inputs)
    nodes, cts = _roots(outputs, _seq(grad_outputs), create_graph)
    capture = [gf.edge(x) for x in inputs]
    got = gf.run(nodes, cts, retain_graph=create_graph if retain_graph is None else retain_graph,
                 create_graph=create_graph, capture=capture)
    result = []
    for i, (x, g) in enumerate(zip(inputs, got)):
        if g is None:
            if not (allow_unused or materialize_grads):
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
            result.append(Tensor._wrap(np.zeros_like(x._data)) if materialize_grads else None)
        elif isinstance(g, Tensor):
            g = gf.torch_convention(g)
            result.append(g if g.dtype is x.dtype else g.to(x.dtype))
        else:
            result.append(Tensor._wrap(gf.torch_convention(np.asarray(g).astype(x._data.dtype))))
    return tuple(result)


def set_detect_anomaly(mode, check_nan=True):
    """Accepted for compatibility; the facade's errors already name the failing tensor."""
    return None


class _Context:
    def __init__(self):
        self.saved_tensors = ()
        self.needs_input_grad = ()

    def save_for_backward(self, *tensors):
        self.saved_tensors = tensors

    def mark_non_differentiable(self, *tensors):
        pass


class Function:
    """A user-defined op: subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``.

    >>> from gradc.facade.creation import tensor
    >>> class Double(Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         return x * 2
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         return g * 2
    >>> x = tensor([1., 2.], requires_grad=True); y = Double.apply(x); y.sum().backward(); x.grad
    tensor([2., 2.])
    >>> type(y.grad_fn).__name__
    'DoubleBackward'
    """

    @classmethod
    def apply(cls, *args):
        ctx = _Context()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            out = cls.forward(ctx, *args)
        if not (is_grad_enabled() and any(ctx.needs_input_grad)):
            return out
        edges = [gf.edge(a) if isinstance(a, Tensor) else None for a in args]

        def vjp(ct):
            cg = gf.STATE["create_graph"]
            grads = cls.backward(ctx, gf.torch_convention(ct if cg else Tensor._wrap(ct)))
            grads = grads if isinstance(grads, tuple) else (grads,)
            grads = [None if g is None else gf.torch_convention(g) for g in grads]
            return [g if (g is None or cg) else g._data for g in grads]
        result = Tensor._wrap(out._data)
        result._grad_fn = gf.node_class(cls.__name__ + "Backward")(edges, vjp)
        result._requires_grad = True
        return result
