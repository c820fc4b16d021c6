"""The eager fast lane of elementwise binary ops (``a + b``, ``b * x``, ``x ** 3``...) on small tensors.

The general path (``functional.binary`` through ``record``) promotes dtypes, broadcasts
operands explicitly and replays a tape of primitives in backward; on tiny tensors that
bookkeeping is most of an op's time. When both operands are float tensors of one dtype
(same shape, or one of them 0-d) or a float tensor and a Python number, this lane applies
the registry op's ``impl`` directly (NumPy broadcasts a 0-d operand exactly as the explicit
``broadcast_to`` would: same elementwise arithmetic, same bits) and records a node whose
VJP is the registry op's own ``vjp`` rule, followed by ``sum_to`` (the VJP of the implicit
broadcast) for a 0-d operand (a method of the node's class: ``gradc.facade.fast_nodes``). Under
``create_graph`` the node replays the general path, so higher-order gradients still record. Anything
else returns None and takes the general path.

>>> import gradc.torch as torch
>>> a = torch.tensor(2., requires_grad=True); x = torch.tensor([1., 2., 3.])
>>> y = (a * x).sum(); y.backward(); a.grad
tensor(6.)
"""
from __future__ import annotations

import numpy as np

import gradc.ops.shape as sh
from gradc.facade import fast_nodes as fn_
from gradc.facade import grad_fn as gf
from gradc.facade import grad_mode, torch_sum
from gradc.facade.tensor import Tensor
from gradc.ir import registry

_PRIMS = {op: registry.OPS[op] for op in ("add", "sub", "mul", "div", "pow", "maximum", "minimum", "sum", "mean")}
_ALL_AXES = [tuple(range(n)) for n in range(8)]
_FLOATS = frozenset({np.dtype(np.float32), np.dtype(np.float64)})
_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_new = object.__new__
_NEEDS = (((False, False), (False, True)), ((True, False), (True, True)))  # shared, not a tuple per node
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
    edges = (a._grad_fn or gf.edge(a) if need_a else None,
             b._grad_fn or gf.edge(b) if need_b else None)
    power2 = power and b == 2
    node = _new(gf.node_class(name, fn_.SquareNode if power2 else fn_.BinaryNode))
    node._seq = next(_SEQUENCE)
    node._edges = edges
    saves = op in SAVES
    if saves:  # never a tensor that may later get a history (a cycle): what torch's saved variables keep
        operands = (gf.saved_operand(a) if ta else a, gf.saved_operand(b) if tb else b)
    else:  # nothing to keep but which operands are tensors (their arrays are the VJP's): a shared tuple
        operands = _BOTH_UNSAVED if ta and tb else _unsaved_with(a, b, ta)
    saved = saved_by(op, a, b) if saves else ()
    if saved:  # (operand slot, its version): numbers only, a tuple the collector stops tracking (``_saved``)
        node._sv = tuple([(t is not a, t._vc[0]) for t in saved if isinstance(t, Tensor)])
    if saves:
        node._saves = True
    # the VJP's arrays on the node itself (its class's method); x ** 2: mul's rule, the bits of pow's ct * (2 * x).
    # add/sub/mul's rules read no output: the node keeps neither it nor its version counter
    linear = op in fn_.LINEAR_RULES
    node._op, node._x, node._out = op, x, None if linear else out._data
    if not power2:
        node._prim, node._y, node._needs = prim, y, _NEEDS[need_a][need_b]
        node._ver = fn_.FRESH if linear else out._vc
    node._operands = operands
    out._grad_fn, out._requires_grad = node, True
    return out


_BOTH_UNSAVED = (gf.NOT_SAVED, gf.NOT_SAVED)
_UNSAVED_WITH: dict = {}  # (number, its type, whether it is second) -> the operands tuple nodes share


