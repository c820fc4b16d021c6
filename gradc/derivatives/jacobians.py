"""Jacobians and Hessians, each emitted as one vectorised function: ``jacfwd``, ``jacrev``, ``jacobian``, ``hessian``.

``jacfwd`` batches the forward sweep (``jvp``) over the basis of an input's tangent
space, ``jacrev`` the reverse sweep (``vjp``) over the basis of an output's
cotangent space: one batched sweep (``gradc.transforms.batching``), never a Python
loop of calls. ``jacobian`` picks the cheaper of the two from the shapes (forward
when the input has fewer entries than the output), ``hessian`` is ``jacfwd`` of
``jacrev``. Shapes are JAX's: output shape + input shape; a tuple of Jacobians for
a tuple of ``argnums``, and a tuple per output for a function returning a tuple. Pytrees
nest as JAX's too: the output's structure outside, each chosen argument's inside
(``jacobian(f)(p)["out"]["w"]`` is d out / d p["w"]). With ``has_aux=True`` ``f`` returns
``(output, aux)`` and the result is ``(jacobian, aux)``, the aux never differentiated.

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

from gradc.derivatives.closures import tracing
from gradc.derivatives.flat_function import flat_call, flat_function
from gradc.derivatives.static_args import Specialising, check_not_chosen, needs_specialising, static_parameters
from gradc.derivatives.transforms import (
    Emitted,
    _cached,
    argnum_names,
    cached_plain,
    hashable,
    signature_key,
    tensor_args,
)
from gradc.errors import ArgumentError, ShapeError, user_facing
from gradc.ir import dims
from gradc.ir.interpret import evaluate
from gradc.trace import bind_arguments, check_function, def_location, function_name, function_origin, trace
from gradc.trace.selection import Selection, select_arguments
from gradc.trace.signature import callable_signature
from gradc.trace.variadic import on_call
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


def _complex_mode(f, v, graph, mode, holomorphic, what):
    """The sweep for input ``v`` when complex values are involved (JAX's rules), or ``mode`` unchanged.

    Without ``holomorphic``, a complex input needs reverse mode (a real output: the gradient convention of
    ``gradc.grad``), a complex output forward mode (a real input); with it, inputs and outputs are complex.
    """
    outs_complex = any(o.type.is_complex for o in graph.outputs)
    where = def_location(f)
    if holomorphic:
        if not v.type.is_complex or not all(o.type.is_complex for o in graph.outputs):
            kinds = ", ".join(str(o.type) for o in graph.outputs)
            raise ArgumentError(f"{what}(..., holomorphic=True) needs complex inputs and outputs; {v.name} is "
                                f"{v.type}, the outputs {kinds}", where=where,
                                hint="drop holomorphic=True, or pass complex arrays (x.astype(np.complex128))")
        return mode
    if v.type.is_complex and outs_complex:
        raise ArgumentError(f"{what}: {v.name} and an output are complex; a Jacobian between complex values is "
                            "defined for holomorphic functions only", where=where,
                            hint="pass holomorphic=True for a holomorphic function, else differentiate real values "
                                 "(np.real, np.imag) or use gradc.vjp/gradc.jvp")
    if v.type.is_complex:
        if mode == "fwd":
            raise ArgumentError(f"{what}: forward mode needs real inputs; {v.name} is {v.type}", where=where,
                                hint="pass holomorphic=True for a holomorphic function, or use gradc.jacrev")
        return "rev"
    if outs_complex:
        if mode == "rev":
            raise ArgumentError(f"{what}: reverse mode needs real outputs; "
                                f"{', '.join(str(o.type) for o in graph.outputs)} given", where=where,
                                hint="pass holomorphic=True for a holomorphic function, or use gradc.jacfwd")
        return "fwd"
    return mode


def _values(plan, leaves, argnums, mode, holomorphic=False, what="jacobian"):
    """The Jacobians of the flat function at ``leaves`` as values of the trace in progress (flat, the traced aux
    leaves last), their nesting, and the output's layout."""
    graph, _, layout = plan.trace(leaves, inline=True)  # inside a trace: the enclosing values read are inputs
    main = graph.replace(outputs=graph.outputs[:layout.n_out])  # the aux is passed through, never differentiated
    if not plan.plain:  # a clear error naming the leaf (params['n']) for an int or static leaf
        plan.leaf_names_of(sorted({k for k, (a, b) in enumerate(plan.ranges) for i in argnums if a <= i < b}), graph)
    names, as_tuple = argnum_names(plan.f, graph, argnums)
    inputs = tensor_args(graph, leaves) + list(layout.captured)
    per_arg = []
    for name in names:
        v = next(v for v in graph.inputs if v.name == name)
        use_fwd = _forward_sweep(v, main, _complex_mode(plan.f, v, main, mode, holomorphic, what))
        sweep = _forward_jacobians if use_fwd else _reverse_jacobians
        per_arg.append(sweep(main, name, inputs))
    # JAX's nesting: outputs outside, argnums inside; kept as flat values and a nested structure of positions
    flat, structure = [], []
    for k in range(len(main.outputs)):
        positions = []
        for j in per_arg:
            positions.append(len(flat))
            flat.append(j[k])
        structure.append(tuple(positions) if as_tuple else positions[0])
    if layout.n_flat > layout.n_out:
        flat.extend(evaluate(graph, *inputs)[layout.n_out:])
    return flat, (structure[0] if len(structure) == 1 else tuple(structure)), layout


def _flat_argnums(plan, argnums):
    """``argnums`` as positions of the flat function's leaves, and how to nest per argument again (None: as is)."""
    if plan.plain:
        return argnums, None
    positions, as_tuple = plan.chosen(argnums, "argnums")
    return tuple(i for k in positions for i in range(*plan.ranges[k])), (positions, as_tuple)


def _arrange(result, plan, layout, nesting):
    """The emitted (or inlined) result nested as JAX's: the output's structure outside, each chosen argument's
    inside; with ``has_aux``, ``(jacobian, aux)``."""
    if nesting is None and layout.direct:
        return result
    if plan.has_aux:
        result, aux_values = result
    per_out = [result] if layout.n_out == 1 else list(result)
    if nesting is not None:
        per_out = [plan.group(list(v), *nesting) for v in per_out]
    out = layout.out_def.unflatten(per_out)
    if plan.has_aux:
        return out, layout.aux([None] * layout.n_out + list(aux_values))
    return out


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


def jacobian_graph(f, args, argnums: Selection | int | tuple = 0, mode="auto", what="jacobian", holomorphic=False):
    """``(graph, returns)``: the whole Jacobian computation of ``f`` at arguments like ``args`` as one graph.

    ``args`` may be arrays or types (``TensorType``); ``returns`` nests the outputs as JAX does.
    ``argnums``: the arguments chosen (a :class:`Selection`, or an ``argnums`` value for it).
    ``what="hessian"`` names it for ``f`` a gradient (``jacrev`` of the user's function).

    >>> import numpy as np
    >>> g, returns = jacobian_graph(lambda x: x ** 2, (np.ones(3),))
    >>> g.name, g.outputs[0].type, returns
    ('lambda__jacobian', f64[3,3], 0)
    """
    if isinstance(argnums, Selection):
        argnums = _argnums_of(f, argnums)
    plan = flat_function(f, bind_arguments(f, args))
    graph, returns, _ = _whole_graph(plan, plan.leaves(list(bind_arguments(f, args).values())), argnums, mode, what,
                                     holomorphic)
    return graph, returns


def _whole_graph(plan, leaves, argnums, mode, what, holomorphic=False):
    """``(graph, returns, layout)`` of the Jacobian computation of ``plan``'s function (``argnums`` of its leaves)."""
    user_fn = inspect.unwrap(plan.f)  # through our own wrappers (hessian is jacfwd of jacrev) to the user's function
    fname = function_name(user_fn)
    found = []

    def whole(*traced):
        flat, structure, layout = _values(plan, traced, argnums, mode, holomorphic, _WHAT.get(mode, what))
        found.append((structure, layout, len(flat)))
        return tuple(flat) if len(flat) > 1 else flat[0]

    whole.__signature__ = inspect.signature(plan.fn)
    whole.__wrapped__ = user_fn  # errors about the function point at the user's def
    whole.__name__ = f"{fname}_{what}" if what != "jacobian" or mode == "auto" else f"{fname}_jac{mode}"
    graph = trace(whole, *leaves)
    structure, layout, n_flat = found[0]
    if layout.n_flat > layout.n_out:  # the traced aux leaves follow the Jacobians
        n_aux = layout.n_flat - layout.n_out
        structure = (structure, tuple(range(n_flat - n_aux, n_flat)))
    return graph.replace(origin=function_origin(user_fn)), structure, layout


_WHAT = {"fwd": "gradc.jacfwd", "rev": "gradc.jacrev", "auto": "gradc.jacobian"}


def _jacobian_fn(f, argnums, mode, what="jacobian", has_aux=False, holomorphic=False):
    """The function computing the Jacobian of ``f`` (mode "fwd", "rev" or "auto"), traced and emitted per signature.

    ``what`` names it in the emitted code (``hessian`` for the Jacobian of a gradient).
    """
    fname = function_name(inspect.unwrap(f))

    @functools.wraps(f, updated=())  # not f.__dict__ (a transform's state)
    def jac(*args, **kwargs):
        entry = None if kwargs or has_aux else cached_plain(f, (what, mode, None, hashable(argnums), holomorphic),
                                                            args)
        if entry is not None and entry.layout.direct:
            return entry(*args)
        plan, leaves = flat_call(f, args, kwargs, has_aux)
        flat_argnums, nesting = _flat_argnums(plan, argnums)
        if signature_key(leaves) is None or tracing():  # inside an outer trace: inline
            flat, structure, layout = _values(plan, leaves, flat_argnums, mode, holomorphic, _WHAT.get(mode, what))
            if layout.n_flat > layout.n_out:
                n_aux = layout.n_flat - layout.n_out
                return _arrange((_nest(flat, structure), flat[len(flat) - n_aux:]), plan, layout, nesting)
            return _arrange(_nest(flat, structure), plan, layout, nesting)
        entry = _emitted(plan, leaves, flat_argnums)
        return _arrange(entry(*leaves), plan, entry.layout, nesting)

    def build(plan, leaves, flat_argnums):
        graph, returns, layout = _whole_graph(plan, leaves, flat_argnums, mode, what, holomorphic)
        how = "forward over reverse mode" if what == "hessian" else _MODES[mode]
        title = "Hessian" if what == "hessian" else "Jacobian"
        entry = Emitted(graph, f"{title} of {fname} ({how}).", returns,
                        [f"Generated by gradc from {graph.origin} ({title}, {how}). Do not edit."])
        entry.layout = layout
        return entry

    def _emitted(plan, leaves, flat_argnums):
        kind = (what, mode, None if plan.plain else plan, hashable(flat_argnums), holomorphic)
        return _cached(plan.f, kind, leaves, lambda: build(plan, leaves, flat_argnums))

    def emitted(*args, **kwargs):
        """The emitted function for these arguments (``.source`` is its module; it takes the arguments' leaves),
        compiled on first use."""
        plan, leaves = flat_call(f, args, kwargs, has_aux)
        return _emitted(plan, leaves, _flat_argnums(plan, argnums)[0])

    jac = user_facing(jac)
    jac.emitted = user_facing(emitted)
    return jac


@user_facing
def _check(f, argnums, wrt, what: str):
    """A transform's function and the arguments chosen, refused at the user's call; the function as gradc
    calls it and the :class:`Selection`."""
    f = check_function(f, what)
    return f, select_arguments(f, argnums, wrt, what=what)


def _argnums_of(f, selection: Selection):
    """The parameter positions ``selection`` chooses, in the order asked: an int for a bare choice, else a tuple."""
    params = list(callable_signature(f).parameters)
    positions = tuple(params.index(name) for name in selection.names)
    return positions if selection.as_tuple else positions[0]


_MODES = {"fwd": "forward mode", "rev": "reverse mode", "auto": "mode chosen from the shapes"}


@on_call
def jacfwd(f: Callable, argnums: int | tuple | None = None, has_aux: bool = False, *, wrt: Any = None,
           static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``f`` by forward mode (a batched jvp sweep): cheap for few inputs, many outputs.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``).
    Complex values follow JAX's rules: a complex input needs ``holomorphic=True`` (``docs/complex.md``).

    >>> import numpy as np
    >>> jacfwd(lambda z: z ** 2, holomorphic=True)(np.array([1j]))
    array([[0.+2.j]])
    >>> jacfwd(lambda x: np.sin(x) * x[0])(np.array([0.0, 1.0])).round(3)
    array([[0.   , 0.   ],
           [0.841, 0.   ]])
    """
    f, selection = _check(f, argnums, wrt, "gradc.jacfwd")
    return _with_static(f, selection, static_argnums, static_argnames, "gradc.jacfwd",
                        lambda g: _jacobian_fn(g, _argnums_of(g, selection), "fwd", has_aux=has_aux,
                                                     holomorphic=holomorphic))


@on_call
def jacrev(f: Callable, argnums: int | tuple | None = None, has_aux: bool = False, *, wrt: Any = None,
           static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None,
           holomorphic: bool = False) -> Callable:
    """The Jacobian of ``f`` by reverse mode (a batched vjp sweep): cheap for few outputs, many inputs.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``).

    >>> import numpy as np
    >>> jacrev(lambda x, y: x * y, argnums=(0, 1))(np.array([1.0, 2.0]), np.array([3.0, 4.0]))[1]
    array([[1., 0.],
           [0., 2.]])
    """
    f, selection = _check(f, argnums, wrt, "gradc.jacrev")
    return _with_static(f, selection, static_argnums, static_argnames, "gradc.jacrev",
                        lambda g: _jacobian_fn(g, _argnums_of(g, selection), "rev", has_aux=has_aux,
                                                     holomorphic=holomorphic))


@on_call
def jacobian(f: Callable, argnums: int | tuple | None = None, has_aux: bool = False, *, wrt: Any = None,
             static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None,
             holomorphic: bool = False, sparse: Any = False) -> Callable:
    """The Jacobian of ``f``, by forward mode when the input has no more entries than the outputs, else reverse.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``).

    >>> import numpy as np
    >>> jacobian(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    array([2., 4.])
    >>> jacobian(lambda p: {"y": p["a"] * p["b"]})({"a": 2.0, "b": np.array([1.0, 3.0])})
    {'y': {'a': array([1., 3.]), 'b': array([[2., 0.],
           [0., 2.]])}}

    ``sparse=True`` (or a sparsity pattern, a ``scipy.sparse`` matrix) returns ``scipy.sparse`` CSR matrices
    computed by colouring: one sweep per group of structurally orthogonal columns (``docs/sparse.md``).

    >>> jacobian(lambda x: x[1:] * x[:-1], sparse=True)(np.array([1.0, 2.0, 3.0])).toarray()
    array([[2., 1., 0.],
           [0., 3., 2.]])
    """
    f, selection = _check(f, argnums, wrt, "gradc.jacobian")
    if sparse is not False:
        return _sparse(f, selection, sparse, has_aux, static_argnums, static_argnames, "gradc.jacobian")
    return _with_static(f, selection, static_argnums, static_argnames, "gradc.jacobian",
                        lambda g: _jacobian_fn(g, _argnums_of(g, selection), "auto", has_aux=has_aux,
                                                     holomorphic=holomorphic))


@on_call
def hessian(f: Callable, argnums: int | tuple | None = None, has_aux: bool = False, *, wrt: Any = None,
            static_argnums: int | tuple | None = None, static_argnames: str | tuple | None = None,
            holomorphic: bool = False, sparse: Any = False) -> Callable:
    """The Hessian of scalar ``f``: ``jacfwd(jacrev(f))`` (forward over reverse), shape input + input.

    ``argnums`` or ``wrt`` choose the arguments, as for ``gradc.grad`` (default: the first, ``argnums=0``);
    for a tuple the result nests as JAX's: ``H[i][j]`` is d2 f / d arg_i d arg_j.

    >>> import numpy as np
    >>> hessian(lambda x: x[0] * x[1] ** 2)(np.array([1.0, 3.0]))
    array([[0., 6.],
           [6., 2.]])

    ``sparse=True`` (or a pattern) returns a ``scipy.sparse`` CSR matrix, one Hessian-vector product per colour.
    """
    f, selection = _check(f, argnums, wrt, "gradc.hessian")
    if sparse is not False:
        return _sparse(f, selection, sparse, has_aux, static_argnums, static_argnames, "gradc.hessian")

    def make(g):
        chosen = _argnums_of(g, selection)
        return _jacobian_fn(jacrev(g, chosen, has_aux=has_aux, holomorphic=holomorphic), chosen, "fwd",
                            what="hessian", has_aux=has_aux, holomorphic=holomorphic)
    return _with_static(f, selection, static_argnums, static_argnames, "gradc.hessian", make)


def _sparse(f, selection, sparse, has_aux, static_argnums, static_argnames, what):
    """``jacobian``/``hessian`` with ``sparse=``: arrays in, ``scipy.sparse`` out (``gradc.derivatives.sparse``)."""
    from gradc.derivatives.sparse import sparse_jacobian_fn

    if has_aux or static_argnums is not None or static_argnames is not None:
        raise ArgumentError(f"{what}(..., sparse=...) takes neither has_aux nor static arguments yet",
                            where=def_location(f), hint="close over the static values (functools.partial)")
    return user_facing(sparse_jacobian_fn(f, _argnums_of(f, selection), sparse, what == "gradc.hessian", what))


@user_facing
def _with_static(f, selection, static_argnums, static_argnames, what, make):
    """``make(f)``, or, with static arguments (declared, or defaults that are functions), a
    :class:`gradc.derivatives.static_args.Specialising` calling ``make`` per static values."""
    declared = static_parameters(f, static_argnums, static_argnames, what)
    check_not_chosen(f, selection.names, declared, what)
    if not needs_specialising(f, declared):
        return make(f)
    return Specialising(f, declared, make)
