"""The torch-style top-level names ``gradc.torch`` exports (``import gradc.torch as torch``)."""
from __future__ import annotations

import builtins

import numpy as _np

from gradc.errors import user_facing as _user_facing
from gradc.facade import (
    bitwise,
    complex_ops,
    cuda,  # noqa: F401 - torch.cuda
    dtypes,
    fft,  # noqa: F401 - torch.fft
    linalg,  # noqa: F401 - torch.linalg
    rotations,
    special,  # noqa: F401 - torch.special
    tensor_math,
    tensor_misc,
    tensor_select,
    torch_functional,
)
from gradc.facade import devices as _devices
from gradc.facade import functional as _fn
from gradc.facade import inplace_functions as _inplace_functions
from gradc.facade import rng as _rng
from gradc.facade import tensor_str as _tensor_str
from gradc.facade.creation import (  # noqa: F401
    arange,
    as_tensor,
    empty,
    empty_like,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    tensor,
    zeros,
    zeros_like,
)
from gradc.facade.devices import (  # noqa: F401
    device,  # noqa: F401
    get_default_device,
    set_default_device,
)
from gradc.facade.func import vmap  # noqa: F401 - torch.vmap is torch.func.vmap
from gradc.facade.grad_mode import (  # noqa: F401
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from gradc.facade.random_ops import (  # noqa: F401
    bernoulli,
    get_rng_state,
    multinomial,
    normal,
    randint_like,
    set_rng_state,
)
from gradc.facade.rng import Generator, initial_seed, manual_seed  # noqa: F401
from gradc.facade.serialization import load, save  # noqa: F401
from gradc.facade.tensor import Size, Tensor  # noqa: F401
from gradc.facade.tensor_str import set_printoptions  # noqa: F401
from gradc.facade.torch_args import method_fn, torch_fn, with_out
from gradc.facade.traceable import TRACED, traceable

float16 = half = dtypes.float16
float32 = float = dtypes.float32  # noqa: A001 - torch names
float64 = double = dtypes.float64
uint8 = dtypes.uint8
int8 = dtypes.int8
int16 = short = dtypes.int16
int32 = int = dtypes.int32  # noqa: A001 - torch name
int64 = long = dtypes.int64
bool = dtypes.bool_  # noqa: A001
complex64 = cfloat = dtypes.complex64
complex128 = cdouble = dtypes.complex128
dtype = dtypes.dtype


def get_default_dtype():
    return dtypes.DEFAULT[0]


def set_default_dtype(d):
    dtypes.DEFAULT[0] = dtypes.to_dtype(d)
    _tensor_str.DEFAULT_NAMES.update(float=dtypes.DEFAULT[0].name, complex=dtypes.default_complex().name)


def is_tensor(x):
    return isinstance(x, Tensor)


def numel(t):
    return t.numel()


_binary_names = ("input", "other")
_METHOD_ARGS = {"reshape": ("input", "shape"), "transpose": ("input", "dim0", "dim1"), "permute": ("input", "dims"),
                "flatten": ("input", "start_dim", "end_dim"), "flip": ("input", "dims"),
                **{n: ("input", "dim") for n in ("sum", "mean", "max", "min", "prod", "argmax", "argmin", "squeeze",
                                                 "unsqueeze", "softmax", "log_softmax", "all", "any")},
                **{n: _binary_names for n in ("eq", "ne", "gt", "lt", "ge", "le")}}
add, sub, mul, div, pow, maximum, minimum = (  # noqa: A001
    torch_fn(f, n, names) for f, n, names in (
        (_fn.add, "add", _binary_names), (_fn.sub, "sub", _binary_names), (_fn.mul, "mul", _binary_names),
        (_fn.div, "div", _binary_names), (_fn.pow, "pow", ("input", "exponent")),
        (_fn.maximum, "maximum", _binary_names), (_fn.minimum, "minimum", _binary_names)))
matmul = torch_fn(_fn.matmul, "matmul")
mm, bmm = torch_fn(_fn.mm, "mm", ("input", "mat2")), torch_fn(_fn.bmm, "bmm", ("input", "mat2"))
dot, mv = torch_fn(_fn.matmul, "dot", ("input", "tensor")), torch_fn(_fn.matmul, "mv", ("input", "vec"))
where = torch_fn(_fn.where, "where", ("condition", "input", "other"))
cat, stack = torch_fn(_fn.cat, "cat", ("tensors", "dim")), torch_fn(_fn.stack, "stack", ("tensors", "dim"))
sigmoid, relu, square, reciprocal = (torch_fn(f, n, ("input",)) for f, n in (
    (_fn.sigmoid, "sigmoid"), (_fn.relu, "relu"), (_fn.square, "square"), (_fn.reciprocal, "reciprocal")))
clamp = torch_fn(_fn.clamp, "clamp", ("input", "min", "max"))
subtract, multiply, divide, clip, true_divide = sub, mul, div, clamp, div
(exp, log, sin, cos, tanh, sqrt, abs, neg, log1p, sign, floor, sum, mean, max, min, prod, argmax, argmin,  # noqa: A001
 reshape, transpose, t, squeeze, unsqueeze, flatten, permute, eq, ne, gt, lt, ge, le, all, any, norm, clone,
 softmax, log_softmax, flip, detach) = (
    method_fn(n, _METHOD_ARGS.get(n, ("input",))) for n in (
        "exp", "log", "sin", "cos", "tanh", "sqrt", "abs", "neg", "log1p", "sign", "floor", "sum", "mean", "max", "min",
        "prod", "argmax", "argmin", "reshape", "transpose", "t", "squeeze", "unsqueeze", "flatten", "permute", "eq",
        "ne", "gt", "lt", "ge", "le", "all", "any", "norm", "clone", "softmax", "log_softmax", "flip", "detach"))
negative, absolute = neg, abs
# torch functions that are the Tensor methods of the same name
(chunk, split, narrow, unbind, movedim, moveaxis, swapaxes, swapdims, select, std, var, cosh, sinh, tan, atan, expm1,
 diagonal, unflatten) = (method_fn(n, ("input",)) for n in (
    "chunk", "split", "narrow", "unbind", "movedim", "moveaxis", "swapaxes", "swapdims", "select", "std", "var", "cosh",
    "sinh", "tan", "atan", "expm1", "diagonal", "unflatten"))
arctan = atan
greater, less, greater_equal, less_equal, not_equal = gt, lt, ge, le, ne


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002 - torch names
    """Whether ``|input - other| <= atol + rtol * |other|`` everywhere (a Python bool)."""
    return _np.allclose(input._data, getattr(other, "_data", other), rtol, atol, equal_nan)  # a Python bool


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):  # noqa: A002
    return Tensor._wrap(_np.isclose(input._data, getattr(other, "_data", other), rtol, atol, equal_nan))


