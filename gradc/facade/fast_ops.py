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

import os

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.facade import grad_fn as gf
from gradc.facade import grad_mode, torch_sum
from gradc.facade.record import _replay, _vjp_by_tape, replay_vjp
from gradc.facade.tensor import Tensor
from gradc.ir import registry

# Full float32 sums (``x.sum()``, ``x.mean()``, a broadcast parameter's gradient) in torch's order of additions
# (``torch_sum``), for output equal to torch's to the last bit: about 60 µs per 2,000-value sum in NumPy calls
# against 1.4 µs for NumPy's own order, which made the tutorials' training loops 2.7-3.5x torch's time. Off by
# default (the last bit of such a sum may differ from torch's); GRADC_TORCH_EXACT_SUMS=1 turns it on.
EXACT_FLOAT32_SUMS = os.environ.get("GRADC_TORCH_EXACT_SUMS", "") == "1"

_GRADC_OPS = {"add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div, "pow": ew.power, "maximum": ew.maximum,
              "minimum": ew.minimum}
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
    edges = (a._grad_fn or gf.edge(a) if need_a else None,
             b._grad_fn or gf.edge(b) if need_b else None)
    node = _new(gf.node_class(name))
    node._seq = next(_SEQUENCE)
    node._edges = edges
    saves = op in SAVES
    if saves:  # never a tensor that may later get a history (a cycle): what torch's saved variables keep
        operands = (gf.saved_operand(a) if ta else a, gf.saved_operand(b) if tb else b)
    else:  # nothing to keep but which operands are tensors (their arrays are the VJP's)
        operands = (gf.NOT_SAVED if ta else a, gf.NOT_SAVED if tb else b)
    saved = saved_by(op, a, b) if saves else ()
    if saved:
        node._saved = [(operands[t is not a], t._vc[0], None) for t in saved if isinstance(t, Tensor)]
    if saves:
        node._saves = True
    if power and b == 2:  # the derivative of x * x by mul's rule: ct*x + ct*x, the bits of pow's ct * (2 * x)
        node._vjp = _SquareVjp(op, operands, edges, x, out._data)
    else:
        node._vjp = _BinaryVjp(op, operands, edges, prim, x, y, out._data, out._vc, _NEEDS[need_a][need_b])
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
    if EXACT_FLOAT32_SUMS and x.dtype is _F32 and x.size:  # torch's order of additions (see torch_sum)
        value = torch_sum.torch_order_sum(x, None, False)
        if value is not None:
            out._data = value if op == "sum" else (value / np.float32(x.size)).astype(np.float32)
    out._vc = [0]
    if not a._requires_grad or not _STATE["enabled"]:
        return out
    node = _new(gf.node_class(name))
    node._seq = next(_SEQUENCE)
    node._edges = (a._grad_fn or gf.edge(a),)
    node._vjp = _ReduceVjp(prim, x, out._data, params, (gf.saved_operand(a),), node._edges)
    node._operands = node._vjp.operands
    out._grad_fn, out._requires_grad = node, True
    return out


class _ReduceVjp:
    """The VJP of ``reduce_all``'s node (slotted: a closure's cells would be more objects for the collector)."""

    __slots__ = ("prim", "x", "out", "params", "operands", "edges")

    def __init__(self, prim, x, out, params, operands, edges):
        self.prim, self.x, self.out, self.params, self.operands, self.edges = prim, x, out, params, operands, edges

    def __call__(self, ct):
        prim = self.prim
        if gf.STATE["create_graph"]:
            general = rd.sum_ if prim.name == "sum" else rd.mean
            return replay_vjp(general, self.operands, self.edges)(ct)
        return prim.vjp(ct, self.out, self.x, needs=(True,), **self.params)


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
    node = _new(gf.node_class(name))
    node._seq = next(_SEQUENCE)
    node._edges = edges = (a._grad_fn or gf.edge(a),)
    operands = (gf.saved_operand(a),)
    if saved_in or out_saved:
        node._saved = ([(operands[0], a._vc[0], None)] if saved_in else []) + ([gf.saved_output(out)] if out_saved
                                                                                else [])
    if saves or saved_in or out_saved:
        node._saves = True
    node._vjp = _UnaryVjp(fn, operands, edges, tape, x, data, out._vc)  # data: the tape's own result object
    node._operands = operands
    out._grad_fn, out._requires_grad = node, True
    return out


class _UnaryVjp:
    """The VJP of ``unary``'s node: ``record``'s (the registry's rules backwards through the forward's tape, a
    replay under create_graph or once the output was written in place), with a one-step tape kept as its op
    and parameters: fewer objects per node for Python's cyclic collector to walk while a graph is alive."""

    __slots__ = ("fn", "operands", "edges", "tape", "op", "params", "x", "out", "vc")

    def __init__(self, fn, operands, edges, tape, x, out, vc):
        self.fn, self.operands, self.edges, self.x, self.out, self.vc = fn, operands, edges, x, out, vc
        self.op = self.params = None
        if len(tape) == 1:
            op, args, params, result = tape[0]
            if result is out and not op.nondiff and len(args) == 1 and args[0] is x:
                self.op, self.params, tape = op, params, None
        self.tape = tape

    def __call__(self, ct):
        cg = gf.STATE["create_graph"]
        if cg or self.vc[0] != 0:
            return _replay(self.fn, self.operands, self.edges, cg, ct)
        if self.op is not None:
            return list(self.op.vjp(ct, self.out, self.x, needs=(True,), **self.params))
        return _vjp_by_tape(self.tape, [self.x], self.out, self.edges, ct)


