"""``torch.func``: grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap (and functional_call).

Each transform runs eagerly on the facade's autograd (the op registry's VJP rules) inside a
``func_tree.Level``, so transforms nest in any order (``vmap(grad(f))``, ``jacfwd(jacrev(f))``)
and their results stay differentiable by the caller's autograd when the inputs require grad.
Forward mode (``jvp``, ``jacfwd``) is the double-backward trick: ``g(u) = J^T u`` is linear in a
dummy cotangent ``u``, so differentiating ``g`` with respect to ``u`` against a tangent ``v`` gives
``J v``. Shapes, nesting and error messages follow torch 2.13.

>>> import gradc.torch as torch
>>> grad(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
tensor([ 3., 12.])
>>> vmap(grad(lambda w, x: (w * x).sum() ** 2), in_dims=(None, 0))(torch.tensor([1.0, 2.0]), torch.eye(2))
tensor([[2., 0.],
        [0., 4.]])
"""
from __future__ import annotations

import functools

from gradc.facade import autograd
from gradc.facade.creation import eye, zeros, zeros_like
from gradc.facade.func_call import functional_call
from gradc.facade.func_tree import Level, argnum_positions, check_tensor_outputs, flatten, unflatten
from gradc.facade.functional import stack
from gradc.facade.grad_mode import enable_grad, is_grad_enabled
from gradc.facade.tensor import Tensor
from gradc.facade.vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp", "vjp", "vmap"]

_JVP = "jvp(f, primals, tangents)"
_AUX = "{}: output of function f should be a tuple: (output, aux) if has_aux is True"


def _grads(outputs, inputs, cotangents=None, retain_graph=True, create_graph=True):
    """d(outputs)/d(inputs) against ``cotangents``, zeros where nothing flows (torch.func never returns None)."""
    cotangents = cotangents if cotangents is not None else [None] * len(outputs)
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    got = [None] * len(inputs)
    if pairs:
        with enable_grad():
            got = autograd.grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=retain_graph,
                                create_graph=create_graph, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(got, inputs)]


def _call(level, func, args, kwargs, positions, has_aux, api):
    """Run ``func`` on the level's own copies of the arguments at ``positions``: (output, aux, diff args)."""
    args = list(args)
    with enable_grad():
        for p in positions:
            leaves, spec = flatten(args[p])
            args[p] = unflatten([level.wrap(x) for x in leaves], spec)
        out = func(*args, **kwargs)
    aux = None
    if has_aux:
        if not (isinstance(out, tuple) and len(out) == 2):
            raise RuntimeError(_AUX.format(api))
        out, aux = out
    return out, aux, tuple(args[p] for p in positions)


def _pick(diff_tree, argnums):
    return diff_tree[0] if isinstance(argnums, int) else diff_tree


