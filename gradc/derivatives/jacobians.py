"""Jacobians and Hessians, each emitted as one vectorised function: ``jacfwd``, ``jacrev``, ``jacobian``, ``hessian``.

``jacfwd`` batches the forward sweep (``jvp``) over the basis of an input's tangent
space, ``jacrev`` the reverse sweep (``vjp``) over the basis of an output's
cotangent space: one batched sweep (``gradc.transforms.batching``), never a Python
loop of calls. ``jacobian`` picks the cheaper of the two from the shapes (forward
when the input has fewer entries than the output), ``hessian`` is ``jacfwd`` of
``jacrev``. Shapes are JAX's: output shape + input shape; a tuple of Jacobians for
a tuple of ``argnums``, and a tuple per output for a function returning a tuple.

>>> import numpy as np
>>> jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0]))
array([[2., 0.],
       [0., 4.]])
>>> hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
array([[ 6.,  0.],
       [ 0., 12.]])
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from gradc.derivatives.transforms import Emitted, _cached, chosen_inputs, signature_key, tensor_args
from gradc.errors import ShapeError, user_facing
from gradc.ir import dims
from gradc.ir.interpret import evaluate
from gradc.trace import bind_arguments, check_function, function_name, function_origin, trace
from gradc.trace.selection import Selection, select_arguments
from gradc.transforms import batching, forward, reverse


def _basis(shape, dtype):
    """The standard basis of a space of ``shape``: ``(n, *shape)`` with ``n`` the number of entries."""
    n = dims.prod(shape)
    return np.eye(n, dtype=dtype).reshape((n,) + tuple(shape))


def _to_jacobian(batched, out_shape, in_shape, batch_first_is_input):
    """Rearrange a batched sweep's result into JAX's layout: output shape + input shape."""
    if batch_first_is_input:  # (n_in, *out) -> (*out, n_in) -> out + in
        moved = batched.transpose(tuple(range(1, len(out_shape) + 1)) + (0,)) if out_shape else batched
        return moved.reshape(tuple(out_shape) + tuple(in_shape))
    return batched.reshape(tuple(out_shape) + tuple(in_shape))  # (n_out, *in) -> out + in


def _forward_jacobians(graph, name, inputs):
    """Per output, d output / d ``name`` by one batched jvp sweep."""
    jg = forward.jvp_graph(graph, [name])
    v = next(v for v in graph.inputs if v.name == name)
    n = dims.prod(v.type.shape)
    in_axes = [None] * len(graph.inputs) + [0]
    vg = batching.vmap_graph(jg, in_axes, n)
    outs = evaluate(vg, *inputs, _basis(v.type.shape, v.type.np_dtype))
    k = len(graph.outputs)
    return [_to_jacobian(dots, o.type.shape, v.type.shape, True) for dots, o in zip(outs[k:], graph.outputs)]


def _reverse_jacobians(graph, name, inputs):
    """Per output, d output / d ``name`` by one batched vjp sweep over that output's basis."""
    vjp = reverse.vjp_graph(graph, [name])
    v = next(v for v in graph.inputs if v.name == name)
    result = []
    for k, o in enumerate(graph.outputs):
        m = dims.prod(o.type.shape)
        cts = [np.zeros(p.type.shape, p.type.np_dtype) for p in graph.outputs]
        cts[k] = _basis(o.type.shape, o.type.np_dtype)
        in_axes = [None] * len(graph.inputs) + [0 if j == k else None for j in range(len(graph.outputs))]
        vg = batching.vmap_graph(vjp, in_axes, m)
        grads = evaluate(vg, *inputs, *cts)[len(graph.outputs):]
        result.append(_to_jacobian(grads[0], o.type.shape, v.type.shape, False))
    return result


