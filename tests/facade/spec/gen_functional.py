"""Cases for ``torch.autograd.functional`` and ``torch.func``, printed the same way by torch and gradc.

``python gen_functional.py`` (in a venv with torch 2.13.0) prints torch's answers: that text is
``functional.expected.txt``. ``python gen_functional.py --gradc`` prints gradc's, which
``tests/facade/test_functional_transforms.py`` compares with the file. Every case takes the
``torch`` module as its argument; inputs are fixed float64 values (no RNG, whose streams differ),
and results print as shape, dtype, requires_grad and values to 6 decimals, nested as returned.
"""
from __future__ import annotations

import sys

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


def show(x) -> str:
    """One line per result: Tensors as ``T[shape] dtype rg=<requires_grad> values``, containers as nested."""
    if isinstance(x, tuple):
        return "(" + ", ".join(show(v) for v in x) + ("," if len(x) == 1 else "") + ")"
    if isinstance(x, list):
        return "[" + ", ".join(show(v) for v in x) + "]"
    if isinstance(x, dict):
        return "{" + ", ".join(f"{k!r}: {show(v)}" for k, v in x.items()) + "}"
    if hasattr(x, "requires_grad") and hasattr(x, "detach"):
        values = [0.0 if abs(v) < 5e-7 else v for v in x.detach().reshape(-1).tolist()]
        text = " ".join("%.6f" % v for v in values)
        return f"T{list(x.shape)} {str(x.dtype).replace('torch.', '')} rg={x.requires_grad} [{text}]"
    if callable(x):
        return "<function>"
    return repr(x)


def _t(torch, *values, rg=False):
    return torch.tensor(list(values), dtype=torch.float64, requires_grad=rg)


def _m(torch, rows, rg=False):
    return torch.tensor(rows, dtype=torch.float64, requires_grad=rg)


# ---- torch.autograd.functional -------------------------------------------------------------------------

@case
def af_jacobian_vector(torch):
    return torch.autograd.functional.jacobian(lambda x: x.sin() * x, _t(torch, 0.5, 1.0, 2.0))


@case
def af_jacobian_scalar_in_out(torch):
    return torch.autograd.functional.jacobian(lambda x: x ** 3, torch.tensor(1.5, dtype=torch.float64))


@case
def af_jacobian_vector_to_scalar(torch):
    return torch.autograd.functional.jacobian(lambda x: (x ** 2).sum(), _t(torch, 1.0, -2.0, 3.0))


@case
def af_jacobian_matrix(torch):
    return torch.autograd.functional.jacobian(lambda a: a @ a, _m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def af_jacobian_matrix_to_vector(torch):
    return torch.autograd.functional.jacobian(lambda a: a.sum(0) * 2, _m(torch, [[1.0, 2.0, 0.5], [3.0, 4.0, 1.5]]))


@case
def af_jacobian_tuple_inputs(torch):
    f = lambda x, y: x * y + x.sum()  # noqa: E731
    return torch.autograd.functional.jacobian(f, (_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0)))


@case
def af_jacobian_one_tuple_input(torch):
    return torch.autograd.functional.jacobian(lambda x: x.exp(), (_t(torch, 0.0, 1.0),))


@case
def af_jacobian_tuple_outputs(torch):
    return torch.autograd.functional.jacobian(lambda x: (x ** 2, x.sum()), _t(torch, 1.0, 2.0, 3.0))


@case
def af_jacobian_tuple_both(torch):
    f = lambda x, y: (x * y, x.sum() + y ** 2)  # noqa: E731
    return torch.autograd.functional.jacobian(f, (_t(torch, 1.0, 2.0), torch.tensor(3.0, dtype=torch.float64)))


@case
def af_jacobian_create_graph(torch):
    x = _t(torch, 1.0, 2.0, 3.0, rg=True)
    jac = torch.autograd.functional.jacobian(lambda x: x ** 3, x, create_graph=True)
    jac.sum().backward()
    return jac, x.grad


