"""``torch.autograd.functional``: vjp, jvp, jacobian, hessian, vhp and hvp of Tensor functions.

Each runs eagerly on the facade's own autograd (``autograd.grad``), so the derivatives come from
the op registry's VJP rules. Forward-mode products (``jvp``, ``hvp``, the forward-mode Jacobian)
use the double-backward trick: the VJP ``g(u) = J^T u`` is linear in a dummy cotangent ``u``, so
differentiating ``g`` with respect to ``u`` against ``v`` gives ``J v``. Results, nesting, the
``create_graph``/``strict`` rules and the error messages follow torch 2.13.

>>> import gradc.torch as torch
>>> x = torch.tensor([1.0, 2.0])
>>> jacobian(lambda x: x ** 2, x)
tensor([[2., 0.],
        [0., 4.]])
>>> hvp(lambda x: (x ** 3).sum(), x, torch.tensor([1.0, 0.0]))[1]
tensor([6., 0.])
"""
from __future__ import annotations

from gradc.facade import autograd
from gradc.facade.creation import eye, zeros, zeros_like
from gradc.facade.func_tree import Level
from gradc.facade.functional import stack
from gradc.facade.grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from gradc.facade.tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_INDEPENDENT = ("The output of the user-provided function is independent of input {}. This is not allowed in strict "
                "mode.")
_JAC_CONST_CG = ("The jacobian of the user-provided function is independent of input {}. This is not allowed in strict "
                 "mode when create_graph=True.")
_REQUIRES = {
    "outputs": ("Output {} of the user-provided function does not require gradients. The outputs must be computed in a "
                "differentiable manner from the input when running in strict mode."),
    "grad_inputs": ("The gradient with respect to input {} is independent of the inputs of the user-provided function. "
                    "This is not allowed in strict mode."),
    "jacobian": ("While computing the hessian, found that the jacobian of the user-provided function with respect to "
                 "input {} is independent of the input. This is not allowed in strict mode. You should ensure that "
                 "your function is twice differentiable and that the jacobian depends on the inputs (this would be "
                 "violated by a linear function for example)."),
    "hessian": ("The hessian of the user-provided function with respect to input {} is independent of the input. This "
                "is not allowed in strict mode. You should ensure that your function is thrice differentiable and that "
                "the hessian depends on the inputs."),
}
_MISSING = {
    "back": _INDEPENDENT,
    "back_trick": ("The gradient with respect to the input is independent of entry {} in the grad_outputs when using "
                   "the double backward trick to compute forward mode gradients. This is not allowed in strict mode."),
    "double_back": "The jacobian of the user-provided function is independent of input {}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": ("The hessian of the user-provided function is independent of entry {} in the grad_jacobian. "
                          "This is not allowed in strict mode as it prevents from using the double backward trick to "
                          "replace forward mode AD."),
}
_NO_V_OUT = "The vector v can only be None if the user-provided function returns a single Tensor with a single element."
_NO_V_IN = ("The vector v can only be None if the input to the user-provided function is a single Tensor with a "
            "single element.")


def _as_tuple(value, what, fn):
    """``(was_a_tuple, tuple_of_tensors)``; anything else than a Tensor or a tuple of them is torch's TypeError."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, item in enumerate(items):
        if not isinstance(item, Tensor):
            which = f"value at index {i}" if is_tuple else f"given {what}"
            raise TypeError(f"The {what} given to {fn} must be either a Tensor or a tuple of Tensors but the {which} "
                            f"has type {type(item)}.")
    return is_tuple, items


def _prepare(tensors, create_graph, need_graph):
    # a fresh node per input: differentiating w.r.t. it never mixes in other uses of the caller's tensor; with
    # create_graph a view keeps the link to the caller's graph, otherwise the input is cut loose
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in tensors)


def _finish(values, create_graph):
    if values and isinstance(values[0], (tuple, list)):
        return type(values)(_finish(v, create_graph) for v in values)
    return values if create_graph else tuple(v.detach() for v in values)


def _untuple(values, keep):
    """Unpack one level per False in ``keep`` (outer, inner), as the user passed non-tuples."""
    outer, inner = keep if isinstance(keep, tuple) else (keep, True)
    if not inner:
        values = type(values)(v[0] for v in values)
    return values if outer else values[0]


def _check_v(v, refs, refs_tuple):
    if len(v) != len(refs):
        if refs_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(refs)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, refs)):
        if a.size() != b.size():
            where = f"Entry {i} in " if refs_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {b.size()} but got {a.size()}.")


def _check_requires_grad(values, kind, strict):
    if not strict:
        return
    for i, t in enumerate(values):
        if t is None:
            raise RuntimeError(_INDEPENDENT.format(i))
        if not t.requires_grad:
            raise RuntimeError(_REQUIRES[kind].format(i))


def _grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``autograd.grad`` over the outputs that require grad; None per input where nothing flows."""
    grad_outputs = grad_outputs if grad_outputs is not None else (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return autograd.grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                         create_graph=create_graph, allow_unused=True)


