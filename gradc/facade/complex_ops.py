"""Complex tensors of the facade: ``torch.complex``, ``polar``, ``view_as_real``/``view_as_complex``, and the
methods ``.real``, ``.imag``, ``.conj()``, ``.angle()``, ``.is_complex()`` (``.abs()`` and arithmetic are the
real ops', which the registry computes on complex values too).

Every function records one node named as torch names it and computes with registry ops, so its
derivative comes from the registry's rules (JAX's convention), which the engine turns into
torch's (``gradc.facade.grad_fn.torch_convention``): the ``.grad`` of a complex leaf under a real
loss is ``dL/dx + i dL/dy``.

``.real``, ``.imag`` and ``view_as_real`` are views of the complex tensor's memory when no graph is
recorded (writes through them change it, as torch's); when the tensor requires grad they are
copies with torch's nodes (an in-place write to one does not reach the complex tensor; ``z.real = v``,
assigning the attribute, does write into ``z``). ``view_as_complex`` always copies.

>>> import gradc.torch as torch
>>> z = torch.tensor([3 + 4j], requires_grad=True)
>>> (z.abs() ** 2).sum().backward(); z.grad
tensor([6.+8.j])
>>> torch.view_as_real(torch.tensor([1 + 2j]))
tensor([[1., 2.]])
"""
from __future__ import annotations

import builtins

import numpy as np

import gradc.ops.complex_numbers as cx
import gradc.ops.elementwise as ew
import gradc.ops.reduce as rd
import gradc.ops.shape as sh
from gradc.facade import dtypes, grad_mode, tensor_misc
from gradc.facade import grad_fn as gf
from gradc.facade.functional import dtype_key
from gradc.facade.lift import accept_traced_everywhere, operand
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.facade.torch_args import with_out


def is_complex(input) -> bool:  # noqa: A002 - torch name
    """Whether ``input`` holds complex values (``torch.is_complex``).

    >>> from gradc.facade.creation import tensor
    >>> is_complex(tensor([1j])), is_complex(tensor([1.0]))
    (True, False)
    """
    return input.dtype.kind == 3


def _shared(input, part):
    """Without a graph to record (no grad needed), the part as a view of ``input``'s storage, as torch's: writes
    through it change ``input``, and both share a version counter. None when a graph is recorded."""
    data = input._data
    if type(data) is not np.ndarray or (input.requires_grad and grad_mode.is_grad_enabled()):
        return None
    if part == "pairs":
        if not data.flags["C_CONTIGUOUS"]:
            return None
        view = data.reshape(-1).view(data.real.dtype).reshape(data.shape + (2,))
    else:
        view = data.real if part == "real" else data.imag
    out = Tensor._wrap(view)
    out._vc = input._vc
    return out


def _copied(out: Tensor, name: str) -> Tensor:
    """``out`` with storage of its own, its node named ``name`` (torch's view op names for what is a copy here:
    NumPy's real/imag parts are views, which the facade's view machinery cannot map into complex storage)."""
    if type(out._data) is np.ndarray:
        out._data = out._data.copy()
        out._vc = [0]
    if out._grad_fn is not None:
        gf.rename_node(out._grad_fn, name)
    return out


def real(input) -> Tensor:  # noqa: A002
    """The real parts (``torch.real``; a real tensor is returned as it is).

    >>> from gradc.facade.creation import tensor
    >>> from gradc.facade.complex_ops import real  # (also Tensor.real, where doctest collects it too)
    >>> real(tensor([1 + 2j], requires_grad=True))
    tensor([1.], grad_fn=<SelectBackward0>)
    """
    if not is_complex(input):
        return input
    shared = _shared(input, "real")
    return shared if shared is not None else _copied(record("RealPart", cx.real, [input]), "SelectBackward0")


def imag(input) -> Tensor:  # noqa: A002
    """The imaginary parts (``torch.imag``; refused for a real tensor, as torch does)."""
    if not is_complex(input):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    shared = _shared(input, "imag")
    return shared if shared is not None else _copied(record("ImagPart", cx.imag, [input]), "SelectBackward0")


def conj(input) -> Tensor:  # noqa: A002
    """The complex conjugate (``torch.conj``; a real tensor is returned as it is).

    >>> from gradc.facade.creation import tensor
    >>> conj(tensor([1 + 2j]))
    tensor([1.-2.j])
    """
    if not is_complex(input):
        return input
    return record("ConjBackward0", cx.conj, [input])


def conj_physical(input) -> Tensor:  # noqa: A002
    """``torch.conj_physical``: the conjugate, computed now (the facade never defers a conjugate)."""
    if not is_complex(input):
        return input
    return record("ConjPhysicalBackward0", cx.conj, [input])


