"""torch's top-level in-place functions (``torch.abs_(y)``, ``torch.clamp_min_(y, 0.5)``, ...): the value written,
the tensor returned, its ``grad_fn`` and version, the gradient through it; and ``torch.special.gammainc``/
``gammaincc``'s refusal of the derivative in their first argument (torch: ``NotImplementedError``), under torch and
gradc.

    python tests/facade/spec/gen_inplace_functions.py torch > tests/facade/spec/inplace_functions.expected.txt
    python tests/facade/spec/gen_inplace_functions.py gradc.torch      # the same cases under gradc
"""
from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import spec_runner  # noqa: E402

CASES, case = spec_runner.registry()

# (name, arguments after the tensor, input values inside the function's domain)
_INSIDE_ONE = [0.25, -0.5, 0.75]
_POSITIVE = [1.5, 0.25, 3.0]
_MIXED = [-1.75, 0.5, 2.25]
_ABOVE_ONE = [1.5, 2.0, 3.25]
FUNCTIONS = [
    ("abs", (), _MIXED), ("acos", (), _INSIDE_ONE), ("acosh", (), _ABOVE_ONE), ("arccos", (), _INSIDE_ONE),
    ("arccosh", (), _ABOVE_ONE), ("arcsin", (), _INSIDE_ONE), ("arcsinh", (), _MIXED), ("arctan", (), _MIXED),
    ("arctanh", (), _INSIDE_ONE), ("asin", (), _INSIDE_ONE), ("asinh", (), _MIXED), ("atan", (), _MIXED),
    ("atanh", (), _INSIDE_ONE), ("ceil", (), _MIXED), ("cos", (), _MIXED), ("cosh", (), _MIXED), ("erf", (), _MIXED),
    ("erfc", (), _MIXED), ("exp", (), _MIXED), ("exp2", (), _MIXED), ("expm1", (), _MIXED), ("fix", (), _MIXED),
    ("floor", (), _MIXED), ("frac", (), _MIXED), ("i0", (), _MIXED), ("log", (), _POSITIVE), ("log10", (), _POSITIVE),
    ("log1p", (), _POSITIVE), ("log2", (), _POSITIVE), ("neg", (), _MIXED), ("negative", (), _MIXED),
    ("reciprocal", (), _MIXED), ("relu", (), _MIXED), ("round", (), _MIXED), ("rsqrt", (), _POSITIVE),
    ("sigmoid", (), _MIXED), ("sin", (), _MIXED), ("sinc", (), _MIXED), ("sinh", (), _MIXED), ("sqrt", (), _POSITIVE),
    ("square", (), _MIXED), ("tan", (), _MIXED), ("tanh", (), _MIXED), ("trunc", (), _MIXED),
    ("clamp", (-1.0, 1.0), _MIXED), ("clip", (-1.0, 1.0), _MIXED), ("clamp_min", (0.25,), _MIXED),
    ("clamp_max", (0.25,), _MIXED), ("logit", (), _INSIDE_ONE[:1] + [0.5, 0.75]), ("logit", (0.3,), _INSIDE_ONE),
    ("nan_to_num", (), _MIXED), ("xlogy", (2.0,), _MIXED),
]


def _run(T, name, args, values):
    x = T.tensor(values, dtype=T.float64, requires_grad=True)
    y = x * 1.0
    out = getattr(T, name + "_")(y, *args)
    weights = T.tensor([1.0, -2.0, 0.5], dtype=T.float64)
    (y * weights).sum().backward()
    return [out is y, type(y.grad_fn).__name__, y._version, [float(v) for v in y.detach()],
            [float(v) for v in x.grad]]


for _name, _args, _values in FUNCTIONS:
    def _case(T, _name=_name, _args=_args, _values=_values):
        return _run(T, _name, _args, _values)
    _case.__name__ = f"{_name}_{len(_args)}" if _args else _name
    if _case.__name__ not in [c.__name__ for c in CASES]:
        case(_case)


@case
def plain_tensor_no_grad(T):
    z = T.tensor([-1.5, 4.0])
    out = T.sqrt_(T.abs_(z))
    return [out is z, z._version, [float(v) for v in z], z.grad_fn is None]


