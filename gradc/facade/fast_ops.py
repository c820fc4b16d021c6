"""The eager fast lane of elementwise binary ops (``a + b``, ``b * x``, ``x ** 3``...) on small tensors.

The general path (``functional.binary`` through ``record``) promotes dtypes, broadcasts
operands explicitly and replays a tape of primitives in backward; on tiny tensors that
bookkeeping is most of an op's time. When both operands are float tensors of one dtype
(same shape, or one of them 0-d) or a float tensor and a Python number, this lane applies
the registry op's ``impl`` directly (NumPy broadcasts a 0-d operand exactly as the explicit
``broadcast_to`` would: same elementwise arithmetic, same bits) and records a node whose
VJP is the registry op's own ``vjp`` rule, followed by ``sum_to`` (the VJP of the implicit
broadcast) for a 0-d operand. Under ``create_graph`` the node replays the general path, so
higher-order gradients still record. Anything else returns None and takes the general path.

>>> import gradc.torch as torch
>>> a = torch.tensor(2., requires_grad=True); x = torch.tensor([1., 2., 3.])
>>> y = (a * x).sum(); y.backward(); a.grad
tensor(6.)
"""
from __future__ import annotations

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.facade import grad_fn as gf
from gradc.facade import grad_mode
from gradc.facade.record import replay_vjp
from gradc.facade.tensor import Tensor
from gradc.ir import registry

_GRADC_OPS = {"add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div, "pow": ew.power, "maximum": ew.maximum,
              "minimum": ew.minimum}
_PRIMS = {op: registry.OPS[op] for op in ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "sum", "mean")}
_ALL_AXES = [tuple(range(n)) for n in range(8)]
_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_new = object.__new__
_STATE = grad_mode._STATE
_SEQUENCE = gf.SEQUENCE


SAVES = {"mul", "div", "pow", "maximum", "minimum"}  # ops whose derivative reads their operands


def saved_by(op, a, b):
    """The operands whose values the op's derivative reads (so an in-place change of them is an error), in the
    order torch's node unpacks them (``other`` before ``self``: the first stale one names the error)."""
    if op == "mul":
        return [x for x, other in ((b, a), (a, b)) if getattr(other, "requires_grad", False)]
    if op == "div":
        return [b] + ([a] if getattr(b, "requires_grad", False) else [])
    if op == "pow":
        return ([b] if getattr(b, "requires_grad", False) else []) + [a]
    return [a, b] if op in SAVES else []


class Replay:
    """The general path's forward of ``op`` (what a fast-lane node replays under create_graph).

    Its operands are the forward's tensors (or stand-ins of them) and Python numbers, cast to
    the operands' dtype as the general path casts them.
    """

    __slots__ = ("fn", "dt")

    def __init__(self, op, a, b):
        self.fn = _GRADC_OPS[op]
        self.dt = (a if isinstance(a, Tensor) else b)._data.dtype

    def __call__(self, x, y):
        return self.fn(_as(x, self.dt), _as(y, self.dt))


def _as(v, dt):
    return np.asarray(v, dt) if type(v) is float or type(v) is int else v


def binary(op, a, b, name):
    """``op(a, b)`` recorded as node ``name``, or None when the operands need the general path."""
    if _STATE["tracing"]:
        return None
    ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
    if ta:
        x = a._data
        if type(x) is not np.ndarray:
            return None
        dt = x.dtype
        if dt is not _F32 and dt is not _F64:
            return None
        if tb:
            y = b._data
            if type(y) is not np.ndarray or y.dtype is not dt or (y.shape != x.shape and y.ndim and x.ndim):
                return None
        elif type(b) is float or type(b) is int:
            y = np.asarray(b, dt)
        else:
            return None
    elif tb and (type(a) is float or type(a) is int):
        y = b._data
        if type(y) is not np.ndarray:
            return None
        dt = y.dtype
        if dt is not _F32 and dt is not _F64:
            return None
        x = np.asarray(a, dt)
    else:
        return None
    prim = _PRIMS[op]
    power = op == "pow" and not tb and (b == 2 or b == 3)
    if power:  # torch's kernel: x * x and x * x * x (NumPy's power differs in the last bit, and is 8x slower)
        data = x * x if b == 2 else x * x * x
    else:
        data = prim.impl(x, y)
    out = _new(Tensor)  # a float ndarray needs none of ``Tensor._wrap``'s conversions
    out._data = data if type(data) is np.ndarray else np.asarray(data)
    out._vc = [0]
    need_a = ta and a._requires_grad
    need_b = tb and b._requires_grad
    if not (need_a or need_b) or not _STATE["enabled"]:
        return out
    edges = (a._grad_fn or a._acc or gf.edge(a) if need_a else None,
             b._grad_fn or b._acc or gf.edge(b) if need_b else None)
    node = _new(gf.node_class(name))
    node._seq = next(_SEQUENCE)
    node._edges = edges
    saves = op in SAVES
    saved = saved_by(op, a, b) if saves else ()
    node._saved = [(t, t._vc[0], None) for t in saved if isinstance(t, Tensor)] if saved else []
    node._saves = saves
    operands = (a, b)
    replay = (Replay, op, operands, edges)
    if power and b == 2:  # the derivative of x * x by mul's rule: ct*x + ct*x, the bits of pow's ct * (2 * x)
        node._vjp = _square_vjp(x, out._data, replay)
    else:
        node._vjp = _vjp(prim, x, y, out._data, out._vc, (need_a, need_b), replay)
    node._operands = operands
    out._grad_fn, out._requires_grad = node, True
    return out


