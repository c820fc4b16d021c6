"""Constant folding and safe algebraic identities.

Rewrites only what holds for every input, NaN and inf included: ``x + 0``,
``x * 1``, ``x / 1``, ``x ** 1``, ``--x``, ``x + (-y) -> x - y``, constant
factors merged (``2 * (3 * x) -> 6 * x``), reshape/transpose chains. Never
``x * 0 -> 0`` or ``x - x -> 0`` (both wrong for inf and NaN).

Finite, nonzero constant factors also move outwards, where they merge or
factor out (``(c * a) * b -> c * (a * b)``, ``(c / a) * b -> c * (b / a)``,
``c * a + c * b -> c * (a + b)``), and the sum of a 1-D sum of products
becomes dot products (``sum(100 * a * a + b * b) -> 100 * dot(a, a) + dot(b, b)``),
each only where the rewritten values are read once (no work is duplicated).
A product with a constant identity matrix (the basis of a Jacobian) is its other
operand: exact, where NumPy's product would turn an infinite entry into NaN (0 * inf).
These reassociate: NaN and inf come out as before, results differ by rounding,
and only at the edge of the float range (an intermediate that overflows in one
order and not the other) by more.

A constant is a ``Const`` or a ``broadcast_to`` of a scalar ``Const``; folding
keeps constants scalar, so they stay literals in the emitted code.

>>> import numpy as np
>>> from gradc.trace import trace
>>> from gradc.passes.dce import dce
>>> print(dce(fold(trace(lambda x: (x * 1.0 + 0.0) * (2.0 * 3.0), np.ones(2)))))
def lambda_(x: f64[2]) -> f64[2]:
  t4: f64[2] = broadcast_to 6.0 shape=(2,)
  t5: f64[2] = mul x t4
  return t5
>>> from gradc.passes import optimize
>>> print(optimize(trace(lambda x: np.sum(100.0 * x ** 2 + (1.0 - x) ** 2), np.ones(3))))
def lambda_(x: f64[3]) -> f64[]:
  t4: f64[3] = broadcast_to 1.0 shape=(3,)
  t5: f64[3] = sub t4 x
  t10: f64[] = matmul x x
  t11: f64[] = mul 100.0 t10
  t12: f64[] = matmul t5 t5
  t9: f64[] = add t11 t12
  return t9
>>> print(optimize(trace(lambda a, b: (2.0 * a) * b + 2.0 * np.sin(b), np.ones(2), np.ones(2))))
def lambda_(a: f64[2], b: f64[2]) -> f64[2]:
  t0: f64[2] = broadcast_to 2.0 shape=(2,)
  t7: f64[2] = mul a b
  t3: f64[2] = sin b
  t9: f64[2] = add t7 t3
  t6: f64[2] = mul t0 t9
  return t6
"""
from __future__ import annotations

import numpy as np

from gradc.ir.builder import next_index
from gradc.ir.graph import Const, Eqn, Graph, Var
from gradc.ir.registry import OPS
from gradc.ir.types import TensorType
from gradc.passes.fold_rewrites import ShapeRewrites, plain

_MAX_FOLDED_SIZE = 64  # larger folded arrays would bloat emitted literals
_REARRANGING = frozenset({"reshape", "transpose", "index"})  # ops that only move (or pick) their operand's elements


def _only_new_axes(spec) -> bool:
    """Whether an index spec only keeps whole axes and adds new ones (``x[:, None]``, ``x[None]``)."""
    return all(item == ("slice", None, None, None) or item == ("new",) for item in spec)