def _unsaved_with(a, b, number_second):
    """The operands of an add/sub node with one number (kept: a replay under create_graph reads it), shared by
    every node with that number (one object fewer per node); zeros and NaN are not shared (-0.0 == 0.0)."""
    v = b if number_second else a
    if v != v or v == 0:
        return (gf.NOT_SAVED, b) if number_second else (a, gf.NOT_SAVED)
    key = (v, type(v), number_second)
    got = _UNSAVED_WITH.get(key)
    if got is None:
        if len(_UNSAVED_WITH) > 1024:
            _UNSAVED_WITH.clear()
        got = _UNSAVED_WITH[key] = (gf.NOT_SAVED, b) if number_second else (a, gf.NOT_SAVED)
    return got


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
    if fn_.EXACT_FLOAT32_SUMS and x.dtype is _F32 and x.size:  # torch's order of additions (see torch_sum)
        value = torch_sum.torch_order_sum(x, None, False)
        if value is not None:
            out._data = value if op == "sum" else (value / np.float32(x.size)).astype(np.float32)
    out._vc = [0]
    if not a._requires_grad or not _STATE["enabled"]:
        return out
    node = _new(gf.node_class(name, fn_.ReduceNode))
    node._seq = next(_SEQUENCE)
    node._edges = (a._grad_fn or gf.edge(a),)
    node._prim, node._x, node._out, node._params = prim, x, out._data, params
    node._operands = (gf.saved_operand(a),)
    out._grad_fn, out._requires_grad = node, True
    return out


def unary(name, fn, a, saves=False, saved_in=False, out_saved=False):
    """``record(name, fn, [a], ...)`` for a float tensor on a NumPy array, with less bookkeeping: ``fn``'s
    primitive steps run on the array (taped when ``a`` requires grad) and the node's VJP is ``record``'s own
    (the registry's rules backwards through the tape; a replay under create_graph). None: take ``record``."""
    x = a._data if isinstance(a, Tensor) else None
    if type(x) is not np.ndarray or (x.dtype is not _F32 and x.dtype is not _F64) or _STATE["tracing"]:
        return None
    track = a._requires_grad and _STATE["enabled"]
    tape = [] if track else None
    prev_tape, prev = registry.TAPE, _STATE["enabled"]
    registry.TAPE, _STATE["enabled"] = tape, False
    try:
        data = fn(x)
    finally:
        registry.TAPE, _STATE["enabled"] = prev_tape, prev
    out = _new(Tensor)
    out._data = data if type(data) is np.ndarray else np.asarray(data)
    out._vc = [0]
    if not track:
        return out
    node = _new(gf.node_class(name, fn_.UnaryNode))
    node._seq = next(_SEQUENCE)
    node._edges = (a._grad_fn or gf.edge(a),)
    if saved_in:  # versions only (``UnaryNode._saved`` makes the entries when asked)
        node._sv_in = a._vc[0]
        node._operands = (gf.saved_operand(a),)
    # else torch's node saves no operand: none kept (a replay reads only its array, ``_x``)
    if out_saved:
        node._odata = out._data
    if saves or saved_in or out_saved:
        node._saves = True
    node._fn, node._x, node._out, node._ver = fn, x, data, out._vc  # data: the tape's own result object
    fn_.unary_steps(node, tape, x, data)
    out._grad_fn, out._requires_grad = node, True
    return out


def basic_view(t, spec, name, fn, np_key=None):
    """``t[spec]`` of a tensor on a NumPy array as a view (node ``name``, VJP ``index_grad``), or None when the
    general path must record it (torch.compile tracing). ``np_key``: NumPy's key for ``spec``, if known."""
    x = t._data
    if _STATE["tracing"] or type(x) is not np.ndarray:
        return None
    out = _new(Tensor)
    key = np_key or sh.spec_to_numpy(spec) + (Ellipsis,)
    out._data = x[key]  # an all-int key: a 0-d view, not a copy
    out._vc = t._vc
    if t._requires_grad and _STATE["enabled"]:
        node = _new(gf.node_class(name, fn_.ViewNode))
        node._seq = next(_SEQUENCE)
        node._edges = (t._grad_fn or gf.edge(t),)
        # the array, not ``t``: torch's view nodes save no tensor
        node._fn, node._spec, node._key, node._x = fn, spec, np_key, x  # a cached key only (shared, no new objects)
        out._grad_fn, out._requires_grad = node, True
    _views().mark(out, t, fn, name)
    return out


_VIEWS = []  # the module ``views``, once imported (an import statement per view costs more than the view)


def _views():
    if not _VIEWS:
        from gradc.facade import views  # views imports record, which this module's importers load first
        _VIEWS.append(views)
    return _VIEWS[0]


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