@case
def af_jacobian_no_create_graph_is_detached(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    jac = torch.autograd.functional.jacobian(lambda x: x ** 3, x)
    return jac, jac.grad_fn is None


@case
def af_jacobian_create_graph_leaf_without_grad(torch):
    jac = torch.autograd.functional.jacobian(lambda x: x ** 2, _t(torch, 1.0, 2.0), create_graph=True)
    return jac.requires_grad, x_is_leaf(jac)


def x_is_leaf(t):
    return t.is_leaf


@case
def af_jacobian_unused_input_zeros(torch):
    return torch.autograd.functional.jacobian(lambda x, y: x ** 2, (_t(torch, 1.0, 2.0), _t(torch, 5.0)))


@case
def af_jacobian_unused_input_strict(torch):
    return torch.autograd.functional.jacobian(lambda x, y: x ** 2, (_t(torch, 1.0, 2.0), _t(torch, 5.0)), strict=True)


@case
def af_jacobian_constant_output(torch):
    return torch.autograd.functional.jacobian(lambda x: torch.ones(2, dtype=torch.float64), _t(torch, 1.0, 2.0, 3.0))


@case
def af_jacobian_constant_output_strict(torch):
    return torch.autograd.functional.jacobian(lambda x: torch.ones(2, dtype=torch.float64), _t(torch, 1.0), strict=True)


@case
def af_jacobian_strict_create_graph_linear(torch):
    f = lambda x: x * 2  # noqa: E731
    return torch.autograd.functional.jacobian(f, _t(torch, 1.0, 2.0), create_graph=True, strict=True)


@case
def af_jacobian_forward_mode(torch):
    f = lambda x, y: (x.sin() * y, (x * y).sum())  # noqa: E731
    return torch.autograd.functional.jacobian(f, (_t(torch, 0.5, 1.0), _t(torch, 2.0, 3.0)), vectorize=True,
                                              strategy="forward-mode")


@case
def af_jacobian_vectorize_reverse(torch):
    return torch.autograd.functional.jacobian(lambda x: x.tanh(), _t(torch, 0.5, -1.0), vectorize=True)


@case
def af_jacobian_forward_mode_needs_vectorize(torch):
    return torch.autograd.functional.jacobian(lambda x: x, _t(torch, 1.0), strategy="forward-mode")


@case
def af_jacobian_forward_mode_create_graph(torch):
    return torch.autograd.functional.jacobian(lambda x: x, _t(torch, 1.0), create_graph=True, strategy="forward-mode")


@case
def af_jacobian_list_inputs(torch):
    return torch.autograd.functional.jacobian(lambda x, y: x * y, [_t(torch, 1.0), _t(torch, 2.0)])


@case
def af_jacobian_tuple_with_number(torch):
    return torch.autograd.functional.jacobian(lambda x, y: x * y, (_t(torch, 1.0), 2.0))


@case
def af_jacobian_output_number(torch):
    return torch.autograd.functional.jacobian(lambda x: 3.0, _t(torch, 1.0))


@case
def af_hessian_vector(torch):
    f = lambda x: (x ** 3).sum() + x[0] * x[1]  # noqa: E731
    return torch.autograd.functional.hessian(f, _t(torch, 1.0, 2.0, 3.0))


@case
def af_hessian_scalar(torch):
    return torch.autograd.functional.hessian(lambda x: x.sin() * x, torch.tensor(0.7, dtype=torch.float64))


@case
def af_hessian_one_element_vector_output(torch):
    return torch.autograd.functional.hessian(lambda x: (x ** 4).sum(0, keepdim=True), _t(torch, 1.0, 2.0))


@case
def af_hessian_tuple_inputs(torch):
    f = lambda x, y: (x * y ** 2).sum()  # noqa: E731
    return torch.autograd.functional.hessian(f, (_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0)))


