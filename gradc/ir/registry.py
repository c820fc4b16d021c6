"""The op registry: every fact about an op lives in one ``Op`` record.

An op has a type rule (``infer``), a NumPy implementation (``impl``), a VJP rule
written with gradc's own ops (``vjp``, or ``nondiff=True``), and its spellings
in NumPy source (``np``), scalar ``math`` source and C (``c``).

``bind(name, *args, **params)`` applies an op: to concrete arrays it calls
``impl``; to traced values (anything whose type has ``__gradc_bind__``) it lets
them record the op instead. VJP rules call ops through ``bind``, so one rule
serves the compiler, the eager Tensor facade and higher-order derivatives.

>>> import numpy as np
>>> float(bind("exp", np.float64(0.0)))
1.0
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy

OPS: dict[str, "Op"] = {}

# When a list, ``bind`` appends ``(op, args, params, out)`` for each op computed on concrete
# values: the eager facade's tape of one recorded node (see ``gradc.facade.record``).
TAPE = None
# Operand types that never record (checked before looking for ``__gradc_bind__``).
_PLAIN = frozenset({float, int, bool, complex, tuple, list, type(None), numpy.ndarray, numpy.float64, numpy.float32,
                    numpy.int64, numpy.int32, numpy.bool_, numpy.complex128, numpy.complex64})


@dataclass
class Op:
    """One primitive. See the module docstring for the facets.

    ``vjp(ct, out, *inputs, needs=..., **params)`` returns one cotangent (or
    None) per input; ``needs[i]`` says whether input ``i`` wants one.
    ``np``/``math`` are ``ast`` builders (``gradc.ops.spell``; None where the
    target has no spelling), ``c`` is a C spelling (``gradc.ops.c_spell``:
    ``scalar(...)``, ``loop(...)`` or ``None`` for "no C lowering");
    ``elementwise`` ops broadcast implicitly in emitted NumPy code.

    ``jvp`` is optional: forward mode derives an op's tangent from its VJP rule
    (``gradc.transforms.forward``), so the VJP rule stays the one definition of its
    derivative. An op says ``jvp(tangents, out, *inputs, **params)`` (``tangents[i]``
    None for a zero tangent; returns the output's tangent or None) only where the
    derived form would be wrong or wasteful, e.g. for ops holding sub-graphs.
    ``linear``: the output is linear in the float inputs jointly (integer inputs, such as index
    arrays, only steer it); forward mode then applies the op itself to the tangents.

    ``batch`` is optional too: ``batch(*inputs, batched=..., **params)`` gets the
    inputs of a batched equation (``batched[i]``: input ``i`` has a leading batch
    axis) and returns the output with a leading batch axis, built with gradc ops.
    Elementwise ops and the reductions typed like ``sum`` need none: the batching
    transform (``gradc.transforms.batching``) has a generic rule for each.
    """

    name: str
    infer: Callable
    impl: Callable
    vjp: Callable | None = None
    nondiff: bool = False
    elementwise: bool = False
    linear: bool = False
    doc: str = ""
    np: Callable | None = None
    math: Callable | None = None
    c: object = "missing"
    jvp: Callable | None = None
    batch: Callable | None = None


def defop(name: str, *, infer, impl, vjp=None, nondiff=False, elementwise=False, linear=False,
          doc="", np=None, math=None, c="missing", jvp=None, batch=None) -> Op:
    """Register an op; its name must be new. ``c`` must be said (``c=None``: no C lowering).

    >>> "add" in OPS
    True
    """
    if name in OPS:
        raise ValueError(f"op {name!r} registered twice")
    if vjp is None and not nondiff:
        raise ValueError(f"op {name!r} needs a vjp rule or nondiff=True")
    op = Op(name, infer, impl, vjp, nondiff, elementwise, linear, doc, np, math, c, jvp, batch)
    OPS[name] = op
    return op


def bind(name: str, *args, **params):
    """Apply op ``name``: compute on arrays, or record on traced values.

    >>> import numpy as np
    >>> bind("add", np.ones(2), np.ones(2))
    array([2., 2.])
    """
    op = OPS[name]
    for a in args:
        if type(a) in _PLAIN:
            continue
        hook = getattr(type(a), "__gradc_bind__", None)
        if hook is not None:
            return hook(op, args, params)
    out = op.impl(*args, **params)
    if TAPE is not None:
        TAPE.append((op, args, params, out))
    return out