def basic_view(t, spec, name, fn, np_key=None):
    """``t[spec]`` of a tensor on a NumPy array as a view (node ``name``, VJP ``index_grad``), or None when the
    general path must record it (torch.compile tracing). ``np_key``: NumPy's key for ``spec``, if known."""
    x = t._data
    if _STATE["tracing"] or type(x) is not np.ndarray:
        return None
    out = _new(Tensor)
    out._data = x[np_key or sh.spec_to_numpy(spec) + (Ellipsis,)]  # an all-int key: a 0-d view, not a copy
    out._vc = t._vc
    if t._requires_grad and _STATE["enabled"]:
        node = _new(gf.node_class(name))
        node._seq = next(_SEQUENCE)
        node._edges = edges = (t._grad_fn or gf.edge(t),)
        node._vjp = _ViewVjp(fn, spec, x, edges)  # the array, not ``t``: torch's view nodes save no tensor
        out._grad_fn, out._requires_grad = node, True
    _views().mark(out, t, fn, name)
    return out


class _ViewVjp:
    """The VJP of a basic-indexing view: the cotangent written into zeros of the operand's shape."""

    __slots__ = ("fn", "spec", "x", "edges")

    def __init__(self, fn, spec, x, edges):
        self.fn, self.spec, self.x, self.edges = fn, spec, x, edges

    def __call__(self, ct):
        if gf.STATE["create_graph"]:
            return replay_vjp(self.fn, (Tensor._wrap(self.x),), self.edges)(ct)
        return (_INDEX_GRAD.impl(ct, spec=self.spec, shape=self.x.shape),)


_INDEX_GRAD = registry.OPS["index_grad"]


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


class _BinaryVjp:
    """The VJP of a fast-lane node: the registry op's rule on the forward's arrays, then ``sum_to`` for a 0-d
    operand; under create_graph, the general path's forward replayed on tensors (so it records)."""

    __slots__ = ("op", "operands", "edges", "prim", "x", "y", "out", "version", "needs")

    def __init__(self, op, operands, edges, prim, x, y, out, version, needs):
        self.op, self.operands, self.edges = op, operands, edges
        self.prim, self.x, self.y, self.out, self.version, self.needs = prim, x, y, out, version, needs

    def __call__(self, ct):
        if gf.STATE["create_graph"]:
            operands = tuple([Tensor._wrap(v) if o is gf.NOT_SAVED else o
                              for o, v in zip(self.operands, (self.x, self.y))])
            return replay_vjp(Replay(self.op, *operands), operands, self.edges)(ct)
        prim, x, y, needs = self.prim, self.x, self.y, self.needs
        # the output written in place since (``d /= 2``): its forward value again (torch saves operands only)
        gx, gy = prim.vjp(ct, self.out if self.version[0] == 0 else prim.impl(x, y), x, y, needs=needs)
        return (_sum_to(gx, x.shape) if needs[0] else None, _sum_to(gy, y.shape) if needs[1] else None)


class _SquareVjp:
    """The VJP of ``x ** 2`` computed as ``x * x``: mul's rule, ``ct*x + ct*x`` (the bits of ``ct * (2 * x)``)."""

    __slots__ = ("op", "operands", "edges", "x", "out")

    def __init__(self, op, operands, edges, x, out):
        self.op, self.operands, self.edges, self.x, self.out = op, operands, edges, x, out

    def __call__(self, ct):
        if gf.STATE["create_graph"]:
            return replay_vjp(Replay(self.op, *self.operands), self.operands, self.edges)(ct)
        gx, gy = _PRIMS["mul"].vjp(ct, self.out, self.x, self.x, needs=(True, True))
        return (ew.add(gx, gy), None)


def _sum_to(g, shape):
    """The VJP of NumPy's implicit broadcast of an operand of ``shape`` (0-d or the full shape)."""
    if g.shape == shape:
        return g
    if EXACT_FLOAT32_SUMS and type(g) is np.ndarray and g.dtype is _F32 and g.size and len(shape) < g.ndim \
            and tuple(shape) == g.shape[g.ndim - len(shape):]:  # leading axes only: added in torch's order
        value = torch_sum.torch_order_sum(g, tuple(range(g.ndim - len(shape))), False)
        if value is not None:
            return value
    if not shape:  # what ``sum_to`` binds for a 0-d target: the sum over every axis (arrays: its impl)
        return _PRIMS["sum"].impl(g, axes=tuple(range(g.ndim)), keepdims=False)
    return sh.sum_to(g, shape)