def _zeros_for_none(grads, refs, strict, create_graph, stage):
    out = []
    for i, (g, ref) in enumerate(zip(grads, refs)):
        if g is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i))
            g = zeros_like(ref)
        elif strict and create_graph and not g.requires_grad:
            raise RuntimeError(_JAC_CONST_CG.format(i) if "double" not in stage else
                               _JAC_CONST_CG.format(i).replace("jacobian", "hessian"))
        out.append(g)
    return tuple(out)


def _start(fn_name, func, inputs, v, create_graph, strict, v_refs_are_outputs):
    """Shared opening of vjp/jvp/vhp/hvp: prepared inputs, outputs, checked v (None allowed for one element)."""
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _prepare(inputs, create_graph, need_graph=True)
    if not v_refs_are_outputs:  # v is checked against the inputs before func runs, else against its outputs
        v = _checked_v(fn_name, v, inputs, is_in_tuple, create_graph, _NO_V_IN)
    is_out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    if v_refs_are_outputs:
        v = _checked_v(fn_name, v, outputs, is_out_tuple, create_graph, _NO_V_OUT)
    return is_in_tuple, inputs, v, is_out_tuple, outputs


def _checked_v(fn_name, v, refs, refs_tuple, create_graph, when_none):
    if v is None:
        if len(refs) != 1 or refs[0].numel() != 1:
            raise RuntimeError(when_none)
        return None
    v = _prepare(_as_tuple(v, "v", fn_name)[1], create_graph, need_graph=False)
    _check_v(v, refs, refs_tuple)
    return v


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T J)``; ``v`` may be None when ``func`` returns a one-element Tensor.

    >>> import gradc.torch as torch
    >>> vjp(lambda x: x * 3, torch.tensor([1.0, 2.0]), torch.tensor([1.0, -1.0]))[1]
    tensor([ 3., -3.])
    """
    with enable_grad():
        is_in_tuple, inputs, v, is_out_tuple, outputs = _start("vjp", func, inputs, v, create_graph, strict, True)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(outputs, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "back")
    return _untuple(_finish(outputs, create_graph), is_out_tuple), _untuple(_finish(result, create_graph), is_in_tuple)


def _dummy_cotangents(outputs):
    return tuple(zeros_like(o, requires_grad=True) for o in outputs)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), J v)`` by the double-backward trick; ``v`` may be None for a one-element input.

    >>> import gradc.torch as torch
    >>> jvp(lambda x: x ** 2, torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([2., 4.])
    """
    with enable_grad():
        is_in_tuple, inputs, v, is_out_tuple, outputs = _start("jvp", func, inputs, v, create_graph, strict, False)
        dummies = _dummy_cotangents(outputs)
        grad_inputs = _grad(outputs, inputs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(grad_inputs, dummies, v, create_graph=create_graph)
        result = _zeros_for_none(grads, outputs, strict, create_graph, "back_trick")
    return _untuple(_finish(outputs, create_graph), is_out_tuple), _untuple(_finish(result, create_graph), is_out_tuple)


def _reverse_jacobian(outputs, inputs, create_graph, strict):
    """One row per output element: ``jac[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``."""
    jac = []
    for i, out in enumerate(outputs):
        rows = [[] for _ in inputs]
        flat = out.reshape(-1)
        for k in range(out.numel()):
            grads = _grad((flat[k],), inputs, retain_graph=True, create_graph=create_graph)
            for j, (g, inp) in enumerate(zip(grads, inputs)):
                if g is None:
                    if strict:
                        raise RuntimeError(f"Output {i} of the user-provided function is independent of input {j}. "
                                           "This is not allowed in strict mode.")
                    g = zeros_like(inp)
                elif strict and create_graph and not g.requires_grad:
                    raise RuntimeError(_JAC_CONST_CG.format(i))
                rows[j].append(g)
        jac.append(tuple(_assemble(r, 0, tuple(out.shape) + tuple(inp.shape), inp) for r, inp in zip(rows, inputs)))
    return tuple(jac)


def _assemble(parts, dim, shape, like):
    if not parts:  # an empty output or input: nothing to stack
        return zeros(shape, dtype=like.dtype)
    return stack(parts, dim=dim).reshape(shape)


def _forward_jacobian(func, inputs, strict, vectorize, keep_graph=False):
    """Columns ``J e_k`` by the double-backward trick. Like torch's dual numbers, the result stays attached to
    the caller's graph where it depends on tensors that require grad (always, under a forward-mode Hessian,
    whose inner function makes its inputs require grad)."""
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                                  "only implemented for `vectorize=True`.")
    level = Level()
    with enable_grad():
        inner = tuple(level.wrap(x) for x in inputs)
        is_out_tuple, outputs = _as_tuple(func(*inner), "outputs", None)
        dummies = tuple(level.dummy(o) for o in outputs)
        grad_inputs = _grad(outputs, inner, dummies, create_graph=True)
    live = [(g, j) for j, g in enumerate(grad_inputs) if g is not None and g.requires_grad]
    columns = [[[] for _ in inputs] for _ in outputs]
    for j, inp in enumerate(inputs):
        basis = eye(inp.numel(), dtype=inp.dtype)
        for k in range(inp.numel()):
            tangents = [basis[k].reshape(inp.shape) if jj == j else zeros_like(inputs[jj]) for _, jj in live]
            got = (None,) * len(outputs)
            if live:
                got = _grad([g for g, _ in live], dummies, tangents, retain_graph=True, create_graph=True)
            for i, (g, out) in enumerate(zip(got, outputs)):
                columns[i][j].append(zeros_like(out) if g is None else g)
    jac = [[_assemble(columns[i][j], -1, tuple(out.shape) + tuple(inp.shape), inp) for j, inp in enumerate(inputs)]
           for i, out in enumerate(outputs)]
    return _untuple(jac if keep_graph else level.unwrap(jac), (is_out_tuple, is_in_tuple))


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, of shape ``output.shape + input.shape`` per (output, input) pair.

    >>> import gradc.torch as torch
    >>> jacobian(lambda x, y: x * y, (torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])))[1]
    tensor([[1., 0.],
            [0., 2.]])
    """
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your function '
                             'has more outputs than inputs, "forward-mode" tends to be more performant. Otherwise, '
                             'prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and '
                                      '`strategy="forward-mode"` are not supported together (yet). Please either set '
                                      '`create_graph=False` or `strategy="reverse-mode"`.')
        return _forward_jacobian(func, inputs, strict, vectorize)
    with enable_grad():
        is_in_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _prepare(inputs, create_graph, need_graph=True)
        is_out_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outputs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                               "supported together. Please either set `strict=False` or `vectorize=False`.")
        jac = _reverse_jacobian(outputs, inputs, create_graph, strict)
        return _untuple(_finish(jac, create_graph), (is_out_tuple, is_in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a one-element ``func``: the Jacobian of its gradient, nested per pair of inputs.

    >>> import gradc.torch as torch
    >>> hessian(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    is_in_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar_func(*xs):
        out = func(*xs)
        is_out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        if is_out_tuple:
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single element")
        return out.squeeze()

    def gradient(*xs):
        jac = jacobian(scalar_func, xs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    if outer_jacobian_strategy == "forward-mode" and not create_graph:
        res = _forward_jacobian(gradient, inputs, strict, vectorize, keep_graph=True)
    else:
        res = jacobian(gradient, inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                       strategy=outer_jacobian_strategy)
    return _untuple(res, (is_in_tuple, is_in_tuple))


def _scalar_start(fn_name, func, inputs, v, create_graph, strict):
    with enable_grad():
        is_in_tuple, inputs, v, is_out_tuple, outputs = _start(fn_name, func, inputs, v, create_graph, strict, False)
        if is_out_tuple:
            raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
        if outputs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                               "element")
        jac = _grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    return is_in_tuple, inputs, v, outputs, jac


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), v^T H)`` for a one-element ``func``: one backward pass through its gradient.

    >>> import gradc.torch as torch
    >>> vhp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))[1]
    tensor([ 6., 12.])
    """
    is_in_tuple, inputs, v, outputs, jac = _scalar_start("vhp", func, inputs, v, create_graph, strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(jac, inputs, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back")
    return _untuple(_finish(outputs, create_graph), False), _untuple(_finish(result, create_graph), is_in_tuple)


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(inputs), H v)`` for a one-element ``func``, by the double-backward trick on its gradient.

    >>> import gradc.torch as torch
    >>> hvp(lambda x: (x ** 3).sum(), torch.tensor([1.0, 2.0]), torch.tensor([0.0, 1.0]))[1]
    tensor([ 0., 12.])
    """
    is_in_tuple, inputs, v, outputs, jac = _scalar_start("hvp", func, inputs, v, create_graph, strict)
    with enable_grad():
        dummies = _dummy_cotangents(inputs)
        double_back = _grad(jac, inputs, dummies, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(double_back, dummies, v, create_graph=create_graph)
        result = _zeros_for_none(grads, inputs, strict, create_graph, "double_back_trick")
    return _untuple(_finish(outputs, create_graph), False), _untuple(_finish(result, create_graph), is_in_tuple)
