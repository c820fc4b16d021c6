"""Shape ops: broadcast_to, reshape, transpose, concatenate, and indexing.

Indexing comes in two ops: ``index`` (basic: ints, slices, None) and
``gather`` (integer arrays, NumPy advanced indexing). Their transposes,
``index_grad`` and ``gather_grad``, write a cotangent into zeros (the latter
accumulating repeated indices).

>>> import numpy as np
>>> sum_to(np.ones((2, 3)), (3,))
array([2., 2., 2.])
"""
from __future__ import annotations

import ast

import numpy as np

from gradc.errors import ShapeError
from gradc.ir import dims
from gradc.ir.dims import as_dim
from gradc.ir.registry import bind, defop
from gradc.ir.types import NP_DTYPES
from gradc.ops import c_spell, spell
from gradc.ops.values import aval, batch_size, with_batch


# ---------------------------------------------------------------- broadcast_to / reshape / transpose
def _broadcast_infer(types, params):
    shape = params["shape"]
    src = types[0].shape
    lead = len(shape) - len(src)
    if lead < 0 or any(s not in (1, d) for s, d in zip(src, shape[lead:])):
        raise ShapeError(f"cannot broadcast {types[0]} to shape {shape}",
                         hint="each dimension must be 1 or equal to the target (trailing dimensions align)")
    return types[0].with_shape(shape)


def _broadcast_vjp(ct, out, x, needs, shape):
    return (sum_to(ct, aval(x).shape),)


def _broadcast_batch(x, batched, shape):
    # x's axes align with the target's trailing ones: new axes of length 1 go after the batch axis
    t = aval(x)
    x = reshape(x, t.shape[:1] + (1,) * (len(shape) - t.ndim + 1) + t.shape[1:])
    return broadcast_to(x, t.shape[:1] + tuple(shape))


defop("broadcast_to", infer=_broadcast_infer, impl=lambda x, shape: np.broadcast_to(x, shape),
      vjp=_broadcast_vjp, linear=True, doc="x_bar = sum_to(ct, x.shape)", batch=_broadcast_batch,
      np=lambda args, params, out, target: spell.call("np.broadcast_to", spell.typed(args[0], out.np_dtype),
                                                      spell.literal(params["shape"])), c=c_spell.loop("view"))


def _reshape_infer(types, params):
    if dims.prod(params["shape"]) != types[0].size:
        raise ShapeError(f"cannot reshape {types[0]} to shape {params['shape']}",
                         hint="the new shape must have as many elements as the array")
    return types[0].with_shape(params["shape"])


def _reshape_spell(args, params, out, target):
    if out.size == 1:  # the operand may be a 0-d value, which emitted code holds as a Python float
        return spell.call("np.reshape", args[0], spell.literal(params["shape"]))
    return spell.method_call(args[0], "reshape", spell.literal(params["shape"]))


defop("reshape", infer=_reshape_infer,
      impl=lambda x, shape: x.reshape(shape) if type(x) is np.ndarray else np.reshape(x, shape),
      vjp=lambda ct, out, x, needs, shape: (reshape(ct, aval(x).shape),), linear=True,
      batch=lambda x, batched, shape: reshape(x, aval(x).shape[:1] + shape),
      doc="x_bar = reshape(ct, x.shape)", np=_reshape_spell, c=c_spell.loop("reshape"))


def _transpose_infer(types, params):
    perm = params["perm"]
    if sorted(perm) != list(range(types[0].ndim)):
        raise ShapeError(f"axes {perm} do not permute the {types[0].ndim} axes of {types[0]}",
                         hint="give each axis exactly once")
    return types[0].with_shape(tuple(types[0].shape[p] for p in perm))


def _transpose_spell(args, params, out, target):
    if params["perm"] == (1, 0):
        return ast.Attribute(args[0], "T", ast.Load())
    return spell.method_call(args[0], "transpose", spell.literal(params["perm"]))


defop("transpose", infer=_transpose_infer,
      impl=lambda x, perm: x.transpose(perm) if type(x) is np.ndarray else np.transpose(x, perm),
      vjp=lambda ct, out, x, needs, perm: (transpose(ct, tuple(np.argsort(perm).tolist())),), linear=True,
      batch=lambda x, batched, perm: transpose(x, (0,) + tuple(p + 1 for p in perm)),
      doc="x_bar = transpose(ct, inverse(perm))", np=_transpose_spell, c=c_spell.loop("view"))


