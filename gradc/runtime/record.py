"""Recording Tensor ops: one graph node per torch-level op, backed by the op registry.

``record(name, fn, operands)`` computes ``fn`` (a function written with gradc ops) on the
operands' arrays and, when grad mode is on and an operand requires grad, attaches a node
called ``name``. Its VJP re-applies ``fn`` to stand-in tensors and runs the registry's VJP
rules backwards through those primitive steps (broadcasts, dtype casts and all), so the
facade has no derivative formulas of its own. Under ``create_graph`` the stand-ins are
linked to the original graph and the rules run on Tensors, recording as they go.
"""
from __future__ import annotations

import numpy as np

from gradc.ir.types import TensorType, dtype_name
from gradc.runtime import grad_fn as gf
from gradc.runtime import grad_mode

# Names of nodes recorded by the registry hook (VJP rules applied to Tensors, create_graph=True).
HOOK_NAMES = {"broadcast_to": "ExpandBackward0", "reshape": "ViewBackward0", "astype": "ToCopyBackward0",
              "transpose": "PermuteBackward0", "index": "SelectBackward0", "gather": "IndexBackward0",
              "sum": "SumBackward1", "mean": "MeanBackward1", "max": "MaxBackward1", "min": "MinBackward1",
              "matmul": "MmBackward0", "index_grad": "SelectBackwardBackward0", "concatenate": "CatBackward0",
              "log1p": "Log1PBackward0", "clip": "ClampBackward1", "maximum": "MaximumBackward0",
              "minimum": "MinimumBackward0", "outer": "MmBackward0"}


def Tensor():  # noqa: N802 - late import of the class
    from gradc.runtime.tensor import Tensor as T

    return T


def aval_of(t) -> TensorType:
    return TensorType(tuple(t._data.shape), dtype_name(t._data.dtype))


def tracking(operands) -> bool:
    return grad_mode.is_grad_enabled() and any(getattr(o, "requires_grad", False) for o in operands)


def values(operands):
    T = Tensor()
    return [o._data if isinstance(o, T) else o for o in operands]


def record(name, fn, operands, saves=False, saved=(), out_saved=False, nondiff=False, wrap=None):
    """Apply ``fn`` to ``operands`` (Tensors, arrays, numbers) and record node ``name``."""
    T = Tensor()
    prev = grad_mode._STATE["enabled"]
    grad_mode._STATE["enabled"] = False
    try:
        data = fn(*values(operands))
    finally:
        grad_mode._STATE["enabled"] = prev
    out = T._wrap(np.asarray(data))
    if nondiff or not tracking(operands):
        return out
    edges = [gf.edge(o) if isinstance(o, T) else None for o in operands]
    node = gf.node_class(name)(edges, None, saved=[s for s in saved if isinstance(s, T)], saves=saves)
    node._vjp = _vjp_by_replay(fn, operands, node)
    node._operands = tuple(operands)
    out._grad_fn, out._requires_grad = node, True
    if out_saved:
        node._saved.append((out, out._version, node))
        node._saves = True
    return out


def alias(data, edge):
    """A stand-in tensor for ``data`` whose gradient flows into ``edge``."""
    t = Tensor()._wrap(data)
    t._grad_fn = gf.node_class("AliasBackward0")([edge], lambda ct: (ct,))
    t._requires_grad = True
    return t


def _vjp_by_replay(fn, operands, node):
    T = Tensor()

    def vjp(ct):
        cg = gf.STATE["create_graph"]
        args, stand_ins = [], []
        for o, e in zip(operands, node._edges):
            if isinstance(o, T) and e is not None:
                a = alias(o._data, e if cg else None)
                stand_ins.append(a)
                args.append(a)
            else:
                args.append(o._data if isinstance(o, T) else o)
        prev = grad_mode._STATE["enabled"]
        grad_mode._STATE["enabled"] = True
        try:
            out = fn(*args)
        finally:
            grad_mode._STATE["enabled"] = prev
        if not isinstance(out, T) or out.grad_fn is None:  # zero derivative (floor, round, sign, ...)
            return [np.zeros_like(o._data) if isinstance(o, T) and e is not None else None
                    for o, e in zip(operands, node._edges)]
        got = iter(gf.run([out.grad_fn], [ct], retain_graph=False, create_graph=cg,
                          capture=[a.grad_fn for a in stand_ins]))
        return [next(got) if (isinstance(o, T) and e is not None) else None for o, e in zip(operands, node._edges)]
    return vjp


def bind_hook(op, args, params):
    """``__gradc_bind__`` of Tensor: compute with ``op.impl`` and record a node applying ``op.vjp``."""
    T = Tensor()
    out = T._wrap(np.asarray(op.impl(*values(args), **params)))
    if op.nondiff or not tracking(args):
        return out
    edges = [gf.edge(a) if isinstance(a, T) else None for a in args]
    needs = tuple(e is not None for e in edges)

    def vjp(ct):
        cg = gf.STATE["create_graph"]
        ins = [(a if cg else a._data) if isinstance(a, T) else a for a in args]
        return op.vjp(ct, out if cg else out._data, *ins, needs=needs, **params)
    name = HOOK_NAMES.get(op.name) or op.name.capitalize() + "Backward0"
    out._grad_fn, out._requires_grad = gf.node_class(name)(edges, vjp), True
    return out