@case
def af_hessian_matrix(torch):
    return torch.autograd.functional.hessian(lambda a: (a @ a).sum(), _m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def af_hessian_create_graph_third_order(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    h = torch.autograd.functional.hessian(lambda x: (x ** 4).sum(), x, create_graph=True)
    h.sum().backward()
    return h, x.grad


@case
def af_hessian_not_scalar(torch):
    return torch.autograd.functional.hessian(lambda x: x ** 2, _t(torch, 1.0, 2.0))


@case
def af_hessian_tuple_output(torch):
    return torch.autograd.functional.hessian(lambda x: (x.sum(), x.sum()), _t(torch, 1.0, 2.0))


@case
def af_hessian_strict_linear(torch):
    return torch.autograd.functional.hessian(lambda x: (2 * x).sum(), _t(torch, 1.0, 2.0), strict=True)


@case
def af_hessian_linear_zeros(torch):
    return torch.autograd.functional.hessian(lambda x: (2 * x).sum(), _t(torch, 1.0, 2.0))


@case
def af_vjp_vector(torch):
    return torch.autograd.functional.vjp(lambda x: x ** 2, _t(torch, 1.0, 2.0, 3.0), _t(torch, 1.0, 0.5, -1.0))


@case
def af_vjp_scalar_v_none(torch):
    return torch.autograd.functional.vjp(lambda x: (x * x).sum(), _t(torch, 1.0, 2.0))


@case
def af_vjp_v_none_vector_output(torch):
    return torch.autograd.functional.vjp(lambda x: x * x, _t(torch, 1.0, 2.0))


@case
def af_vjp_wrong_v_shape(torch):
    return torch.autograd.functional.vjp(lambda x: x * 2, _t(torch, 1.0, 2.0, 3.0), _t(torch, 1.0, 2.0))


@case
def af_vjp_tuple_outputs(torch):
    f = lambda x, y: (x * y, (x + y).sum())  # noqa: E731
    return torch.autograd.functional.vjp(f, (_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0)),
                                         (_t(torch, 1.0, 1.0), torch.tensor(2.0, dtype=torch.float64)))


@case
def af_vjp_v_tuple_wrong_length(torch):
    f = lambda x: (x * 2, x * 3)  # noqa: E731
    return torch.autograd.functional.vjp(f, _t(torch, 1.0, 2.0), (_t(torch, 1.0, 1.0),))


@case
def af_vjp_v_entry_wrong_shape(torch):
    f = lambda x: (x * 2, x.sum())  # noqa: E731
    return torch.autograd.functional.vjp(f, _t(torch, 1.0, 2.0), (_t(torch, 1.0, 1.0), _t(torch, 1.0, 1.0)))


@case
def af_vjp_single_output_given_two_v(torch):
    v = (_t(torch, 1.0, 1.0), _t(torch, 1.0, 1.0))
    return torch.autograd.functional.vjp(lambda x: x * 2, _t(torch, 1.0, 2.0), v)


@case
def af_vjp_create_graph_second_derivative(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    out, g = torch.autograd.functional.vjp(lambda x: x ** 3, x, _t(torch, 1.0, 1.0), create_graph=True)
    (g2,) = torch.autograd.grad(g.sum(), x)
    return out, g, g2


@case
def af_vjp_strict_unused_input(torch):
    inputs = (_t(torch, 1.0), _t(torch, 2.0))
    return torch.autograd.functional.vjp(lambda x, y: x * 2, inputs, _t(torch, 1.0), strict=True)


@case
def af_jvp_vector(torch):
    return torch.autograd.functional.jvp(lambda x: x.sin() * x, _t(torch, 0.5, 1.0), _t(torch, 1.0, 2.0))


@case
def af_jvp_tuple(torch):
    f = lambda x, y: (x * y, x.sum() * y)  # noqa: E731
    return torch.autograd.functional.jvp(f, (_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0)),
                                         (_t(torch, 1.0, 0.0), _t(torch, 0.0, 1.0)))


@case
def af_jvp_v_none_scalar_input(torch):
    return torch.autograd.functional.jvp(lambda x: x ** 2 * torch.ones(2, dtype=torch.float64), _t(torch, 3.0))


@case
def af_jvp_v_none_vector_input(torch):
    return torch.autograd.functional.jvp(lambda x: x * 2, _t(torch, 1.0, 2.0))


@case
def af_jvp_wrong_v_shape(torch):
    return torch.autograd.functional.jvp(lambda x: x * 2, _t(torch, 1.0, 2.0), _t(torch, 1.0, 2.0, 3.0))


@case
def af_jvp_create_graph(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    out, jv = torch.autograd.functional.jvp(lambda x: x ** 3, x, _t(torch, 1.0, 1.0), create_graph=True)
    (g2,) = torch.autograd.grad(jv.sum(), x)
    return out, jv, g2


@case
def af_jvp_unused_input(torch):
    inputs, v = (_t(torch, 1.0), _t(torch, 2.0)), (_t(torch, 1.0), _t(torch, 1.0))
    return torch.autograd.functional.jvp(lambda x, y: x * 2, inputs, v)


@case
def af_hvp_vector(torch):
    f = lambda x: (x ** 3).sum() + x[0] * x[1]  # noqa: E731
    return torch.autograd.functional.hvp(f, _t(torch, 1.0, 2.0), _t(torch, 1.0, -1.0))


@case
def af_vhp_vector(torch):
    f = lambda x: (x ** 3).sum() + x[0] * x[1]  # noqa: E731
    return torch.autograd.functional.vhp(f, _t(torch, 1.0, 2.0), _t(torch, 1.0, -1.0))


@case
def af_hvp_tuple(torch):
    f = lambda x, y: (2 * x ** 2 + 3 * y ** 2 + x * y).sum()  # noqa: E731
    return torch.autograd.functional.hvp(f, (_t(torch, 1.0, 2.0), _t(torch, 0.5, 1.0)),
                                         (_t(torch, 0.0, 1.0), _t(torch, 1.0, 1.0)))


@case
def af_vhp_create_graph(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    out, r = torch.autograd.functional.vhp(lambda x: (x ** 4).sum(), x, _t(torch, 1.0, 1.0), create_graph=True)
    (g,) = torch.autograd.grad(r.sum(), x)
    return out, r, g


@case
def af_hvp_scalar_v_none(torch):
    return torch.autograd.functional.hvp(lambda x: x ** 3, torch.tensor(2.0, dtype=torch.float64))


@case
def af_hvp_not_single_element(torch):
    return torch.autograd.functional.hvp(lambda x: x ** 2, _t(torch, 1.0, 2.0), _t(torch, 1.0, 1.0))


@case
def af_vhp_tuple_output(torch):
    return torch.autograd.functional.vhp(lambda x: (x.sum(),), _t(torch, 1.0, 2.0), _t(torch, 1.0, 1.0))


@case
def af_hvp_strict_linear(torch):
    return torch.autograd.functional.hvp(lambda x: (3 * x).sum(), _t(torch, 1.0, 2.0), _t(torch, 1.0, 1.0), strict=True)


@case
def af_vhp_wrong_v_shape(torch):
    return torch.autograd.functional.vhp(lambda x: (x ** 2).sum(), _t(torch, 1.0, 2.0), _t(torch, 1.0))


# ---- torch.func: grad, grad_and_value ------------------------------------------------------------------

def _loss(w, x, y):
    return ((x @ w - y) ** 2).mean()


@case
def fn_grad_vector(torch):
    return torch.func.grad(lambda x: (x.sin() * x).sum())(_t(torch, 0.5, 1.0, 2.0))


@case
def fn_grad_scalar(torch):
    return torch.func.grad(lambda x: x ** 3)(torch.tensor(2.0, dtype=torch.float64))


@case
def fn_grad_argnums_1(torch):
    return torch.func.grad(lambda x, y: (x * y ** 2).sum(), argnums=1)(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))


@case
def fn_grad_argnums_tuple(torch):
    return torch.func.grad(lambda x, y: (x * y ** 2).sum(), argnums=(0, 1))(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))


@case
def fn_grad_argnums_negative(torch):
    return torch.func.grad(lambda x, y: (x * y ** 2).sum(), argnums=-1)(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))


@case
def fn_grad_has_aux(torch):
    f = lambda x: ((x ** 2).sum(), x.mean())  # noqa: E731
    return torch.func.grad(f, has_aux=True)(_t(torch, 1.0, 3.0))


@case
def fn_grad_and_value(torch):
    return torch.func.grad_and_value(lambda x: (x ** 2).sum())(_t(torch, 1.0, 3.0))


@case
def fn_grad_and_value_has_aux(torch):
    f = lambda x, y: ((x * y).sum(), {"y": y * 2})  # noqa: E731
    return torch.func.grad_and_value(f, argnums=(0, 1), has_aux=True)(_t(torch, 1.0, 3.0), _t(torch, 2.0, 5.0))


