"""``scipy.signal.lfilter`` on traced values: the FIR part a convolution, the recursion one traced loop.

``y[n] = (sum_k b[k] x[n - k] - sum_{k >= 1} a[k] y[n - k]) / a[0]`` along ``axis``: the first sum
is the full convolution of ``x`` with ``b`` cut to ``x``'s length (``gradc.ops.signal``); the
second runs forward in time, a ``gradc.fori_loop`` carrying the output and the last outputs
it feeds back, so the emitted code is one loop and its reverse sweep the adjoint loop. A
filter with ``a = [a0]`` is the convolution divided by ``a0``. ``zi=`` (SciPy's transposed
direct-form state) is refused. Like ``matrix_root``, this module builds a loop, so it sits
above the dispatch tables and registers itself when ``gradc.trace`` is imported.

>>> import numpy as np
>>> np.round(lfilter(np.array([1.0]), np.array([1.0, -0.5]), np.ones(3)), 12)
array([1.  , 1.5 , 1.75])
"""
from __future__ import annotations

import numpy as np

from gradc.errors import ShapeError, TraceError
from gradc.ir.builder import Traced
from gradc.ops import contract as ct
from gradc.ops import elementwise as ew
from gradc.ops import shape as sh
from gradc.ops import signal
from gradc.ops.values import aval, first_traced, lift, normalize_axes
from gradc.trace.control import fori_loop
from gradc.trace.scipy_dispatch import register


def _vector(v, name):
    v = v if isinstance(v, Traced) else np.asarray(v, dtype=np.float64)
    if aval(v).ndim != 1 or aval(v).shape[0] == 0:
        raise ShapeError(f"scipy.signal.lfilter: {name} must be a non-empty 1-d array, not of shape {aval(v).shape}",
                         hint="pass the filter's coefficients as 1-d arrays")
    return v


def lfilter(b, a, x, axis=-1, zi=None):
    """``scipy.signal.lfilter(b, a, x, axis)`` (see the module docstring)."""
    if zi is not None:
        raise TraceError("scipy.signal.lfilter with zi= is not supported by gradc",
                         hint="filter without zi=, or prepend the past inputs to x and drop the first outputs")
    b, a = _vector(b, "b"), _vector(a, "a")
    x = x if isinstance(x, Traced) else np.asarray(x, dtype=np.float64)
    nd = aval(x).ndim
    if nd == 0:
        raise ShapeError("scipy.signal.lfilter: x must have at least one dimension", hint="pass a 1-d signal")
    axis = normalize_axes(axis, nd)[0]
    if axis != nd - 1:  # filter along the last axis, then put the axis back
        order = [i for i in range(nd) if i != axis] + [axis]
        back = list(np.argsort(order))
        return sh.transpose(lfilter(b, a, sh.transpose(lift(x, first_traced([x, a, b])), order)), back)
    n = aval(x).shape[-1]
    kernel = sh.reshape(b, (1,) * (nd - 1) + (aval(b).shape[0],)) if isinstance(b, Traced) else \
        b.reshape((1,) * (nd - 1) + (-1,))
    full = signal.convolve(x, kernel, what="scipy.signal.lfilter")
    fir = sh.index(full, (sh.slice_item(None, None, None),) * (nd - 1) + (sh.slice_item(None, n, None),))
    lead = sh.index(a, (("int", 0),)) if isinstance(a, Traced) else a[0]
    fir = ew.div(fir, lead)
    order = aval(a).shape[0] - 1
    if order == 0 or n == 0:
        return fir
    feedback = ew.div(sh.index(a, (sh.slice_item(1, None, None),)) if isinstance(a, Traced) else a[1:], lead)
    batch = aval(fir).shape[:-1]

    def step(i, carry):
        y, past = carry  # past[..., k]: the output k + 1 steps back
        value = ew.sub(fir[..., i], ct.tensordot(past, feedback, 1) if batch else ct.vdot(past, feedback))
        y[..., i] = value
        shifted = sh.index(past, (sh.slice_item(None, None, None),) * len(batch) + (sh.slice_item(None, -1, None),))
        past = sh.concatenate([sh.reshape(value, batch + (1,)), shifted], len(batch)) if order > 1 else \
            sh.reshape(value, batch + (1,))
        return y, past
    start = (sh.broadcast_to(lift(np.zeros((), aval(fir).np_dtype), first_traced([fir])), aval(fir).shape).copy(),
             sh.broadcast_to(lift(np.zeros((), aval(fir).np_dtype), first_traced([fir])), batch + (order,)))
    y, _ = fori_loop(0, n, step, start, names=("filtered", "feedback"))
    return y


register("scipy.signal.lfilter", lfilter)