# ---------------------------------------------------------------- concatenate
def _concat_infer(types, params):
    axis = params["axis"]
    first = types[0]
    for t in types[1:]:
        if t.dtype != first.dtype or t.ndim != first.ndim or any(
                a != b for i, (a, b) in enumerate(zip(t.shape, first.shape)) if i != axis):
            raise ShapeError(f"cannot concatenate {first} and {t} along axis {axis}",
                             hint="all dimensions but the concatenation axis must agree")
    shape = list(first.shape)
    shape[axis] = sum(t.shape[axis] for t in types)
    return first.with_shape(shape)


def _concat_vjp(ct, out, *xs, needs, axis):
    cts, start = [], 0
    for x, need in zip(xs, needs):
        n = aval(x).shape[axis]
        spec = (slice_item(None, None, None),) * axis + (slice_item(start, start + n, None),)
        cts.append(index(ct, spec) if need else None)
        start += n
    return tuple(cts)


def _concat_batch(*xs, batched, axis):
    n = batch_size(xs, batched)
    return concatenate([with_batch(x, b, n) for x, b in zip(xs, batched)], axis + 1)


defop("concatenate", infer=_concat_infer, impl=lambda *xs, axis: np.concatenate(xs, axis=axis),
      vjp=_concat_vjp, linear=True, doc="x_i_bar = the slice of ct where x_i was", batch=_concat_batch,
      np=lambda args, params, out, target: spell.call(
          "np.concatenate", ast.Tuple(list(args), ast.Load()), axis=spell.literal(params["axis"])),
      c=c_spell.loop("concatenate"))


# ---------------------------------------------------------------- basic indexing
# An index spec is a tuple of items: ("int", i), ("slice", start, stop, step), ("new",);
# it covers every axis (no Ellipsis), so it is plain static data for CSE and printing.
def slice_item(start, stop, step):
    return ("slice", start, stop, step)


def spec_to_numpy(spec, arrays=()):
    out = []
    for item in spec:
        kind = item[0]
        if kind == "int":
            out.append(item[1])
        elif kind == "slice":
            out.append(slice(item[1], item[2], item[3]))
        elif kind == "new":
            out.append(None)
        else:  # ("array", k): the k-th index array operand
            out.append(arrays[item[1]])
    return tuple(out)


def _spec_ast(spec, array_args=()):
    parts = []
    for item in spec:
        kind = item[0]
        if kind == "int":
            parts.append(spell.literal(item[1]))
        elif kind == "slice":
            parts.append(ast.Slice(*(None if v is None else spell.literal(v) for v in item[1:3]),
                                   None if item[3] is None else spell.literal(item[3])))
        elif kind == "new":
            parts.append(ast.Constant(None))
        else:
            parts.append(array_args[item[1]])
    while len(parts) > 1 and _is_full_slice(parts[-1]):
        parts.pop()  # x[1:, :] reads better as x[1:]
    return parts[0] if len(parts) == 1 else ast.Tuple(parts, ast.Load())


def _is_full_slice(node):
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _index_infer(types, params):
    x = types[0]
    probe = np.broadcast_to(np.empty((), x.np_dtype), x.shape)
    arrays = [np.zeros(t.shape, t.np_dtype) for t in types[1:]]
    try:
        result = probe[spec_to_numpy(params["spec"], arrays)]
    except IndexError as e:
        raise ShapeError(f"index out of range for {x}: {e}", hint="check the index against the array's shape") from None
    return x.with_shape(result.shape)


def _index_spell(args, params, out, target):
    if all(item[0] == "new" for item in params["spec"]):  # x[None] of a 0-d x, maybe a Python float
        return spell.call("np.reshape", args[0], spell.literal(out.shape))
    return ast.Subscript(args[0], _spec_ast(params["spec"], args[1:]), ast.Load())


defop("index", infer=_index_infer, impl=lambda x, spec: np.asarray(x)[spec_to_numpy(spec)],
      vjp=lambda ct, out, x, needs, spec: (index_grad(ct, spec, aval(x).shape),), linear=True,
      batch=lambda x, batched, spec: index(x, (slice_item(None, None, None),) + spec),
      doc="x_bar = zeros(x.shape) with ct written at [index]", np=_index_spell, c=c_spell.loop("view"))


def _index_grad_infer(types, params):
    return types[0].with_shape(params["shape"])


def _zeros_stmt(target, shape, dtype):
    args = [spell.literal(tuple(shape))]
    kwargs = {} if dtype == "f64" else {"dtype": spell.dotted(f"np.{NP_DTYPES[dtype].name}")}
    return spell.assign(target, spell.call("np.zeros", *args, **kwargs))