@case
def leaf_refused(T):
    x = T.tensor([1.0, 2.0], requires_grad=True)
    try:
        T.exp_(x)
    except RuntimeError as e:
        return str(e)
    return "accepted"


@case
def through_a_view(T):
    x = T.tensor([0.5, -1.0, 2.0, 3.0], dtype=T.float64, requires_grad=True)
    y = x * 2.0
    T.tanh_(y[1:3])
    y.sum().backward()
    return [type(y.grad_fn).__name__, [float(v) for v in y.detach()], [float(v) for v in x.grad]]


@case
def fill_zero_detach(T):
    x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    y = x * 3.0
    T.fill_(y, 2.5)
    w = x * 1.0
    T.zero_(w)
    d = x * 1.0
    T.detach_(d)
    return [type(y.grad_fn).__name__, [float(v) for v in y.detach()], type(w.grad_fn).__name__, d.requires_grad]


@case
def dropout_eval(T):
    x = T.tensor([1.0, 2.0], dtype=T.float64, requires_grad=True)
    y = x * 1.0
    out = T.dropout_(y, 0.5, False)
    return [out is y, type(y.grad_fn).__name__, y._version]


def _gamma_case(T, name, wrt):
    a = T.tensor([1.5, 2.0, 0.75], dtype=T.float64, requires_grad="a" in wrt)
    x = T.tensor([0.5, 1.0, 2.5], dtype=T.float64, requires_grad="x" in wrt)
    y = getattr(T.special, name)(a, x)
    node = type(y.grad_fn).__name__
    try:
        y.sum().backward()
    except NotImplementedError as e:
        return [node, "NotImplementedError", str(e)]
    return [node, None if a.grad is None else [float(v) for v in a.grad], [float(v) for v in x.grad]]


@case
def gammainc_shape_refused(T):
    return _gamma_case(T, "gammainc", "ax")


@case
def gammaincc_shape_refused(T):
    return _gamma_case(T, "gammaincc", "ax")


@case
def gammainc_shape_alone_refused(T):
    return _gamma_case(T, "gammainc", "a")


@case
def gammainc_x_only(T):
    return _gamma_case(T, "gammainc", "x")


@case
def gammaincc_x_only(T):
    return _gamma_case(T, "gammaincc", "x")


@case
def gammainc_grad_wrt_x_while_a_requires(T):
    a = T.tensor([1.5, 2.0], dtype=T.float64, requires_grad=True)
    x = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)
    (g,) = T.autograd.grad(T.special.gammainc(a, x).sum(), x)
    return [float(v) for v in g]


@case
def igamma_top_level(T):
    a = T.tensor([1.5, 2.0], dtype=T.float64)
    x = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)
    y, z = T.igamma(a, x), T.igammac(a, x)
    return [type(y.grad_fn).__name__, type(z.grad_fn).__name__, [float(v) for v in y.detach()],
            [float(v) for v in z.detach()]]


@case
def overload_nodes_out_of_place(T):
    x = T.tensor([0.5, 2.0], dtype=T.float64, requires_grad=True)
    c = T.tensor(0.75, dtype=T.float64)
    outs = [T.clamp_min(x, 1.0), T.clamp_max(x, 1.0), T.clamp_min(x, c), T.clamp_max(x, c), x.clamp_min(1.0),
            T.xlogy(x, 2.0), T.xlogy(2.0, x), T.xlogy(x, x), T.special.xlogy(x, 3.0), T.clamp(x, min=1.0)]
    return [type(o.grad_fn).__name__ for o in outs]


@case
def igamma_methods_in_place(T):
    a = T.tensor([1.5, 2.0], dtype=T.float64)
    x = T.tensor([0.5, 1.0], dtype=T.float64, requires_grad=True)
    y = a * 1.0
    y.igamma_(x)
    y.sum().backward()
    return [type(y.grad_fn).__name__, [float(v) for v in y.detach()], [float(v) for v in x.grad],
            [float(v) for v in a.igammac(x).detach()]]


if __name__ == "__main__":
    sys.exit(spec_runner.main(CASES, sys.argv))