def _values(f, args, selection, mode, tuple_output=False):
    """The Jacobians of ``f`` at ``args`` as values of the trace in progress (flat), and their nesting.

    ``tuple_output``: ``f`` returns a tuple even of one entry (a gradient for a tuple of ``argnums``), so the
    result nests per output even for one (JAX's ``hessian(f, argnums=(0,))`` is ``((H,),)``).
    """
    graph = trace(f, *args)
    names, as_tuple = chosen_inputs(f, graph, selection), selection.as_tuple
    inputs = tensor_args(graph, args)
    per_arg = []
    for name in names:
        v = next(v for v in graph.inputs if v.name == name)
        use_fwd = _forward_sweep(v, graph, mode)
        sweep = _forward_jacobians if use_fwd else _reverse_jacobians
        per_arg.append(sweep(graph, name, inputs))
    # JAX's nesting: outputs outside, argnums inside; kept as flat values and a nested structure of positions
    flat, structure = [], []
    for k in range(len(graph.outputs)):
        positions = []
        for j in per_arg:
            positions.append(len(flat))
            flat.append(j[k])
        structure.append(tuple(positions) if as_tuple else positions[0])
    return flat, (structure[0] if len(structure) == 1 and not tuple_output else tuple(structure))


def _forward_sweep(v, graph, mode) -> bool:
    """Forward (a jvp per input entry) or reverse (a vjp per output entry): the smaller basis, and always the
    side of fixed size when the other has a named size (``f64[n]``: a basis of n vectors cannot be built)."""
    out_sizes = [o.type.size for o in graph.outputs]
    fixed_in, fixed_out = isinstance(v.type.size, int), all(isinstance(s, int) for s in out_sizes)
    if not fixed_in and not fixed_out:
        raise ShapeError(f"the Jacobian with respect to {v.name} has named sizes on both sides ({v.type} to "
                         f"{', '.join(str(o.type) for o in graph.outputs)}): gradc builds it from a basis of one side",
                         hint="give the input or the output fixed sizes, or use jvp/vjp (one direction at a time)")
    if mode == "fwd" or not fixed_out:
        if not fixed_in:
            raise ShapeError(f"forward mode needs a basis of {v.name}: {v.type}", hint="use mode='rev'")
        return True
    if mode == "rev" or not fixed_in:
        return False
    return v.type.size <= sum(out_sizes)


def _nest(flat, structure):
    if isinstance(structure, int):
        return flat[structure]
    return tuple(_nest(flat, s) for s in structure)


def jacobian_graph(f, args, argnums: Selection | int | tuple = 0, mode="auto", what="jacobian"):
    """``(graph, returns)``: the whole Jacobian computation of ``f`` at arguments like ``args`` as one graph.

    ``args`` may be arrays or types (``TensorType``); ``returns`` nests the outputs as JAX does.
    ``argnums``: the arguments chosen (a :class:`Selection`, or an ``argnums`` value for it).
    ``what="hessian"`` names it for ``f`` a gradient (``jacrev`` of the user's function).

    >>> import numpy as np
    >>> g, returns = jacobian_graph(lambda x: x ** 2, (np.ones(3),))
    >>> g.name, g.outputs[0].type, returns
    ('lambda__jacobian', f64[3,3], 0)
    """
    user_fn = inspect.unwrap(f)  # through our own wrappers (hessian is jacfwd of jacrev) to the user's function
    fname = function_name(user_fn)
    layout = []
    selection = argnums if isinstance(argnums, Selection) else select_arguments(f, argnums, what="gradc.jacobian")

    def whole(*traced):
        flat, structure = _values(f, traced, selection, mode, what == "hessian" and selection.as_tuple)
        layout.append(structure)
        return tuple(flat) if len(flat) > 1 else flat[0]

    whole.__signature__ = inspect.signature(f)
    whole.__wrapped__ = user_fn  # errors about the function point at the user's def
    whole.__name__ = f"{fname}_{what}" if what != "jacobian" or mode == "auto" else f"{fname}_jac{mode}"
    graph = trace(whole, *args)
    return graph.replace(origin=function_origin(user_fn)), layout[0]


