"""``torch.functional``: the module of that name in torch (``import torch.functional as F``), holding the
facade's ``einsum``, ``meshgrid``, ``split``, ``norm``, ... and ``atleast_1d/2d/3d`` and ``broadcast_shapes``
(also top-level ``torch`` names). A name of torch's module the facade lacks raises an error that says so.

>>> import gradc.torch as torch
>>> torch.functional.broadcast_shapes((2, 1), (3,))
torch.Size([2, 3])
>>> torch.atleast_2d(torch.tensor(1.0)).shape
torch.Size([1, 1])
"""
from __future__ import annotations

from gradc.facade.tensor import Size

FUNCTIONS = ("atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes")
# torch.functional's names the facade's top level provides (bound by ``bind_top_level``)
FROM_TOP_LEVEL = ("broadcast_tensors", "cartesian_prod", "cdist", "chain_matmul", "einsum", "meshgrid", "norm",
                  "split", "tensordot", "unique")


def _each(fn, tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        return tuple(fn(t) for t in tensors[0])
    if len(tensors) == 1:
        return fn(tensors[0])
    return tuple(fn(t) for t in tensors)


def _at_least_1d(t):
    return t.reshape(1) if t.dim() == 0 else t


def _at_least_2d(t):
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.unsqueeze(0) if t.dim() == 1 else t


def _at_least_3d(t):
    if t.dim() == 0:
        return t.reshape(1, 1, 1)
    if t.dim() == 1:
        return t.unsqueeze(0).unsqueeze(-1)
    return t.unsqueeze(-1) if t.dim() == 2 else t


def atleast_1d(*tensors):
    """Each tensor with at least one dimension (a 0-d one reshaped to ``(1,)``; others as they are)."""
    return _each(_at_least_1d, tensors)


def atleast_2d(*tensors):
    """Each tensor with at least two dimensions (``(n,)`` becomes ``(1, n)``)."""
    return _each(_at_least_2d, tensors)


def atleast_3d(*tensors):
    """Each tensor with at least three dimensions (``(n,)`` becomes ``(1, n, 1)``, ``(m, n)`` ``(m, n, 1)``)."""
    return _each(_at_least_3d, tensors)


def broadcast_shapes(*shapes) -> Size:
    """The shape tensors of ``shapes`` broadcast to, or torch's error naming the first that does not fit."""
    result: list = []
    for i, shape in enumerate(shapes):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        for k in range(1, len(shape) + 1):
            size = int(shape[-k])
            if k > len(result):
                result.insert(0, size)
            elif result[-k] == 1:
                result[-k] = size
            elif size not in (1, result[-k]):
                raise RuntimeError(f"Attempting to broadcast a dimension of length {size} at {-k}! Mismatching "
                                   f"argument at index {i} had {shape}; but expected shape should be broadcastable "
                                   f"to {result}")
    return Size(result)


def bind_top_level(namespace: dict) -> None:
    """Bind ``FROM_TOP_LEVEL`` from the facade's ``torch`` namespace (called once it is complete)."""
    globals().update({name: namespace[name] for name in FROM_TOP_LEVEL if name in namespace})