def angle(input) -> Tensor:  # noqa: A002
    """The argument of each value in radians (``torch.angle``; 0 or pi for real values).

    >>> from gradc.facade.creation import tensor
    >>> angle(tensor([1j, -1.0 + 0j]))
    tensor([1.5708, 3.1416])
    """
    dt = dtypes.real_of(input.dtype) if input.dtype.kind >= 2 else dtypes.DEFAULT[0]
    if is_complex(input):
        return record("AngleBackward0", cx.angle, [input])
    return record("AngleBackward0", lambda x: cx.angle(ew.astype(x, dtype_key(dt))), [input])


def sgn(input, *, out=None) -> Tensor:  # noqa: A002
    """``z / |z|`` (0 at 0) for complex values, the sign for real ones (``torch.sgn``).

    >>> from gradc.facade.creation import tensor
    >>> sgn(tensor([3 + 4j, 0j]))
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    x = operand(input)
    if not is_complex(x):
        return tensor_misc.sgn(x, out=out)

    def fn(z):
        size = ew.astype(cx.abs_(z), dtype_key(x.dtype))
        zero = ew.equal(size, ew.zeros_like(size))
        return ew.where(zero, ew.zeros_like(z), ew.div(z, ew.where(zero, ew.add(size, 1.0), size)))
    return with_out(record("SgnBackward0", fn, [x]), out, "sgn")


def vdot(input, other, *, out=None) -> Tensor:  # noqa: A002
    """``sum(conj(input) * other)`` of two 1-D tensors (``torch.vdot``).

    >>> from gradc.facade.creation import tensor
    >>> vdot(tensor([1j]), tensor([1j]))
    tensor(1.+0.j)
    """
    a, b = operand(input), operand(other)
    if a.dim() != 1 or b.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.dim()}D and {b.dim()}D tensors")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"vdot : expected both vectors to have same dtype, but found {_scalar_name(a)} and "
                           f"{_scalar_name(b)}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src [{b.shape[0]}] to "
                           "have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    conj_first = cx.conj if is_complex(a) else (lambda v: v)
    return with_out(record("VdotBackward0", lambda x, y: rd.sum_(ew.mul(conj_first(x), y), None), [a, b]), out, "vdot")


def adjoint(self) -> Tensor:
    """The conjugate transpose of the last two dims (``x.mH``, ``x.adjoint()``)."""
    if self.dim() < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of matrices. Got "
                           f"{self.dim()}-D tensor.")
    return conj(self.transpose(-2, -1))


def _hermitian(self) -> Tensor:
    if self.dim() not in (0, 2):
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor.")
    return self if self.dim() == 0 else adjoint(self)


def _parts_to_complex(re, im, dt):
    key = dtype_key(dtypes.complex_of(dt))
    return ew.add(ew.astype(re, key), ew.mul(ew.astype(im, key), np.asarray(1j, dtypes.complex_of(dt).np)))


def _same_float_pair(a, b, what: str):
    a, b = operand(a), operand(b)
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError(f"{what}(): argument 'real' and 'imag' must be Tensors, not "
                        f"{type(a).__name__} and {type(b).__name__}")
    if a.dtype.kind != 2 or b.dtype.kind != 2:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got {_scalar_name(a)} "
                           f"and {_scalar_name(b)}")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {_scalar_name(a)} but got scalar type "
                           f"{_scalar_name(b)} for second argument")
    return a, b


def _scalar_name(t) -> str:
    return t.dtype.legacy[:-len("Tensor")]


def complex(real, imag) -> Tensor:  # noqa: A001 - torch name
    """``real + i imag`` from two float tensors of one dtype (broadcast): ``torch.complex``.

    >>> from gradc.facade.creation import tensor
    >>> complex(tensor([1.0, 2.0]), tensor([0.5, -1.0]))
    tensor([1.+0.5000j, 2.-1.0000j])
    """
    a, b = _same_float_pair(real, imag, "complex")
    dt = a.dtype
    return record("ComplexBackward0", lambda x, y: _parts_to_complex(*_broadcast(x, y), dt), [a, b])


def polar(abs, angle) -> Tensor:  # noqa: A002 - torch names
    """``abs * (cos(angle) + i sin(angle))``: ``torch.polar``.

    >>> from gradc.facade.creation import tensor
    >>> polar(tensor([2.0]), tensor([0.0]))
    tensor([2.+0.j])
    """
    a, b = _same_float_pair(abs, angle, "polar")
    dt = a.dtype

    def fn(r, theta):
        r, theta = _broadcast(r, theta)
        return _parts_to_complex(ew.mul(r, ew.cos(theta)), ew.mul(r, ew.sin(theta)), dt)
    return record("PolarBackward0", fn, [a, b])


def _broadcast(x, y):
    shape = np.broadcast_shapes(tuple(np.shape(x)), tuple(np.shape(y)))
    return (x if tuple(np.shape(x)) == shape else sh.broadcast_to(x, shape),
            y if tuple(np.shape(y)) == shape else sh.broadcast_to(y, shape))


def view_as_real(input) -> Tensor:  # noqa: A002
    """The complex values as pairs ``[..., (real, imag)]`` along a new last dimension (``torch.view_as_real``).

    >>> from gradc.facade.creation import tensor
    >>> view_as_real(tensor([1 + 2j, 3j]))
    tensor([[1., 2.],
            [0., 3.]])
    """
    if not is_complex(input):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    shared = _shared(input, "pairs")
    if shared is not None:
        return shared

    def fn(z):
        shape = tuple(np.shape(z)) + (1,)
        return sh.concatenate([sh.reshape(cx.real(z), shape), sh.reshape(cx.imag(z), shape)], -1 % len(shape))
    return _copied(record("ViewAsRealPairs", fn, [input]), "ViewAsRealBackward0")


def view_as_complex(input) -> Tensor:  # noqa: A002
    """Pairs ``[..., (real, imag)]`` along the last dimension read as complex values (``torch.view_as_complex``).

    >>> from gradc.facade.creation import tensor
    >>> view_as_complex(tensor([[1.0, 2.0]]))
    tensor([1.+2.j])
    """
    if input.dtype.kind != 2:
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, but got a tensor "
                           f"of scalar type: {_scalar_name(input)}")
    if input.dtype is dtypes.float16:
        raise RuntimeError("view_as_complex of a float16 tensor gives torch.complex32, which gradc's Tensor facade "
                           "does not have: convert to float32 first (x.float())")
    if input.dim() == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    dt = input.dtype
    n = input.dim() - 1

    def fn(x):
        lead = tuple(sh.slice_item(None, None, None) for _ in range(n))
        return _parts_to_complex(sh.index(x, lead + (("int", 0),)), sh.index(x, lead + (("int", 1),)), dt)
    return _copied(record("ViewAsComplexPairs", fn, [input]), "ViewAsComplexBackward0")


def _set_real(self, value):
    _set_part(self, value, real)


def _set_imag(self, value):
    _set_part(self, value, imag)


def _set_part(self, value, part):
    """``z.real = v`` / ``z.imag = v``: an in-place write of one part (recorded as torch records ``copy_``)."""
    if not is_complex(self):
        if part is real:
            self.copy_(value)
            return
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    part_dtype = dtypes.real_of(self.dtype)
    value = operand(value)
    if not isinstance(value, Tensor):
        value = Tensor._wrap(np.full(tuple(self.shape), value, part_dtype.np))
    elif value.dtype is not part_dtype:
        value = value.to(part_dtype)
    other = imag(self) if part is real else real(self)
    new = complex(*((value, other) if part is real else (other, value)))
    self.copy_(new)


METHODS = ("conj", "conj_physical", "angle", "is_complex", "sgn", "adjoint")
FUNCTIONS = ("real", "imag", "conj", "conj_physical", "angle", "is_complex", "complex", "polar", "view_as_real",
             "view_as_complex", "sgn", "vdot", "adjoint")


accept_traced_everywhere(globals(), FUNCTIONS)  # torch-style code given to gradc.grad on NumPy arrays


def _real_only_abs_(abs_):
    """``abs_`` refusing complex tensors as torch does (|z| is real: it cannot be written back into z)."""
    def run(self):
        if is_complex(self):
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        return abs_(self)
    run.__name__ = "abs_"
    return run


def install(T) -> None:
    """Attach the complex methods and the ``.real``/``.imag`` properties to the Tensor class ``T``."""
    g = globals()
    for name in METHODS:
        setattr(T, name, g[name])
    T.mH = property(adjoint)
    T.H = property(_hermitian)
    T.real = property(real, _set_real)
    T.imag = property(imag, _set_imag)
    T.__complex__ = lambda self: builtins.complex(self.item())
    T.is_conj = lambda self: False  # conjugates are computed, never deferred
    T.is_neg = lambda self: False
    T.resolve_conj = lambda self: self
    T.resolve_neg = lambda self: self
    T.abs_ = _real_only_abs_(T.abs_)
    T.cfloat = lambda self: self.to(dtypes.complex64)
    T.cdouble = lambda self: self.to(dtypes.complex128)
