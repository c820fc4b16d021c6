"""Fold's larger rewrites, a mixin of its folder (``gradc.passes.fold``): reshapes sunk through
elementwise ops, ``heaviside`` as ``sign``, and sums of products as dot products.

They use the folder's ``producer``/``sole``/``scalar_const``/``emit``/``fresh_var``.

>>> ShapeRewrites.dottable.__name__
'dottable'
"""
from __future__ import annotations

import numpy as np

from gradc.ir.graph import Const, Eqn, Var
from gradc.ir.registry import OPS

_HEAVISIDE_SIZE = 2048  # heaviside(x, 0.5) becomes 0.5 * sign(x) + 0.5 from this size (sign(x) not needed anyway)
_HEAVISIDE_SHARED_SIZE = 256  # ... and from this size when sign(x) is computed anyway


def plain(c) -> bool:
    """A constant factor that may be moved: finite and nonzero (``inf * 0`` and ``0 * inf`` are NaN)."""
    return c is not None and bool(np.isfinite(c)) and c != 0


class ShapeRewrites:
    """Rewrites that look past one equation (see the module docstring)."""

    def reshape_through_elementwise(self, eqn: Eqn):
        """``reshape(f(reshape(a), reshape(b)))`` with ``a``, ``b`` of the result's shape is ``f(a, b)``.

        Batched sweeps (Jacobians, Hessians) leave such sandwiches around elementwise ops.
        """
        x = eqn.inputs[0]
        inner = self.defs.get(id(x)) if isinstance(x, Var) and self.uses.get(id(x), 0) == 1 else None
        if inner is None or not OPS[inner.op].elementwise or inner.op == "astype":
            return None
        shape, sources = eqn.out.type.shape, []
        for a in inner.inputs:
            if self.scalar_const(a) is not None:
                sources.append(None)
                continue
            r = self.producer(a, "reshape")
            if r is None or r.inputs[0].type.shape != shape:
                return None
            sources.append(r.inputs[0])
        if all(s is None for s in sources):
            return None
        args = []
        for a, s in zip(inner.inputs, sources):
            if s is None:
                c = Const(np.asarray(self.scalar_const(a), a.type.np_dtype))
                s = self.fresh_var(a.type.with_shape(shape))
                self.emit(Eqn("broadcast_to", (c,), {"shape": shape}, s))
            args.append(s)
        return Eqn(inner.op, tuple(args), inner.params, eqn.out)

    def heaviside_as_sign(self, eqn: Eqn):
        """``heaviside(x, 0.5) -> 0.5 * sign(x) + 0.5``: equal for every x (NaN, inf and -0.0 included).

        ``np.heaviside`` costs about three times ``np.sign`` per element, and the sign
        is often computed anyway (the derivative of ``abs``), so CSE shares it. For small
        arrays the one call is cheaper than three, so only large ones are rewritten.
        """
        x, out = eqn.inputs[0], eqn.out
        limit = _HEAVISIDE_SHARED_SIZE if id(x) in self.signed else _HEAVISIDE_SIZE
        small = isinstance(out.type.size, int) and out.type.size < limit  # (a named size may be large)
        if eqn.params["at_zero"] != 0.5 or not out.type.is_float or small:
            return None
        sign = self.fresh_var(out.type)
        self.emit(Eqn("sign", (x,), {}, sign))
        half = self.scaled(sign, 0.5, self.fresh_var(out.type))
        self.emit(half)
        offset = self.fresh_var(out.type)
        self.constant(0.5, offset)
        return Eqn("add", (half.out, offset), {}, out)

    def dottable(self, atom) -> bool:
        """Whether ``sum(atom)`` of a 1-D float value can be written with dot products only."""
        if not isinstance(atom, Var) or atom.type.ndim != 1 or not atom.type.is_float:
            return False
        eqn = self.sole(atom, "mul")
        if eqn is not None:
            c = [self.scalar_const(a) for a in eqn.inputs]
            if c[0] is not None or c[1] is not None:  # sum(c * a) -> c * sum(a) for finite, nonzero c
                if not any(plain(v) for v in c):
                    return False
                return c[0] is None and self.dottable(eqn.inputs[0]) or c[1] is None and self.dottable(eqn.inputs[1])
            return True
        eqn = self.sole(atom, "pow")
        if eqn is not None:
            return self.scalar_const(eqn.inputs[1]) == 2 and self.scalar_const(eqn.inputs[0]) is None
        eqn = self.sole(atom, "add") or self.sole(atom, "sub")
        if eqn is not None:
            return self.dottable(eqn.inputs[0]) and self.dottable(eqn.inputs[1])
        eqn = self.sole(atom, "neg")
        return eqn is not None and self.dottable(eqn.inputs[0])

    def sum_as_dots(self, atom, out=None):
        """Equations computing ``sum(atom)`` (``dottable``); the last one defines ``out`` and is returned."""
        eqn = self.defs[id(atom)]

        def result():
            return out if out is not None else self.fresh_var(atom.type.with_shape(()))
        if eqn.op == "mul":
            c = [self.scalar_const(a) for a in eqn.inputs]
            for k in (0, 1):
                if c[k] is not None:
                    inner = self.sum_as_dots(eqn.inputs[1 - k])
                    self.emit(inner)
                    return self.scaled(inner.out, c[k], result())
            return Eqn("matmul", eqn.inputs, {}, result())
        if eqn.op == "pow":
            return Eqn("matmul", (eqn.inputs[0], eqn.inputs[0]), {}, result())
        parts = []
        for a in eqn.inputs:
            part = self.sum_as_dots(a)
            self.emit(part)
            parts.append(part.out)
        return Eqn(eqn.op, tuple(parts), {}, result())