@case
def fn_grad_dict_argument(torch):
    params = {"w": _t(torch, 1.0, 2.0), "b": torch.tensor(0.5, dtype=torch.float64)}
    return torch.func.grad(lambda p, x: ((x @ p["w"] + p["b"]) ** 2).sum())(params, _m(torch, [[1.0, 0.0], [1.0, 1.0]]))


@case
def fn_grad_unused_input_zeros(torch):
    return torch.func.grad(lambda x, y: (x ** 2).sum(), argnums=1)(_t(torch, 1.0), _t(torch, 2.0, 3.0))


@case
def fn_grad_of_grad(torch):
    return torch.func.grad(torch.func.grad(lambda x: x.sin() * x ** 2))(torch.tensor(0.5, dtype=torch.float64))


@case
def fn_grad_third_order(torch):
    g = torch.func.grad
    return g(g(g(lambda x: x ** 4)))(torch.tensor(2.0, dtype=torch.float64))


@case
def fn_grad_nested_closure(torch):
    g = torch.func.grad
    return g(lambda x: g(lambda y: x * y)(x))(torch.tensor(3.0, dtype=torch.float64))


@case
def fn_grad_outer_requires_grad(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    g = torch.func.grad(lambda x: (x ** 3).sum())(x)
    g.sum().backward()
    return g, x.grad


@case
def fn_grad_result_detached(torch):
    g, v = torch.func.grad_and_value(lambda x: (x ** 3).sum())(_t(torch, 1.0, 2.0))
    return g.requires_grad, v.requires_grad, g.grad_fn is None


@case
def fn_grad_closure_over_requires_grad(torch):
    w = _t(torch, 2.0, 3.0, rg=True)
    g = torch.func.grad(lambda x: (w * x ** 2).sum())(_t(torch, 1.0, 1.0))
    g.sum().backward()
    return g, w.grad


@case
def fn_grad_non_scalar(torch):
    return torch.func.grad(lambda x: x ** 2)(_t(torch, 1.0, 2.0))


@case
def fn_grad_one_element_vector(torch):
    return torch.func.grad(lambda x: x ** 2)(_t(torch, 1.0))


@case
def fn_grad_returns_float(torch):
    return torch.func.grad(lambda x: 3.0)(_t(torch, 1.0))


@case
def fn_grad_has_aux_not_pair(torch):
    return torch.func.grad(lambda x: x.sum(), has_aux=True)(_t(torch, 1.0))


@case
def fn_grad_argnums_out_of_range(torch):
    return torch.func.grad(lambda x, y: (x * y).sum(), argnums=2)(_t(torch, 1.0), _t(torch, 2.0))


@case
def fn_grad_argnums_list(torch):
    return torch.func.grad(lambda x, y: (x * y).sum(), argnums=[0, 1])(_t(torch, 1.0), _t(torch, 2.0))


@case
def fn_grad_argnums_repeated(torch):
    return torch.func.grad(lambda x, y: (x * y).sum(), argnums=(0, 0))(_t(torch, 1.0), _t(torch, 2.0))


@case
def fn_grad_argnums_empty(torch):
    return torch.func.grad(lambda x, y: (x * y).sum(), argnums=())(_t(torch, 1.0), _t(torch, 2.0))


@case
def fn_grad_non_tensor_argument(torch):
    return torch.func.grad(lambda x: x * 2)(3.0)


@case
def fn_grad_integer_tensor(torch):
    return torch.func.grad(lambda x: x.sum())(torch.tensor([1, 2]))


# ---- torch.func: vjp, jvp -------------------------------------------------------------------------------

@case
def fn_vjp_vector(torch):
    out, fn = torch.func.vjp(lambda x: x.sin() * x, _t(torch, 0.5, 1.0))
    return out, fn(_t(torch, 1.0, 2.0)), fn(_t(torch, 0.0, 1.0))


@case
def fn_vjp_two_primals_tuple_output(torch):
    out, fn = torch.func.vjp(lambda x, y: (x * y, (x + y).sum()), _t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))
    return out, fn((_t(torch, 1.0, 0.0), torch.tensor(1.0, dtype=torch.float64)))


@case
def fn_vjp_has_aux(torch):
    return torch.func.vjp(lambda x: (x ** 2, x.sum()), _t(torch, 1.0, 2.0), has_aux=True)[2]


@case
def fn_vjp_cotangent_structure(torch):
    out, fn = torch.func.vjp(lambda x: (x * 2, x * 3), _t(torch, 1.0, 2.0))
    return fn(_t(torch, 1.0, 1.0))


@case
def fn_vjp_cotangent_shape(torch):
    out, fn = torch.func.vjp(lambda x: x * 2, _t(torch, 1.0, 2.0, 3.0))
    return fn(_t(torch, 1.0, 1.0))


@case
def fn_vjp_integer_output(torch):
    return torch.func.vjp(lambda x: x.argmax(), _t(torch, 1.0, 2.0))


@case
def fn_vjp_has_aux_not_pair(torch):
    return torch.func.vjp(lambda x: x * 2, _t(torch, 1.0, 2.0), has_aux=True)


