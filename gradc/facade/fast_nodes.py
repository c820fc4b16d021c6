"""The graph nodes of the eager fast lanes (``gradc.facade.fast_ops``), each its own VJP.

A node made by ``record`` holds a separate VJP object; a fast-lane node keeps the arrays its
VJP reads as its own attributes and its class (``node_class(name, lane)``: torch's name over
one of the lanes below) has the VJP as a method, called by the engine as ``node._vjp(ct)``. One
object fewer per node matters: a long graph (GradBench's lstm, 25,000 nodes) is walked by
Python's cyclic collector a few times while it is alive, at a cost per tracked object.
The rules are the registry ops' own (bit for bit what the separate VJP objects computed);
under ``create_graph`` each node replays the general path so that higher orders record.

>>> import gradc.torch as torch
>>> x = torch.tensor([1., 2.], requires_grad=True)
>>> y = x * x
>>> type(y.grad_fn).__name__, type(y.grad_fn).__mro__[1].__name__
('MulBackward0', 'BinaryNode')
"""
from __future__ import annotations

import os

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.facade import grad_fn as gf
from gradc.facade import torch_sum
from gradc.facade.record import _replay, _vjp_by_tape, flatten_tape, replay_vjp, unflatten_tape
from gradc.facade.tensor import Tensor
from gradc.ir import registry

_GRADC_OPS = {"add": ew.add, "sub": ew.sub, "mul": ew.mul, "div": ew.div, "pow": ew.power, "maximum": ew.maximum,
              "minimum": ew.minimum}
_MUL, _SUM = registry.OPS["mul"], registry.OPS["sum"]
_INDEX_GRAD = registry.OPS["index_grad"]
_F32 = np.dtype(np.float32)
_ARRAY = np.ndarray
LINEAR_RULES = frozenset({"add", "sub", "mul"})  # rules that read no output (an in-place write cannot stale them)
FRESH = (0,)  # the version counter of an output whose node needs none (its rule reads no output)
_STATE = gf.STATE
# Full float32 sums (``x.sum()``, ``x.mean()``, a broadcast parameter's gradient) in torch's order of additions
# (``torch_sum``), for output equal to torch's to the last bit: about 60 µs per 2,000-value sum in NumPy calls
# against 1.4 µs for NumPy's own order, which made the tutorials' training loops 2.7-3.5x torch's time. Off by
# default (the last bit of such a sum may differ from torch's); GRADC_TORCH_EXACT_SUMS=1 turns it on. Read by
# ``fast_ops.reduce_all`` too.
EXACT_FLOAT32_SUMS = os.environ.get("GRADC_TORCH_EXACT_SUMS", "") == "1"
_new = object.__new__


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


class _SavesOperands(gf.Node):
    """A node whose saved tensors are operands: ``_sv``, (slot, version when saved) pairs, numbers only (a tuple
    Python's collector stops tracking); ``_saved`` makes the engine's entries from them when asked."""

    _sv = ()

    @property
    def _saved(self):
        if not self._sv:
            return ()
        operands = self._operands
        return [(operands[slot], version, None) for slot, version in self._sv]


class BinaryNode(_SavesOperands):
    """``a <op> b``: the registry op's rule on the forward's arrays (``_x``, ``_y``, output ``_out``), then ``sum_to``
    for a 0-d operand; ``_ver`` is the output's version counter, ``_needs`` which slots want a cotangent."""

    def _vjp(self, ct):
        if _STATE["create_graph"]:
            operands = tuple([Tensor._wrap(v) if o is gf.NOT_SAVED else o
                              for o, v in zip(self._operands, (self._x, self._y))])
            return replay_vjp(Replay(self._op, *operands), operands, self._edges)(ct)
        prim, x, y, needs = self._prim, self._x, self._y, self._needs
        op = self._op
        if type(ct) is _ARRAY and ct.dtype is x.dtype and op in LINEAR_RULES:
            # the registry rules of add/sub/mul (``ct``, ``-ct``, ``ct * y``, ``ct * x``) by NumPy directly: the
            # same elementwise operations (NumPy broadcasts a 0-d operand as the rules' explicit broadcast does)
            if op == "mul":
                gx = ct * y if needs[0] else None
                gy = ct * x if needs[1] else None
            else:
                gx, gy = ct, (-ct if op == "sub" else ct) if needs[1] else None
            return (sum_to(gx, x.shape) if needs[0] else None, sum_to(gy, y.shape) if needs[1] else None)
        # the output written in place since (``d /= 2``): its forward value again (torch saves operands only)
        gx, gy = prim.vjp(ct, self._out if self._ver[0] == 0 else prim.impl(x, y), x, y, needs=needs)
        return (sum_to(gx, x.shape) if needs[0] else None, sum_to(gy, y.shape) if needs[1] else None)


