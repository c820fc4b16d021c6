"""An IR graph evaluated on SymPy symbols: each value becomes a SymPy expression (an array's entries each one).

Arrays are NumPy object arrays of SymPy expressions, so indexing, reshapes, transposes, broadcasts, sums and
matrix products reuse the ops' own NumPy implementations entry by entry. Elementwise math maps to SymPy
functions; ``abs``, ``maximum``/``minimum``, ``clip``, ``where`` and comparisons become ``Piecewise``.
A ``scan`` of static length (a ``for`` loop over ``range(n)``, ``gradc.fori_loop``) is unrolled: its formula is
the body's, substituted ``n`` times. A ``while`` loop or a loop whose length is known only when it runs has no
closed formula here and is refused, as is any op without a SymPy meaning (sorting, FFTs, decompositions...).

>>> import numpy as np, sympy
>>> from gradc.trace import trace
>>> g = trace(lambda x: np.sum(np.sin(x) * x), np.ones(2))
>>> x = np.array(sympy.symbols("x_0 x_1", real=True), dtype=object)
>>> evaluate_symbolic(g, [x])[0]
x_0*sin(x_0) + x_1*sin(x_1)
"""
from __future__ import annotations

import math

import numpy as np
import sympy

from gradc.errors import GradcError
from gradc.ir.graph import Const, Graph
from gradc.ir.registry import OPS


class SymbolicError(GradcError):
    """The function (or its derivative) has no formula gradc can write: a ``while`` loop, a run-time length,
    an op without a SymPy meaning.

    >>> issubclass(SymbolicError, GradcError)
    True
    """


def _piecewise_abs(x):
    return sympy.Piecewise((x, x >= 0), (-x, True))


def _maximum(a, b):
    return sympy.Piecewise((a, a >= b), (b, True))


def _minimum(a, b):
    return sympy.Piecewise((a, a <= b), (b, True))


def _where(c, a, b):
    if c is sympy.true or c is True:
        return a
    if c is sympy.false or c is False:
        return b
    return sympy.Piecewise((a, c), (b, True))


def _as_number(c):
    if c is sympy.true or c is True:
        return sympy.Integer(1)
    if c is sympy.false or c is False:
        return sympy.Integer(0)
    if isinstance(c, (sympy.logic.boolalg.Boolean, sympy.core.relational.Relational)):
        return sympy.Piecewise((1, c), (0, True))
    return c


def _clip(x, lo, hi):
    pieces = []
    if lo is not None:
        pieces.append((lo, x < lo))
    if hi is not None:
        pieces.append((hi, x > hi))
    return sympy.Piecewise(*pieces, (x, True)) if pieces else x


_UNARY = {
    "neg": lambda x: -x, "exp": sympy.exp, "log": sympy.log, "sqrt": sympy.sqrt, "sin": sympy.sin,
    "cos": sympy.cos, "tan": sympy.tan, "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh,
    "arcsin": sympy.asin, "arccos": sympy.acos, "arctan": sympy.atan, "arcsinh": sympy.asinh,
    "arccosh": sympy.acosh, "arctanh": sympy.atanh, "log1p": lambda x: sympy.log(1 + x),
    "expm1": lambda x: sympy.exp(x) - 1, "log2": lambda x: sympy.log(x, 2), "log10": lambda x: sympy.log(x, 10),
    "exp2": lambda x: 2 ** x, "cbrt": lambda x: sympy.sign(x) * sympy.Abs(x) ** sympy.Rational(1, 3),
    "erf": sympy.erf, "erfc": sympy.erfc, "erfinv": sympy.erfinv, "erfcinv": sympy.erfcinv,
    "gamma": sympy.gamma, "gammaln": sympy.loggamma, "digamma": sympy.digamma,
    "expit": lambda x: 1 / (1 + sympy.exp(-x)), "log_expit": lambda x: -sympy.log(1 + sympy.exp(-x)),
    "logit": lambda x: sympy.log(x / (1 - x)), "abs": _piecewise_abs,
    "sign": lambda x: sympy.Piecewise((1, x > 0), (-1, x < 0), (0, True)),
    "sinc": lambda x: sympy.sinc(sympy.pi * x),
    "floor": sympy.floor, "ceil": sympy.ceiling,
    "logical_not": sympy.Not, "stop_gradient": lambda x: x, "real": lambda x: x, "conj": lambda x: x,
    "ndtr": lambda x: (1 + sympy.erf(x / sympy.sqrt(2))) / 2,
}
_BINARY = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "pow": lambda a, b: a ** b, "maximum": _maximum, "minimum": _minimum, "fmax": _maximum, "fmin": _minimum,
    "arctan2": sympy.atan2, "hypot": lambda a, b: sympy.sqrt(a ** 2 + b ** 2),
    "logaddexp": lambda a, b: sympy.log(sympy.exp(a) + sympy.exp(b)),
    "xlogy": lambda a, b: a * sympy.log(b), "xlog1py": lambda a, b: a * sympy.log(1 + b),
    "greater": sympy.Gt, "greater_equal": sympy.Ge, "less": sympy.Lt, "less_equal": sympy.Le,
    "equal": sympy.Eq, "not_equal": sympy.Ne, "logical_and": sympy.And, "logical_or": sympy.Or,
    "copysign": lambda a, b: sympy.Abs(a) * sympy.sign(b),
}
# ops whose NumPy implementation moves or sums entries only: they run as they are on object arrays
_STRUCTURAL = {"index", "gather", "reshape", "transpose", "broadcast_to", "concatenate", "sum", "matmul", "outer",
               "element", "index_grad", "gather_grad", "index_update", "index_add", "eye_like", "tri_mask"}