def _index_grad_impl(ct, spec, shape):
    out = np.zeros(shape, np.asarray(ct).dtype)
    out[spec_to_numpy(spec)] = ct
    return out


def _index_grad_spell(args, params, out, target):
    store = ast.Subscript(ast.Name(target, ast.Load()), _spec_ast(params["spec"]), ast.Store())
    return [_zeros_stmt(target, params["shape"], out.dtype), ast.Assign([store], args[0], lineno=0)]


defop("index_grad", infer=_index_grad_infer, impl=_index_grad_impl,
      vjp=lambda ct, out, x, needs, spec, shape: (index(ct, spec),), linear=True,
      batch=lambda ct, batched, spec, shape: index_grad(ct, (slice_item(None, None, None),) + spec,
                                                        aval(ct).shape[:1] + shape),
      doc="transpose of index: ct_bar = ct[index]", np=_index_grad_spell, c=c_spell.loop("index_grad"))


# ---------------------------------------------------------------- gather (integer-array indexing)
def _gather_impl(x, *arrays, spec):
    return np.asarray(x)[spec_to_numpy(spec, arrays)]


def _gather_vjp(ct, out, x, *arrays, needs, spec):
    return (gather_grad(ct, arrays, spec, aval(x).shape),) + (None,) * len(arrays)


def _moveaxis(x, src, dst):
    perm = [i for i in range(aval(x).ndim) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)


def _batched_index(spec, arrays, batched, n):
    """``spec`` and ``arrays`` for a gather from an x whose batch axis stands before the first advanced item.

    NumPy puts the axes of advanced items (index arrays, and ints among them) where the first
    stands if they are adjacent, else in front; an index array over the batch axis, put next
    to them, keeps that layout with the batch axis among the axes of the indices. Returns the
    spec, the arrays, which axis of x and which of the result hold the batch axis.
    """
    advanced = [i for i, item in enumerate(spec) if item[0] in ("array", "int")]
    k = advanced[0]
    x_axis = sum(1 for item in spec[:k] if item[0] != "new")
    rank = max(aval(a).ndim - b for a, b in zip(arrays, batched))
    arrays = [reshape(a, (n,) + (1,) * (rank - aval(a).ndim + 1) + aval(a).shape[1:]) if b else a
              for a, b in zip(arrays, batched)]
    rows = np.arange(n).reshape((n,) + (1,) * rank)  # batch element i reads x's i-th slice
    spec = spec[:k] + (("array", len(arrays)),) + spec[k:]
    adjacent = advanced[-1] - k + 1 == len(advanced)
    return spec, arrays + [rows], x_axis, k if adjacent else 0


def _gather_batch(x, *arrays, batched, spec):
    n = batch_size((x,) + arrays, batched)
    if not batched[0]:  # only the indices carry the batch: x[idx] with idx's batch axis, no copy of x per row
        return _gather_unbatched_x(x, arrays, batched[1:], spec, n)
    spec, arrays, x_axis, out_axis = _batched_index(spec, arrays, batched[1:], n)
    x = _moveaxis(with_batch(x, batched[0], n), 0, x_axis)
    return _moveaxis(gather(x, arrays, spec), out_axis, 0)


def _gather_unbatched_x(x, arrays, batched, spec, n):
    advanced = [i for i, item in enumerate(spec) if item[0] in ("array", "int")]
    rank = max(aval(a).ndim - b for a, b in zip(arrays, batched))
    arrays = [reshape(a, (n,) + (1,) * (rank - aval(a).ndim + 1) + aval(a).shape[1:]) if b else a
              for a, b in zip(arrays, batched)]
    adjacent = advanced[-1] - advanced[0] + 1 == len(advanced)
    return _moveaxis(gather(x, arrays, spec), advanced[0] if adjacent else 0, 0)


def _gather_grad_batch(ct, *arrays, batched, spec, shape):
    n = batch_size((ct,) + arrays, batched)
    spec, arrays, x_axis, out_axis = _batched_index(spec, arrays, batched[1:], n)
    ct = _moveaxis(with_batch(ct, batched[0], n), 0, out_axis)
    return _moveaxis(gather_grad(ct, arrays, spec, shape[:x_axis] + (n,) + shape[x_axis:]), x_axis, 0)


defop("gather", infer=_index_infer, impl=_gather_impl, vjp=_gather_vjp, linear=True, batch=_gather_batch,
      doc="x_bar = zeros(x.shape) with ct added at [index] (repeats accumulate)", np=_index_spell,
      c=c_spell.loop("gather"))