@case
def fn_vjp_outer_requires_grad(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    out, fn = torch.func.vjp(lambda x: x ** 3, x)
    (g,) = fn(_t(torch, 1.0, 1.0))
    g.sum().backward()
    return out.requires_grad, g, x.grad


@case
def fn_jvp_vector(torch):
    return torch.func.jvp(lambda x: x.sin() * x, (_t(torch, 0.5, 1.0),), (_t(torch, 1.0, 2.0),))


@case
def fn_jvp_two_primals(torch):
    f = lambda x, y: (x * y, (x ** 2).sum() * y)  # noqa: E731
    return torch.func.jvp(f, (_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0)), (_t(torch, 1.0, 0.0), _t(torch, 0.0, 1.0)))


@case
def fn_jvp_has_aux(torch):
    return torch.func.jvp(lambda x: (x.exp(), x.sum()), (_t(torch, 0.0, 1.0),), (_t(torch, 1.0, 1.0),), has_aux=True)


@case
def fn_jvp_primals_not_tuple(torch):
    return torch.func.jvp(lambda x: x * 2, _t(torch, 1.0), (_t(torch, 1.0),))


@case
def fn_jvp_tangent_shape(torch):
    return torch.func.jvp(lambda x: x * 2, (_t(torch, 1.0, 2.0),), (_t(torch, 1.0),))


@case
def fn_jvp_independent_output(torch):
    return torch.func.jvp(lambda x: torch.ones(2, dtype=torch.float64), (_t(torch, 1.0),), (_t(torch, 1.0),))


@case
def fn_jvp_strict_independent(torch):
    f = lambda x: torch.ones(2, dtype=torch.float64)  # noqa: E731
    return torch.func.jvp(f, (_t(torch, 1.0),), (_t(torch, 1.0),), strict=True)


@case
def fn_jvp_tangent_not_tensor(torch):
    return torch.func.jvp(lambda x: x * 2, (_t(torch, 1.0),), (1.0,))


@case
def fn_grad_of_jvp(torch):
    def f(x):
        return torch.func.jvp(lambda x: (x ** 3).sum(), (x,), (_t(torch, 1.0, 1.0),))[1]
    return torch.func.grad(f)(_t(torch, 1.0, 2.0))


# ---- torch.func: jacrev, jacfwd, hessian ----------------------------------------------------------------

@case
def fn_jacrev_vector(torch):
    return torch.func.jacrev(lambda x: x.sin() * x)(_t(torch, 0.5, 1.0, 2.0))


@case
def fn_jacrev_scalar_output(torch):
    return torch.func.jacrev(lambda x: (x ** 2).sum())(_t(torch, 1.0, 2.0))


@case
def fn_jacrev_matrix(torch):
    return torch.func.jacrev(lambda a: a @ a)(_m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def fn_jacrev_argnums_tuple(torch):
    return torch.func.jacrev(lambda x, y: x * y.sum(), argnums=(0, 1))(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0, 5.0))


@case
def fn_jacrev_tuple_outputs(torch):
    return torch.func.jacrev(lambda x: (x ** 2, x.sum()), argnums=0)(_t(torch, 1.0, 2.0))


@case
def fn_jacrev_dict_output_argnums_tuple(torch):
    f = lambda x, y: {"a": x * y, "b": (x + y).sum()}  # noqa: E731
    return torch.func.jacrev(f, argnums=(0, 1))(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))


@case
def fn_jacrev_has_aux(torch):
    return torch.func.jacrev(lambda x: (x ** 2, x.sum()), has_aux=True)(_t(torch, 1.0, 2.0))


@case
def fn_jacrev_outer_requires_grad(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    jac = torch.func.jacrev(lambda x: x ** 3)(x)
    jac.sum().backward()
    return jac, x.grad


@case
def fn_jacrev_argnums_out_of_range(torch):
    return torch.func.jacrev(lambda x: x * 2, argnums=1)(_t(torch, 1.0))


@case
def fn_jacfwd_vector(torch):
    return torch.func.jacfwd(lambda x: x.sin() * x)(_t(torch, 0.5, 1.0, 2.0))


@case
def fn_jacfwd_matrix_to_scalar(torch):
    return torch.func.jacfwd(lambda a: (a ** 2).sum())(_m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def fn_jacfwd_argnums(torch):
    return torch.func.jacfwd(lambda x, y: x + y ** 2, argnums=1)(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))


@case
def fn_jacfwd_argnums_tuple_tuple_outputs(torch):
    f = lambda x, y: (x * y, (x * y).sum())  # noqa: E731
    return torch.func.jacfwd(f, argnums=(0, 1))(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))


@case
def fn_jacfwd_has_aux(torch):
    return torch.func.jacfwd(lambda x: (x.exp(), x * 2), has_aux=True)(_t(torch, 0.0, 1.0))


@case
def fn_jacrev_of_jacrev(torch):
    return torch.func.jacrev(torch.func.jacrev(lambda x: (x ** 3).sum() + x[0] * x[1]))(_t(torch, 1.0, 2.0))


@case
def fn_jacfwd_of_jacrev(torch):
    f = lambda x: (x.sin() * x ** 2).sum()  # noqa: E731
    return torch.func.jacfwd(torch.func.jacrev(f))(_t(torch, 0.5, 1.0))


@case
def fn_hessian_vector(torch):
    return torch.func.hessian(lambda x: (x ** 3).sum() + x[0] * x[1])(_t(torch, 1.0, 2.0))


@case
def fn_hessian_argnums_tuple(torch):
    f = lambda x, y: (x * y ** 2).sum()  # noqa: E731
    return torch.func.hessian(f, argnums=(0, 1))(_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0))


@case
def fn_hessian_vector_output(torch):
    return torch.func.hessian(lambda x: x ** 3)(_t(torch, 1.0, 2.0))