def _known_constants() -> dict:
    """Float values of common constants (and small rational multiples, reciprocals) that derivative rules
    produce (``2/sqrt(pi)`` of erf, ``log(2)`` of exp2): printed as the constant, not its digits."""
    bases = [sympy.pi, sympy.E, sympy.log(2), sympy.log(10), sympy.sqrt(2), sympy.sqrt(3), sympy.sqrt(sympy.pi),
             sympy.sqrt(2 * sympy.pi)]
    table = {}
    for base in bases:
        for power in (1, -1):
            for p in (1, 2, 3, 4):
                for q in (1, 2, 3, 4):
                    for sign in (1, -1):
                        expr = sign * sympy.Rational(p, q) * base ** power
                        table.setdefault(float(expr), expr)
    return table


_CONSTANTS: dict = {}


def number(value):
    """A constant of the graph as SymPy reads best: integral floats as integers, short decimals as rationals.

    >>> number(2.0), number(0.25), number(math.pi)
    (2, 1/4, pi)
    """
    if isinstance(value, (bool, np.bool_)):
        return sympy.true if value else sympy.false
    if isinstance(value, (int, np.integer)):
        return sympy.Integer(int(value))
    value = float(value)
    if math.isfinite(value):
        text = repr(value)
        if len(text.lstrip("-").replace(".", "").replace("e", "").replace("-", "")) <= 10:
            return sympy.Rational(text)
        if not _CONSTANTS:
            _CONSTANTS.update(_known_constants())
        if value in _CONSTANTS:
            return _CONSTANTS[value]
    return sympy.Float(value)


def constant(value):
    """A graph constant (a number or a small array) as SymPy numbers (an object array for an array)."""
    array = np.asarray(value)
    if array.ndim == 0:
        return number(array.item())
    out = np.empty(array.shape, dtype=object)
    for index in np.ndindex(array.shape):
        out[index] = number(array[index].item())
    return out


def _objects(value):
    if isinstance(value, sympy.Basic):
        return value
    return value if isinstance(value, np.ndarray) and value.dtype == object else constant(value)


def _elementwise(fn, *args):
    arrays = [_objects(a) for a in args]
    if all(np.ndim(a) == 0 for a in arrays):
        return fn(*[a.item() if isinstance(a, np.ndarray) else a for a in arrays])
    return np.frompyfunc(fn, len(arrays), 1)(*arrays)


def _reduce(fn, x, axes, keepdims):
    """max/min/prod/mean over ``axes`` of an object array, entry by entry."""
    x = _objects(x)
    axes = tuple(a % x.ndim for a in axes)
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, rest + list(axes))
    kept = moved.shape[:len(rest)]
    flat = moved.reshape(kept + (-1,))
    out = np.empty(kept, dtype=object)
    for index in np.ndindex(kept):
        out[index] = fn(list(flat[index]))
    if keepdims:
        out = out.reshape(tuple(1 if a in axes else n for a, n in enumerate(x.shape)))
    return out if out.ndim else out.item()


def _max_of(items):
    best = items[0]
    for item in items[1:]:
        best = _maximum(item, best)
    return best


def _min_of(items):
    best = items[0]
    for item in items[1:]:
        best = _minimum(item, best)
    return best


