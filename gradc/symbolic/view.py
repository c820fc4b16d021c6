"""``gradc.symbolic``: a traced function and its derivative as SymPy expressions and LaTeX.

The value is the traced graph printed to SymPy; the gradient is gradc's own adjoint graph (reverse mode,
optimised) printed to SymPy, then simplified: the formula shown is the derivative gradc computes, not
SymPy's. The Hessian of a scalar function is the derivative of that gradient's formula.

>>> import numpy as np
>>> S = symbolic(lambda x, y: x ** 2 * y, 1.0, 2.0)
>>> S.grad
2*x*y
>>> print(S)
lambda_(x, y) = x**2*y
dlambda_/dx = 2*x*y
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import sympy

from gradc.ir.graph import Graph
from gradc.symbolic.graph_to_sympy import SymbolicError, evaluate_symbolic

SIMPLIFY_LIMIT = 400  # operations: larger entries get cheaper rewrites (cancel, trigsimp skipped)


def tidy(expr):
    """``expr`` simplified: SymPy's ``simplify`` for entries of moderate size, ``cancel`` beyond.

    >>> x = sympy.Symbol("x"); tidy(x * 2 / x + 0)
    2
    """
    if not isinstance(expr, sympy.Basic) or expr.is_Number:
        return expr
    if expr.has(sympy.Piecewise):  # one formula per piece: simplify mixes pieces into Abs/sign forms
        folded = sympy.piecewise_fold(expr)
        if isinstance(folded, sympy.Piecewise):
            return sympy.Piecewise(*[(tidy(e), c) for e, c in folded.args])
        return folded
    if sympy.count_ops(expr) > SIMPLIFY_LIMIT:
        return sympy.cancel(expr)
    return sympy.simplify(expr)


def symbols_for(graph: Graph) -> dict:
    """For each input of ``graph``, its SymPy symbol (a scalar) or an object array of them named ``x_0, x_1,
    ...`` (``A_0_1`` for a matrix entry); real for floats, integer for integers."""
    out = {}
    for var in graph.inputs:
        kind = str(var.type.dtype) if hasattr(var.type, "dtype") else "f64"
        assumptions = {"integer": True} if kind.startswith(("i", "u")) else {"real": True}
        shape = tuple(var.type.shape)
        if not all(isinstance(n, int) for n in shape):
            raise SymbolicError(f"{var.name} has a size known only at run time ({var.type}); the symbolic view "
                                "needs fixed sizes", where="", hint="pass example arrays of a fixed shape")
        if not shape:
            out[var.name] = sympy.Symbol(var.name, **assumptions)
            continue
        array = np.empty(shape, dtype=object)
        for index in np.ndindex(shape):
            array[index] = sympy.Symbol(var.name + "_" + "_".join(map(str, index)), **assumptions)
        out[var.name] = array
    return out


def as_sympy(value):
    """A scalar as it is; a vector as a column ``Matrix``, a matrix as a ``Matrix``, more axes an ``Array``."""
    if not isinstance(value, np.ndarray):
        return value
    if value.ndim == 1:
        return sympy.Matrix(list(value))
    if value.ndim == 2:
        return sympy.Matrix(value.tolist())
    return sympy.Array(value.tolist())


def _apply_tidy(value):
    if isinstance(value, np.ndarray):
        return np.vectorize(tidy, otypes=[object])(value) if value.size else value
    return tidy(value)


class Symbolic:
    """A function and its derivative as mathematics (see :func:`symbolic`)."""

    def __init__(self, graph: Graph, wrt: tuple, as_tuple: bool, where: str = "", simplify: bool = True) -> None:
        from gradc.passes import optimize
        from gradc.transforms import reverse as ad

        self.name = graph.name
        self.where = where
        self.graph = optimize(graph)
        self.wrt = tuple(wrt)
        self._as_tuple = as_tuple
        self._symbols = symbols_for(graph)
        args = [self._symbols[v.name] for v in graph.inputs]
        (value,) = evaluate_symbolic(self.graph, args, where) if len(graph.outputs) == 1 else (None,)
        if value is None:
            raise SymbolicError(f"{graph.name} returns {len(graph.outputs)} values; the symbolic view takes one",
                                where=where, hint="return one array or scalar")
        tidied = _apply_tidy if simplify else (lambda v: v)  # (simplify=False: a notebook's quick display)
        self._value = tidied(value)
        self.grad_graph = optimize(ad.grad_graph(graph, list(self.wrt), name=f"{graph.name}_grad"))
        grads = evaluate_symbolic(self.grad_graph, args, where)
        self._grads = [tidied(g) for g in grads]

    @property
    def symbols(self) -> dict:
        """Each parameter's SymPy symbol (or array of symbols, as a ``Matrix``/``Array``)."""
        return {name: as_sympy(s) for name, s in self._symbols.items()}

    @property
    def value(self):
        """The function as a SymPy expression (``Matrix``/``Array`` for an array result)."""
        return as_sympy(self._value)

    @property
    def grad(self):
        """The gradient read off gradc's optimised adjoint graph, shaped like the ``wrt`` parameter (a tuple for
        several)."""
        grads = tuple(as_sympy(g) for g in self._grads)
        return grads if self._as_tuple else grads[0]

    @property
    def hessian(self) -> sympy.Matrix:
        """The Hessian of a scalar function with respect to all ``wrt`` entries, in order (a ``Matrix``)."""
        if isinstance(self._value, np.ndarray):
            raise SymbolicError(f"{self.name} returns an array; the Hessian needs a scalar function",
                                where=self.where, hint="reduce it, e.g. with np.sum")
        variables = [s for name in self.wrt for s in np.ravel(np.asarray(self._symbols[name], dtype=object))]
        entries = [g for grad in self._grads for g in np.ravel(np.asarray(grad, dtype=object))]
        return sympy.Matrix([[tidy(sympy.diff(g, v)) for v in variables] for g in entries])

    def _parts(self, printer: Callable[[Any], str]) -> list[tuple[str, str]]:
        names = ", ".join(self._symbols)
        out = [(f"{self.name}({names})", printer(self.value))]
        grads = self.grad if self._as_tuple else (self.grad,)
        for name, grad in zip(self.wrt, grads):
            out.append((f"d{self.name}/d{name}", printer(grad)))
        return out

    def latex(self, matrix: bool = False) -> str:
        """The value and gradient as LaTeX (an ``align*`` body); ``matrix=True``: the gradient in matrix
        notation (see :meth:`matrix_latex`)."""
        if matrix:
            return self.matrix_latex()
        names = ", ".join(sympy.latex(sympy.Symbol(n)) for n in self._symbols)
        fname = sympy.latex(sympy.Symbol(self.name))
        lines = [f"{fname}({names}) &= {sympy.latex(self.value)}"]
        grads = self.grad if self._as_tuple else (self.grad,)
        for name, grad in zip(self.wrt, grads):
            lines.append(rf"\frac{{\partial {fname}}}{{\partial {sympy.latex(sympy.Symbol(name))}}} &= "
                         + sympy.latex(grad))
        return " \\\\\n".join(lines)

    def matrix_latex(self) -> str:
        """The gradient in matrix notation, read off the optimised adjoint graph (``gradc.symbolic.matrix``)."""
        from gradc.symbolic.matrix import matrix_latex

        return matrix_latex(self)

    def _repr_latex_(self) -> str:
        return "$$\\begin{aligned}" + self.latex().replace("\n", " ") + "\\end{aligned}$$"

    def __str__(self) -> str:
        return "\n".join(f"{left} = {right}" for left, right in self._parts(sympy.sstr))

    def __repr__(self) -> str:
        return f"<gradc.Symbolic {self.name} wrt {', '.join(self.wrt)}>"