class _Folder(ShapeRewrites):
    def __init__(self, taken, first_index, uses=None):
        self.taken = set(taken)
        self.index = first_index
        self.subst: dict = {}
        self.defs: dict = {}
        self.eqns: list = []
        self.uses = uses or {}  # id(var) -> number of reads in the input graph (outputs count)
        self.signed: set = set()  # ids of values whose sign the graph computes

    # ---- helpers
    def fresh_var(self, type):
        """A new intermediate ``tN`` (existing names are never changed)."""
        while f"t{self.index}" in self.taken:
            self.index += 1
        name = f"t{self.index}"
        self.taken.add(name)
        return Var(name, type)

    def read(self, atom):
        return self.subst.get(id(atom), atom) if isinstance(atom, Var) else atom

    def scalar_const(self, atom):
        """The scalar value of a uniform constant atom, else None."""
        if isinstance(atom, Const):
            flat = atom.value.reshape(-1)
            if flat.size and (flat == flat[0]).all() and not np.isnan(flat[0]):
                return flat[0]
            if atom.is_scalar:
                return atom.value[()]
            return None
        eqn = self.defs.get(id(atom))
        if eqn is not None and eqn.op == "broadcast_to" and isinstance(eqn.inputs[0], Const):
            return self.scalar_const(eqn.inputs[0])
        return None

    def producer(self, atom, op):
        eqn = self.defs.get(id(atom)) if isinstance(atom, Var) else None
        return eqn if eqn is not None and eqn.op == op else None

    def sole(self, atom, op):
        """The ``op`` equation defining ``atom`` when ``atom`` is read only once (rewriting it is free)."""
        eqn = self.producer(atom, op)
        return eqn if eqn is not None and self.uses.get(id(atom), 0) == 1 else None

    def emit(self, eqn):
        self.eqns.append(eqn)
        self.defs[id(eqn.out)] = eqn

    def constant(self, value, out: Var):
        """Define ``out`` as a constant: a scalar literal, broadcast when ``out`` is an array."""
        value = np.asarray(value, dtype=out.type.np_dtype)
        if out.type.shape == ():
            self.subst[id(out)] = Const(value)
        else:
            self.emit(Eqn("broadcast_to", (Const(value),), {"shape": out.type.shape}, out))

    # ---- the rules
    def visit(self, eqn: Eqn):
        inputs = tuple(self.read(a) for a in eqn.inputs)
        eqn = Eqn(eqn.op, inputs, eqn.params, eqn.out)
        result = self.simplify(eqn)
        if result is _HANDLED:
            return
        if result is None:
            self.emit(eqn)
        elif isinstance(result, Eqn):
            self.emit(result)
        else:
            self.subst[id(eqn.out)] = result

    def simplify(self, eqn: Eqn):
        op, x, out = eqn.op, eqn.inputs, eqn.out
        spec = OPS[op]
        scalars = [self.scalar_const(a) for a in x]
        if op == "broadcast_to":
            if isinstance(x[0], Const) and not x[0].is_scalar and scalars[0] is not None:
                return Eqn(op, (Const(np.asarray(scalars[0], x[0].value.dtype)),), eqn.params, out)
            inner = self.producer(x[0], "broadcast_to")
            if inner is None:  # a reshape that only adds or drops leading 1s broadcasts the same
                inner = self.producer(x[0], "reshape")
                # ... unless its input has more axes than the result (broadcast_to cannot drop axes)
                if inner is not None and (_strip_ones(inner.inputs[0].type.shape) != _strip_ones(x[0].type.shape)
                                          or len(inner.inputs[0].type.shape) > len(out.type.shape)):
                    inner = None
            if inner is not None:
                return Eqn(op, inner.inputs, eqn.params, out)
            return None
        if op == "index_grad" and len(x) == 1 and _only_new_axes(eqn.params["spec"]) and \
                isinstance(out.type, TensorType) and out.type.size == x[0].type.size:
            # the adjoint of x[:, None] (the cotangent written into zeros through it) only reshapes
            return Eqn("reshape", x, {"shape": out.type.shape}, out)
        if op in _REARRANGING and len(x) == 1 and scalars[0] is not None and isinstance(out.type, TensorType):
            self.constant(scalars[0], out)  # a uniform constant rearranged is the same constant: a scalar literal
            return _HANDLED
        if spec.elementwise and x and all(s is not None for s in scalars) and op not in ("astype",):
            with np.errstate(all="ignore"):
                value = spec.impl(*(np.asarray(s) for s in scalars), **eqn.params)
            self.constant(value, out)
            return _HANDLED
        if x and all(isinstance(a, Const) for a in x) and isinstance(out.type, TensorType) \
                and isinstance(out.type.size, int) and out.type.size <= _MAX_FOLDED_SIZE:
            # (a named size is never folded into a constant; nor is a loop of constants: its result is a tuple)
            with np.errstate(all="ignore"):
                return Const(np.asarray(spec.impl(*(a.value for a in x), **eqn.params), out.type.np_dtype))
        return self.identity(eqn, scalars)

    def identity(self, eqn: Eqn, s):
        op, x, out = eqn.op, eqn.inputs, eqn.out
        if op in ("add", "sub"):
            factored = self.common_factor(eqn)
            if factored is not None:
                return factored
        if op == "add":
            if s[1] == 0:
                return x[0]
            if s[0] == 0:
                return x[1]
            for a, b in ((0, 1), (1, 0)):
                neg = self.producer(x[b], "neg")
                if neg is not None:
                    return Eqn("sub", (x[a], neg.inputs[0]), {}, out)
        elif op == "sub":
            if s[1] == 0:
                return x[0]
            if s[0] == 0:
                return Eqn("neg", (x[1],), {}, out)
            neg = self.producer(x[1], "neg")
            if neg is not None:
                return Eqn("add", (x[0], neg.inputs[0]), {}, out)
        elif op == "mul":
            return self.scale(eqn, s)
        elif op == "div":
            if s[1] == 1:
                return x[0]
        elif op == "pow":
            if s[1] == 1:
                return x[0]
            if s[1] == 0 and not out.type.is_complex:  # x ** 0 is 1 for every x, NaN and inf too (IEEE pow)
                self.constant(1, out)
                return _HANDLED
        elif op == "neg":
            inner = self.producer(x[0], "neg")
            if inner is not None:
                return inner.inputs[0]
            scaled = self.producer(x[0], "mul")
            if scaled is not None:
                c = [self.scalar_const(a) for a in scaled.inputs]
                for k in (0, 1):
                    if c[k] is not None:
                        return self.scaled(scaled.inputs[1 - k], -c[k], out)
        elif op == "reshape":
            inner = self.producer(x[0], "reshape")
            if inner is not None:
                src = inner.inputs[0]
                return src if src.type.shape == out.type.shape else Eqn("reshape", (src,), eqn.params, out)
            return self.reshape_through_elementwise(eqn)
        elif op == "transpose":
            inner = self.producer(x[0], "transpose")
            if inner is not None:
                perm = tuple(inner.params["perm"][p] for p in eqn.params["perm"])
                src = inner.inputs[0]
                return src if perm == tuple(range(len(perm))) else Eqn("transpose", (src,), {"perm": perm}, out)
            return self.transposed_product(eqn)
        elif op == "where":
            if x[1] is x[2]:
                return x[1]
            if s[0] is not None:  # a uniform constant condition picks one branch (e.g. a rule's y == 0 test)
                chosen = x[1] if s[0] else x[2]
                if chosen.type == out.type:
                    return chosen
                if chosen.type.dtype == out.type.dtype:
                    return Eqn("broadcast_to", (chosen,), {"shape": out.type.shape}, out)
        elif op == "matmul":  # I @ b = b and a @ I = a (basis vectors of Jacobians and Hessians)
            for k in (0, 1):
                if _is_identity(x[k]) and x[1 - k].type == out.type:
                    return x[1 - k]
        elif op == "sum":
            if out.type.shape == () and self.dottable(x[0]):
                return self.sum_as_dots(x[0], out)
        elif op == "heaviside":
            return self.heaviside_as_sign(eqn)
        return None


    def transposed_product(self, eqn: Eqn):
        """``(a @ b).T -> b.T @ a.T`` for matrices, the product read only here: a weight's gradient
        ``(x.T @ ct).T`` becomes ``ct.T @ x``, in C order (no transposing copy when it is used)."""
        prod = self.sole(eqn.inputs[0], "matmul")
        if prod is None or eqn.params["perm"] != (1, 0):
            return None
        a, b = prod.inputs
        if a.type.ndim != 2 or b.type.ndim != 2:
            return None
        operands = []
        for m in (b, a):
            inner = self.producer(m, "transpose")
            if inner is not None and inner.params["perm"] == (1, 0):
                operands.append(inner.inputs[0])  # (m.T).T is m
                continue
            t = self.fresh_var(m.type.with_shape(m.type.shape[::-1]))
            self.emit(Eqn("transpose", (m,), {"perm": (1, 0)}, t))
            operands.append(t)
        return Eqn("matmul", tuple(operands), {}, eqn.out)

    # ---- sums of products as dot products: sum(100 * a * a + b * b) -> 100 * (a @ a) + b @ b

    def const_product(self, atom):
        """``(c, a)`` when ``atom = c * a`` for a scalar constant ``c``, read only once; else None."""
        eqn = self.sole(atom, "mul")
        if eqn is None:
            return None
        c = [self.scalar_const(a) for a in eqn.inputs]
        for k in (0, 1):
            if plain(c[k]) and c[1 - k] is None:
                return c[k], eqn.inputs[1 - k]
        return None

    def common_factor(self, eqn: Eqn):
        """``c*a + c*b -> c * (a + b)`` and ``c*a - (-c)*b -> c * (a + b)`` (likewise for ``-``)."""
        left, right = self.const_product(eqn.inputs[0]), self.const_product(eqn.inputs[1])
        if left is None or right is None:
            return None
        if left[0] == right[0]:
            op = eqn.op
        elif left[0] == -right[0]:
            op = "sub" if eqn.op == "add" else "add"
        else:
            return None
        inner = self.fresh_var(eqn.out.type)
        self.emit(Eqn(op, (left[1], right[1]), {}, inner))
        return self.scaled(inner, left[0], eqn.out)

    def scale(self, eqn: Eqn, s):
        """``mul`` by constants: drop a factor 1, turn -1 into neg, merge nested constant factors."""
        x, out = eqn.inputs, eqn.out
        for k in (0, 1):
            if s[k] is None:
                continue
            other = x[1 - k]
            if s[k] == 1:
                return other
            if s[k] == -1:
                return Eqn("neg", (other,), {}, out)
            inner = self.producer(other, "mul")
            if inner is not None:
                c = [self.scalar_const(a) for a in inner.inputs]
                for j in (0, 1):
                    if c[j] is not None:
                        return self.scaled(inner.inputs[1 - j], s[k] * c[j], out)
            neg = self.producer(other, "neg")
            if neg is not None:
                return self.scaled(neg.inputs[0], -s[k], out)
        for k in (0, 1):  # (c / a) * b -> c * (b / a): the constant floats outwards
            inner = self.sole(x[k], "div")
            if inner is None or s[1 - k] is not None:
                continue
            c = self.scalar_const(inner.inputs[0])
            if c is not None and np.isfinite(c) and c != 1 and self.scalar_const(inner.inputs[1]) is None:
                quotient = self.fresh_var(out.type)
                self.emit(Eqn("div", (x[1 - k], inner.inputs[1]), {}, quotient))
                return self.scaled(quotient, c, out)
        for k in (0, 1):  # (c * a) * b -> c * (a * b): constant factors float outwards, where they merge
            inner = self.const_product(x[k])
            if inner is None or s[1 - k] is not None:
                continue
            c, a = inner
            product = self.fresh_var(out.type)
            self.emit(Eqn("mul", (a, x[1]) if k == 0 else (x[0], a), {}, product))
            return self.scaled(product, c, out)
        for k in (0, 1):  # (-a) * b -> -(a * b): the negation can then merge into a sum as a subtraction
            neg = self.producer(x[k], "neg")
            if neg is not None and s[1 - k] is None:
                product = self.fresh_var(out.type)
                self.emit(Eqn("mul", (neg.inputs[0], x[1 - k]) if k == 0 else (x[1 - k], neg.inputs[0]), {},
                              product))
                return Eqn("neg", (product,), {}, out)
        return None

    def scaled(self, x, factor, out):
        """``out = factor * x`` (the constant broadcast when ``x`` is an array)."""
        factor = np.asarray(factor, out.type.np_dtype)
        if factor == 1:
            return x
        if out.type.shape == ():
            return Eqn("mul", (Const(factor), x), {}, out)
        const = self.fresh_var(out.type)
        self.emit(Eqn("broadcast_to", (Const(factor),), {"shape": out.type.shape}, const))
        return Eqn("mul", (const, x), {}, out)


