"""``index_add``: an array with values added at an index (repeated positions accumulate).

``unique`` (a param) says the index picks distinct positions (no index arrays, or 0-d
ones such as a loop counter): NumPy spells it ``t[index] += v``, else ``np.add.at``.

``index_add(x, v, arrays, spec)`` is ``x`` with ``v`` added at ``spec`` (the static
index spec of ``index``/``gather``; ``("array", k)`` items name the k-th index array
operand), as ``np.add.at`` adds: a position picked twice receives both values. It is
``x + gather_grad(v, arrays, spec)`` (``x + index_grad(v, spec)`` without index
arrays) in one op; the in-place pass (``gradc.passes.in_place``) writes such sums
as it, so that a reverse sweep accumulates a loop's scattered contributions into its
accumulator in place instead of building a zero array per iteration.

May import: ``gradc.ir``, ``gradc.errors`` and the other op modules.

>>> import numpy as np
>>> index_add(np.ones(3), 2.0, [np.array([0, 0])], [("array", 0)])
array([5., 1., 1.])
"""
from __future__ import annotations

import ast

import numpy as np

from gradc.errors import ShapeError
from gradc.ir import dims
from gradc.ir.registry import bind, defop
from gradc.ops import c_spell, spell
from gradc.ops.shape import _slice_calls, _spec_ast, broadcast_to, gather, index, reshape, spec_to_numpy, sum_to
from gradc.ops.values import aval, batch_size, with_batch


def _infer(types, params):
    from gradc.ops.shape_extra import indexed_shape
    x, v = types[0], types[1]
    target = indexed_shape(x.shape, params["spec"], [t.shape for t in types[2:]])
    try:
        fits = dims.broadcast(v.shape, target) == tuple(target)
    except ValueError:
        fits = False
    if not fits:
        raise ShapeError(f"index_add: cannot add a value of shape {v.shape} at an index of shape {tuple(target)}",
                         hint="the value must broadcast to the shape of the indexed part")
    if v.dtype != x.dtype:
        raise ShapeError(f"index_add: the value is {v.dtype} but the array is {x.dtype}",
                         hint="cast the value with .astype(...) first")
    return x


def _impl(x, v, *arrays, spec, unique=False, in_place=False):
    out = np.array(x, copy=True)
    np.add.at(out, spec_to_numpy(spec, arrays), v)
    return out


def _vjp(ct, out, x, v, *arrays, needs, spec, unique=False, in_place=False):
    x_bar = ct if needs[0] else None
    v_bar = None
    if needs[1]:
        v_bar = sum_to(gather(ct, arrays, spec) if arrays else index(ct, spec), aval(v).shape)
    return (x_bar, v_bar) + (None,) * len(arrays)


def _spell(args, params, out, target):
    """``t = x.copy()`` (or ``t = x`` when the in-place pass marked it) then ``t[index] += v`` (``np.add.at`` where
    index arrays may repeat a position)."""
    x = args[0]
    first = spell.assign(target, x if params.get("in_place") else spell.method_call(x, "copy"))
    if isinstance(x, ast.Name) and x.id == target:  # the emitter gave the result the operand's own name
        first = None
    where = _spec_ast(params["spec"], args[2:])
    if params.get("unique"):
        store = ast.Subscript(ast.Name(target, ast.Load()), where, ast.Store())
        add = ast.AugAssign(store, ast.Add(), args[1])
    else:
        add = ast.Expr(spell.call("np.add.at", ast.Name(target, ast.Load()), _slice_calls(where), args[1]))
    return [s for s in (first, add) if s is not None]


def _batch(x, v, *arrays, batched, spec, unique=False, in_place=False):
    """``x + scatter(v)`` batched: the scatter's own batching rule, added to ``x`` with its batch axis."""
    from gradc.ir.registry import OPS
    from gradc.ops import elementwise as ew
    from gradc.ops.shape_extra import indexed_shape
    n = batch_size((x, v) + arrays, batched)
    shape = aval(x).shape[1:] if batched[0] else aval(x).shape
    unbatched = [aval(a).shape[1:] if b else aval(a).shape for a, b in zip(arrays, batched[2:])]
    target = indexed_shape(shape, spec, unbatched)
    from gradc.ops.shape import gather_grad, index_grad
    if not any(batched[1:]):  # only the array is batched: one scatter, added to every row
        v = broadcast_to(v, tuple(target))
        added = gather_grad(v, list(arrays), spec, shape) if arrays else index_grad(v, tuple(spec), shape)
        return ew.add(x, broadcast_to(added, (n,) + tuple(shape)))
    if batched[1]:  # v's own axes align with the target's trailing ones, after the batch axis
        vt = aval(v)
        v = reshape(v, (n,) + (1,) * (len(target) - vt.ndim + 1) + vt.shape[1:])
    v = broadcast_to(v, (n,) + tuple(target))
    if arrays:
        added = OPS["gather_grad"].batch(v, *arrays, batched=(True,) + tuple(batched[2:]), spec=spec, shape=shape)
    else:
        added = OPS["index_grad"].batch(v, batched=(True,), spec=spec, shape=shape)
    return ew.add(with_batch(x, batched[0], n), added)


defop("index_add", infer=_infer, impl=_impl, vjp=_vjp, linear=True, np=_spell, c=c_spell.loop("index_add"),
      batch=_batch,
      doc="x_bar = ct; v_bar = sum_to(ct[index], v.shape) (repeated positions accumulate)")


def index_add(x, v, arrays, spec):
    """``x`` with ``v`` added at ``spec`` (see the module docstring).

    >>> import numpy as np
    >>> index_add(np.zeros(2), 1.0, [], [("int", 1)])
    array([0., 1.])
    """
    unique = all(aval(a).shape == () for a in arrays)  # no index arrays, or one position each (a loop counter)
    return bind("index_add", x, v, *arrays, spec=tuple(spec), unique=unique)


def distinct_positions(arrays) -> bool:
    """Whether index arrays (IR atoms) pick each position at most once: none or 0-d ones, or arrays of one shape
    of which a constant holds distinct non-negative entries (``x[np.arange(n), labels]``: one per row)."""
    from gradc.ir.graph import Const
    if all(a.type.shape == () for a in arrays):
        return True
    shapes = {tuple(a.type.shape) for a in arrays if a.type.shape != ()}  # 0-d ones pick one position for all
    if len(shapes) != 1:
        return False  # broadcast against each other: a constant's entries may repeat
    for a in arrays:
        if isinstance(a, Const) and a.type.shape != ():
            flat = np.asarray(a.value).reshape(-1)
            if flat.size and flat.min() >= 0 and np.unique(flat).size == flat.size:
                return True
    return False


def index_add_eqn(acc, scatter, out=None):
    """The equation ``index_add(acc, ct, arrays)`` standing for ``acc + scatter`` (``scatter`` an ``index_grad`` or
    ``gather_grad`` equation into zeros of ``acc``'s type); ``out`` the result variable (a new one when None)."""
    from gradc.ir.graph import Eqn, Var
    ct, arrays = scatter.inputs[0], scatter.inputs[1:]
    unique = distinct_positions(arrays)
    if out is None:
        out = Var(scatter.out.name, acc.type)
    return Eqn("index_add", (acc, ct, *arrays), {"spec": scatter.params["spec"], "unique": unique}, out)