def symbolic(f: Callable, *example_args: Any, wrt: Any = None, **example_kwargs: Any) -> Symbolic:
    """``f`` traced for arguments like ``example_args`` and shown as mathematics.

    ``wrt``: a parameter name (or index), or a tuple of them (then ``S.grad`` is a tuple); default the first
    parameter. Arrays must have a fixed size: each entry becomes a symbol (``x_0, x_1, ...``). Loops over
    ``range(n)`` with a Python ``n`` are unrolled; a ``while`` loop is refused.

    >>> import numpy as np
    >>> S = symbolic(lambda x: np.sum(x ** 2), np.ones(2))
    >>> S.value, S.grad.T
    (x_0**2 + x_1**2, Matrix([[2*x_0, 2*x_1]]))
    """
    from gradc.api import trace
    from gradc.trace import def_location

    graph = trace(f, *example_args, **example_kwargs)
    where = def_location(f)
    params = [v.name for v in graph.inputs]
    as_tuple = isinstance(wrt, (tuple, list))
    chosen = list(wrt) if as_tuple else [params[0] if wrt is None else wrt]
    names = []
    for item in chosen:
        if isinstance(item, int) and not isinstance(item, bool):
            if not -len(params) <= item < len(params):
                raise SymbolicError(f"wrt={item} is out of range: {graph.name} has {len(params)} array parameters "
                                    f"({', '.join(params)})", where=where, hint="pass a parameter name or index")
            item = params[item]
        if item not in params:
            raise SymbolicError(f"wrt={item!r} is not a parameter of {graph.name} traced as an array or number "
                                f"({', '.join(params)})", where=where, hint="pass one of those names")
        names.append(item)
    if graph.outputs and getattr(graph.outputs[0].type, "shape", ()) != ():
        raise SymbolicError(f"{graph.name} returns an array of shape {graph.outputs[0].type.shape}; the gradient "
                            "needs a scalar result", where=where, hint="reduce it, e.g. with np.sum or np.mean")
    return Symbolic(graph, tuple(names), as_tuple, where)
