"""Complex numbers: ``real``, ``imag``, ``conj``, ``angle``, ``abs`` of complex values, ``real_if_close``.

Derivatives follow JAX's convention. A complex value is a pair of reals; the cotangent
``g`` of a value pairs with a tangent ``v`` as ``Re(g * v)`` (no conjugate), so the VJP of a
linear map is its *transpose*, not its conjugate transpose:

* a holomorphic op (``exp``, ``mul`` ...) keeps its real VJP rule: ``x_bar = ct * f'(x)``;
* ``real``: ``x_bar = ct`` (as complex); ``imag``: ``x_bar = -1j * ct``; ``conj``: ``x_bar = conj(ct)``;
* ``abs``: ``x_bar = ct * conj(x) / |x|`` (0 at 0);
* a real value promoted to complex (``astype``) gets the real part of its cotangent.

So the gradient of a real-valued ``f(z)``, ``z = x + iy``, is ``df/dx - i df/dy``: for
``|z|**2`` at ``3+4j`` it is ``6-8j``.

>>> import numpy as np
>>> real(np.array([1 + 2j])), imag(np.array([1 + 2j])), conj(np.array([1 + 2j]))
(array([1.]), array([2.]), array([1.-2.j]))
"""
from __future__ import annotations

import ast

import numpy as np

from gradc.errors import TraceError
from gradc.ir.registry import bind, defop
from gradc.ir.types import COMPLEX_OF_REAL, REAL_OF_COMPLEX
from gradc.ops import c_spell, spell
from gradc.ops import elementwise as ew
from gradc.ops.linalg_decomp import _leading_batch
from gradc.ops.values import aval, is_concrete


def _to_real(types, params):
    t = types[0]
    return t.with_dtype(REAL_OF_COMPLEX[t.dtype])


def _same(types, params):
    return types[0]


def _real_vjp(ct, out, x, needs):
    return (ew.astype(ct, aval(x).dtype),)


def _imag_vjp(ct, out, x, needs):
    return (ew.mul(ew.astype(ct, aval(x).dtype), -1j),)


def _conj_vjp(ct, out, x, needs):
    return (conj(ct),)


def _c_part(fn_name):
    return c_spell.scalar(lambda a, p, ti, to: c_spell.complex_call(fn_name, a[0], fn_name != "conj"))


defop("real", infer=_to_real, impl=np.real, vjp=_real_vjp, elementwise=True, linear=True,
      doc="x_bar = ct (as complex)", np=spell.fn("np.real"), c=_c_part("creal"))
defop("imag", infer=_to_real, impl=np.imag, vjp=_imag_vjp, elementwise=True, linear=True,
      doc="x_bar = -1j * ct", np=spell.fn("np.imag"), c=_c_part("cimag"))
defop("conj", infer=_same, impl=np.conj, vjp=_conj_vjp, elementwise=True, linear=True,
      doc="x_bar = conj(ct)", np=spell.fn("np.conj"), c=_c_part("conj"))


# ---------------------------------------------------------------- the functions tracers call
def _is_complex(x) -> bool:
    t = aval(x)
    return t.dtype is not None and t.is_complex or (t.dtype is None and isinstance(x, complex))


def real(x):
    """``np.real``: the value itself for real input (NumPy returns it unchanged)."""
    if not _is_complex(x):
        return x
    if isinstance(x, complex):
        return x.real
    return bind("real", x)


def imag(x):
    """``np.imag``: zeros (of the input's dtype) for real input."""
    if not _is_complex(x):
        if aval(x).dtype is None:
            return 0.0 if isinstance(x, float) else 0
        return ew.zeros_like(x)
    if isinstance(x, complex):
        return x.imag
    return bind("imag", x)


def conj(x):
    """``np.conj``: the value itself for real input."""
    if not _is_complex(x):
        return x
    if isinstance(x, complex):
        return x.conjugate()
    return bind("conj", x)


def abs_(x):
    """``np.abs``; of a complex value its modulus (a real value)."""
    return ew.abs_(x)


def angle(z, deg=False):
    """``np.angle``: ``arctan2(imag, real)``, in degrees with ``deg=True``."""
    from gradc.ops.special_numpy import arctan2

    t = aval(z)
    if t.dtype is not None and not t.is_inexact:
        z = ew.astype(z, "f64")
    theta = arctan2(imag(z), real(z))
    if not _is_complex(z) and aval(z).dtype is not None:  # a real input: 0 or pi, a constant
        theta = arctan2(ew.zeros_like(z), z)
    return ew.mul(theta, 180.0 / np.pi) if deg else theta


def real_if_close(a, tol=100):
    """``np.real_if_close``: the real part when every imaginary part is within ``tol`` machine epsilons of 0.

    Which of the two it is depends on the values: decided on concrete input, refused on traced input
    unless its dtype is real (then it is the value itself). JAX makes the same choice (``jax.numpy`` has no
    ``real_if_close``: a compiled function's result dtype cannot depend on the values).
    """
    if not _is_complex(a):
        return a
    if is_concrete(a):
        return np.real_if_close(a, tol)
    raise TraceError("np.real_if_close of a traced complex value: whether the result is real depends on the values",
                     hint="use np.real(z) when the imaginary part is known to be negligible (the dtype of a compiled "
                          "function's result cannot depend on the values; JAX has no real_if_close for this reason)")


def complex_dtype(dtype: str) -> str:
    """The complex dtype holding ``dtype``'s values.

    >>> complex_dtype("f32"), complex_dtype("i64"), complex_dtype("c64")
    ('c64', 'c128', 'c64')
    """
    if dtype in REAL_OF_COMPLEX:
        return dtype
    return COMPLEX_OF_REAL.get(dtype, "c128")


# ---------------------------------------------------------------- the phase of a complex determinant
def _det_phase_infer(types, params):
    t = types[0]
    return t.with_shape(t.shape[:-2])


def _det_phase_vjp(ct, out, a, needs):
    # out = det/|det| moves with a: d out = i out Im(tr(inv(a) da)), whose transpose is i Im(ct out) inv(a).T
    from gradc.ops.linalg_decomp import _cols, eye_like, mT, solve

    inv_t = solve(mT(a), eye_like(a))
    turn = ew.mul(ew.astype(imag(ew.mul(ct, out)), aval(a).dtype), 1j)
    return (ew.mul(inv_t, _cols(_cols(turn))),)


defop("det_phase", infer=_det_phase_infer, impl=lambda a: np.linalg.slogdet(a)[0], vjp=_det_phase_vjp,
      doc="the sign det/|det| of a complex matrix; a_bar = i Im(ct out) inv(a).T",
      np=lambda args, params, out, target: ast.Subscript(spell.call("np.linalg.slogdet", args[0]),
                                                         ast.Constant(0), ast.Load()),
      c=c_spell.loop("det_phase"), batch=_leading_batch("det_phase"))
