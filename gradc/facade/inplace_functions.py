"""torch's top-level in-place functions (``torch.abs_(x)``, ``torch.clamp_min_(x, 0)``, ...) and the Tensor
methods of the same names that the facade's out-of-place functions imply.

``torch.<name>_(input, *args)`` is ``input.<name>_(*args)``; a method ``<name>_`` the Tensor class lacks is
the out-of-place ``torch.<name>`` written into the tensor through the one in-place path every in-place op
takes (``Tensor._inplace``: torch's refusals for leaves and views, version bumps, ``CopySlices``). The node
is the out-of-place op's node, as torch's in-place kernels record (``torch.exp_(y)`` gives ``ExpBackward0``).

>>> import gradc.torch as torch
>>> x = torch.tensor([-1.0, 2.0], requires_grad=True)
>>> y = x * 1.0
>>> torch.abs_(y) is y, type(y.grad_fn).__name__
(True, 'AbsBackward0')
"""
from __future__ import annotations

from gradc.facade import grad_fn as gf
from gradc.facade.tensor import Tensor
from gradc.facade.torch_args import method_fn

# torch 2.13.0's top-level in-place functions whose out-of-place function the facade has (the rest of torch's list:
# deg2rad_, rad2deg_, gcd_, lcm_, ldexp_, addmv_, as_strided_, resize_as_, embedding_renorm_, selu_, celu_,
# threshold_, rrelu_ and the alpha/feature dropouts raise the facade's missing-name error).
UNARY = ("abs", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "asin", "asinh",
         "atan", "atanh", "ceil", "conj_physical", "cos", "cosh", "erf", "erfc", "exp", "exp2", "expm1", "fix",
         "floor", "frac", "i0", "log", "log10", "log1p", "log2", "neg", "negative", "reciprocal", "relu", "round",
         "rsqrt", "sigmoid", "sin", "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc")
WITH_ARGUMENTS = ("clamp", "clamp_max", "clamp_min", "clip", "logit", "nan_to_num", "xlogy")
# methods the Tensor class has already, exposed at the top level
METHODS = ("fill_", "zero_", "index_put_", "detach_")


# torch records the in-place inverse hyperbolic functions with these nodes and refuses their derivative
_REFUSED = {"acosh": "acosh", "arccosh": "acosh", "asinh": "asinh", "arcsinh": "asinh", "atanh": "atanh",
            "arctanh": "atanh"}
# an overload's node: torch's class for the in-place op where it is not the out-of-place function's node
_NODES = {"clamp_min": "ClampMinBackward0", "clamp_max": "ClampMaxBackward0"}


def _inplace_method(name: str, out_of_place):
    """``Tensor.<name>_``: ``out_of_place(self, *args, **kwargs)`` written into ``self``."""
    refused, node = _REFUSED.get(name), _NODES.get(name)

    def compute(shadow, *args, **kwargs):
        out = out_of_place(shadow, *args, **kwargs)
        if refused is not None:
            gf.rename(out, refused.capitalize() + "Backward1")
            message = f"the derivative for 'inplace version of {refused}' is not implemented."
            return gf.refuse_derivative(out, 0, message)
        return gf.rename(out, node) if node is not None else out

    def run(self, *args, **kwargs):
        return self._inplace(lambda shadow: compute(shadow, *args, **kwargs))
    run.__name__ = run.__qualname__ = name + "_"
    run.__doc__ = f"In-place ``torch.{name}``: the result written into this tensor, which is returned."
    return run


def _dropout_(input, p=0.5, train=True):  # noqa: A002 - torch name
    """``torch.dropout_(input, p, train)``: ``nn.functional.dropout`` written into ``input``."""
    from gradc.facade.nn import functional as F
    if not train:
        return input
    return input._inplace(lambda shadow: F.dropout(shadow, p, True))


def install(namespace: dict) -> list:
    """Give Tensor the missing ``<name>_`` methods and ``namespace`` (torch's top level) the functions.

    Returns the names added to ``namespace``.
    """
    added = []
    for name in UNARY + WITH_ARGUMENTS:
        out_of_place = namespace.get(name)
        if out_of_place is None:
            continue
        if name + "_" not in Tensor.__dict__:
            setattr(Tensor, name + "_", _inplace_method(name, out_of_place))
        added.append(name + "_")
    added += [m for m in METHODS if hasattr(Tensor, m)]
    for name in added:
        namespace[name] = method_fn(name, ("input",))
    namespace["dropout_"] = _dropout_
    # torch.igamma / igammac are torch.special.gammainc / gammaincc, and Tensor methods (in place too)
    for name, special_name in (("igamma", "gammainc"), ("igammac", "gammaincc")):
        function = getattr(namespace["special"], special_name)
        namespace[name] = function
        setattr(Tensor, name, function)
        setattr(Tensor, name + "_", _inplace_method(name, function))
    return added + ["dropout_", "igamma", "igammac"]
