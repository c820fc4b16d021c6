"""``torch.autograd`` of the facade: ``backward`` and ``grad`` over recorded Tensor graphs.

>>> from gradc.runtime.creation import tensor
>>> x = tensor([1., 2., 3.], requires_grad=True)
>>> grad((x ** 2).sum(), x)
(tensor([2., 4., 6.]),)
"""
from __future__ import annotations

import types

import numpy as np

from gradc.runtime import grad_fn as gf
from gradc.runtime.grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from gradc.runtime.tensor import Tensor

graph = types.SimpleNamespace(Node=gf.Node)

__all__ = ["backward", "enable_grad", "grad", "graph", "is_grad_enabled", "no_grad", "set_grad_enabled"]


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
            g = Tensor._wrap(np.ones(t._data.shape, t._data.dtype))
        elif tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                               f"shape of {t.shape}.")
        nodes.append(gf.edge(t))
        data = g._data.astype(t._data.dtype)
        cts.append(Tensor._wrap(data) if not create_graph else (g if g.dtype is t.dtype else g.to(t.dtype)))
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
            result.append(g if g.dtype is x.dtype else g.to(x.dtype))
        else:
            result.append(Tensor._wrap(np.asarray(g).astype(x._data.dtype)))
    return tuple(result)