class SquareNode(_SavesOperands):
    """``x ** 2`` computed as ``x * x``: mul's rule, ``ct*x + ct*x`` (the bits of ``ct * (2 * x)``)."""

    def _vjp(self, ct):
        if _STATE["create_graph"]:
            return replay_vjp(Replay(self._op, *self._operands), self._operands, self._edges)(ct)
        gx, gy = _MUL.vjp(ct, self._out, self._x, self._x, needs=(True, True))
        return (ew.add(gx, gy), None)


class ReduceNode(gf.Node):
    """``a.sum()`` / ``a.mean()`` over every axis: the registry primitive's rule (``_params`` its parameters)."""

    def _vjp(self, ct):
        prim = self._prim
        if _STATE["create_graph"]:
            general = rd.sum_ if prim.name == "sum" else rd.mean
            return replay_vjp(general, self._operands, self._edges)(ct)
        return prim.vjp(ct, self._out, self._x, needs=(True,), **self._params)


class UnaryNode(gf.Node):
    """A unary function's node: ``record``'s VJP (the registry's rules backwards through the forward's tape
    ``_tape``, flat (``record.flatten_tape``), or its one step kept as ``_op1``/``_params``; a replay under
    create_graph or once the output was written in place). Saved: the operand (``_sv_in``, its version; the node
    keeps ``_operands`` only then, as torch's nodes keep no unsaved operand) and the output (``_odata``, at
    version 0)."""

    _sv_in = None
    _odata = None

    @property
    def _saved(self):
        if self._sv_in is None and self._odata is None:
            return ()
        entries = [] if self._sv_in is None else [(self._operands[0], self._sv_in, None)]
        if self._odata is not None:
            out = _new(gf.SavedOutput)
            out._data, out._vc = self._odata, self._ver
            entries.append((out, 0, gf.OWN))
        return entries

    def _vjp(self, ct):
        cg = _STATE["create_graph"]
        if cg or self._ver[0] != 0:
            # a replay reads only the operand's array: a stand-in where the node keeps no operand
            operands = self.__dict__.get("_operands") or (Tensor._wrap(self._x),)
            return _replay(self._fn, operands, self._edges, cg, ct)
        if self._op1 is not None:
            return list(self._op1.vjp(ct, self._out, self._x, needs=(True,), **self._params))
        return _vjp_by_tape(unflatten_tape(self._tape), [self._x], self._out, self._edges, ct)


def unary_steps(node, tape, x, out):
    """Keep the forward's ``tape`` on a ``UnaryNode``: a one-step tape applied to ``x`` itself as its op, a longer
    one flattened (``record.flatten_tape``)."""
    node._op1 = None
    if len(tape) == 1:
        op, args, params, result = tape[0]
        if result is out and not op.nondiff and len(args) == 1 and args[0] is x:
            node._op1, node._params = op, params
            node._tape = None
            return
    node._tape = flatten_tape(tape)


class ViewNode(gf.Node):
    """A basic-indexing view: the cotangent written into zeros of the operand's shape (``_spec``, its cached NumPy
    key ``_key`` or None, array ``_x``)."""

    def _vjp(self, ct):
        if _STATE["create_graph"]:
            return replay_vjp(self._fn, (Tensor._wrap(self._x),), self._edges)(ct)
        if type(ct) is np.ndarray and self._key is not None:  # ``index_grad``'s impl with the view's cached key
            g = np.zeros(self._x.shape, ct.dtype)
            g[self._key] = ct
            return (g,)
        return (_INDEX_GRAD.impl(ct, spec=self._spec, shape=self._x.shape),)


for _lane in (BinaryNode, SquareNode, ReduceNode, UnaryNode, ViewNode):
    _lane._LANE = _lane


def sum_to(g, shape):
    """The VJP of NumPy's implicit broadcast of an operand of ``shape`` (0-d or the full shape)."""
    if g.shape == shape:
        return g
    if EXACT_FLOAT32_SUMS and type(g) is np.ndarray and g.dtype is _F32 and g.size \
            and len(shape) < g.ndim and tuple(shape) == g.shape[g.ndim - len(shape):]:
        value = torch_sum.torch_order_sum(g, tuple(range(g.ndim - len(shape))), False)  # leading axes: torch's order
        if value is not None:
            return value
    if not shape:  # what ``sum_to`` binds for a 0-d target: the sum over every axis (arrays: its impl)
        return _SUM.impl(g, axes=tuple(range(g.ndim)), keepdims=False)
    return sh.sum_to(g, shape)