def _jacobian_fn(f, selection: Selection, mode, what="jacobian"):
    """The function computing the Jacobian of ``f`` (mode "fwd", "rev" or "auto"), traced and emitted per signature.

    ``what`` names it in the emitted code (``hessian`` for the Jacobian of a gradient).
    """
    fname = function_name(inspect.unwrap(f))

    @functools.wraps(f)
    def jac(*args, **kwargs):
        if kwargs:
            args = tuple(bind_arguments(f, args, kwargs).values())
        if signature_key(args) is None:  # inside an outer trace: inline
            return _nest(*_values(f, args, selection, mode, what == "hessian" and selection.as_tuple))
        return emitted(*args)(*args)

    def build(args):
        graph, returns = jacobian_graph(f, args, selection, mode, what)
        how = "forward over reverse mode" if what == "hessian" else _MODES[mode]
        title = "Hessian" if what == "hessian" else "Jacobian"
        return Emitted(graph, f"{title} of {fname} ({how}).", returns,
                       [f"Generated by gradc from {graph.origin} ({title}, {how}). Do not edit."])

    def emitted(*args, **kwargs):
        """The emitted function for these arguments (``.source`` is its module), compiled on first use."""
        if kwargs:
            args = tuple(bind_arguments(f, args, kwargs).values())
        return _cached(f, (what, mode, selection), args, lambda: build(args))

    jac = user_facing(jac)
    jac.emitted = user_facing(emitted)
    return jac


@user_facing
def _check(f, argnums, wrt, what: str):
    """A transform's function and the arguments chosen, refused at the user's call; the function as gradc
    calls it and the :class:`Selection`."""
    f = check_function(f, what)
    return f, select_arguments(f, argnums, wrt, what=what)


_MODES = {"fwd": "forward mode", "rev": "reverse mode", "auto": "mode chosen from the shapes"}


def jacfwd(f: Callable, argnums: int | tuple | None = None, *, wrt: Any = None) -> Callable:
    """The Jacobian of ``f`` by forward mode (a batched jvp sweep): cheap for few inputs, many outputs.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``).

    >>> import numpy as np
    >>> jacfwd(lambda x: np.sin(x) * x[0])(np.array([0.0, 1.0])).round(3)
    array([[0.   , 0.   ],
           [0.841, 0.   ]])
    """
    f, selection = _check(f, argnums, wrt, "gradc.jacfwd")
    return _jacobian_fn(f, selection, "fwd")


def jacrev(f: Callable, argnums: int | tuple | None = None, *, wrt: Any = None) -> Callable:
    """The Jacobian of ``f`` by reverse mode (a batched vjp sweep): cheap for few outputs, many inputs.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``).

    >>> import numpy as np
    >>> jacrev(lambda x, y: x * y, argnums=(0, 1))(np.array([1.0, 2.0]), np.array([3.0, 4.0]))[1]
    array([[1., 0.],
           [0., 2.]])
    """
    f, selection = _check(f, argnums, wrt, "gradc.jacrev")
    return _jacobian_fn(f, selection, "rev")


def jacobian(f: Callable, argnums: int | tuple | None = None, *, wrt: Any = None) -> Callable:
    """The Jacobian of ``f``, by forward mode when the input has no more entries than the outputs, else reverse.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``).

    >>> import numpy as np
    >>> jacobian(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    array([2., 4.])
    """
    f, selection = _check(f, argnums, wrt, "gradc.jacobian")
    return _jacobian_fn(f, selection, "auto")


def hessian(f: Callable, argnums: int | tuple | None = None, *, wrt: Any = None) -> Callable:
    """The Hessian of scalar ``f``: ``jacfwd(jacrev(f))`` (forward over reverse), shape input + input.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``);
    for a tuple the result nests as JAX's: ``H[i][j]`` is d2 f / d arg_i d arg_j.

    >>> import numpy as np
    >>> hessian(lambda x: x[0] * x[1] ** 2)(np.array([1.0, 3.0]))
    array([[0., 6.],
           [6., 2.]])
    """
    f, selection = _check(f, argnums, wrt, "gradc.hessian")
    return _jacobian_fn(_jacobian_fn(f, selection, "rev"), selection, "fwd", what="hessian")