def grad_and_value(func, argnums=0, has_aux=False):
    """``f -> (x -> (df/dx, f(x)))`` for a scalar-valued ``f``; with ``has_aux``, ``(grad, (value, aux))``.

    >>> import gradc.torch as torch
    >>> grad_and_value(lambda x: (x ** 2).sum())(torch.tensor([1.0, 3.0]))
    (tensor([2., 6.]), tensor(10.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        level = Level()
        positions = argnum_positions(argnums, len(args))
        out, aux, diff = _call(level, func, args, kwargs, positions, has_aux, "grad_and_value(f)(*args)")
        if not isinstance(out, Tensor):
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
        if out.dim() != 0:
            raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor "
                               f"with {out.dim()} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
        leaves, spec = flatten(diff)
        g = level.unwrap(_pick(unflatten(_grads([out], leaves), spec), argnums))
        value = level.unwrap(out)
        return (g, (value, level.unwrap(aux))) if has_aux else (g, value)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """``f -> (x -> df/dx)`` for a scalar-valued ``f``; with ``has_aux``, ``(grad, aux)``.

    >>> import gradc.torch as torch
    >>> grad(lambda x, y: (x * y).sum(), argnums=(0, 1))(torch.tensor([1.0]), torch.tensor([2.0]))
    (tensor([2.]), tensor([1.]))
    """
    inner = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = inner(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return wrapper


def _reverse(func, args, argnums, has_aux):
    """Shared by vjp and jacrev: (level, flat outputs, their spec, flat diff inputs, their spec, output, aux)."""
    level = Level()
    positions = range(len(args)) if argnums is None else argnum_positions(argnums, len(args))
    out, aux, diff = _call(level, func, args, {}, positions, has_aux, "vjp(f, *primals)")
    flat_out, out_spec = flatten(out)
    check_tensor_outputs(flat_out, "vjp(f, *primals)")
    for o in flat_out:
        if not (o.is_floating_point() or o.is_complex()):
            raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got Tensor "
                               f"with dtype {o.dtype}")
    flat_diff, diff_spec = flatten(diff)
    return level, flat_out, out_spec, flat_diff, diff_spec, out, aux


def vjp(func, *primals, has_aux=False):
    """``(f(*primals), vjp_fn)``, ``vjp_fn(cotangents)`` giving one cotangent per primal (plus aux with has_aux).

    >>> import gradc.torch as torch
    >>> out, vjp_fn = vjp(lambda x: x ** 2, torch.tensor([1.0, 2.0]))
    >>> vjp_fn(torch.tensor([1.0, 1.0]))
    (tensor([2., 4.]),)
    """
    level, flat_out, out_spec, flat_diff, diff_spec, out, aux = _reverse(func, primals, None, has_aux)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        create_graph = is_grad_enabled() if create_graph is None else create_graph
        flat_ct, ct_spec = flatten(cotangents)
        if ct_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {ct_spec.text()}, primal output: {out_spec.text()}")
        grads = _grads(flat_out, flat_diff, flat_ct, retain_graph=retain_graph, create_graph=create_graph)
        return level.unwrap(unflatten(grads, diff_spec))
    if has_aux:
        return level.unwrap(out), vjp_fn, level.unwrap(aux)
    return level.unwrap(out), vjp_fn


def _stacked(parts, dim, shape, like):
    if not parts:  # an empty output or input: nothing to stack
        return zeros(shape, dtype=like.dtype)
    return stack(parts, dim=dim).reshape(shape)


def _nest(per_output, diff_spec, out_spec, argnums):
    """Jacobian blocks ``[output][flat input]`` nested as torch.func nests them: outputs outside, inputs inside."""
    return unflatten([_pick(unflatten(blocks, diff_spec), argnums) for blocks in per_output], out_spec)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """``f -> (x -> Jacobian)`` by reverse mode, one backward pass per output element; blocks of shape
    ``output.shape + input.shape``.

    >>> import gradc.torch as torch
    >>> jacrev(lambda x: x.sum() * x)(torch.tensor([1.0, 2.0]))
    tensor([[4., 1.],
            [2., 5.]])
    """
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args):
        level, flat_out, out_spec, flat_diff, diff_spec, out, aux = _reverse(func, args, argnums, has_aux)
        per_output = []
        for o in flat_out:
            rows = [[] for _ in flat_diff]
            with enable_grad():
                flat = o.reshape(-1)
                for k in range(o.numel()):
                    for row, g in zip(rows, _grads([flat[k]], flat_diff)):
                        row.append(g)
            per_output.append([_stacked(r, 0, tuple(o.shape) + tuple(x.shape), x) for r, x in zip(rows, flat_diff)])
        jac = level.unwrap(_nest(per_output, diff_spec, out_spec, argnums))
        return (jac, level.unwrap(aux)) if has_aux else jac
    return wrapper


def _linearize(level, func, args, positions, has_aux):
    """Run ``func`` once and return (flat outputs, spec, aux, flat diff inputs, diff spec, push) where
    ``push(flat_tangents)`` gives each output's tangent (None where the output does not depend on the inputs)."""
    for p in positions:
        for x in flatten(args[p])[0]:
            if isinstance(x, Tensor) and not x.is_floating_point():
                raise ValueError(f"Expected primal to be floating point or complex, but got: {x.dtype}")
    out, aux, diff = _call(level, func, args, {}, positions, has_aux, _JVP)
    flat_out, out_spec = flatten(out)
    check_tensor_outputs(flat_out, _JVP)
    flat_diff, diff_spec = flatten(diff)
    live = [k for k, o in enumerate(flat_out) if o.requires_grad and o.is_floating_point()]
    dummies = [level.dummy(flat_out[k]) for k in live]
    back = [None] * len(flat_diff)
    if live:
        with enable_grad():
            back = autograd.grad([flat_out[k] for k in live], flat_diff, dummies, retain_graph=True,
                                 create_graph=True, allow_unused=True)

    def push(flat_tangents):
        pairs = [(g, t) for g, t in zip(back, flat_tangents) if g is not None and g.requires_grad]
        got = [None] * len(live)
        if pairs:
            with enable_grad():
                got = autograd.grad([g for g, _ in pairs], dummies, [t for _, t in pairs], retain_graph=True,
                                    create_graph=True, allow_unused=True)
        tangents = [None] * len(flat_out)
        for k, t in zip(live, got):
            tangents[k] = t
        return tangents
    return flat_out, out_spec, aux, flat_diff, diff_spec, push


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(f(*primals), J @ tangents)`` (plus aux with has_aux); ``primals`` and ``tangents`` are tuples.

    >>> import gradc.torch as torch
    >>> jvp(lambda x: x ** 2, (torch.tensor([1.0, 2.0]),), (torch.tensor([1.0, 0.0]),))
    (tensor([1., 4.]), tensor([2., 0.]))
    """
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, p_spec = flatten(primals)
    flat_t, t_spec = flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, if "
                           f"primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{p_spec.text()} and tangents with structure {t_spec.text()}")
    for name, flat in (("primals", flat_p), ("tangents", flat_t)):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got {type(x)}")
    for p, t in zip(flat_p, flat_t):
        if tuple(p.shape) != tuple(t.shape):
            raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                               f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given "
                               f"forward gradient is of size {list(t.shape)}.")
    level = Level()
    flat_out, out_spec, aux, _, _, push = _linearize(level, func, primals, range(len(primals)), has_aux)
    outs = []
    for o, t in zip(flat_out, push(flat_t)):
        if t is None and strict:
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the inputs. "
                               "This is not allowed with strict=True.")
        outs.append(zeros_like(o) if t is None else t)
    result = (level.unwrap(unflatten(flat_out, out_spec)), level.unwrap(unflatten(outs, out_spec)))
    return result + (level.unwrap(aux),) if has_aux else result


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """``f -> (x -> Jacobian)`` by forward mode, one tangent per input element; same shapes as ``jacrev``.

    >>> import gradc.torch as torch
    >>> jacfwd(lambda x, y: x * y, argnums=1)(torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    @functools.wraps(func)
    def wrapper(*args):
        level = Level()
        positions = argnum_positions(argnums, len(args))
        flat_out, out_spec, aux, flat_diff, diff_spec, push = _linearize(level, func, args, positions, has_aux)
        columns = [[[] for _ in flat_diff] for _ in flat_out]
        for j, x in enumerate(flat_diff):
            basis = eye(x.numel(), dtype=x.dtype)
            for e in range(x.numel()):
                tangents = [basis[e].reshape(x.shape) if i == j else zeros_like(y) for i, y in enumerate(flat_diff)]
                for k, (o, t) in enumerate(zip(flat_out, push(tangents))):
                    columns[k][j].append(zeros_like(o) if t is None else t)
        per_output = [[_stacked(columns[k][j], -1, tuple(o.shape) + tuple(x.shape), x) for j, x in enumerate(flat_diff)]
                      for k, o in enumerate(flat_out)]
        jac = level.unwrap(_nest(per_output, diff_spec, out_spec, argnums))
        return (jac, level.unwrap(aux)) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """``f -> (x -> Hessian)``: ``jacfwd(jacrev(f))``, blocks of shape ``output.shape + x.shape + x.shape``.

    >>> import gradc.torch as torch
    >>> hessian(lambda x: (x ** 3).sum())(torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    return jacfwd(jacrev(func, argnums), argnums)