def _scan(eqn, ins, where):
    params = eqn.params
    if params["length"] is None:
        raise SymbolicError("a loop whose trip count is known only when it runs has no closed formula",
                            where=where, hint="write the loop over range(n) with n a Python int (a static length)")
    body: Graph = params["body"]
    k, c = params["n_consts"], params["n_carry"]
    consts, carry, xs = ins[:k], ins[k:k + c], ins[k + c:]
    trips, start, step = params["length"], params.get("start", 0), params.get("step", 1)
    ys: list[list] = [[None] * trips for _ in body.outputs[c:]]
    order = range(trips - 1, -1, -1) if params.get("reverse") else range(trips)
    for j in order:  # unrolled: the body's formula substituted once per trip
        outs = evaluate_symbolic(body, [np.int64(start + j * step), *consts, *carry, *(x[j] for x in xs)], where)
        carry = outs[:c]
        for y, value in zip(ys, outs[c:]):
            y[j] = value
    stacked = []
    for y in ys:
        array = np.empty((trips,) + np.shape(y[0]), dtype=object)
        for j, value in enumerate(y):
            array[j] = value
        stacked.append(array)
    return tuple(carry) + tuple(stacked)


def _apply(eqn, ins, where):
    op = eqn.op
    if op in _UNARY:
        return _elementwise(_UNARY[op], ins[0])
    if op in _BINARY:
        return _elementwise(_BINARY[op], *ins)
    if op == "heaviside":
        at_zero = number(eqn.params["at_zero"])
        return _elementwise(lambda v: sympy.Piecewise((0, v < 0), (at_zero, sympy.Eq(v, 0)), (1, True)), ins[0])
    if op == "where":
        return _elementwise(_where, *ins)
    if op == "astype":
        dtype = eqn.params["dtype"]
        value = _elementwise(_as_number, ins[0])
        if dtype.startswith("i"):
            return _elementwise(lambda v: v if v.is_integer else sympy.floor(v) if v.is_nonnegative
                                else sympy.Piecewise((sympy.floor(v), v >= 0), (sympy.ceiling(v), True)), value)
        return value
    if op == "clip":
        lo, hi = eqn.params.get("lo"), eqn.params.get("hi")
        lo = None if lo is None else number(lo)
        hi = None if hi is None else number(hi)
        return _elementwise(lambda v: _clip(v, lo, hi), ins[0])
    if op in ("max", "min", "prod", "mean"):
        axes, keepdims = eqn.params["axes"], eqn.params["keepdims"]
        if op == "mean":
            count = eqn.params["count"]
            return _reduce(lambda items: sympy.Add(*items) / count, ins[0], axes, keepdims)
        fn = {"max": _max_of, "min": _min_of, "prod": lambda items: sympy.Mul(*items)}[op]
        return _reduce(fn, ins[0], axes, keepdims)
    if op in ("cumsum", "cumprod"):
        x = _objects(ins[0])
        axis = eqn.params["axis"] % x.ndim
        moved = np.moveaxis(x, axis, -1).copy()
        for k in range(1, moved.shape[-1]):
            moved[..., k] = moved[..., k - 1] + moved[..., k] if op == "cumsum" else moved[..., k - 1] * moved[..., k]
        return np.moveaxis(moved, -1, axis)
    if op == "scan":
        return _scan(eqn, ins, where)
    if op in _STRUCTURAL:
        args = [a if isinstance(a, (tuple, sympy.Basic)) else _objects(a) for a in ins]
        if op in ("sum", "matmul", "outer") and any(np.ndim(a) == 0 for a in args):
            args = [np.asarray(a, dtype=object) if np.ndim(a) == 0 else a for a in args]
        if op == "sum":
            x = args[0]
            if x.size == 0:
                out = np.zeros(np.sum(np.zeros(x.shape), axis=eqn.params["axes"]).shape, dtype=object)
                return constant(out.astype(float))
        return OPS[op].impl(*args, **eqn.params)
    if op == "while_loop":
        raise SymbolicError("a while loop has no closed formula", where=where,
                            hint="write the loop over range(n) with n a Python int (it is unrolled)")
    raise SymbolicError(f"the op {op!r} has no SymPy formula in gradc's symbolic view", where=where,
                        hint="the symbolic view covers elementwise math, reductions, matrix products, indexing "
                             "and loops of static length")


def _simple(value):
    """An object array of one entry back to its entry; numbers the ops made (NumPy scalars) to SymPy."""
    if isinstance(value, tuple):
        return tuple(_simple(v) for v in value)
    if isinstance(value, np.ndarray):
        if value.dtype != object:
            return constant(value)
        return value.item() if value.ndim == 0 else value
    if isinstance(value, (int, float, np.number, bool, np.bool_)):
        return number(value)
    return value


def evaluate_symbolic(graph: Graph, args: list, where: str = "") -> list:
    """The outputs of ``graph`` for SymPy ``args`` (an expression, or an object array of them, per input)."""
    env = {id(v): a for v, a in zip(graph.inputs, args)}

    def read(atom):
        return constant(atom.value) if isinstance(atom, Const) else env[id(atom)]

    for eqn in graph.eqns:
        env[id(eqn.out)] = _simple(_apply(eqn, [read(a) for a in eqn.inputs], where))
    return [read(o) for o in graph.outputs]