# ---- torch.func: vmap -----------------------------------------------------------------------------------

@case
def vm_rows(torch):
    return torch.func.vmap(lambda r: (r ** 2).sum())(_m(torch, [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))


@case
def vm_in_dims_1(torch):
    return torch.func.vmap(lambda c: c * c.sum(), in_dims=1)(_m(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))


@case
def vm_out_dims_1(torch):
    return torch.func.vmap(lambda r: r * 2, out_dims=1)(_m(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))


@case
def vm_in_dims_negative(torch):
    return torch.func.vmap(lambda c: c.sum(), in_dims=-1)(_m(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))


@case
def vm_in_dims_none(torch):
    f = lambda w, x: x @ w  # noqa: E731
    return torch.func.vmap(f, in_dims=(None, 0))(_t(torch, 1.0, -1.0), _m(torch, [[1.0, 2.0], [3.0, 5.0], [0.0, 1.0]]))


@case
def vm_tuple_output_out_dims(torch):
    f = lambda r: (r * 2, r.sum())  # noqa: E731
    return torch.func.vmap(f, out_dims=(1, 0))(_m(torch, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]))


@case
def vm_nested(torch):
    f = torch.func.vmap(torch.func.vmap(lambda a, b: a * b), in_dims=(0, None))
    return f(_m(torch, [[1.0, 2.0], [3.0, 4.0]]), _t(torch, 10.0, 20.0))


@case
def vm_per_sample_grads(torch):
    w = _t(torch, 0.5, -1.0)
    x = _m(torch, [[1.0, 2.0], [3.0, 4.0], [-1.0, 0.5]])
    y = _t(torch, 1.0, 0.0, 2.0)
    return torch.func.vmap(torch.func.grad(_loss), in_dims=(None, 0, 0))(w, x, y)


@case
def vm_per_sample_grads_dict_params(torch):
    params = {"w": _t(torch, 0.5, -1.0), "b": torch.tensor(0.25, dtype=torch.float64)}

    def loss(p, x, y):
        return ((x @ p["w"] + p["b"] - y) ** 2).sum()
    x = _m(torch, [[1.0, 2.0], [3.0, 4.0]])
    return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, _t(torch, 1.0, 0.0))


