"""What NumPy's complex-number functions mean on traced values (``gradc.ops.complex_numbers``).

>>> np.real in FUNCTIONS, np.conjugate in UFUNCS
(True, True)
"""
from __future__ import annotations

import numpy as np

from gradc.ops import complex_numbers as cx
from gradc.ops import elementwise as ew
from gradc.ops.values import aval


def _fabs(x):
    """``np.fabs``: a real ufunc (NumPy refuses complex input; so does gradc)."""
    t = aval(x)
    if t.dtype is not None and t.is_complex:
        from gradc.errors import TraceError

        raise TraceError("np.fabs does not take complex values (NumPy raises TypeError)", hint="use np.abs(z)")
    return ew.abs_(x if t.dtype in ("f64", "f32") else ew.astype(x, "f64"))


UFUNCS = {np.conjugate: cx.conj, np.fabs: _fabs}

FUNCTIONS = {
    np.real: lambda val: cx.real(val),
    np.imag: lambda val: cx.imag(val),
    np.conj: lambda x, *a, **kw: cx.conj(x),
    np.angle: lambda z, deg=False: cx.angle(z, deg),
    np.real_if_close: lambda a, tol=100: cx.real_if_close(a, tol),
}
