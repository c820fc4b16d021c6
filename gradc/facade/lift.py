"""Lifting a function written with gradc ops into a recorded facade op (``torch.linalg``, ``torch.special``, ...).

``apply("ErfBackward0", special.erf, x)`` converts the operands (lists and arrays become Tensors),
casts them to one floating dtype (torch's: integer inputs give the default float dtype), runs
the function on their arrays and records one node, whose VJP the registry's rules give: every
function lifted this way is differentiable through the facade's autograd without a formula of
its own. ``apply_each`` does the same for a function with several outputs (one node per output).

>>> import gradc.torch as torch, gradc.ops.special_scipy as sp
>>> x = torch.tensor([0.5], requires_grad=True)
>>> y = apply("ErfBackward0", sp.erf, x); y.backward(torch.ones(1)); round(float(x.grad), 4)
0.8788
"""
from __future__ import annotations

import collections
import functools
from typing import Callable

import numpy as np

from gradc.facade import dtypes, grad_mode
from gradc.facade.creation import tensor
from gradc.facade.functional import cast
from gradc.facade.record import record
from gradc.facade.tensor import Tensor
from gradc.ir.builder import Traced


def operand(x):
    """A Tensor for ``x`` (Tensors and Python numbers pass through)."""
    if isinstance(x, (Tensor, bool, int, float)):
        return x
    if isinstance(x, (list, tuple)) and x and all(isinstance(v, Tensor) for v in x):
        raise TypeError("expected a Tensor, got a sequence of Tensors: torch.stack them first")
    return tensor(x)


def float_dtype(*operands, floating=True) -> dtypes.dtype:
    """The dtype the operands are computed in: torch's promotion, then the default float for integers."""
    dt = dtypes.promote(*operands)
    if floating and dt.kind < 2:
        dt = dtypes.DEFAULT[0]
    return dt


def _caster(f: Callable, dt, tensors, same_dtype=False):
    cast_at = [isinstance(t, Tensor) for t in tensors]

    def fn(*xs):
        out = f(*(cast(x, dt) if c else x for x, c in zip(xs, cast_at)))
        if same_dtype and getattr(out, "dtype", None) != dt.np:  # a no-op cast is left out
            return cast(out, dt)
        return out
    return fn


def apply(node: str, f: Callable, *operands, floating: bool = True, nondiff: bool = False,
          same_dtype: bool = False) -> Tensor:
    """``f`` (gradc ops) applied to ``operands`` in one floating dtype and recorded as node ``node``.

    ``floating=False`` computes in the operands' promoted dtype (integers stay integers);
    ``same_dtype`` casts the result back to it (for gradc functions that compute integers as floats).
    """
    ts = [operand(x) for x in operands]
    dt = float_dtype(*ts, floating=floating)
    ts = [cast(x, dt) if isinstance(x, (bool, int, float)) else x for x in ts]
    return record(node, _caster(f, dt, ts, same_dtype), ts, nondiff=nondiff)


def apply_each(node: str, f: Callable, n: int, *operands, floating: bool = True) -> tuple:
    """``f``'s ``n`` outputs, each recorded as its own node ``node`` (a multi-output function, such as a
    decomposition, recomputes per output: its factorisation is deterministic, so the outputs agree)."""
    ts = [operand(x) for x in operands]
    dt = float_dtype(*ts, floating=floating)
    fn = _caster(f, dt, ts)
    return tuple(record(node, _output(fn, i), ts) for i in range(n))


def _output(fn: Callable, i: int) -> Callable:
    return lambda *xs: fn(*xs)[i]


def dim_tuple(dim, ndim: int, what: str) -> tuple:
    """``dim`` (int or sequence) as sorted non-negative axes, with torch's error for an out-of-range one."""
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    out = []
    for d in dims:
        d = int(d)
        if not -max(ndim, 1) <= d < max(ndim, 1):
            raise IndexError(f"{what}: Dimension out of range (expected to be in range of "
                             f"[{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {d})")
        out.append(d % max(ndim, 1))
    return tuple(out)


def return_type(name: str, fields: str):
    """A named tuple like torch's ``torch.return_types.<name>`` (fields by name and by position)."""
    return collections.namedtuple(name, fields)


def as_int_array(x) -> np.ndarray:
    """The integer values of a Tensor, list or number (indices and counts never carry gradients)."""
    data = x._data if isinstance(x, Tensor) else np.asarray(x)
    return np.asarray(data)


def _unwrap(out):
    if isinstance(out, Tensor):
        return out._data
    if isinstance(out, tuple):
        items = [_unwrap(v) for v in out]
        return type(out)(*items) if hasattr(out, "_fields") else tuple(items)
    return out


def accepts_traced(f: Callable) -> Callable:
    """``f``, also on gradc's traced values (``gradc.grad`` of a function calling ``torch.linalg.det(x)`` on a
    NumPy array): they run through the same facade code as Tensors holding them, without recording, so the
    compiler sees the gradc ops the node would have recorded. Eager calls pay one ``isinstance`` per argument."""
    @functools.wraps(f)
    def call(*args, **kwargs):
        if not any(isinstance(v, Traced) for v in args) and not any(isinstance(v, Traced) for v in kwargs.values()):
            return f(*args, **kwargs)
        args = [Tensor._wrap(v) if isinstance(v, Traced) else v for v in args]
        kwargs = {k: Tensor._wrap(v) if isinstance(v, Traced) else v for k, v in kwargs.items()}
        with grad_mode.no_grad():
            return _unwrap(f(*args, **kwargs))
    return call


def accept_traced_everywhere(namespace: dict, names) -> None:
    """Wrap each function ``namespace[name]`` with ``accepts_traced`` (a module's public functions)."""
    for name in names:
        value = namespace[name]
        if callable(value) and not isinstance(value, type):
            namespace[name] = accepts_traced(value)