@case
def vm_grad_and_value(torch):
    f = torch.func.grad_and_value(lambda x: (x ** 3).sum())
    return torch.func.vmap(f)(_m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def vm_jacrev_batch(torch):
    return torch.func.vmap(torch.func.jacrev(lambda x: x.sin() * x.sum()))(_m(torch, [[0.5, 1.0], [1.5, 2.0]]))


@case
def vm_jacfwd_in_dims_1(torch):
    return torch.func.vmap(torch.func.jacfwd(lambda x: x ** 2), in_dims=1)(_m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def vm_hessian_batch(torch):
    return torch.func.vmap(torch.func.hessian(lambda x: (x ** 3).sum()))(_m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def vm_kwargs_not_batched(torch):
    f = lambda x, scale=1.0: x * scale  # noqa: E731
    return torch.func.vmap(f)(_t(torch, 1.0, 2.0), scale=_t(torch, 3.0))


@case
def vm_differentiable(torch):
    x = _m(torch, [[1.0, 2.0], [3.0, 4.0]], rg=True)
    y = torch.func.vmap(lambda r: (r ** 2).sum())(x)
    y.sum().backward()
    return y, x.grad


@case
def vm_out_dims_none(torch):
    f = torch.func.vmap(lambda r, c: (r * 2, c), in_dims=(0, None), out_dims=(0, None))
    return f(_t(torch, 1.0, 2.0), _t(torch, 7.0))


@case
def vm_unbatched_output_expanded(torch):
    return torch.func.vmap(lambda r, c: c * 2, in_dims=(0, None))(_t(torch, 1.0, 2.0, 3.0), _t(torch, 7.0, 8.0))


@case
def vm_size_mismatch(torch):
    return torch.func.vmap(lambda a, b: a + b)(_t(torch, 1.0, 2.0), _t(torch, 1.0, 2.0, 3.0))


@case
def vm_nothing_batched(torch):
    return torch.func.vmap(lambda a: a * 2, in_dims=(None,))(_t(torch, 1.0, 2.0))


@case
def vm_in_dim_out_of_range(torch):
    return torch.func.vmap(lambda a: a * 2, in_dims=1)(_t(torch, 1.0, 2.0))


@case
def vm_in_dims_list(torch):
    return torch.func.vmap(lambda a: a * 2, in_dims=[0])(_t(torch, 1.0, 2.0))


@case
def vm_in_dim_for_number(torch):
    return torch.func.vmap(lambda a, s: a * s, in_dims=(0, 0))(_t(torch, 1.0, 2.0), 3.0)


@case
def vm_in_dim_float(torch):
    return torch.func.vmap(lambda a: a * 2, in_dims=(0.5,))(_t(torch, 1.0, 2.0))


@case
def vm_returns_number(torch):
    def half(a):
        return 0.5
    return torch.func.vmap(half)(_t(torch, 1.0, 2.0))


@case
def vm_no_inputs(torch):
    def nothing():
        return 1.0
    return torch.func.vmap(nothing)()


@case
def vm_randomness_value(torch):
    return torch.func.vmap(lambda a: a, randomness="sometimes")(_t(torch, 1.0))


@case
def vm_chunk_size(torch):
    return torch.func.vmap(lambda a: a.exp(), chunk_size=1)(_t(torch, 0.0, 1.0, 2.0))


@case
def vm_out_dims_none_batched(torch):
    def twice(a):
        return a * 2
    return torch.func.vmap(twice, out_dims=None)(_t(torch, 1.0, 2.0))


# ---- later additions: dtypes, grad mode, randomness, nested structures -----------------------------------

@case
def mix_float32_results(torch):
    x = torch.tensor([0.5, 2.0])
    hess = torch.autograd.functional.hessian(lambda x: (x ** 3).sum(), x)
    return torch.func.grad(lambda x: (x ** 2).sum())(x), hess, torch.func.jacfwd(lambda x: x * 3)(x)


@case
def mix_func_grad_under_no_grad(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    with torch.no_grad():
        g = torch.func.grad(lambda x: (x ** 3).sum())(x)
    return g, torch.is_grad_enabled()


@case
def mix_functional_vjp_under_no_grad(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    with torch.no_grad():
        out, g = torch.autograd.functional.vjp(lambda x: x ** 3, x, _t(torch, 1.0, 1.0))
    return out, g


@case
def mix_hvp_create_graph_wrt_v(torch):
    v = _t(torch, 1.0, -1.0, rg=True)
    f = lambda x: (x ** 3).sum()  # noqa: E731
    _, r = torch.autograd.functional.hvp(f, _t(torch, 1.0, 2.0), v, create_graph=True)
    (gv,) = torch.autograd.grad((r * r).sum(), v)
    return r, gv


@case
def mix_jacobian_closure_over_parameter(torch):
    w = _t(torch, 2.0, 3.0, rg=True)
    jac = torch.autograd.functional.jacobian(lambda x: w * x ** 2, _t(torch, 1.0, 1.0))
    return jac, w.grad


@case
def mix_vmap_dict_in_dims_and_output(torch):
    f = lambda d: {"sum": d["a"] + d["b"], "a2": d["a"] * 2}  # noqa: E731
    data = {"a": _m(torch, [[1.0, 2.0], [3.0, 4.0]]), "b": _t(torch, 10.0, 20.0)}
    return torch.func.vmap(f, in_dims=({"a": 0, "b": None},))(data)


@case
def mix_vmap_list_argument(torch):
    return torch.func.vmap(lambda xs: xs[0] * xs[1])([_t(torch, 1.0, 2.0), _t(torch, 3.0, 4.0)])


@case
def mix_vmap_in_out_dims_1_nested(torch):
    inner = torch.func.vmap(lambda a: a.sum(), in_dims=1)
    return torch.func.vmap(inner, in_dims=2, out_dims=1)(torch.arange(12.0, dtype=torch.float64).reshape(2, 3, 2))


@case
def mix_vmap_out_dim_out_of_range(torch):
    return torch.func.vmap(lambda x: x, out_dims=3)(_t(torch, 1.0, 2.0))


@case
def mix_vmap_out_dims_bad_type(torch):
    return torch.func.vmap(lambda x: x, out_dims="a")(_t(torch, 1.0, 2.0))


@case
def mix_vmap_chunk_size_zero(torch):
    return torch.func.vmap(lambda x: x, chunk_size=0)


@case
def mix_vmap_random_error(torch):
    return torch.func.vmap(lambda x: x + torch.rand(2, dtype=torch.float64))(torch.zeros(3, 2, dtype=torch.float64))


@case
def mix_vmap_random_same(torch):
    torch.manual_seed(0)
    out = torch.func.vmap(lambda x: x + torch.rand(2), randomness="same")(torch.zeros(3, 2))
    return out[0].tolist() == out[1].tolist() == out[2].tolist(), torch.rand(1)


@case
def mix_vmap_random_different(torch):
    torch.manual_seed(0)
    out = torch.func.vmap(lambda x: x + torch.rand(2), randomness="different")(torch.zeros(3, 2))
    return out[0].tolist() != out[1].tolist()


@case
def mix_jacrev_dict_argument(torch):
    params = {"w": _t(torch, 1.0, 2.0), "b": torch.tensor(0.5, dtype=torch.float64)}
    return torch.func.jacrev(lambda p: p["w"] * p["b"])(params)


@case
def mix_vjp_fn_called_twice_keeps_graph(torch):
    out, fn = torch.func.vjp(lambda x: (x ** 2).sum(), _t(torch, 1.0, 2.0))
    one = torch.tensor(1.0, dtype=torch.float64)
    return fn(one), fn(one * 2)


@case
def mix_grad_of_vmap(torch):
    f = lambda w: torch.func.vmap(lambda x: (w * x).sum() ** 2)(_m(torch, [[1.0, 0.0], [1.0, 1.0]])).sum()  # noqa: E731
    return torch.func.grad(f)(_t(torch, 1.0, 2.0))


@case
def mix_hessian_forward_outer(torch):
    f = lambda x: (x ** 3).sum()  # noqa: E731
    x = _t(torch, 1.0, 2.0)
    return torch.autograd.functional.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")


@case
def mix_forward_jacobian_input_requires_grad(torch):
    x = _t(torch, 1.0, 2.0, rg=True)
    jac = torch.autograd.functional.jacobian(lambda x: x ** 3, x, vectorize=True, strategy="forward-mode")
    jac.sum().backward()
    return jac, x.grad


@case
def mix_vmap_partial_name(torch):
    import functools
    return torch.func.vmap(functools.partial(lambda a, b: a * b, b=2.0), in_dims=1)(_t(torch, 1.0))


@case
def mix_jvp_of_grad(torch):
    f = torch.func.grad(lambda x: (x ** 3).sum())
    return torch.func.jvp(f, (_t(torch, 1.0, 2.0),), (_t(torch, 1.0, 0.0),))


@case
def mix_jacfwd_integer_input(torch):
    return torch.func.jacfwd(lambda x: x * 2)(torch.tensor([1, 2]))


@case
def mix_vjp_returns_none(torch):
    return torch.func.vjp(lambda x: None, _t(torch, 1.0))


@case
def mix_grad_kwargs_and_none_argument(torch):
    f = lambda x, y, s=1.0: (x * s).sum()  # noqa: E731
    return torch.func.grad(f)(_t(torch, 1.0, 2.0), None, s=_t(torch, 3.0))


@case
def mix_jvp_integer_output(torch):
    return torch.func.jvp(lambda x: x.argmax(), (_t(torch, 1.0, 2.0),), (_t(torch, 1.0, 1.0),))


@case
def mix_tangent_of_other_dtype(torch):
    v = torch.tensor([1.0, 1.0], dtype=torch.float32)
    x = _t(torch, 1.0, 2.0)
    return (torch.func.jvp(lambda x: x * 2, (x,), (v,))[1], torch.autograd.functional.jvp(lambda x: x * 2, x, v)[1],
            torch.func.vjp(lambda x: x * 2, x)[1](v)[0])


@case
def mix_vmap_none_output_not_mapped(torch):
    return torch.func.vmap(lambda x: (x, None), out_dims=(0, None))(_t(torch, 1.0, 2.0))


# ---- torch.func.functional_call ----------------------------------------------------------------------------

def _linear(torch):
    torch.manual_seed(0)
    return torch.nn.Linear(2, 1).double()


@case
def fc_replaces_parameters(torch):
    m = _linear(torch)
    new = {"weight": _m(torch, [[1.0, 1.0]]), "bias": _t(torch, 0.0)}
    out = torch.func.functional_call(m, new, (_m(torch, [[1.0, 2.0], [3.0, 4.0]]),))
    return out, m.weight.shape == (1, 2), m.weight.requires_grad, type(m.weight).__name__


@case
def fc_single_argument_and_partial_dict(torch):
    m, x = _linear(torch), _m(torch, [[1.0, 2.0]])
    out = torch.func.functional_call(m, {"bias": _t(torch, 10.0)}, x)
    return out.shape, out.requires_grad, bool(((out - (x @ m.weight.t() + 10)).abs() < 1e-12).all())


@case
def fc_strict_missing(torch):
    m = _linear(torch)
    return torch.func.functional_call(m, {"weight": _m(torch, [[1.0, 1.0]])}, (_m(torch, [[1.0, 2.0]]),), strict=True)


@case
def fc_strict_unexpected(torch):
    m = _linear(torch)
    new = {"weight": _m(torch, [[1.0, 1.0]]), "bias": _t(torch, 0.0), "scale": _t(torch, 2.0)}
    return torch.func.functional_call(m, new, (_m(torch, [[1.0, 2.0]]),), strict=True)


@case
def fc_repeated_keys(torch):
    m, dicts = _linear(torch), ({"bias": _t(torch, 1.0)}, {"bias": _t(torch, 2.0)})
    return torch.func.functional_call(m, dicts, (_m(torch, [[1.0, 2.0]]),))


@case
def fc_per_sample_grads(torch):
    m = _linear(torch)
    params = {"weight": _m(torch, [[0.5, -0.25]]), "bias": _t(torch, 0.1)}

    def loss(p, x, y):
        return ((torch.func.functional_call(m, p, (x.unsqueeze(0),)) - y) ** 2).mean()
    x, y = _m(torch, [[1.0, 2.0], [3.0, 4.0], [0.5, -1.0]]), _t(torch, 1.0, 2.0, 0.0)
    return torch.func.vmap(torch.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)


@case
def fc_jacrev_wrt_parameters(torch):
    m = _linear(torch)
    params = dict(m.named_parameters())
    return torch.func.jacrev(lambda p: torch.func.functional_call(m, p, (_m(torch, [[1.0, 2.0], [0.0, 1.0]]),)))(params)


@case
def mix_top_level_vmap(torch):
    return torch.vmap(lambda r: r.sum())(_m(torch, [[1.0, 2.0], [3.0, 4.0]]))


@case
def mix_hessian_of_cross_entropy(torch):
    a = _m(torch, [[1.0, 0.5, -0.3], [0.2, -1.0, 0.7]])
    f = lambda z: torch.nn.functional.cross_entropy((a @ z).unsqueeze(0), torch.tensor([1]))  # noqa: E731
    return torch.func.hessian(f)(_t(torch, 0.3, -1.2, 0.8))


@case
def mix_vmap_of_hessian_of_log_softmax(torch):
    f = lambda z: torch.nn.functional.log_softmax(z, dim=0)[0]  # noqa: E731
    return torch.func.vmap(torch.func.hessian(f))(_m(torch, [[1.0, 0.5, -0.3], [0.2, -1.0, 0.7]]))


def main(argv):
    if "--gradc" in argv:
        import gradc.torch as torch
    else:
        import torch
    run(torch)


def run(torch, out=None, cases=None):
    """Print each case's result (or its error, ``Kind: message``) to ``out``; all cases by default."""
    out = out or sys.stdout
    for fn in CASES if cases is None else cases:
        try:
            text = show(fn(torch))
        except Exception as e:  # the error is the expected answer of some cases
            text = f"{type(e).__name__}: {e}"
        print(f"## {fn.__name__}\n{text}", file=out)


if __name__ == "__main__":
    main(sys.argv[1:])