_HANDLED = object()


def _is_identity(atom) -> bool:
    """A constant identity matrix (see the module docstring on infinities)."""
    if not isinstance(atom, Const) or atom.value.ndim != 2 or atom.value.shape[0] != atom.value.shape[1]:
        return False
    return bool(np.array_equal(atom.value, np.eye(atom.value.shape[0], dtype=atom.value.dtype)))


def _strip_ones(shape):
    """``shape`` without its leading 1s (NumPy broadcasting aligns trailing axes)."""
    shape = tuple(shape)
    while shape and shape[0] == 1:
        shape = shape[1:]
    return shape


def fold(graph: Graph) -> Graph:
    """One sweep of folding and identities; returns a new graph."""
    taken = [v.name for v in graph.inputs] + [e.out.name for e in graph.eqns] + list(graph.params)
    uses: dict = {}
    for atom in [a for e in graph.eqns for a in e.inputs] + list(graph.outputs):
        uses[id(atom)] = uses.get(id(atom), 0) + 1
    folder = _Folder(taken, next_index(graph), uses)
    folder.signed = {id(e.inputs[0]) for e in graph.eqns if e.op == "sign"}
    for eqn in graph.eqns:
        folder.visit(eqn)
    eqns = [e for e in folder.eqns]
    outputs = [folder.read(o) for o in graph.outputs]
    return graph.replace(eqns=eqns, outputs=outputs)
