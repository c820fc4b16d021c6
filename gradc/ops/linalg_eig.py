"""``eig``: the eigenpairs of a general square matrix, complex, packed as ``[w; V]`` (shape (..., n + 1, n)).

The values are NumPy's (LAPACK's ``geev``: unit-norm eigenvectors), always complex, as JAX's ``eig``
(NumPy returns real arrays when every eigenvalue of a real matrix happens to be real: a dtype that
depends on the values, which a compiled function cannot have). The reverse rule assumes distinct
eigenvalues: with ``P = V^-1 dA V`` the tangents are ``dw = diag(P)`` and ``dV = V (F * P)``
(``F_ij = 1 / (w_j - w_i)``), then the unit-norm constraint (``dV -= V Re(diag(V^H dV))``); the rule is
their transpose for JAX's pairing ``Re(sum(x * y))``: ``a_bar = V^-T (diag(w_bar) + F * (V^T V_bar')) V^T``
with ``V_bar' = V_bar - conj(V) Re(diag(V^T V_bar))``, its real part for a real matrix. Each
eigenvector's phase is LAPACK's choice, so only functions that do not depend on it have a derivative.
The C target computes it by Hessenberg reduction and shifted complex QR (gradc/backends/c/linalg_eig.py).

>>> import numpy as np
>>> from gradc.ir.registry import bind
>>> w = bind("eig", np.array([[0.0, 1.0], [-1.0, 0.0]]))[0]
>>> np.sort_complex(w)
array([0.-1.j, 0.+1.j])
"""
from __future__ import annotations

import ast

import numpy as np

import gradc.ops.elementwise as ew
import gradc.ops.reduce as red
from gradc.ir.registry import defop
from gradc.ir.types import COMPLEX_OF_REAL
from gradc.ops import c_spell, spell
from gradc.ops.linalg import matmul
from gradc.ops.linalg_decomp import (
    _cat,
    _cols,
    _item,
    _leading_batch,
    _off_diagonal_inverse,
    _row,
    _rows,
    _square,
    _stmts,
    _unpack_rows,
    conj_of,
    eye_like,
    mT,
    real_of,
    solve,
)
from gradc.ops.values import aval


def _eig_infer(types, params):
    t = _square(types[0], "eig")
    dtype = t.dtype if t.is_complex else COMPLEX_OF_REAL[t.dtype]
    return t.with_shape(t.shape[:-2] + (t.shape[-1] + 1, t.shape[-1])).with_dtype(dtype)


def _eig_impl(a):
    w, v = np.linalg.eig(a)
    dtype = np.result_type(a.dtype, np.complex64)
    return np.concatenate((w[..., None, :], v), axis=-2).astype(dtype)


def _eig_vjp(ct, out, a, needs):
    w, v = _unpack_rows(out, 1)
    w_bar, v_bar = _unpack_rows(ct, 1)
    along = red.sum_(ew.mul(v, v_bar), -2)  # diag(V^T V_bar)
    v_bar = ew.sub(v_bar, ew.mul(conj_of(v), _rows(real_of(along))))  # the unit-norm constraint's transpose
    f = _off_diagonal_inverse(ew.sub(_rows(w), _cols(w)))  # 1 / (w_j - w_i), distinct eigenvalues
    inner = ew.add(ew.mul(eye_like(f), _rows(w_bar)), ew.mul(f, matmul(mT(v), v_bar)))
    a_bar = solve(mT(v), matmul(inner, mT(v)))  # V^-T inner V^T
    return (a_bar if aval(a).is_complex else real_of(a_bar),)


def _eig_spell(args, params, out, target):
    # + 0j: complex also when NumPy returns real arrays (every eigenvalue of a real matrix real); float32 stays
    # single precision (a Python complex is weak)
    return _stmts(lambda a, p: spell.call("np.linalg.eig", a[0]),
                  lambda t, p: ast.BinOp(_cat([_row(_item(t, 0)), _item(t, 1)], -2), ast.Add(),
                                         ast.Constant(0j)))(args, params, out, target)


defop("eig", infer=_eig_infer, impl=_eig_impl, vjp=_eig_vjp, c=c_spell.loop("eig"), batch=_leading_batch("eig"),
      np=_eig_spell, doc="a_bar = V^-T (diag(w_bar) + F * (V^T V_bar')) V^T, F_ij = 1/(w_j - w_i) "
                         "(distinct eigenvalues; V_bar' keeps the unit norm; real part for a real a)")