def equal(input, other):  # noqa: A002
    """Same shape and the same values (a Python bool)."""
    return input.shape == other.shape and _np.array_equal(input._data, other._data)


for _module in (tensor_math, tensor_select, tensor_misc, complex_ops, bitwise, rotations,
                torch_functional):  # einsum, gather, xor...
    for _name in _module.FUNCTIONS:
        globals()[_name] = _module.__dict__[_name]

_DETERMINISTIC = [False]


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Recorded only: every gradc kernel is deterministic already."""
    _DETERMINISTIC[0] = mode is True or mode == 1


def are_deterministic_algorithms_enabled():
    return _DETERMINISTIC[0]


def set_num_threads(n):
    """Accepted and ignored: NumPy's BLAS decides its own threading."""


def get_num_threads():
    return 1


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False, out=None):  # noqa: F811
    """A random permutation of ``0..n-1``, the same as torch's for the same generator state."""
    _devices.check(device)
    g = _rng.default_generator if generator is None else generator
    data = _np.asarray(g.permutation(builtins.int(n)), dtype=(dtypes.to_dtype(dtype) or dtypes.int64).np)
    return with_out(tensor(data, requires_grad=requires_grad), out, "randperm")


# factories take device=: a CUDA request surfaces at the user's line, without gradc's frames
for _name in ("tensor", "as_tensor", "zeros", "ones", "empty", "full", "eye", "arange", "linspace", "rand", "randn",
              "randint", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like", "randperm"):
    globals()[_name] = _user_facing(globals()[_name])

_inplace_functions.install(globals())  # torch.abs_, torch.clamp_min_, ...: the tensor's in-place method

for _name in TRACED:
    if _name in globals():
        globals()[_name] = traceable(_name, globals()[_name])

__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "dtypes", "TRACED", "traceable", "torch_fn", "method_fn", "with_out", "tensor_math",
    "tensor_select", "tensor_misc", "complex_ops", "bitwise", "rotations", "torch_functional")]
torch_functional.bind_top_level(globals())