def _gather_grad_impl(ct, *arrays, spec, shape):
    out = np.zeros(shape, np.asarray(ct).dtype)
    np.add.at(out, spec_to_numpy(spec, arrays), ct)
    return out


def _slice_calls(node):
    """An index expression with ``a:b:c`` written as ``slice(a, b, c)`` (for a call argument)."""
    if isinstance(node, ast.Slice):
        parts = [node.lower, node.upper, node.step]
        return spell.call("slice", *(ast.Constant(None) if p is None else p for p in parts))
    if isinstance(node, ast.Tuple):
        return ast.Tuple([_slice_calls(e) for e in node.elts], ast.Load())
    return node


def _gather_grad_spell(args, params, out, target):
    where = _slice_calls(_spec_ast(params["spec"], args[1:]))
    add_at = ast.Expr(spell.call("np.add.at", ast.Name(target, ast.Load()), where, args[0]))
    return [_zeros_stmt(target, params["shape"], out.dtype), add_at]


def _gather_grad_vjp(ct, out, g, *arrays, needs, spec, shape):
    return (gather(ct, arrays, spec),) + (None,) * len(arrays)


defop("gather_grad", infer=lambda types, params: types[0].with_shape(params["shape"]),
      impl=_gather_grad_impl, vjp=_gather_grad_vjp, linear=True, batch=_gather_grad_batch,
      doc="transpose of gather: ct_bar = ct[index]", np=_gather_grad_spell, c=c_spell.loop("gather_grad"))


# ---------------------------------------------------------------- functions
def broadcast_to(x, shape):
    shape = tuple(map(as_dim, shape))
    return x if aval(x).shape == shape else bind("broadcast_to", x, shape=shape)


def reshape(x, shape):
    shape = tuple(map(as_dim, shape))
    return x if aval(x).shape == shape else bind("reshape", x, shape=shape)


def transpose(x, perm=None):
    ndim = aval(x).ndim
    perm = tuple(reversed(range(ndim))) if perm is None else tuple(int(p) % max(ndim, 1) for p in perm)
    return x if perm == tuple(range(ndim)) else bind("transpose", x, perm=perm)


def concatenate(xs, axis: int):
    return xs[0] if len(xs) == 1 else bind("concatenate", *xs, axis=axis)


def index(x, spec):
    return bind("index", x, spec=tuple(spec))


def index_grad(ct, spec, shape):
    return bind("index_grad", ct, spec=tuple(spec), shape=tuple(shape))


def gather(x, arrays, spec):
    return bind("gather", x, *arrays, spec=tuple(spec))


def take_along_axis(x, indices, axis: int):
    """``np.take_along_axis(x, indices, axis)`` (``indices`` with ``x``'s number of axes) as one gather: along
    the other axes, aranges that broadcast.

    >>> take_along_axis(np.array([[3.0, 1.0], [5.0, 4.0]]), np.array([[1, 0], [1, 0]]), 1)
    array([[1., 3.],
           [4., 5.]])
    """
    t = aval(x)
    axis = axis % t.ndim if t.ndim else axis  # (a negative axis matched no d: the gather was the identity)
    arrays = []
    for d in range(t.ndim):
        if d == axis:
            arrays.append(indices)
        else:
            shape = [1] * t.ndim
            shape[d] = t.shape[d]
            arrays.append(np.arange(t.shape[d]).reshape(shape))
    return gather(x, arrays, tuple(("array", d) for d in range(t.ndim)))


def gather_grad(ct, arrays, spec, shape):
    return bind("gather_grad", ct, *arrays, spec=tuple(spec), shape=tuple(shape))


def sum_to(x, shape):
    """Sum ``x`` down to ``shape`` (the transpose of broadcasting ``shape`` up to ``x``'s)."""
    shape = tuple(shape)
    src = aval(x).shape
    lead = len(src) - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, d in enumerate(shape) if d == 1 and src[lead + i] != 1)
    if not axes:
        return reshape(x, shape)
    kept = tuple(i for i in axes if i >= lead)
    # the ``sum`` op by name: gradc.ops.reduce builds on this module, so it cannot be imported here
    if not kept:
        return bind("sum", x, axes=axes, keepdims=False)
    if len(kept) == len(axes):
        return bind("sum", x, axes=axes, keepdims=True)
    return reshape(bind("sum", x, axes=axes, keepdims=False), shape)
