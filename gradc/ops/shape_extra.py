"""Index assignment as a functional update: ``index_update``.

``index_update(x, v, arrays, spec)`` is a copy of ``x`` with ``v`` written at the index
``spec`` (the same static index spec as ``index``/``gather``; ``("array", k)`` items
name the k-th index array operand, which may be traced, e.g. a loop counter). ``v``
broadcasts to the indexed shape and has ``x``'s dtype. Writes go in order, so a repeated
position keeps the last one, as in NumPy. The VJP reads ``v_bar`` at every write: the
tracer makes the overridden writes contribute nothing first (static index arrays: it keeps
only NumPy's last write of each position; traced ones: it zeroes the overridden writes'
values in the graph, ``gradc.trace.inplace_positions.last_writes``), so each entry of the
result comes from one place and the VJP is exact: ``x_bar`` is ``ct`` with zeros written
at the index, ``v_bar`` is ``ct`` read at the index, summed back to ``v``'s shape.

The other shape functions of this family (flip, roll, tile, pad, split, ...) are
compositions of the ops of ``gradc.ops.shape`` (see ``gradc.trace.shape_dispatch``),
so they have every target's spelling and tested VJPs already.

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> import numpy as np
>>> index_update(np.zeros(3), 5.0, [], [("int", 1)])
array([0., 5., 0.])
"""
from __future__ import annotations

import ast

import numpy as np

from gradc.errors import ShapeError
from gradc.ir import dims
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.shape import (
    _batched_index,
    _moveaxis,
    _spec_ast,
    broadcast_to,
    gather,
    index,
    reshape,
    slice_item,
    spec_to_numpy,
    sum_to,
)
from gradc.ops.values import aval, batch_size, with_batch


def indexed_shape(shape, spec, array_shapes=()) -> tuple:
    """The shape of ``x[spec]`` for an ``x`` of ``shape`` (index arrays of ``array_shapes``).

    >>> indexed_shape((4, 5), [("int", 1), ("slice", None, None, 2)])
    (3,)
    """
    probe = np.broadcast_to(np.empty((), np.int8), shape)
    arrays = [np.zeros(s, np.int64) for s in array_shapes]
    try:
        return probe[spec_to_numpy(spec, arrays)].shape
    except IndexError as e:
        raise ShapeError(f"index out of range for an array of shape {tuple(shape)}: {e}",
                         hint="check the index against the array's shape") from None


def _update_infer(types, params):
    x, v = types[0], types[1]
    target = indexed_shape(x.shape, params["spec"], [t.shape for t in types[2:]])
    try:
        dims.broadcast(v.shape, target)
        fits = dims.broadcast(v.shape, target) == tuple(target)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"cannot assign a value of shape {v.shape} to an index of shape {tuple(target)}",
                         hint="the value must broadcast to the shape of the indexed part")
    if v.dtype != x.dtype:
        raise ShapeError(f"index_update: the value is {v.dtype} but the array is {x.dtype}",
                         hint="cast the value with .astype(...) first")
    return x


def _update_impl(x, v, *arrays, spec, in_place=False):
    out = np.array(x, copy=True)
    out[spec_to_numpy(spec, arrays)] = v
    return out


def _read(x, arrays, spec):
    return gather(x, arrays, spec) if arrays else index(x, spec)


def _update_vjp(ct, out, x, v, *arrays, needs, spec, in_place=False):
    x_bar = v_bar = None
    if needs[0]:
        x_bar = index_update(ct, np.zeros((), aval(ct).np_dtype), arrays, spec)
    if needs[1]:
        v_bar = sum_to(_read(ct, arrays, spec), aval(v).shape)
    return (x_bar, v_bar) + (None,) * len(arrays)


def _update_batch(x, v, *arrays, batched, spec, in_place=False):
    n = batch_size((x, v) + arrays, batched)
    x = with_batch(x, batched[0], n)
    unbatched = [aval(a).shape[1:] if b else aval(a).shape for a, b in zip(arrays, batched[2:])]
    target = indexed_shape(aval(x).shape[1:], spec, unbatched)
    vt = aval(v)
    if batched[1]:  # v's own axes align with the target's trailing ones, after the batch axis
        v = reshape(v, (n,) + (1,) * (len(target) - vt.ndim + 1) + vt.shape[1:])
    v = broadcast_to(v, (n,) + tuple(target))  # an unbatched v aligns with the trailing axes by itself
    if not arrays:
        return index_update(x, v, [], (slice_item(None, None, None),) + tuple(spec))
    spec, arrays, x_axis, out_axis = _batched_index(tuple(spec), list(arrays), list(batched[2:]), n)
    out = index_update(_moveaxis(x, 0, x_axis), _moveaxis(v, 0, out_axis), arrays, spec)
    return _moveaxis(out, x_axis, 0)


def _update_spell(args, params, out, target):
    if out.ndim == 0:  # the whole of a 0-d value, which emitted code may hold as a Python or NumPy scalar
        return spell.typed(args[1], out.np_dtype)
    # in_place (gradc.passes.in_place): the operand is dead afterwards and the emitted code's own: written into
    first = spell.assign(target, args[0] if params.get("in_place") else spell.method_call(args[0], "copy"))
    where = _spec_ast(params["spec"], args[2:])
    store = ast.Subscript(ast.Name(target, ast.Load()), where, ast.Store())
    write = ast.Assign([store], spell.typed(args[1], out.np_dtype), lineno=0)
    return [write] if isinstance(args[0], ast.Name) and args[0].id == target else [first, write]


defop("index_update", infer=_update_infer, impl=_update_impl, vjp=_update_vjp, linear=True,
      batch=_update_batch, np=_update_spell, c=c_spell.loop("index_update"),
      doc="x_bar = ct with zeros at [index]; v_bar = sum_to(ct[index], v.shape) (positions distinct)")


def index_update(x, v, arrays, spec):
    """A copy of ``x`` with ``v`` written at ``spec`` (see the module docstring).

    >>> import numpy as np
    >>> index_update(np.zeros((2, 2)), np.ones(2), [np.array([0, 1])], [("array", 0), ("int", 1)])
    array([[0., 1.],
           [0., 1.]])
    """
    return bind("index_update", x, v, *arrays, spec=tuple(spec))