def reduce_all(op, a, name):
    """``a.sum()`` / ``a.mean()`` over every axis of a float tensor, or None for the general path."""
    x = a._data
    if _STATE["tracing"] or type(x) is not np.ndarray or (x.dtype is not _F32 and x.dtype is not _F64) or not x.ndim:
        return None
    prim = _PRIMS[op]
    params = {"axes": _ALL_AXES[x.ndim] if x.ndim < 8 else tuple(range(x.ndim)), "keepdims": False}
    if op == "mean":
        params["count"] = x.size
    out = _new(Tensor)
    out._data = np.asarray(prim.impl(x, **params))
    out._vc = [0]
    if not a._requires_grad or not _STATE["enabled"]:
        return out
    node = _new(gf.node_class(name))
    node._seq = next(_SEQUENCE)
    node._edges = (a._grad_fn or a._acc or gf.edge(a),)
    node._saved, node._saves = [], False
    node._vjp = _reduce_vjp(prim, x, out._data, params, (a,), node._edges)
    node._operands = (a,)
    out._grad_fn, out._requires_grad = node, True
    return out


def _reduce_vjp(prim, x, out, params, operands, edges):
    def vjp(ct):
        if gf.STATE["create_graph"]:
            general = rd.sum_ if prim.name == "sum" else rd.mean
            return replay_vjp(general, operands, edges)(ct)
        return prim.vjp(ct, out, x, needs=(True,), **params)
    return vjp


_UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}


def inplace(op, a, b):
    """``a.<op>_(b)`` with grad mode off, as one NumPy call writing into ``a``; None for the general path.

    The same bits as the general path (compute, then copy in): one ufunc, one rounding.
    """
    if _STATE["enabled"] or _STATE["tracing"]:
        return None
    x = a._data
    if type(x) is not np.ndarray or x.dtype not in _FLOATS or not x.flags.writeable:
        return None
    if isinstance(b, Tensor):
        y = b._data
        if type(y) is not np.ndarray or y.dtype is not x.dtype or (y.shape != x.shape and y.ndim):
            return None
    elif type(b) is float or type(b) is int:
        y = np.asarray(b, x.dtype)
    else:
        return None
    _UFUNCS[op](x, y, out=x)
    a._vc[0] += 1
    if a._views or a._base is not None:  # a view, or a base with views: their nodes (``views.after_write``)
        return None if a._base is not None and not x.flags.writeable else _after_write(a)
    return a


def _after_write(a):
    from gradc.facade import views  # views imports record, which this module's importers load first
    views.after_write(a)
    return a


def _vjp(prim, x, y, out, version, needs, replay):
    def vjp(ct):
        if gf.STATE["create_graph"]:  # record the derivative: the general path's forward, replayed on tensors
            general, op, operands, edges = replay
            return replay_vjp(general(op, *operands), operands, edges)(ct)
        # the output written in place since (``d /= 2``): its forward value again (torch saves operands only)
        gx, gy = prim.vjp(ct, out if version[0] == 0 else prim.impl(x, y), x, y, needs=needs)
        return (_sum_to(gx, x.shape) if needs[0] else None, _sum_to(gy, y.shape) if needs[1] else None)
    return vjp


def _square_vjp(x, out, replay):
    mul = registry.OPS["mul"]

    def vjp(ct):
        if gf.STATE["create_graph"]:
            general, op, operands, edges = replay
            return replay_vjp(general(op, *operands), operands, edges)(ct)
        gx, gy = mul.vjp(ct, out, x, x, needs=(True, True))
        return (ew.add(gx, gy), None)
    return vjp


def _sum_to(g, shape):
    """The VJP of NumPy's implicit broadcast of an operand of ``shape`` (0-d or the full shape)."""
    if g.shape == shape:
        return g
    if not shape:  # what ``sum_to`` binds for a 0-d target: the sum over every axis (arrays: its impl)
        return _PRIMS["sum"].impl(g, axes=tuple(range(g.ndim)), keepdims=False)
    return sh.sum_to(g, shape)
